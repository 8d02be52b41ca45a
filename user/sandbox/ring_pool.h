/* SPDX-License-Identifier: MIT */
/*
 * The pool of event ring buffers, one per running sandbox, kept across
 * sandboxes so that starting and ending one does not update the map of maps
 * (each update waits for an RCU grace period).
 */
#ifndef BPFBOX_RING_POOL_H
#define BPFBOX_RING_POOL_H

#include <stdint.h>

#include "bpf_state.h"
#include "lib/errmsg.h"

/*
 * Claims a free slot for sandbox id, or adds one, and opens its ring buffer
 * (*fd) with everything a previous owner left in it skipped.
 */
int ring_pool_claim(const struct bpf_state *st, uint64_t id, uint32_t *slot, int *fd, struct errmsg *em);
/* Gives back every slot sandbox id holds. */
void ring_pool_release(const struct bpf_state *st, uint64_t id);
/* Frees the ring buffers of unclaimed slots (bpfbox gc); returns how many. */
int ring_pool_trim(const struct bpf_state *st);

#endif
