// SPDX-License-Identifier: MIT
/*
 * proxy_recheck (issue 32, live policy): after the decisions change, the
 * proxy's loop closes every established connection to a name now denied,
 * both sides, one event each (closed "policy-revoked"), and leaves the
 * others relaying. A real proxy on loopback, an echo upstream that serves
 * many connections at once, real sockets; last, the same through the
 * sandbox's wiring with two real policies (sandbox_proxy_set_policy).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "proxy/addr_guard.h"
#include "proxy/proxy.h"
#include "sandbox/sandbox_proxy.h"

#define IO_MS 5000
#define CLOSE_BOUND_MS 2000	/* a revoked connection's client sees the end within this */
#define MAX_CONNS 16
#define MAX_EVENTS 32

/* ---- an upstream serving many connections at once: echo, or a download that stalls ---- */

struct upstream {
	int lfd[2];
	unsigned short port[2];
	size_t nl;
	pthread_t thread;
	atomic_bool stop;
	atomic_uint closed;	/* connections that ended (the proxy closed its side) */
};

static int listen_on(const char *ip, unsigned short *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
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

/* A request head: the answer promises 100 bytes and sends 10 (a long download under way). */
#define STALLED_HEAD "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
#define STALLED_PART "0123456789"

/* One read's answer; false once the connection ended (closed here). */
static bool serve(struct upstream *u, int fd)
{
	char buf[4096];
	ssize_t r = recv(fd, buf, sizeof(buf), 0);

	if (r <= 0) {
		atomic_fetch_add(&u->closed, 1);
		close(fd);
		return false;
	}
	if (r >= 4 && !memcmp(buf, "GET ", 4))
		send_all(fd, STALLED_HEAD STALLED_PART, strlen(STALLED_HEAD STALLED_PART));
	else
		send_all(fd, buf, (size_t)r);
	return true;
}

static void *upstream_main(void *arg)
{
	struct upstream *u = arg;
	struct pollfd p[2 + MAX_CONNS];
	size_t n = u->nl;

	for (size_t i = 0; i < u->nl; i++)
		p[i] = (struct pollfd){ .fd = u->lfd[i], .events = POLLIN };
	while (!atomic_load(&u->stop)) {
		if (poll(p, n, 50) <= 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (i < u->nl) {
				int fd = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);

				if (fd >= 0 && n < 2 + MAX_CONNS)
					p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
				else if (fd >= 0)
					close(fd);
				continue;
			}
			if (!serve(u, p[i].fd))
				p[i--] = p[--n];
		}
	}
	for (size_t i = u->nl; i < n; i++)
		close(p[i].fd);
	return NULL;
}

static void upstream_start(struct upstream *u, const char *const *ips, size_t n)
{
	memset(u, 0, sizeof(*u));
	for (size_t i = 0; i < n; i++)
		u->lfd[i] = listen_on(ips[i], &u->port[i]);
	u->nl = n;
	assert_int_equal(pthread_create(&u->thread, NULL, upstream_main, u), 0);
}

static void upstream_stop(struct upstream *u)
{
	atomic_store(&u->stop, true);
	pthread_join(u->thread, NULL);
	for (size_t i = 0; i < u->nl; i++)
		close(u->lfd[i]);
}

/* ---- the proxy: gone.test and keep.test allowed until gone.test is revoked ---- */

struct ev_copy {
	char protocol[16], host[64], rule[64], error[160], closed[32];
	bool allowed;
};

struct fixture {
	struct proxy *proxy;
	unsigned short port;
	struct addr_guard guard;
	struct upstream up;
	atomic_bool revoked;
	pthread_mutex_t lock;
	struct ev_copy ev[MAX_EVENTS];
	size_t nev;
};

static void decide(void *ctx, const char *host, unsigned port, struct proxy_decision *out)
{
	struct fixture *f = ctx;

	out->allow = !strcmp(host, "keep.test") || (!strcmp(host, "gone.test") && !atomic_load(&f->revoked));
	out->rule = out->allow ? "allowedDomains:test" : "default:deny";
}

