// SPDX-License-Identifier: MIT
/* A client's request to the daemon and the daemon's answer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"

const char *daemon_socket_path(void)
{
	const char *p = getenv("BPFBOX_SOCKET");

	return p && *p ? p : BPFBOX_SOCKET_PATH;
}

int daemon_connect(struct errmsg *em)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = daemon_socket_path();
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return errmsg_set(em, -ENAMETOOLONG, "the daemon's socket path %s is too long", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errmsg_set(em, -errno, "creating a socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return errmsg_set(em, err,
				  "bpfbox needs root, or the bpfbox daemon (`systemctl start bpfbox.socket`): "
				  "connecting to %s",
				  path);
	}
	return fd;
}

int daemon_request_send(int sock, const struct wire_request *req, const int *fds, size_t n_fds)
{
	char *body = wire_request_encode(req);
	int err;

	if (!body)
		return -ENOMEM;
	err = wire_send(sock, body, fds, n_fds);
	free(body);
	return err;
}

/* Waits for the next whole frame: 0 and its decoded message, or -errno. */
static int next_msg(int sock, struct wire_reader *rd, struct wire_msg *msg, struct errmsg *em)
{
	struct errmsg why = { { 0 } };
	int fds[WIRE_MAX_FDS], ret;
	size_t n_fds;
	uint32_t len;
	char *body;

	for (;;) {
		fd_set rs;

		FD_ZERO(&rs);
		FD_SET(sock, &rs);
		if (select(sock + 1, &rs, NULL, NULL, NULL) < 0 && errno != EINTR)
			return -errno;
		ret = wire_reader_read(rd, sock);
		if (ret < 0) {
			errmsg_set(em, 0, "the daemon closed the connection without an answer");
			return ret;
		}
		if (ret == 1)
			break;
	}
	body = wire_reader_take(rd, &len, fds, &n_fds);
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	ret = wire_msg_decode(body, len, msg, &why);
	free(body);
	if (ret)
		errmsg_set(em, 0, "a bad answer from the daemon: %s", why.text);
	return ret;
}

int daemon_answer_read(int sock, FILE *out, struct wire_msg *end, struct errmsg *em)
{
	struct wire_reader rd;
	int err;

	wire_reader_init(&rd, WIRE_MAX_CONTROL);
	for (;;) {
		struct wire_msg msg;

		err = next_msg(sock, &rd, &msg, em);
		if (err)
			break;
		if (msg.type == WIRE_MSG_ERROR || msg.type == WIRE_MSG_EXIT) {
			*end = msg;
			break;
		}
		if (msg.type == WIRE_MSG_TEXT && msg.message)
			fputs(msg.message, out);
		wire_msg_free(&msg);
	}
	wire_reader_release(&rd);
	return err;
}
