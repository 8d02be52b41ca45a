// SPDX-License-Identifier: MIT
/*
 * The proxy end to end on loopback: a real proxy thread, a tiny upstream
 * server thread on 127.0.0.1, and clients speaking CONNECT, absolute-form
 * HTTP, SOCKS5 and SOCKS4a at it. Nothing leaves 127.0.0.0/8.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "proxy/addr_guard.h"
#include "proxy/proxy.h"
#include "proxy/proxy_resolve.h"
#include "proxy/proxy_socks.h"

#define IO_TIMEOUT_MS 5000
#define MAX_EVENTS 256

struct ev_copy {
	char protocol[16], method[24], host[64], rule[64], reason[64], error[160], kind[8], orig[64];
	unsigned port;
	bool allowed;
	int status;
	unsigned long long up, down;
};

struct upstream {
	int lfd;
	unsigned short port;
	pthread_t thread;
	atomic_int stop;
	pthread_mutex_t lock;
	unsigned conns;
	char last[8192];	/* the last HTTP request as received */
	size_t last_len;
};

struct fixture {
	struct proxy *proxy;
	unsigned short port;
	struct addr_guard guard;
	struct upstream up;
	unsigned short closed_port;	/* nothing listens here */
	pthread_mutex_t lock;
	struct ev_copy ev[MAX_EVENTS];
	size_t nev;
	bool no_orig;
};

/* ---- upstream: echo for tunnels, a minimal HTTP server for requests ---- */

static ssize_t recv_some(int fd, char *buf, size_t cap, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	return recv(fd, buf, cap, 0);
}

static void send_all(int fd, const void *b, size_t n)
{
	const char *p = b;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static bool looks_http(const char *b, size_t n)
{
	size_t i = 0;

	while (i < n && b[i] >= 'A' && b[i] <= 'Z')
		i++;
	return i > 0 && i + 1 < n && b[i] == ' ' && b[i + 1] == '/';
}

static void serve_http(struct upstream *u, int fd, char *buf, size_t len)
{
	char *end;
	size_t need = 0;
	bool chunked;
	char resp[256];
	int n;

	while (!(end = memmem(buf, len, "\r\n\r\n", 4)) && len < 8191) {
		ssize_t r = recv_some(fd, buf + len, 8191 - len, IO_TIMEOUT_MS);

		if (r <= 0)
			return;
		len += (size_t)r;
	}
	if (!end)
		return;
	buf[len] = '\0';
	chunked = strstr(buf, "Transfer-Encoding: chunked\r\n") != NULL;
	if (strstr(buf, "Content-Length: "))
		need = (size_t)(end + 4 - buf) + strtoul(strstr(buf, "Content-Length: ") + 16,
							  NULL, 10);
	while ((chunked && !memmem(end + 4, len - (size_t)(end + 4 - buf), "0\r\n\r\n", 5)) ||
	       len < need) {
		ssize_t r = recv_some(fd, buf + len, 8191 - len, IO_TIMEOUT_MS);

		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
	}
	pthread_mutex_lock(&u->lock);
	memcpy(u->last, buf, len);
	u->last_len = len;
	pthread_mutex_unlock(&u->lock);
	if (strstr(buf, " /close "))
		return;	/* no answer at all */
	if (strstr(buf, " /garbage "))
		n = snprintf(resp, sizeof(resp), "SPAM\r\n\r\n");
	else if (strstr(buf, " /continue "))
		n = snprintf(resp, sizeof(resp), "HTTP/1.1 100 Continue\r\n\r\n"
			     "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok");
	else
		n = snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n"
			     "Keep-Alive: timeout=5\r\nContent-Length: 5\r\n\r\nhello");
	send_all(fd, resp, (size_t)n);
}

static void serve_echo(int fd, char *buf, size_t len)
{
	ssize_t r;

	send_all(fd, buf, len);
	while ((r = recv_some(fd, buf, 8191, IO_TIMEOUT_MS)) > 0)
		send_all(fd, buf, (size_t)r);
	shutdown(fd, SHUT_WR);	/* echo the client's EOF back */
}

static void *upstream_main(void *arg)
{
	struct upstream *u = arg;
	static char buf[8192];

	while (!atomic_load(&u->stop)) {
		struct pollfd p = { .fd = u->lfd, .events = POLLIN };
		ssize_t r;
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(u->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&u->lock);
		u->conns++;
		pthread_mutex_unlock(&u->lock);
		r = recv_some(fd, buf, 8191, IO_TIMEOUT_MS);
		if (r > 0 && looks_http(buf, (size_t)r))
			serve_http(u, fd, buf, (size_t)r);
		else if (r > 0)
			serve_echo(fd, buf, (size_t)r);
		close(fd);
	}
	return NULL;
}

