// SPDX-License-Identifier: MIT
/*
 * bpfbox connect HOST PORT: ssh's ProxyCommand helper. Asks the sandbox
 * proxy for a CONNECT tunnel and pipes stdin/stdout through it, passing
 * each side's EOF on as a half-close.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "commands.h"
#include "proxy/proxy.h"
#include "proxy/proxy_http.h"

#define PIPE_BUF_SZ (64 * 1024)
#define HEAD_MAX (16 * 1024)
#define HEAD_TIMEOUT_MS 60000

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfbox connect HOST PORT\n\n"
		"Opens a tunnel to HOST:PORT through the sandbox proxy (HTTP CONNECT) and\n"
		"pipes stdin/stdout through it; meant for ssh's ProxyCommand:\n"
		"  ssh -o ProxyCommand='bpfbox connect %%h %%p' host\n\n"
		"The proxy is taken from BPFBOX_PROXY (host:port), else from\n"
		"HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy, ALL_PROXY, all_proxy\n"
		"(http://host:port).\n");
}

/* "http://127.0.0.1:3128/" or "127.0.0.1:3128" -> authority. */
static int proxy_from_env(struct proxy_authority *auth, const char **src)
{
	static const char *const vars[] = {
		"BPFBOX_PROXY", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
		"ALL_PROXY", "all_proxy",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		size_t n;

		if (!v || !*v)
			continue;
		*src = vars[i];
		if (i > 0) {
			if (strncasecmp(v, "http://", 7))
				return -EINVAL;	/* socks5:// etc.: not a CONNECT proxy */
			v += 7;
		}
		n = strlen(v);
		while (n && v[n - 1] == '/')
			n--;
		return proxy_parse_authority(v, n, 0, auth) ? -EINVAL : 0;
	}
	*src = NULL;
	return -ENOENT;
}

static int dial_proxy(const struct proxy_authority *auth)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char port[8];
	int fd = -1, rc;

	snprintf(port, sizeof(port), "%u", auth->port);
	rc = getaddrinfo(auth->host, port, &hints, &res);
	if (rc)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : (rc ? rc : -ECONNREFUSED);
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Reads the proxy's answer head. Returns its length in buf (which may hold
 * tunnel bytes after it, *got in total) or negative errno.
 */
static ssize_t read_head(int fd, char *buf, size_t cap, size_t *got)
{
	size_t scan = 0;

	*got = 0;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n, end;

		if (*got == cap)
			return -E2BIG;
		n = poll(&pfd, 1, HEAD_TIMEOUT_MS);
		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0 && errno != EINTR)
			return -errno;
		n = recv(fd, buf + *got, cap - *got, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		*got += (size_t)n;
		end = proxy_head_end(buf, *got, &scan);
		if (end)
			return end;
	}
}

struct pipe_dir {
	char buf[PIPE_BUF_SZ];
	size_t off, len;
	bool eof, shut;
};

/* stdin -> sock and sock -> stdout until both directions have ended. */
static int relay(int sock, struct pipe_dir *up, struct pipe_dir *down)
{
	int ret = 0;

	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	while (!(up->shut && down->shut)) {
		struct pollfd pfd[3] = {
			{ .fd = up->eof ? -1 : 0, .events = POLLIN },
			{ .fd = sock, .events = 0 },
			{ .fd = down->len ? 1 : -1, .events = POLLOUT },
		};
		ssize_t n;

		/* Read a side only while its buffer is empty: back-pressure for free. */
		if (up->len)
			pfd[0].fd = -1;
		if (!down->eof && !down->len)
			pfd[1].events |= POLLIN;
		if (up->len)
			pfd[1].events |= POLLOUT;
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents) {
			n = read(0, up->buf, sizeof(up->buf));
			if (n > 0)
				up->len = (size_t)n, up->off = 0;
			else if (n == 0 || errno != EINTR)
				up->eof = true;	/* a read error ends our input too */
		}
		if (up->len && (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = send(sock, up->buf + up->off, up->len - up->off, MSG_NOSIGNAL);
			if (n > 0) {
				up->off += (size_t)n;
				if (up->off == up->len)
					up->off = up->len = 0;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				return -errno;
			}
		}
		if (up->eof && !up->len && !up->shut) {
			shutdown(sock, SHUT_WR);
			up->shut = true;
		}
		if (!down->eof && !down->len && (pfd[1].revents & (POLLIN | POLLERR | POLLHUP))) {
			n = recv(sock, down->buf, sizeof(down->buf), 0);
			if (n > 0) {
				down->len = (size_t)n;
				down->off = 0;
			} else if (n == 0) {
				down->eof = true;
			} else if (errno != EAGAIN && errno != EINTR) {
				return -errno;
			}
		}
		if (down->len && (pfd[2].revents || pfd[2].fd < 0)) {
			ret = write_all(1, down->buf + down->off, down->len - down->off);
			if (ret)
				return ret == -EPIPE ? 0 : ret;	/* our reader left: done */
			down->off = down->len = 0;
		}
		if (down->eof && !down->len && !down->shut) {
			close(1);	/* the half-close ssh understands */
			down->shut = true;
		}
	}
	return 0;
}

