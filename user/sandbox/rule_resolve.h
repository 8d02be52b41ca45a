/* SPDX-License-Identifier: MIT */
/* A live update's rule paths resolved in the kernel, beside a sandbox that is already enforcing. */
#ifndef BPFBOX_RULE_RESOLVE_H
#define BPFBOX_RULE_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_state.h"
#include "cgroup.h"
#include "lib/errmsg.h"
#include "sandbox_maps.h"

/*
 * Resolves paths as the launch's child does (sandbox_resolve_paths), from a
 * transient cgroup "<sandbox>.rules" beside the sandbox's, registered
 * RESOLVING while a child of this process opens them; the cgroup and its map
 * entries are gone when this returns. *out holds n results, for
 * rule_resolve_free.
 */
int rule_resolve(const struct bpf_state *st, const struct sandbox_cgroup *sandbox, uint32_t ring_slot,
		 const char *const *paths, const bool *no_links, size_t n, struct resolve_result **out,
		 struct errmsg *em);
void rule_resolve_free(struct resolve_result *res, size_t n);

#endif