static int listen_any_port(unsigned short *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* ---- the proxy's callbacks ---- */

static void decide(void *ctx, const char *host, unsigned port, struct proxy_decision *out)
{
	if (!strcmp(host, "blocked.test")) {
		out->allow = false;
		out->rule = "deniedDomains:blocked.test";
		out->reason = "Blocked by policy test";
	} else if (!strcmp(host, "127.0.0.1") || !strcmp(host, "localhost") ||
		   !strcmp(host, "allowed.test") || !strcmp(host, "meta.test") ||
		   !strcmp(host, "mixed.test") || !strcmp(host, "nx.test")) {
		out->allow = true;
		out->rule = "allowedDomains:test";
	} else {
		out->allow = false;
		out->rule = "default:deny";
	}
}

static int resolve(void *ctx, const char *host, struct sockaddr_storage *out, size_t max,
		   size_t *n)
{
	static const char *const table[][2] = {
		{ "allowed.test", "127.0.0.1" },
		{ "meta.test", "169.254.169.254" },
		{ "mixed.test", "127.0.0.1" },
		{ "mixed.test", "169.254.169.254" },
	};

	*n = 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]) && *n < max; i++) {
		struct sockaddr_in *s = (struct sockaddr_in *)&out[*n];

		if (strcmp(table[i][0], host))
			continue;
		memset(&out[*n], 0, sizeof(out[*n]));
		s->sin_family = AF_INET;
		inet_pton(AF_INET, table[i][1], &s->sin_addr);
		(*n)++;
	}
	if (*n)
		return 0;
	if (!strcmp(host, "localhost"))
		return proxy_resolve_getaddrinfo(ctx, host, out, max, n);
	return -ENOENT;
}

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static void on_event(void *ctx, const struct proxy_event *e)
{
	struct fixture *f = ctx;
	struct ev_copy *c;

	pthread_mutex_lock(&f->lock);
	if (f->nev < MAX_EVENTS) {
		c = &f->ev[f->nev++];
		copy(c->protocol, sizeof(c->protocol), e->protocol);
		copy(c->method, sizeof(c->method), e->method);
		copy(c->host, sizeof(c->host), e->host);
		copy(c->rule, sizeof(c->rule), e->rule);
		copy(c->reason, sizeof(c->reason), e->reason);
		copy(c->error, sizeof(c->error), e->error);
		copy(c->kind, sizeof(c->kind), e->transparent);
		copy(c->orig, sizeof(c->orig), e->orig_addr);
		c->port = e->port;
		c->allowed = e->allowed;
		c->status = e->status;
		c->up = e->bytes_up;
		c->down = e->bytes_down;
	}
	pthread_mutex_unlock(&f->lock);
}

/* Transparent: every redirected connection was going to the test upstream. */
static int t_orig_dst(void *ctx, const struct sockaddr_storage *client, unsigned short listener,
		      struct sockaddr_storage *orig, struct proxy_peer *peer)
{
	struct fixture *f = ctx;
	struct sockaddr_in *s = (struct sockaddr_in *)orig;

	if (f->no_orig)
		return -ENOENT;
	memset(orig, 0, sizeof(*orig));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->sin_port = htons(f->up.port);
	return 0;
}

/* The upstream's address was "learned" for allowed.test only; no name is allowed too. */
static void t_decide(void *ctx, const char *name, const struct sockaddr_storage *orig, struct proxy_decision *out)
{
	out->allow = !name || !strcmp(name, "allowed.test");
	out->rule = out->allow ? "allowedDomains:allowed.test" : "transparent:not-learned";
	out->reason = NULL;
}

static const struct proxy_transparent t_cfg = { .orig_dst = t_orig_dst, .decide = t_decide, .sniff_ms = 200 };

static int start_proxy(struct fixture *f, unsigned idle_ms, unsigned max_clients)
{
	struct proxy_config cfg = {
		.transparent = &t_cfg,
		.decide = decide,
		.on_event = on_event,
		.ctx = f,
		.guard = &f->guard,
		.header_limit = 4096,
		.idle_timeout_ms = idle_ms,
		.max_clients = max_clients,
		.resolve = resolve,
	};

	return proxy_start(&cfg, &f->proxy, &f->port);
}

static int setup_with(void **state, unsigned idle_ms, unsigned max_clients)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *err;
	int fd;

	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->up.lock, NULL);
	/* Loopback is refused by default; the test upstream lives there. */
	addr_guard_init_empty(&f->guard);
	assert_int_equal(addr_guard_add_allow(&f->guard, "127.0.0.1", &err), 0);
	f->up.lfd = listen_any_port(&f->up.port);
	assert_int_equal(pthread_create(&f->up.thread, NULL, upstream_main, &f->up), 0);
	fd = listen_any_port(&f->closed_port);
	close(fd);
	assert_int_equal(start_proxy(f, idle_ms, max_clients), 0);
	assert_true(f->port > 0);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, 3000, 64);
}

static int setup_short_idle(void **state)
{
	return setup_with(state, 300, 3);
}

/* Three slots and the usual idle time: a loaded machine must not time the held clients out mid-test. */
static int setup_three_slots(void **state)
{
	return setup_with(state, 3000, 3);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	proxy_stop(f->proxy);
	atomic_store(&f->up.stop, 1);
	pthread_join(f->up.thread, NULL);
	close(f->up.lfd);
	addr_guard_free(&f->guard);
	free(f);
	return 0;
}

/* ---- clients ---- */

static int client(struct fixture *f)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(f->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Everything until EOF (or timeout), NUL-terminated. */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	while (len + 1 < cap) {
		ssize_t r = recv_some(fd, buf + len, cap - 1 - len, IO_TIMEOUT_MS);

		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	return len;
}

/* Exactly n bytes. */
static void read_n(int fd, char *buf, size_t n)
{
	size_t len = 0;

	while (len < n) {
		ssize_t r = recv_some(fd, buf + len, n - len, IO_TIMEOUT_MS);

		assert_true(r > 0);
		len += (size_t)r;
	}
}

static void read_head(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	while (len + 1 < cap) {
		ssize_t r = recv_some(fd, buf + len, 1, IO_TIMEOUT_MS);

		assert_true(r > 0);
		len++;
		buf[len] = '\0';
		if (len >= 4 && !memcmp(buf + len - 4, "\r\n\r\n", 4))
			return;
	}
	fail_msg("no head end");
}

/* One request, the whole answer. */
static size_t exchange(struct fixture *f, const char *req, size_t reqlen, char *out, size_t cap)
{
	int fd = client(f);
	size_t n;

	send_all(fd, req, reqlen);
	n = read_all(fd, out, cap);
	close(fd);
	return n;
}

static size_t exchange_str(struct fixture *f, const char *req, char *out, size_t cap)
{
	return exchange(f, req, strlen(req), out, cap);
}

static const struct ev_copy *wait_event(struct fixture *f, size_t n)
{
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&f->lock);
		if (f->nev >= n) {
			pthread_mutex_unlock(&f->lock);
			return &f->ev[n - 1];
		}
		pthread_mutex_unlock(&f->lock);
		usleep(10000);
	}
	fail_msg("event %zu never came", n);
	return NULL;
}