int cmd_connect(int argc, char **argv)
{
	struct proxy_authority proxy, dest;
	struct pipe_dir *up = NULL, *down = NULL;
	char req[PROXY_HOST_MAX + 128], *head = NULL;
	const char *src;
	sigset_t pipe_set;
	size_t got;
	ssize_t hl;
	int fd = -1, ret = 1, rc, n;
	unsigned port;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 3) {
		usage(stderr);
		return 2;
	}
	n = snprintf(req, sizeof(req), "%s%s%s:%s", strchr(argv[1], ':') ? "[" : "", argv[1],
		     strchr(argv[1], ':') ? "]" : "", argv[2]);
	if (n < 0 || (size_t)n >= sizeof(req) ||
	    proxy_parse_authority(req, (size_t)n, 0, &dest) ||
	    proxy_parse_port(argv[2], strlen(argv[2]), &port)) {
		fprintf(stderr, "bpfbox connect: invalid destination '%s' port '%s'\n", argv[1],
			argv[2]);
		return 2;
	}
	rc = proxy_from_env(&proxy, &src);
	if (rc) {
		if (src)
			fprintf(stderr, "bpfbox connect: cannot parse %s (want http://HOST:PORT)\n",
				src);
		else
			fprintf(stderr, "bpfbox connect: no proxy: set BPFBOX_PROXY or HTTPS_PROXY "
				"(is this running inside bpfbox exec?)\n");
		return 1;
	}
	/* SIGPIPE for this thread only: a vanished reader becomes EPIPE. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);

	fd = dial_proxy(&proxy);
	if (fd < 0) {
		fprintf(stderr, "bpfbox connect: cannot reach proxy %s:%u: %s\n", proxy.host,
			proxy.port, strerror(-fd));
		goto out;
	}
	/* req already holds the authority form, with brackets for IPv6. */
	head = malloc(HEAD_MAX);
	up = malloc(sizeof(*up));
	down = malloc(sizeof(*down));
	if (!head || !up || !down) {
		fprintf(stderr, "bpfbox connect: out of memory\n");
		goto out;
	}
	n = snprintf(head, HEAD_MAX, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", req, req);
	rc = send_all(fd, head, (size_t)n);
	if (rc) {
		fprintf(stderr, "bpfbox connect: proxy write failed: %s\n", strerror(-rc));
		goto out;
	}
	hl = read_head(fd, head, HEAD_MAX, &got);
	if (hl < 0) {
		fprintf(stderr, "bpfbox connect: no answer from proxy: %s\n", strerror((int)-hl));
		goto out;
	}
	if (hl < 12 || memcmp(head, "HTTP/1.", 7) || memcmp(head + 8, " 200", 4)) {
		char *eol = memchr(head, '\r', (size_t)hl);

		fprintf(stderr, "bpfbox connect: proxy refused %s: %.*s\n", req,
			(int)(eol ? eol - head : hl), head);
		goto out;
	}
	memset(up, 0, sizeof(*up));
	memset(down, 0, sizeof(*down));
	/* Bytes that came with the 200 are already the tunnel's. */
	down->len = got - (size_t)hl;
	memcpy(down->buf, head + hl, down->len);
	rc = relay(fd, up, down);
	if (rc) {
		fprintf(stderr, "bpfbox connect: tunnel to %s failed: %s\n", req, strerror(-rc));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(head);
	free(up);
	free(down);
	return ret;
}
