/* SPDX-License-Identifier: MIT */
/* Zero-copy relay of one direction through a kernel pipe. */
#ifndef BPFBOX_PROXY_SPLICE_H
#define BPFBOX_PROXY_SPLICE_H

#include <stdbool.h>
#include <stddef.h>

/* A kernel pipe that relayed bytes pass through without a copy to user space. */
struct proxy_pipe {
	int rd, wr;
	size_t held;	/* bytes in the pipe not yet sent on */
	bool open;
};

/* proxy_splice.c: zero-copy relay of one direction. */
bool proxy_pipe_open(struct proxy_pipe *pp);
void proxy_pipe_close(struct proxy_pipe *pp);
/*
 * Moves bytes from -> pipe -> to while the edge-triggered readiness flags
 * allow; *eof on the source's end of stream, -errno on a failed read (-EIO
 * side flag via *read_failed) or write. Returns 1 on progress, 0 without.
 */
int proxy_pipe_pump(struct proxy_pipe *pp, int from, int to, bool *rd, bool *wr, bool *eof,
		    unsigned long long *moved, bool *read_failed);

#endif
