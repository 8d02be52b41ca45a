/* SPDX-License-Identifier: MIT */
/*
 * Context for a failure, filled where it happens and printed once at the edge.
 * Functions return a negative errno; errmsg says what was being done and, where
 * it helps, how to fix the host.
 */
#ifndef BPFBOX_ERRMSG_H
#define BPFBOX_ERRMSG_H

#include <stddef.h>

struct errmsg {
	char text[512];
};

/* Formats the context and returns err (a negative errno) for tail calls. */
int errmsg_set(struct errmsg *em, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