static size_t event_count(struct fixture *f)
{
	size_t n;

	pthread_mutex_lock(&f->lock);
	n = f->nev;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static unsigned upstream_conns(struct fixture *f)
{
	unsigned n;

	pthread_mutex_lock(&f->up.lock);
	n = f->up.conns;
	pthread_mutex_unlock(&f->up.lock);
	return n;
}

/* The last request the upstream received, NUL-terminated. */
static size_t last_request(struct fixture *f, char *out)
{
	size_t n;

	pthread_mutex_lock(&f->up.lock);
	n = f->up.last_len;
	memcpy(out, f->up.last, n);
	out[n] = '\0';
	pthread_mutex_unlock(&f->up.lock);
	return n;
}

#define DENY_BODY "Connection blocked by network allowlist"

/* ---- HTTP CONNECT ---- */

static void test_connect_tunnel_half_close(void **state)
{
	struct fixture *f = *state;
	char req[128], buf[512];
	int fd = client(f);
	const struct ev_copy *e;

	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: x\r\n\r\n", f->up.port);
	send_all(fd, req, strlen(req));
	read_head(fd, buf, sizeof(buf));
	assert_string_equal(buf, "HTTP/1.1 200 Connection Established\r\n\r\n");
	send_all(fd, "tunnel bytes", 12);
	shutdown(fd, SHUT_WR);	/* our EOF must reach the server, its EOF must reach us */
	assert_int_equal(read_all(fd, buf, sizeof(buf)), 12);
	assert_string_equal(buf, "tunnel bytes");
	close(fd);
	e = wait_event(f, 1);
	assert_string_equal(e->protocol, "http-connect");
	assert_string_equal(e->method, "CONNECT");
	assert_string_equal(e->host, "127.0.0.1");
	assert_int_equal(e->port, f->up.port);
	assert_true(e->allowed);
	assert_int_equal(e->status, 200);
	assert_int_equal(e->up, 12);
	assert_int_equal(e->down, 12);
	assert_string_equal(e->error, "");
}

/* Megabytes both ways at once: the spliced relay keeps every byte, in order, and counts them. */
#define BULK (4u << 20)

struct bulk_writer {
	int fd;
	const char *data;
};

static void *bulk_write(void *arg)
{
	struct bulk_writer *w = arg;

	send_all(w->fd, w->data, BULK);
	shutdown(w->fd, SHUT_WR);
	return NULL;
}

static void test_connect_bulk(void **state)
{
	struct fixture *f = *state;
	char *out = malloc(BULK), *in = malloc(BULK + 1);
	char req[128], head[512];
	struct bulk_writer w;
	const struct ev_copy *e;
	pthread_t t;
	int fd = client(f);

	assert_non_null(out);
	assert_non_null(in);
	for (size_t i = 0; i < BULK; i++)
		out[i] = (char)(i * 7 + i / 4093);
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", f->up.port);
	send_all(fd, req, strlen(req));
	read_head(fd, head, sizeof(head));
	w = (struct bulk_writer){ fd, out };
	assert_int_equal(pthread_create(&t, NULL, bulk_write, &w), 0);
	assert_int_equal(read_all(fd, in, BULK + 1), BULK);
	pthread_join(t, NULL);
	assert_memory_equal(in, out, BULK);
	close(fd);
	e = wait_event(f, 1);
	assert_int_equal(e->up, BULK);
	assert_int_equal(e->down, BULK);
	assert_string_equal(e->error, "");
	free(out);
	free(in);
}

static void test_connect_early_data(void **state)
{
	struct fixture *f = *state;
	char req[128], buf[512];
	int fd = client(f);
	const char *want = "HTTP/1.1 200 Connection Established\r\n\r\nearly";

	/* Data right behind the CONNECT head (a TLS ClientHello would be) is kept. */
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\nearly", f->up.port);
	send_all(fd, req, strlen(req));
	shutdown(fd, SHUT_WR);
	read_all(fd, buf, sizeof(buf));
	assert_string_equal(buf, want);
	close(fd);
}

static void test_connect_denied(void **state)
{
	struct fixture *f = *state;
	char buf[1024];
	const struct ev_copy *e;

	exchange_str(f, "CONNECT blocked.test:443 HTTP/1.1\r\nHost: blocked.test:443\r\n\r\n", buf,
		     sizeof(buf));
	assert_string_equal(buf, "HTTP/1.1 403 Blocked by policy test\r\n"
			    "Content-Type: text/plain\r\n"
			    "X-Proxy-Error: blocked-by-allowlist\r\n"
			    "Content-Length: 39\r\n"
			    "Connection: close\r\n\r\n" DENY_BODY);
	e = wait_event(f, 1);
	assert_string_equal(e->protocol, "http-connect");
	assert_false(e->allowed);
	assert_string_equal(e->rule, "deniedDomains:blocked.test");
	assert_string_equal(e->reason, "Blocked by policy test");
	assert_int_equal(e->status, 403);

	/* No reason from the policy: "Forbidden". Canonicalised before deciding. */
	exchange_str(f, "CONNECT Other.Example.:443 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 403 Forbidden\r\n"));
	assert_non_null(strstr(buf, "X-Proxy-Error: blocked-by-allowlist\r\n"));
	e = wait_event(f, 2);
	assert_string_equal(e->host, "other.example");
	assert_string_equal(e->rule, "default:deny");
	assert_int_equal(upstream_conns(f), 0);
}

