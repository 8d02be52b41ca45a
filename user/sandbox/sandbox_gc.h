/* SPDX-License-Identifier: MIT */
/* Removing what a sandbox leaves: at its own exit, and for supervisors that died. */
#ifndef BPFBOX_SANDBOX_GC_H
#define BPFBOX_SANDBOX_GC_H

#include <stdbool.h>

#include "bpf_state.h"
#include "registry.h"

/* Told what gc could not remove, and why (ctx is the caller's). */
typedef void (*gc_note_fn)(void *ctx, const char *text);

/*
 * Kills the sandbox's tree and removes its cgroup, map entries, TMPDIR (as
 * its owner, if it is still the directory the run created) and registry
 * entry; note (may be NULL) hears what was left.
 */
void sandbox_gc_one(const struct bpf_state *st, const struct registry_entry *e, gc_note_fn note, void *ctx);
/* Cleans up every sandbox whose supervisor is gone (all of them with all=true); returns how many. */
int sandbox_gc_dead(const struct bpf_state *st, bool all, gc_note_fn note, void *ctx);

#endif
