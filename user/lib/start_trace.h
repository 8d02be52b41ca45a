/* SPDX-License-Identifier: MIT */
/*
 * BPFBOX_TRACE_START=1: one line on stderr per step of a sandbox's start and
 * end, with the monotonic clock, so the steps of a client, the daemon's
 * worker and a direct start can be merged and measured (docs/benchmarks.md).
 */
#ifndef BPFBOX_START_TRACE_H
#define BPFBOX_START_TRACE_H

/* Marks the end of a step; nothing unless BPFBOX_TRACE_START is set to 1. */
void start_trace(const char *step);

#endif