static int resolve(void *ctx, const char *host, struct sockaddr_storage *out, size_t max, size_t *n)
{
	struct sockaddr_in *s = (struct sockaddr_in *)out;

	memset(out, 0, sizeof(*out));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*n = 1;
	return 0;
}

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static void on_event(void *ctx, const struct proxy_event *e)
{
	struct fixture *f = ctx;

	pthread_mutex_lock(&f->lock);
	if (f->nev < MAX_EVENTS) {
		struct ev_copy *c = &f->ev[f->nev++];

		copy(c->protocol, sizeof(c->protocol), e->protocol);
		copy(c->host, sizeof(c->host), e->host);
		copy(c->rule, sizeof(c->rule), e->rule);
		copy(c->error, sizeof(c->error), e->error);
		copy(c->closed, sizeof(c->closed), e->closed);
		c->allowed = e->allowed;
	}
	pthread_mutex_unlock(&f->lock);
}

/* Every redirected connection was going to the upstream. */
static int t_orig_dst(void *ctx, const struct sockaddr_storage *client, unsigned short listener,
		      struct sockaddr_storage *orig, struct proxy_peer *peer)
{
	struct fixture *f = ctx;
	struct sockaddr_in *s = (struct sockaddr_in *)orig;

	memset(orig, 0, sizeof(*orig));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->sin_port = htons(f->up.port[0]);
	return 0;
}

static void t_decide(void *ctx, const char *name, const struct sockaddr_storage *orig, struct proxy_decision *out)
{
	decide(ctx, name ? name : "", 0, out);
}

static const struct proxy_transparent t_cfg = { .orig_dst = t_orig_dst, .decide = t_decide, .sniff_ms = 200 };

