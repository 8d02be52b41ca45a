/* SPDX-License-Identifier: MIT */
/*
 * What one sandbox owns on the host and no other sandbox may reach: its
 * TMPDIR (by identity), the objects it created in /dev/shm and the kernel
 * keys it created.
 */
#ifndef BPFBOX_SANDBOX_PRIVATE_H
#define BPFBOX_SANDBOX_PRIVATE_H

#include <stdint.h>

#include "bpf_state.h"
#include "lib/errmsg.h"

#define SANDBOX_SHM_DIR "/dev/shm"

/* Makes the directory (kernel dev, ino) private to sandbox id. */
int sandbox_private_claim_dir(const struct bpf_state *st, uint64_t id, uint32_t dev, uint64_t ino,
			      struct errmsg *em);
/* Removes what sandbox id created in /dev/shm; returns how many objects. */
int sandbox_private_sweep_shm(const struct bpf_state *st, uint64_t id);
/* Forgets the sandbox's private directories and keys (call once its TMPDIR is gone). */
void sandbox_private_release(const struct bpf_state *st, uint64_t id);

#endif
