// SPDX-License-Identifier: MIT
/* A running sandbox's control socket (run_control.h): where it lives, who may speak, one request each. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/mono_clock.h"
#include "run_control.h"

bool run_control_id_valid(const char *id)
{
	size_t n = strlen(id);

	return n > 3 && n <= 32 && !strncmp(id, "bb-", 3) && strspn(id + 3, "0123456789abcdef") == n - 3;
}

static int control_path(const char *id, struct sockaddr_un *sa, struct errmsg *em)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!run_control_id_valid(id))
		return errmsg_set(em, -EINVAL, "%s: not a sandbox id (bb-...; see bpfbox ps)", id);
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", RUN_CONTROL_DIR, id);
	return 0;
}

/* The directory: root's, 0700, no link; made if missing. */
static int control_dir(struct errmsg *em)
{
	struct stat st;

	mkdir("/run/bpfbox", 0755);
	if (mkdir(RUN_CONTROL_DIR, 0700) && errno != EEXIST)
		return errmsg_set(em, -errno, "creating %s", RUN_CONTROL_DIR);
	if (lstat(RUN_CONTROL_DIR, &st))
		return errmsg_set(em, -errno, "%s", RUN_CONTROL_DIR);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
		return errmsg_set(em, -EPERM, "%s is not a directory of root's; remove it", RUN_CONTROL_DIR);
	if ((st.st_mode & 07777) != 0700 && chmod(RUN_CONTROL_DIR, 0700))
		return errmsg_set(em, -errno, "making %s root's alone", RUN_CONTROL_DIR);
	return 0;
}

int run_control_listen(const char *id, struct errmsg *em)
{
	struct sockaddr_un sa;
	int fd, err = control_path(id, &sa, em);

	if (!err)
		err = control_dir(em);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errmsg_set(em, -errno, "the control socket");
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) || listen(fd, 8)) {
		err = errmsg_set(em, -errno, "the control socket %s", sa.sun_path);
		close(fd);
		unlink(sa.sun_path);
		return err;
	}
	return fd;
}

void run_control_unlink(const char *id)
{
	struct sockaddr_un sa;
	struct errmsg em;

	if (!control_path(id, &sa, &em))
		unlink(sa.sun_path);
}

/* Reads fd to its end within ms, at most max bytes: 0 with *text NUL-terminated, or -errno. */
static int read_all(int fd, size_t max, long long ms, char **text, size_t *len)
{
	long long end = mono_ms() + ms;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1), *grown;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = end - mono_ms();
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			free(buf);
			return -ETIMEDOUT;
		}
		if (n == cap) {
			if (cap >= max)
				break;
			cap = cap * 2 > max ? max : cap * 2;
			grown = realloc(buf, cap + 1);
			if (!grown)
				break;
			buf = grown;
		}
		got = read(fd, buf + n, cap - n);
		if (got == 0) {
			buf[n] = 0;
			*text = buf;
			*len = n;
			return 0;
		}
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (got > 0)
			n += (size_t)got;
	}
	free(buf);
	return n == cap ? -E2BIG : -EIO;
}

static int write_all(int fd, const char *buf, size_t len, long long ms)
{
	long long end = mono_ms() + ms;

	while (len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		long long left = end - mono_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -ETIMEDOUT;
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		}
	}
	return 0;
}

void run_control_answer(int conn, bool ok, const char *message)
{
	char *text = run_control_answer_encode(ok, message);

	if (text)
		write_all(conn, text, strlen(text), RUN_CONTROL_READ_MS);
	free(text);
	close(conn);
}

int run_control_accept(int listen_fd, int *conn, char **text, size_t *len, struct errmsg *em)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), err;

	if (fd < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
	/* The directory is root's alone; the peer's uid is checked all the same. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.uid != 0) {
		err = errmsg_set(em, -EPERM, "a control connection from uid %u refused: root only",
				 (unsigned)cred.uid);
		run_control_answer(fd, false, em->text);
		return err;
	}
	err = read_all(fd, RUN_CONTROL_MAX, RUN_CONTROL_READ_MS, text, len);
	if (err) {
		if (err == -E2BIG)
			errmsg_set(em, err, "the request is longer than %u bytes", RUN_CONTROL_MAX);
		else
			errmsg_set(em, err, "the request was not read to its end (%s)", strerror(-err));
		run_control_answer(fd, false, em->text);
		return err;
	}
	*conn = fd;
	return 0;
}

int run_control_call(const char *id, const struct run_control_request *q, char **message, struct errmsg *em)
{
	struct sockaddr_un sa;
	char *req = NULL, *answer = NULL;
	size_t len = 0;
	bool ok = false;
	int fd = -1, err = control_path(id, &sa, em);

	*message = NULL;
	if (err)
		return err;
	req = run_control_request_encode(q);
	if (!req)
		return errmsg_set(em, -ENOMEM, "out of memory");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* A full backlog (a supervisor that accepts nothing) makes connect wait: at most this long. */
	if (fd >= 0) {
		struct timeval tv = { .tv_sec = RUN_CONTROL_READ_MS / 1000 };

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = errno == ENOENT || errno == ECONNREFUSED
			      ? errmsg_set(em, -ENOENT, "%s: no such running sandbox (see bpfbox ps)", id)
			      : errmsg_set(em, -errno, "%s: its control socket", id);
		goto cleanup;
	}
	err = write_all(fd, req, strlen(req), RUN_CONTROL_READ_MS);
	if (!err && shutdown(fd, SHUT_WR))
		err = -errno;
	if (!err)
		err = read_all(fd, RUN_CONTROL_MAX,
			       q->op == RUN_CONTROL_PREVIEW || q->op == RUN_CONTROL_STATUS ? RUN_CONTROL_QUICK_ANSWER_MS
											     : RUN_CONTROL_ANSWER_MS,
			       &answer, &len);
	if (err) {
		errmsg_set(em, err, "%s: no answer from the sandbox (%s)", id, strerror(-err));
		goto cleanup;
	}
	err = run_control_answer_decode(answer, len, &ok, message, em);
	if (!err && !ok)
		err = errmsg_set(em, -EPERM, "%s: the update was refused", id);
cleanup:
	if (fd >= 0)
		close(fd);
	free(req);
	free(answer);
	return err;
}
