// SPDX-License-Identifier: MIT
/*
 * Relaying without copies: once a direction of a connection is a plain byte
 * pipe, bytes go socket -> pipe -> socket with splice(2) and never reach user
 * space, which halves the copies the proxy adds to a transfer.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "proxy_splice.h"

#define PIPE_CAP (1024 * 1024)
#define PUMP_ROUNDS 16	/* then yield to the other connections */

bool proxy_pipe_open(struct proxy_pipe *pp)
{
	int fds[2];

	if (pp->open)
		return true;
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC))
		return false;	/* out of descriptors: the copying path still works */
	/* Bigger than the default 64 KiB: fewer calls per megabyte. Best effort. */
	fcntl(fds[1], F_SETPIPE_SZ, PIPE_CAP);
	pp->rd = fds[0];
	pp->wr = fds[1];
	pp->held = 0;
	pp->open = true;
	return true;
}

void proxy_pipe_close(struct proxy_pipe *pp)
{
	if (!pp->open)
		return;
	close(pp->rd);
	close(pp->wr);
	pp->open = false;
	pp->held = 0;
}

int proxy_pipe_pump(struct proxy_pipe *pp, int from, int to, bool *rd, bool *wr, bool *eof,
		    unsigned long long *moved, bool *read_failed)
{
	const unsigned flags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
	bool progress = false;

	for (int round = 0; round < PUMP_ROUNDS; round++) {
		bool step = false;
		ssize_t n;

		if (*rd && !*eof && pp->held < PIPE_CAP) {
			n = splice(from, NULL, pp->wr, NULL, PIPE_CAP - pp->held, flags);
			if (n > 0) {
				pp->held += (size_t)n;
				step = true;
			} else if (n == 0) {
				*eof = true;
				*rd = false;
				step = true;
			} else if (errno == EAGAIN) {
				/*
				 * With bytes held, EAGAIN may mean a full pipe (it
				 * counts pages, not bytes): keep the readiness and
				 * retry once the pipe drains. Empty, the socket is.
				 */
				if (!pp->held)
					*rd = false;
			} else if (errno != EINTR) {
				*read_failed = true;
				return -errno;
			}
		}
		if (*wr && pp->held) {
			n = splice(pp->rd, NULL, to, NULL, pp->held, flags);
			if (n > 0) {
				pp->held -= (size_t)n;
				*moved += (unsigned long long)n;
				step = true;
			} else if (n < 0 && errno == EAGAIN) {
				*wr = false;
			} else if (n < 0 && errno != EINTR) {
				*read_failed = false;
				return -errno;
			}
		}
		if (!step)
			break;
		progress = true;
	}
	return progress;
}
