// SPDX-License-Identifier: MIT
/*
 * httpload: a minimal HTTP origin server and load generator for the proxy
 * benchmark. Written in C because under QEMU TCG one exec of curl per
 * request would cost more than the request.
 *
 *   httpload serve PORT
 *	answers every request for "/N" with N bytes from memory, then closes.
 *   httpload get CONNECT_TO ORIGIN SIZE CLIENTS REQUESTS
 *	CLIENTS processes each make REQUESTS requests for ORIGIN/SIZE, one
 *	connection each (as bpfbox's proxy closes after every answer). The
 *	request is sent to CONNECT_TO (HOST:PORT) in absolute form, which a
 *	forward proxy and the server above both accept; CONNECT_TO may be
 *	ORIGIN itself for the direct measurement, and may carry USERINFO@
 *	for a proxy that wants Basic authorisation (srt's). Prints
 *	"bytes B requests R seconds S".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 * 1024)

static char block[CHUNK];

/* "Proxy-Authorization: Basic ...\r\n" for CONNECT_TO's userinfo, or "". */
static char auth_field[1024];

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * srt's proxy wants the credentials it puts in HTTP_PROXY's userinfo
 * (percent-encoded there) back as Basic authorisation.
 */
static int set_auth(const char *info, size_t len)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char raw[512];
	size_t n = 0, o;

	for (size_t i = 0; i < len; i++) {
		if (n >= sizeof(raw))
			return -1;
		if (info[i] == '%' && i + 2 < len && hexval(info[i + 1]) >= 0 && hexval(info[i + 2]) >= 0) {
			raw[n++] = (unsigned char)(hexval(info[i + 1]) * 16 + hexval(info[i + 2]));
			i += 2;
		} else {
			raw[n++] = (unsigned char)info[i];
		}
	}
	o = (size_t)snprintf(auth_field, sizeof(auth_field), "Proxy-Authorization: Basic ");
	for (size_t i = 0; i < n; i += 3) {
		unsigned int v = raw[i] << 16 | (i + 1 < n ? raw[i + 1] << 8 : 0) | (i + 2 < n ? raw[i + 2] : 0);

		if (o + 7 >= sizeof(auth_field))
			return -1;
		auth_field[o++] = b64[v >> 18 & 63];
		auth_field[o++] = b64[v >> 12 & 63];
		auth_field[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		auth_field[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	memcpy(auth_field + o, "\r\n", 3);
	return 0;
}

/* HOST:PORT or USERINFO@HOST:PORT (IPv4 or localhost). */
static int parse_hostport(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *at = strrchr(s, '@'), *colon;

	if (at) {
		if (set_auth(s, (size_t)(at - s)))
			return -1;
		s = at + 1;
	}
	colon = strrchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)atoi(colon + 1));
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *serve_one(void *arg)
{
	int fd = (int)(long)arg;
	char req[8192], head[128];
	size_t got = 0;
	long long size;
	char *slash, *end;

	/* Read the head only; requests here never carry a body. */
	while (got < sizeof(req) - 1) {
		ssize_t r = recv(fd, req + got, sizeof(req) - 1 - got, 0);

		if (r <= 0)
			goto out;
		got += (size_t)r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	end = strstr(req, " HTTP/");
	if (!end)
		goto out;
	*end = '\0';
	slash = strrchr(req, '/');
	size = slash ? atoll(slash + 1) : 0;
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\nConnection: close\r\n\r\n", size);
	if (write_all(fd, head, strlen(head)))
		goto out;
	while (size > 0) {
		size_t n = size > CHUNK ? CHUNK : (size_t)size;

		if (write_all(fd, block, n))
			break;
		size -= (long long)n;
	}
out:
	close(fd);
	return NULL;
}

static int serve(const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(port)) };
	int one = 1, ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 256)) {
		perror("httpload: listen");
		return 1;
	}
	for (;;) {
		pthread_t t;
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			continue;
		/* A thread per connection: simple, and the server is not what is measured. */
		if (pthread_create(&t, NULL, serve_one, (void *)(long)fd)) {
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
}

/* One request on a fresh connection; returns the bytes received, or -1. */
static long long request(const struct sockaddr_in *to, const char *origin, long long size)
{
	static char buf[CHUNK];
	char req[2048];
	long long total = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)to, sizeof(*to))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(req, sizeof(req), "GET http://%s/%lld HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n",
		 origin, size, origin, auth_field);
	if (write_all(fd, req, strlen(req))) {
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			total = -1;
			break;
		}
		if (r == 0)
			break;
		/* A proxy's refusal (403, 407) can be longer than a small answer. */
		if (total == 0 && (r < 12 || memcmp(buf + 8, " 200", 4))) {
			total = -1;
			break;
		}
		total += r;
	}
	close(fd);
	return total;
}

static int get(char **argv)
{
	struct sockaddr_in to;
	const char *origin = argv[1];
	long long size = atoll(argv[2]), bytes = 0;
	int clients = atoi(argv[3]), requests = atoi(argv[4]), fail = 0, p[2];
	struct timespec t0, t1;

	if (parse_hostport(argv[0], &to) || clients <= 0 || requests <= 0 || pipe(p)) {
		fprintf(stderr, "httpload: bad arguments\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int c = 0; c < clients; c++) {
		if (fork() == 0) {
			long long sum = 0;

			close(p[0]);
			for (int i = 0; i < requests; i++) {
				long long got = request(&to, origin, size);

				/* Short answers mean the proxy refused or broke: no number then. */
				if (got < size) {
					fprintf(stderr, "httpload: request %d got %lld bytes\n", i, got);
					sum = -1;
					break;
				}
				sum += got;
			}
			if (write(p[1], &sum, sizeof(sum)) != sizeof(sum))
				_exit(1);
			_exit(0);
		}
	}
	close(p[1]);
	for (int c = 0; c < clients; c++) {
		long long sum;

		if (read(p[0], &sum, sizeof(sum)) != sizeof(sum) || sum < 0)
			fail = 1;
		else
			bytes += sum;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	while (wait(NULL) > 0)
		;
	if (fail)
		return 1;
	printf("bytes %lld requests %d seconds %.6f\n", bytes, clients * requests,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	memset(block, 'x', sizeof(block));
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc == 7 && !strcmp(argv[1], "get"))
		return get(argv + 2);
	fprintf(stderr, "usage: httpload serve PORT | httpload get CONNECT_TO ORIGIN SIZE CLIENTS REQUESTS\n");
	return 2;
}
