// SPDX-License-Identifier: MIT
/*
 * Writing one line: a single write() so that O_APPEND writers of one file
 * never interleave, and a dead pipe reader reported rather than fatal.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "log_write.h"

/* How long a full non-blocking destination may stall a writer, in ms. */
#define LOG_POLL_MS 1000

/* Writes all of buf: one write() unless the kernel took part of it. */
static int write_all(int fd, const char *buf, size_t len)
{
	int err = 0;

	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n == 0) {
			err = -EIO;
			break;
		} else if (errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			int r = poll(&p, 1, LOG_POLL_MS);

			if (r == 0 || (r < 0 && errno != EINTR)) {
				err = r ? -errno : -EAGAIN;
				break;
			}
		} else if (errno != EINTR) {
			err = -errno;
			break;
		}
	}
	return err;
}

/*
 * One write() for the line; a regular file opened O_APPEND takes it whole
 * (and a pipe up to PIPE_BUF). Loops only when the kernel wrote part of it.
 * With hold_sigpipe, SIGPIPE is held back so a vanished reader yields
 * -EPIPE instead of killing the supervisor; a regular file needs none of
 * that (three system calls per line, which a refusal flood feels).
 */
int log_write_line(int fd, const char *buf, size_t len, bool hold_sigpipe)
{
	sigset_t pipe_set, old, pending;
	bool was_pending;
	int err;

	if (!hold_sigpipe)
		return write_all(fd, buf, len);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	was_pending = !sigpending(&pending) && sigismember(&pending, SIGPIPE);
	err = write_all(fd, buf, len);
	if (err == -EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
