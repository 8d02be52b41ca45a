/* SPDX-License-Identifier: MIT */
/* Signals read from a descriptor by a poll loop (the supervisor, the daemon's client). */
#ifndef BPFBOX_SIGNALS_H
#define BPFBOX_SIGNALS_H

#include <signal.h>

/*
 * Blocks the signals of watch and of block_only (each a list ending in 0;
 * block_only may be NULL), keeping the previous mask in old_mask, and returns
 * a close-on-exec signalfd that reads those of watch; -errno. A child restores
 * old_mask itself.
 */
int signals_block_to_fd(const int *watch, const int *block_only, sigset_t *old_mask);

#endif