static int setup(void **state)
{
	static const char *const ips[] = { "127.0.0.1" };
	struct fixture *f = calloc(1, sizeof(*f));
	struct proxy_config cfg = {
		.decide = decide, .on_event = on_event, .resolve = resolve, .transparent = &t_cfg,
		.idle_timeout_ms = 30000,
	};
	const char *err;

	assert_non_null(f);
	pthread_mutex_init(&f->lock, NULL);
	addr_guard_init_empty(&f->guard);
	assert_int_equal(addr_guard_add_allow(&f->guard, "127.0.0.1", &err), 0);
	upstream_start(&f->up, ips, 1);
	cfg.ctx = f;
	cfg.guard = &f->guard;
	assert_int_equal(proxy_start(&cfg, &f->proxy, &f->port), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	proxy_stop(f->proxy);
	upstream_stop(&f->up);
	addr_guard_free(&f->guard);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return 0;
}

/* ---- clients ---- */

static int connect_to(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Exactly n bytes within IO_MS. */
static void read_n(int fd, void *buf, size_t n)
{
	size_t len = 0;

	while (len < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		assert_int_equal(poll(&p, 1, IO_MS), 1);
		r = recv(fd, (char *)buf + len, n - len, 0);
		assert_true(r > 0);
		len += (size_t)r;
	}
}

/* A CONNECT tunnel through the proxy to host:port, answered 200. */
static int tunnel(struct fixture *f, const char *host, unsigned short port)
{
	static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
	char req[160], got[sizeof(ok)] = { 0 };
	int fd = connect_to(f->port);

	snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\nHost: %s\r\n\r\n", host, port, host);
	send_all(fd, req, strlen(req));
	read_n(fd, got, sizeof(ok) - 1);
	assert_string_equal(got, ok);
	return fd;
}

/* A SOCKS5 tunnel to host:port, granted. */
static int socks5_tunnel(struct fixture *f, const char *host, unsigned short port)
{
	unsigned char m[300], rep[10];
	size_t hl = strlen(host);
	int fd = connect_to(f->port);

	send_all(fd, "\x05\x01\x00", 3);
	read_n(fd, rep, 2);
	assert_memory_equal(rep, "\x05\x00", 2);
	m[0] = 5, m[1] = 1, m[2] = 0, m[3] = 3, m[4] = (unsigned char)hl;
	memcpy(m + 5, host, hl);
	m[5 + hl] = (unsigned char)(port >> 8), m[6 + hl] = (unsigned char)port;
	send_all(fd, m, 7 + hl);
	read_n(fd, rep, 10);
	assert_int_equal(rep[1], 0);
	return fd;
}

/* Bytes sent come back through the tunnel: it relays both ways. */
static void echoes(int fd, const char *what)
{
	char buf[64] = { 0 };

	send_all(fd, what, strlen(what));
	read_n(fd, buf, strlen(what));
	assert_string_equal(buf, what);
}

/* The client's socket ends (EOF or reset) within CLOSE_BOUND_MS, no byte before it. */
static void ends_soon(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	assert_int_equal(poll(&p, 1, CLOSE_BOUND_MS), 1);
	assert_true(recv(fd, &c, 1, 0) <= 0);
}

static size_t event_count(struct fixture *f)
{
	size_t n;

	pthread_mutex_lock(&f->lock);
	n = f->nev;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static void wait_events(struct fixture *f, size_t n)
{
	for (int i = 0; i < 300 && event_count(f) < n; i++)
		usleep(10000);
	assert_int_equal(event_count(f), n);
}

static void wait_upstream_closed(struct upstream *u, unsigned n)
{
	for (int i = 0; i < 300 && atomic_load(&u->closed) < n; i++)
		usleep(10000);
	assert_int_equal(atomic_load(&u->closed), n);
}

static void assert_revoked_event(const struct ev_copy *e, const char *protocol)
{
	assert_string_equal(e->protocol, protocol);
	assert_string_equal(e->host, "gone.test");
	assert_false(e->allowed);
	assert_string_equal(e->rule, "default:deny");
	assert_string_equal(e->closed, "policy-revoked");
	assert_string_equal(e->error, "closed: the policy no longer allows this name");
}

/* ---- tests ---- */

/* CONNECT and SOCKS5 tunnels to the revoked name end, both sides; the one to the kept name relays on. */
static void tunnels_to_a_revoked_name_are_closed(void **state)
{
	struct fixture *f = *state;
	int gone = tunnel(f, "gone.test", f->up.port[0]);
	int gone5 = socks5_tunnel(f, "gone.test", f->up.port[0]);
	int keep = tunnel(f, "keep.test", f->up.port[0]);

	echoes(gone, "before");
	echoes(gone5, "before5");
	echoes(keep, "kept");
	/* Nothing changed: a recheck closes nothing. */
	proxy_recheck(f->proxy);
	usleep(100000);
	echoes(gone, "still");
	assert_int_equal(event_count(f), 0);

	atomic_store(&f->revoked, true);
	proxy_recheck(f->proxy);
	ends_soon(gone);
	ends_soon(gone5);
	wait_upstream_closed(&f->up, 2);
	echoes(keep, "still relaying");
	echoes(keep, "both ways");
	wait_events(f, 2);
	assert_revoked_event(&f->ev[0], strcmp(f->ev[0].protocol, "socks5") ? "http-connect" : "socks5");
	assert_revoked_event(&f->ev[1], strcmp(f->ev[0].protocol, "socks5") ? "socks5" : "http-connect");
	/* The kept tunnel ends when its client closes: an ordinary event, not a revoked one. */
	close(gone);
	close(gone5);
	close(keep);
	wait_events(f, 3);
	assert_string_equal(f->ev[2].host, "keep.test");
	assert_true(f->ev[2].allowed);
	assert_string_equal(f->ev[2].closed, "");
}

/* A plain HTTP request whose answer is still coming from the revoked name: both sides closed. */
static void plain_http_to_a_revoked_name_is_closed(void **state)
{
	struct fixture *f = *state;
	char req[160], got[512] = { 0 };
	size_t len = 0;
	int fd = connect_to(f->port);

	snprintf(req, sizeof(req), "GET http://gone.test:%u/big HTTP/1.1\r\nHost: gone.test:%u\r\n\r\n",
		 f->up.port[0], f->up.port[0]);
	send_all(fd, req, strlen(req));
	/* The proxy rewrites the head (Connection: close); the body's first part arrives. */
	while (len < 10 || memcmp(got + len - 10, STALLED_PART, 10)) {
		assert_true(len + 1 < sizeof(got));
		read_n(fd, got + len++, 1);
	}
	assert_non_null(strstr(got, "200 OK"));
	atomic_store(&f->revoked, true);
	proxy_recheck(f->proxy);
	ends_soon(fd);
	wait_upstream_closed(&f->up, 1);
	wait_events(f, 1);
	assert_revoked_event(&f->ev[0], "http");
	close(fd);
}

/* A connection the kernel redirected, decided by its TLS server_name: closed when the name goes. */
static void transparent_to_a_revoked_name_is_closed(void **state)
{
	struct fixture *f = *state;
	unsigned short p4, p6;
	/* A minimal ClientHello naming gone.test. */
	static const char name[] = "gone.test";
	unsigned char b[128], back[128];
	size_t nl = strlen(name), o = 0, hs = 2 + 32 + 1 + 4 + 2 + 2 + 9 + nl;
	int fd;

	b[o++] = 22, b[o++] = 3, b[o++] = 1, b[o++] = (unsigned char)((hs + 4) >> 8), b[o++] = (unsigned char)(hs + 4);
	b[o++] = 1, b[o++] = 0, b[o++] = (unsigned char)(hs >> 8), b[o++] = (unsigned char)hs;
	b[o++] = 3, b[o++] = 3;
	memset(b + o, 7, 32), o += 32;
	b[o++] = 0, b[o++] = 0, b[o++] = 2, b[o++] = 0x13, b[o++] = 0x01, b[o++] = 1, b[o++] = 0;
	b[o++] = 0, b[o++] = (unsigned char)(9 + nl);
	b[o++] = 0, b[o++] = 0, b[o++] = 0, b[o++] = (unsigned char)(5 + nl);
	b[o++] = 0, b[o++] = (unsigned char)(3 + nl), b[o++] = 0, b[o++] = 0, b[o++] = (unsigned char)nl;
	memcpy(b + o, name, nl), o += nl;
	proxy_transparent_ports(f->proxy, &p4, &p6);
	fd = connect_to(p4);
	send_all(fd, b, o);
	read_n(fd, back, o);
	assert_memory_equal(back, b, o);
	atomic_store(&f->revoked, true);
	proxy_recheck(f->proxy);
	ends_soon(fd);
	wait_upstream_closed(&f->up, 1);
	wait_events(f, 1);
	assert_revoked_event(&f->ev[0], "transparent");
	close(fd);
}

/* ---- the sandbox's wiring: a real policy swap asks for the recheck ---- */

static struct policy *load(const char *domains)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/w", .home = "/nonexistent-bpfbox/h" };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *json = NULL;

	assert_true(asprintf(&json,
			     "{\"network\": {\"allowedDomains\": %s, \"deniedDomains\": []}, \"filesystem\": "
			     "{\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}}",
			     domains) > 0);
	if (policy_load_buffer("t", json, strlen(json), &o, &p, &d))
		fail_msg("rejected: %s", json);
	free(json);
	diag_list_free(&d);
	return p;
}

/* A allows 127.0.0.1 and 127.0.0.2, B only 127.0.0.2: the swap closes the tunnel to .1 alone. */
static void sandbox_policy_swap_closes_revoked_tunnels(void **state)
{
	static const char *const ips[] = { "127.0.0.1", "127.0.0.2" };
	struct policy *a = load("[\"127.0.0.1\", \"127.0.0.2\"]");
	struct policy *b = load("[\"127.0.0.2\"]");
	struct errmsg em = { { 0 } };
	struct sandbox_proxy sp;
	struct fixture f = { 0 };
	int gone, keep;

	(void)state;
	upstream_start(&f.up, ips, 2);
	assert_int_equal(sandbox_proxy_start(&sp, a, NULL, &em), 0);
	f.port = sp.port;
	gone = tunnel(&f, "127.0.0.1", f.up.port[0]);
	keep = tunnel(&f, "127.0.0.2", f.up.port[1]);
	echoes(gone, "one");
	echoes(keep, "two");
	sandbox_proxy_set_policy(&sp, b);
	ends_soon(gone);
	wait_upstream_closed(&f.up, 1);
	echoes(keep, "two still");
	close(gone);
	close(keep);
	sandbox_proxy_stop(&sp);
	upstream_stop(&f.up);
	policy_free(a);
	policy_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tunnels_to_a_revoked_name_are_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(plain_http_to_a_revoked_name_is_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(transparent_to_a_revoked_name_is_closed, setup, teardown),
		cmocka_unit_test(sandbox_policy_swap_closes_revoked_tunnels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
