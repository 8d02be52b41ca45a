// SPDX-License-Identifier: MIT
/* Non-blocking dial of one already-checked address (or mitmProxy's Unix socket): no resolution happens here. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proxy_dial.h"

int proxy_dial_start(const struct sockaddr_storage *ss, unsigned port)
{
	struct sockaddr_storage a = *ss;
	socklen_t len;
	int fd, one = 1;

	/* port 0: the address already carries its port (a parent proxy's). */
	if (a.ss_family == AF_INET) {
		if (port)
			((struct sockaddr_in *)&a)->sin_port = htons((unsigned short)port);
		len = sizeof(struct sockaddr_in);
	} else if (a.ss_family == AF_INET6) {
		if (port)
			((struct sockaddr_in6 *)&a)->sin6_port = htons((unsigned short)port);
		len = sizeof(struct sockaddr_in6);
	} else if (a.ss_family == AF_UNIX) {
		/* mitmProxy's socket: a path, never abstract (policy_mitm.c made it absolute). */
		const struct sockaddr_un *un = (const struct sockaddr_un *)&a;

		if (un->sun_path[0] != '/' || !memchr(un->sun_path, 0, sizeof(un->sun_path)))
			return -EINVAL;
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(un->sun_path) + 1);
	} else {
		return -EAFNOSUPPORT;
	}
	fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Interactive tunnels (ssh) suffer from Nagle on top of the client's own. */
	if (a.ss_family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, len) && errno != EINPROGRESS) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int proxy_dial_result(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return -err;
}
