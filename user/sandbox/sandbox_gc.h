/* SPDX-License-Identifier: MIT */
/* Removing what a sandbox leaves: at its own exit, and for supervisors that died. */
#ifndef BPFBOX_SANDBOX_GC_H
#define BPFBOX_SANDBOX_GC_H

#include <stdbool.h>

#include "bpf_state.h"
#include "registry.h"

/* rm -rf that never follows a symlink. */
int remove_tree(const char *path);
/* Kills the sandbox's tree and removes its cgroup, map entries, tmpdir and registry entry. */
void sandbox_gc_one(const struct bpf_state *st, const struct registry_entry *e);
/* Cleans up every sandbox whose supervisor is gone (all of them with all=true); returns how many. */
int sandbox_gc_dead(const struct bpf_state *st, bool all);

#endif