static void test_connect_malformed(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"CONNECT [::1:443 HTTP/1.1\r\n\r\n",
		"CONNECT example.com HTTP/1.1\r\n\r\n",
		"CONNECT example.com:0443 HTTP/1.1\r\n\r\n",
		"CONNECT example.com:65536 HTTP/1.1\r\n\r\n",
		"CONNECT example.com:0 HTTP/1.1\r\n\r\n",
		"CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n",
		"CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n",
		"CONNECT http://example.com:443 HTTP/1.1\r\n\r\n",
		"CONNECT a..b:443 HTTP/1.1\r\n\r\n",
	};
	char buf[1024];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		exchange_str(f, bad[i], buf, sizeof(buf));
		if (strncmp(buf, "HTTP/1.1 400 Bad Request\r\n", 26))
			fail_msg("%s -> %s", bad[i], buf);
	}
	wait_event(f, sizeof(bad) / sizeof(bad[0]));
	assert_false(f->ev[0].allowed);
	assert_int_equal(f->ev[0].status, 400);
	assert_int_equal(upstream_conns(f), 0);
}

static void test_connect_dial_failure(void **state)
{
	struct fixture *f = *state;
	char req[128], buf[1024];

	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", f->closed_port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 502 Bad Gateway\r\n"));
	/* A name that does not resolve is an upstream failure too. */
	exchange_str(f, "CONNECT nx.test:443 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 502 Bad Gateway\r\n"));
	wait_event(f, 2);
	assert_true(f->ev[0].allowed);
	assert_int_equal(f->ev[0].status, 502);
	assert_non_null(strstr(f->ev[0].error, "refused"));
}

static void test_connect_guard(void **state)
{
	struct fixture *f = *state;
	char req[128], buf[1024];
	const struct ev_copy *e;

	exchange_str(f, "CONNECT meta.test:80 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 403 Forbidden\r\n"));
	assert_non_null(strstr(buf, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n"));
	e = wait_event(f, 1);
	assert_false(e->allowed);
	assert_non_null(strstr(e->error, "169.254.169.254"));
	assert_non_null(strstr(e->error, "cloud metadata"));
	/* One refused answer among several refuses the name. */
	exchange_str(f, "CONNECT mixed.test:80 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n"));
	/* The proxy never dials itself. */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", f->port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_non_null(strstr(buf, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n"));
	assert_int_equal(upstream_conns(f), 0);
}

/* ---- absolute-form HTTP ---- */

