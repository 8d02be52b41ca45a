/* SPDX-License-Identifier: MIT */
/* A sandbox's device set beyond the built-in one: the policy's devices and its terminal. */
#ifndef BPFBOX_SANDBOX_DEVICES_H
#define BPFBOX_SANDBOX_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "bpf_state.h"
#include "lib/errmsg.h"

/*
 * Resolves each path to its device number now and lets the sandbox open that
 * device; a path that is missing or no device node is passed to note() and
 * skipped. The terminals on descriptors 0-2 (the command's) are added too.
 */
int sandbox_devices_load(const struct bpf_state *st, uint64_t id, char *const *paths, size_t n,
			 void (*note)(void *ctx, const char *path, const char *what), void *ctx, struct errmsg *em);

#endif