static void test_http_forward(void **state)
{
	struct fixture *f = *state;
	char req[512], want[512], buf[2048], last[8192];
	const struct ev_copy *e;

	snprintf(req, sizeof(req),
		 "GET http://Allowed.Test:%u/path?q=1#frag HTTP/1.1\r\n"
		 "Host: evil.example\r\n"
		 "Proxy-Connection: keep-alive\r\n"
		 "Proxy-Authorization: Basic Zm9v\r\n"
		 "Connection: keep-alive, X-Hop\r\n"
		 "X-Hop: secret\r\n"
		 "Upgrade: websocket\r\n"
		 "Accept: */*\r\n\r\n", f->up.port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_string_equal(buf, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n"
			    "\r\nhello");
	snprintf(want, sizeof(want), "GET /path?q=1 HTTP/1.1\r\nHost: allowed.test:%u\r\n"
		 "Accept: */*\r\nConnection: close\r\n\r\n", f->up.port);
	assert_int_equal(last_request(f, last), strlen(want));
	assert_string_equal(last, want);
	e = wait_event(f, 1);
	assert_string_equal(e->protocol, "http");
	assert_string_equal(e->method, "GET");
	assert_string_equal(e->host, "allowed.test");
	assert_true(e->allowed);
	assert_int_equal(e->status, 200);
	assert_int_equal(e->up, strlen(want));
}

static void test_http_denied(void **state)
{
	struct fixture *f = *state;
	char buf[1024];

	exchange_str(f, "GET http://blocked.test/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n", buf,
		     sizeof(buf));
	assert_string_equal(buf, "HTTP/1.1 403 Forbidden\r\n"
			    "Content-Type: text/plain\r\n"
			    "X-Proxy-Error: blocked-by-allowlist\r\n"
			    "Content-Length: 39\r\n"
			    "Connection: close\r\n\r\n" DENY_BODY);
	/* A denied request with a body the proxy never reads still gets its 403. */
	exchange_str(f, "POST http://blocked.test/ HTTP/1.1\r\nContent-Length: 20\r\n\r\n"
		     "01234567890123456789", buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 403 Forbidden\r\n"));
	exchange_str(f, "GET http://meta.test/ HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "X-Proxy-Error: blocked-by-sandbox-runtime\r\n"));
	assert_int_equal(upstream_conns(f), 0);
}

static void test_http_bodies(void **state)
{
	struct fixture *f = *state;
	char req[512], buf[2048], last[8192];
	const char *body;

	snprintf(req, sizeof(req), "POST http://127.0.0.1:%u/cl HTTP/1.1\r\n"
		 "Content-Length: 11\r\n\r\nhello worldGET /smuggled HTTP/1.1\r\n\r\n", f->up.port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
	last_request(f, last);
	assert_non_null(strstr(last, "Content-Length: 11\r\nConnection: close\r\n\r\n"));
	body = strstr(last, "\r\n\r\n") + 4;
	assert_string_equal(body, "hello world");	/* nothing after the body */

	snprintf(req, sizeof(req), "POST http://127.0.0.1:%u/ch HTTP/1.1\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n"
		 "5;name=val\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n", f->up.port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
	last_request(f, last);
	body = strstr(last, "\r\n\r\n") + 4;
	/* Re-chunked by the proxy: extensions and trailers do not reach the server. */
	assert_non_null(strstr(last, "Transfer-Encoding: chunked\r\n"));
	assert_true(!strcmp(body, "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n") ||
		    !strcmp(body, "b\r\nhello world\r\n0\r\n\r\n"));
}

static void test_http_smuggling(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"POST http://127.0.0.1:%u/ HTTP/1.1\r\nContent-Length: 4\r\n"
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"POST http://127.0.0.1:%u/ HTTP/1.1\r\nContent-Length: 4\r\n"
		"Content-Length: 5\r\n\r\n",
		"POST http://127.0.0.1:%u/ HTTP/1.1\r\n"
		"Transfer-Encoding: chunked, identity\r\n\r\n",
		"POST http://127.0.0.1:%u/ HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n",
		"GET http://127.0.0.1:%u/ HTTP/1.1\r\nX-A: a\r\n folded\r\n\r\n",
		"GET http://127.0.0.1:%u/ HTTP/1.1\nHost: a\n\n",
		"GET http://127.0.0.1:%u/ HTTP/1.1\r\nX-A: a\rb\r\n\r\n",
		"GET http://127.0.0.1:%u/ HTTP/1.1\r\nX-A: \x01\r\n\r\n",
		"GET /origin-form HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		"GET https://127.0.0.1:%u/ HTTP/1.1\r\n\r\n",
		"GET http://user@127.0.0.1:%u/ HTTP/1.1\r\n\r\n",
		"GET http://127.0.0.1:%u/ HTTP/1.2\r\n\r\n",
	};
	char req[512], buf[1024];
	int n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = snprintf(req, sizeof(req), bad[i], f->up.port);
		exchange(f, req, (size_t)n, buf, sizeof(buf));
		if (strncmp(buf, "HTTP/1.1 400 Bad Request\r\n", 26))
			fail_msg("case %zu -> %s", i, buf);
	}
	/* NUL in the head. */
	n = snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\nX: a", f->up.port);
	memcpy(req + n, "\0b\r\n\r\n", 6);
	exchange(f, req, (size_t)n + 6, buf, sizeof(buf));
	assert_int_equal(strncmp(buf, "HTTP/1.1 400 Bad Request\r\n", 26), 0);
	assert_int_equal(upstream_conns(f), 0);	/* refused before any dial */
	/* A malformed chunked body is caught while streaming. */
	n = snprintf(req, sizeof(req), "POST http://127.0.0.1:%u/ HTTP/1.1\r\n"
		     "Transfer-Encoding: chunked\r\n\r\nZZ\r\n", f->up.port);
	exchange(f, req, (size_t)n, buf, sizeof(buf));
	if (strncmp(buf, "HTTP/1.1 400 Bad Request\r\n", 26))
		fail_msg("chunked: got [%s]", buf);
}

static void test_http_upstream_misbehaves(void **state)
{
	struct fixture *f = *state;
	char req[256], buf[1024];

	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/close HTTP/1.1\r\n\r\n", f->up.port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 502 Bad Gateway\r\n"));
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/garbage HTTP/1.1\r\n\r\n", f->up.port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 502 Bad Gateway\r\n"));
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/continue HTTP/1.1\r\n\r\n", f->up.port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_string_equal(buf, "HTTP/1.1 100 Continue\r\n\r\n"
			    "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n"
			    "\r\nok");
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\n\r\n", f->closed_port);
	exchange_str(f, req, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 502 Bad Gateway\r\n"));
}

static void test_header_limit(void **state)
{
	struct fixture *f = *state;
	static char req[8192];
	char buf[1024];
	int n;

	n = snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\nX-Big: ", f->up.port);
	memset(req + n, 'a', 6000);
	memcpy(req + n + 6000, "\r\n\r\n", 4);
	exchange(f, req, (size_t)n + 6004, buf, sizeof(buf));
	assert_int_equal(strncmp(buf, "HTTP/1.1 431 Request Header Fields Too Large\r\n", 46), 0);
	/* Many small fields hit the field-count limit. */
	n = snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\n", f->up.port);
	for (int i = 0; i < 120; i++)
		n += snprintf(req + n, sizeof(req) - (size_t)n, "X-%d: v\r\n", i);
	n += snprintf(req + n, sizeof(req) - (size_t)n, "\r\n");
	exchange(f, req, (size_t)n, buf, sizeof(buf));
	assert_int_equal(strncmp(buf, "HTTP/1.1 431 ", 13), 0);
}

/* ---- SOCKS ---- */

static int socks5_open(struct fixture *f, const unsigned char *req, size_t n, unsigned char *rep)
{
	int fd = client(f);
	unsigned char b[2];

	send_all(fd, "\x05\x01\x00", 3);
	read_n(fd, (char *)b, 2);
	assert_memory_equal(b, "\x05\x00", 2);
	send_all(fd, req, n);
	read_n(fd, (char *)rep, 10);
	return fd;
}

static size_t socks5_domain_req(unsigned char *m, const char *host, unsigned port)
{
	size_t hl = strlen(host);

	m[0] = 5;
	m[1] = 1;
	m[2] = 0;
	m[3] = 3;
	m[4] = (unsigned char)hl;
	memcpy(m + 5, host, hl);
	m[5 + hl] = (unsigned char)(port >> 8);
	m[6 + hl] = (unsigned char)port;
	return 7 + hl;
}

static void test_socks5_allowed(void **state)
{
	struct fixture *f = *state;
	unsigned char m[300], rep[10];
	char buf[64];
	size_t n = socks5_domain_req(m, "allowed.test", f->up.port);
	int fd = socks5_open(f, m, n, rep);
	const struct ev_copy *e;

	assert_memory_equal(rep, "\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
	send_all(fd, "socks!", 6);
	shutdown(fd, SHUT_WR);
	assert_int_equal(read_all(fd, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "socks!");
	close(fd);
	e = wait_event(f, 1);
	assert_string_equal(e->protocol, "socks5");
	assert_string_equal(e->host, "allowed.test");
	assert_true(e->allowed);
	assert_int_equal(e->status, 0);
	assert_int_equal(e->up, 6);
}

static void test_socks5_refusals(void **state)
{
	struct fixture *f = *state;
	unsigned char m[300], rep[10], v4[10] = { 5, 1, 0, 1, 127, 0, 0, 1 };
	unsigned char bind[10] = { 5, 2, 0, 1, 127, 0, 0, 1, 0, 80 };
	char buf[16];
	size_t n;
	int fd;

	n = socks5_domain_req(m, "blocked.test", 443);
	fd = socks5_open(f, m, n, rep);
	assert_int_equal(rep[1], SOCKS5_REP_DENIED);
	assert_int_equal(read_all(fd, buf, sizeof(buf)), 0);	/* then closed */
	close(fd);

	n = socks5_domain_req(m, "meta.test", 80);
	fd = socks5_open(f, m, n, rep);
	assert_int_equal(rep[1], SOCKS5_REP_DENIED);
	close(fd);

	v4[8] = (unsigned char)(f->closed_port >> 8);
	v4[9] = (unsigned char)f->closed_port;
	fd = socks5_open(f, v4, sizeof(v4), rep);
	assert_int_equal(rep[1], SOCKS5_REP_REFUSED);
	close(fd);

	fd = socks5_open(f, bind, sizeof(bind), rep);
	assert_int_equal(rep[1], SOCKS5_REP_CMD);
	close(fd);

	/* No acceptable method: 0xff and close. */
	fd = client(f);
	send_all(fd, "\x05\x01\x02", 3);
	assert_int_equal(read_all(fd, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "\x05\xff", 2);
	close(fd);
	wait_event(f, 5);
	assert_false(f->ev[0].allowed);
	assert_string_equal(f->ev[0].rule, "deniedDomains:blocked.test");
	assert_int_equal(upstream_conns(f), 0);
}

static void test_socks4a(void **state)
{
	struct fixture *f = *state;
	unsigned char m[64] = { 4, 1, 0, 0, 0, 0, 0, 1, 'u', 0 };
	char buf[64];
	size_t n = 10;
	int fd = client(f);

	m[2] = (unsigned char)(f->up.port >> 8);
	m[3] = (unsigned char)f->up.port;
	memcpy(m + n, "allowed.test", 13);
	n += 13;
	send_all(fd, m, n);
	read_n(fd, buf, 8);
	assert_int_equal(buf[0], 0);
	assert_int_equal((unsigned char)buf[1], SOCKS4_REP_OK);
	send_all(fd, "4a", 2);
	shutdown(fd, SHUT_WR);
	assert_int_equal(read_all(fd, buf, sizeof(buf)), 2);
	close(fd);

	memcpy(m + 10, "blocked.test", 13);
	fd = client(f);
	send_all(fd, m, n);
	read_n(fd, buf, 8);
	assert_int_equal((unsigned char)buf[1], SOCKS4_REP_REJECT);
	close(fd);
}

/* ---- resource limits (short idle timeout, three clients) ---- */

static void test_stalled_clients(void **state)
{
	struct fixture *f = *state;
	struct timespec t0, t1;
	char buf[256];
	int silent = client(f), partial = client(f);
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	send_all(partial, "GET http://127.0.0.1/ HTTP/1.1\r\nX-Slow:", 38);
	/* Closed by the proxy without an answer, well before our 5 s read timeout. */
	assert_int_equal(read_all(silent, buf, sizeof(buf)), 0);
	assert_int_equal(read_all(partial, buf, sizeof(buf)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 250 && ms < 2000);
	close(silent);
	close(partial);
	/* Only the client that said something is logged. */
	wait_event(f, 1);
	usleep(100000);
	assert_int_equal(event_count(f), 1);
	assert_non_null(strstr(f->ev[0].error, "timeout"));
}

static void test_slowloris(void **state)
{
	struct fixture *f = *state;
	char buf[256];
	int fd = client(f);
	struct timespec t0, t1;
	long ms;

	/* A byte every 100 ms is never idle, but the head has a deadline. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 20; i++) {
		if (send(fd, "G", 1, MSG_NOSIGNAL) != 1)
			break;
		usleep(100000);
	}
	assert_int_equal(read_all(fd, buf, sizeof(buf)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms < 2100);
	close(fd);
}

static void test_idle_tunnel(void **state)
{
	struct fixture *f = *state;
	char req[128], buf[256];
	int fd = client(f);

	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", f->up.port);
	send_all(fd, req, strlen(req));
	read_head(fd, buf, sizeof(buf));
	/* Say nothing: the tunnel is closed after the idle timeout. */
	assert_int_equal(read_all(fd, buf, sizeof(buf)), 0);
	close(fd);
	wait_event(f, 1);
	assert_string_equal(f->ev[0].error, "idle timeout");
}

static void test_max_clients(void **state)
{
	struct fixture *f = *state;
	int fds[3];
	char req[128], buf[256];
	int extra;

	/* Every slot busy relaying: nothing may be evicted, a newcomer is refused. */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", f->up.port);
	for (int i = 0; i < 3; i++) {
		fds[i] = client(f);
		send_all(fds[i], req, strlen(req));
		read_head(fds[i], buf, sizeof(buf));
	}
	extra = client(f);
	/* Closed at once, not after the idle timeout. */
	assert_int_equal(recv_some(extra, buf, sizeof(buf), 200), 0);
	close(extra);
	wait_event(f, 1);
	assert_string_equal(f->ev[0].error, "too many clients");
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	usleep(100000);
	/* Room again. */
	extra = client(f);
	send_all(extra, "CONNECT blocked.test:1 HTTP/1.1\r\n\r\n", 35);
	read_all(extra, buf, 13);
	assert_string_equal(buf, "HTTP/1.1 403");
	close(extra);
}

static void test_evict_waiting(void **state)
{
	struct fixture *f = *state;
	int fds[3];
	char buf[16];
	int extra;

	/* Three slots held by clients that never finish a request (slowloris). */
	for (int i = 0; i < 3; i++) {
		fds[i] = client(f);
		usleep(10000);
	}
	send_all(fds[0], "GET http://a", 12);
	usleep(50000);
	/* A client that asks at once is served: the oldest waiting one makes room. */
	extra = client(f);
	send_all(extra, "CONNECT blocked.test:1 HTTP/1.1\r\n\r\n", 35);
	read_all(extra, buf, 13);
	assert_string_equal(buf, "HTTP/1.1 403");
	close(extra);
	assert_int_equal(recv_some(fds[0], buf, sizeof(buf), 200), 0);
	assert_int_equal(recv_some(fds[1], buf, sizeof(buf), 50), -ETIMEDOUT);
	assert_int_equal(recv_some(fds[2], buf, sizeof(buf), 50), -ETIMEDOUT);
	/* It had sent bytes, so its end is an event; the newcomer's 403 is the other. */
	wait_event(f, 2);
	assert_true(!strcmp(f->ev[0].error, "evicted: too many clients") ||
		    !strcmp(f->ev[1].error, "evicted: too many clients"));
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

/* ---- transparent: connections the kernel redirected ---- */

static int t_client(struct fixture *f)
{
	unsigned short p4, p6;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	proxy_transparent_ports(f->proxy, &p4, &p6);
	assert_true(p4 > 0 && p4 != f->port);
	a.sin_port = htons(p4);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Connects, stays silent for silent_us, sends req, half-closes, reads the answer to EOF. */
static size_t t_exchange_after(struct fixture *f, useconds_t silent_us, const void *req, size_t n, char *out,
			       size_t cap)
{
	int fd = t_client(f);
	size_t got;

	if (silent_us)
		usleep(silent_us);
	if (n)
		send_all(fd, req, n);
	shutdown(fd, SHUT_WR);
	got = read_all(fd, out, cap);
	close(fd);
	return got;
}

static size_t t_exchange(struct fixture *f, const void *req, size_t n, char *out, size_t cap)
{
	return t_exchange_after(f, 0, req, n, out, cap);
}

/* A minimal TLS 1.3 ClientHello record naming name. */
static size_t client_hello(unsigned char *b, const char *name)
{
	size_t nl = strlen(name), o = 0, hs_len = 2 + 32 + 1 + 4 + 2 + 2 + 9 + nl;

	b[o++] = 22, b[o++] = 3, b[o++] = 1;
	b[o++] = (unsigned char)((hs_len + 4) >> 8), b[o++] = (unsigned char)(hs_len + 4);
	b[o++] = 1, b[o++] = 0, b[o++] = (unsigned char)(hs_len >> 8), b[o++] = (unsigned char)hs_len;
	b[o++] = 3, b[o++] = 3;
	memset(b + o, 7, 32), o += 32;
	b[o++] = 0;
	b[o++] = 0, b[o++] = 2, b[o++] = 0x13, b[o++] = 0x01;
	b[o++] = 1, b[o++] = 0;
	b[o++] = 0, b[o++] = (unsigned char)(9 + nl);
	b[o++] = 0, b[o++] = 0, b[o++] = 0, b[o++] = (unsigned char)(5 + nl);
	b[o++] = 0, b[o++] = (unsigned char)(3 + nl), b[o++] = 0, b[o++] = 0, b[o++] = (unsigned char)nl;
	memcpy(b + o, name, nl);
	return o + nl;
}

static void test_transparent_tls(void **state)
{
	struct fixture *f = *state;
	unsigned char hello[512];
	char out[1024];
	size_t n = client_hello(hello, "Allowed.Test");
	const struct ev_copy *e;

	/* Allowed: the bytes reach the upstream (an echo) unchanged. */
	assert_int_equal(t_exchange(f, hello, n, out, sizeof(out)), n);
	assert_memory_equal(out, hello, n);
	e = wait_event(f, 1);
	assert_string_equal(e->protocol, "transparent");
	assert_string_equal(e->kind, "tls");
	assert_string_equal(e->host, "allowed.test");
	assert_string_equal(e->orig, "127.0.0.1");
	assert_int_equal(e->port, f->up.port);
	assert_true(e->allowed);
	/* Another name: closed without a byte, never dialled. */
	n = client_hello(hello, "other.test");
	assert_int_equal(t_exchange(f, hello, n, out, sizeof(out)), 0);
	e = wait_event(f, 2);
	assert_false(e->allowed);
	assert_string_equal(e->host, "other.test");
	assert_string_equal(e->rule, "transparent:not-learned");
	assert_int_equal(upstream_conns(f), 1);
}

static void test_transparent_http(void **state)
{
	struct fixture *f = *state;
	char out[2048], req[2048];
	const char *get = "GET /x HTTP/1.1\r\nHost: allowed.test\r\nConnection: keep-alive\r\n\r\n";
	const struct ev_copy *e;

	assert_true(t_exchange(f, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(out, "hello"));
	last_request(f, req);
	/* Rebuilt like a forwarded request: one request, Connection: close. */
	assert_non_null(strstr(req, "GET /x HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "Connection: close\r\n"));
	assert_null(strstr(req, "keep-alive"));
	e = wait_event(f, 1);
	assert_string_equal(e->kind, "http");
	assert_string_equal(e->host, "allowed.test");
	assert_string_equal(e->method, "GET");
	assert_true(e->allowed);
	/* A foreign Host: srt's 403, never dialled. */
	get = "GET /x HTTP/1.1\r\nHost: other.test\r\n\r\n";
	assert_true(t_exchange(f, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 403 Forbidden"));
	assert_non_null(strstr(out, DENY_BODY));
	e = wait_event(f, 2);
	assert_false(e->allowed);
	assert_string_equal(e->rule, "transparent:not-learned");
	/* Loose request lines servers read: decided by their Host all the same, never relayed by address. */
	get = "\r\nGET\t/x  HTTP/1.1 \r\nHost: other.test\r\n\r\n";
	assert_true(t_exchange(f, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 403 Forbidden"));
	e = wait_event(f, 3);
	assert_false(e->allowed);
	assert_string_equal(e->host, "other.test");
	assert_string_equal(e->rule, "transparent:not-learned");
	/* Bare LF line ends: 400, not relayed. */
	get = "GET /x HTTP/1.1\nHost: other.test\n\n";
	assert_true(t_exchange(f, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 400"));
	/* Two Host fields, an absolute-form target: 400. */
	get = "GET /x HTTP/1.1\r\nHost: allowed.test\r\nHost: other.test\r\n\r\n";
	assert_true(t_exchange(f, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 400"));
	get = "GET http://other.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
	assert_true(t_exchange(f, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 400"));
	assert_int_equal(upstream_conns(f), 1);
}

static void test_transparent_no_name(void **state)
{
	struct fixture *f = *state;
	char out[1024];
	const struct ev_copy *e;
	int fd;

	/* An ssh-like banner: not HTTP, decided without a name at once. */
	assert_int_equal(t_exchange(f, "SSH-2.0-x\r\n", 11, out, sizeof(out)), 11);
	assert_memory_equal(out, "SSH-2.0-x\r\n", 11);
	e = wait_event(f, 1);
	assert_string_equal(e->kind, "tcp");
	assert_true(e->allowed);
	/*
	 * A client that waits for the server: decided after the sniff time, then
	 * relayed once its first line cannot be a request (a bare token could
	 * still become a request line: held until the line ends).
	 */
	fd = t_client(f);
	usleep(400000);
	send_all(fd, "late\n", 5);
	assert_int_equal(recv_some(fd, out, sizeof(out), IO_TIMEOUT_MS), 5);
	close(fd);
	e = wait_event(f, 2);
	assert_string_equal(e->kind, "tcp");
	/* Where it was going is unknown: closed, never dialled. */
	f->no_orig = true;
	assert_int_equal(t_exchange(f, "x", 1, out, sizeof(out)), 0);
	e = wait_event(f, 3);
	assert_false(e->allowed);
	assert_string_equal(e->error, "original destination unknown");
	assert_int_equal(upstream_conns(f), 2);
}

/*
 * Silent past the sniff time, then a name: the first bytes are still read,
 * and the connection is decided by that name as if it had come in time.
 */
static void test_transparent_late_name(void **state)
{
	struct fixture *f = *state;
	unsigned char hello[512];
	char out[2048];
	const char *get = "GET /x HTTP/1.1\r\nHost: other.test\r\n\r\n";
	const useconds_t late = 400000; /* twice the fixture's sniff time */
	const struct ev_copy *e;
	size_t n;

	/* An allowed address, a late ClientHello for another name: closed, nothing relayed. */
	n = client_hello(hello, "other.test");
	assert_int_equal(t_exchange_after(f, late, hello, n, out, sizeof(out)), 0);
	e = wait_event(f, 1);
	assert_false(e->allowed);
	assert_string_equal(e->kind, "tls");
	assert_string_equal(e->host, "other.test");
	assert_string_equal(e->rule, "transparent:not-learned");
	assert_int_equal(e->up, 0);
	/* A late ClientHello for the name the address was learned for: relayed unchanged. */
	n = client_hello(hello, "allowed.test");
	assert_int_equal(t_exchange_after(f, late, hello, n, out, sizeof(out)), n);
	assert_memory_equal(out, hello, n);
	e = wait_event(f, 2);
	assert_true(e->allowed);
	assert_string_equal(e->host, "allowed.test");
	/* A late request with a foreign Host: srt's 403. */
	assert_true(t_exchange_after(f, late, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 403 Forbidden"));
	e = wait_event(f, 3);
	assert_false(e->allowed);
	assert_string_equal(e->kind, "http");
	/* Its allowed neighbour: rebuilt and answered. */
	get = "GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
	assert_true(t_exchange_after(f, late, get, strlen(get), out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	e = wait_event(f, 4);
	assert_true(e->allowed);
	assert_string_equal(e->kind, "http");
	/* Forwarded like a timely one: the response head was read (its status), not spliced through. */
	assert_int_equal(e->status, 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connect_tunnel_half_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_bulk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_early_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_dial_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_guard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_forward, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_bodies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_smuggling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_upstream_misbehaves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socks5_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socks5_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socks4a, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_clients, setup_short_idle, teardown),
		cmocka_unit_test_setup_teardown(test_slowloris, setup_short_idle, teardown),
		cmocka_unit_test_setup_teardown(test_idle_tunnel, setup_short_idle, teardown),
		cmocka_unit_test_setup_teardown(test_max_clients, setup_three_slots, teardown),
		cmocka_unit_test_setup_teardown(test_evict_waiting, setup_three_slots, teardown),
		cmocka_unit_test_setup_teardown(test_transparent_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transparent_http, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transparent_no_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transparent_late_name, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
