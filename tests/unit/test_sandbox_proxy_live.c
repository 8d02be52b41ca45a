// SPDX-License-Identifier: MIT
/*
 * The settings the proxy follows live beside its decisions (srt changes them
 * live too): network.mitmProxy, tlsTerminate's maxTunnels and
 * handshakeTimeoutMs and credentials.sigv4. The sandbox's wiring with real
 * policies swapped by sandbox_proxy_prepare + sandbox_proxy_set_policy, a
 * real proxy on loopback, real sockets: a mitmProxy turned on and moved
 * live, maxTunnels lowered under held tunnels, the SigV4 modes the proxy
 * asks for, and mitmProxy beside tlsTerminate refused as at start.
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
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "cred/cred_subst.h"
#include "lib/diag.h"
#include "policy/policy.h"
#include "proxy/proxy.h"
#include "sandbox/sandbox_cred.h"
#include "sandbox/sandbox_proxy.h"
#include "tls/tls_ca.h"
#include "tls/tls_leaf.h"
#include "tls/tls_upstream.h"

#define IO_MS 5000

/* A whole settings document (its filesystem section added); NULL when refused, the reason in why. */
static struct policy *load_doc(const char *extra, char *why, size_t cap)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/w", .home = "/nonexistent-bpfbox/h" };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *json = NULL;

	assert_true(asprintf(&json, "{%s, \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], "
			     "\"denyWrite\": []}}", extra) > 0);
	if (policy_load_buffer("t", json, strlen(json), &o, &p, &d)) {
		p = NULL;
		for (size_t i = 0, len = 0; i < d.n && len < cap; i++, len = strlen(why))
			if (d.items[i].severity == DIAG_ERROR)
				snprintf(why + len, cap - len, "%s: %s; ", d.items[i].path, d.items[i].message);
	}
	free(json);
	diag_list_free(&d);
	return p;
}

static struct policy *load(const char *extra)
{
	char why[512] = "";
	struct policy *p = load_doc(extra, why, sizeof(why));

	if (!p)
		fail_msg("rejected: %s: %s", extra, why);
	return p;
}

/* The policy in force from now on, as sandbox_run_update puts it: prepared, then set. */
static void swap(struct sandbox_proxy *sp, const struct policy *p)
{
	struct errmsg em = { "" };

	if (sandbox_proxy_prepare(sp, p, &em))
		fail_msg("prepare: %s", em.text);
	sandbox_proxy_set_policy(sp, p);
}

static int connect_to(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Sends req and reads until the answer's head has ended (or the peer closed). */
static void ask(int fd, const char *req, char *out, size_t cap)
{
	size_t len = 0;

	assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	out[0] = '\0';
	while (len + 1 < cap && !strstr(out, "\r\n\r\n")) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, IO_MS), 1);
		n = recv(fd, out + len, cap - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		out[len] = '\0';
	}
}

/* ---- mitmProxy: stand-ins on Unix sockets, each answering 203 with its own name ---- */

struct mitm {
	char path[108];
	const char *name;
	int lfd;
	pthread_t thread;
	atomic_int requests;
};

static void *mitm_main(void *arg)
{
	struct mitm *m = arg;
	char buf[2048], answer[160];
	int fd;

	while ((fd = accept(m->lfd, NULL, NULL)) >= 0) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n > 0) {
			atomic_fetch_add(&m->requests, 1);
			snprintf(answer, sizeof(answer), "HTTP/1.1 203 Non-Authoritative Information\r\n"
				 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen(m->name), m->name);
			send(fd, answer, strlen(answer), MSG_NOSIGNAL);
		}
		close(fd);
	}
	return NULL;
}

static void mitm_start(struct mitm *m, const char *dir, const char *name)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };

	m->name = name;
	snprintf(m->path, sizeof(m->path), "%s/%s.sock", dir, name);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", m->path);
	m->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(m->lfd >= 0);
	assert_int_equal(bind(m->lfd, (struct sockaddr *)&un, sizeof(un)), 0);
	assert_int_equal(listen(m->lfd, 8), 0);
	assert_int_equal(pthread_create(&m->thread, NULL, mitm_main, m), 0);
}

static void mitm_stop(struct mitm *m)
{
	shutdown(m->lfd, SHUT_RDWR);
	pthread_join(m->thread, NULL);
	close(m->lfd);
	unlink(m->path);
}

/* One plain GET for m.test through the proxy: the answer's body. */
static void get_m(const struct sandbox_proxy *sp, char *out, size_t cap)
{
	int fd = connect_to(sp->port);

	ask(fd, "GET http://m.test/x HTTP/1.1\r\nHost: m.test\r\n\r\n", out, cap);
	/* The stand-in closes: the body follows the head. */
	for (size_t len = strlen(out); len + 1 < cap;) {
		ssize_t n = recv(fd, out + len, cap - 1 - len, 0);

		if (n <= 0)
			break;
		len += (size_t)n;
		out[len] = '\0';
	}
	close(fd);
}

static char *mitm_doc(const char *path)
{
	char *s = NULL;

	assert_true(asprintf(&s, "\"network\": {\"deniedDomains\": [], \"allowedDomains\": [\"m.test\"], \"mitmProxy\": "
			     "{\"socketPath\": \"%s\", \"domains\": [\"m.test\"]}}", path) > 0);
	return s;
}

/* Off at the start, turned on live, moved to another socket and back: each new request goes where the policy says. */
static void mitm_follows_swap(void **state)
{
	char dir[] = "/tmp/bpfbox-test-mitm-live-XXXXXX", out[1024], *da, *db, *dc;
	struct mitm m1 = { 0 }, m2 = { 0 };
	struct sandbox_proxy sp;
	struct errmsg em = { "" };
	struct policy *off, *a, *b, *c;

	assert_non_null(mkdtemp(dir));
	mitm_start(&m1, dir, "m-one");
	mitm_start(&m2, dir, "m-two");
	da = mitm_doc(m1.path);
	db = mitm_doc(m2.path);
	off = load("\"network\": {\"deniedDomains\": [], \"allowedDomains\": [\"m.test\"]}");
	a = load(da);
	b = load(db);
	assert_int_equal(sandbox_proxy_start(&sp, off, NULL, &em), 0);

	swap(&sp, a);
	get_m(&sp, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 203 "));
	assert_non_null(strstr(out, "m-one"));
	swap(&sp, b);
	get_m(&sp, out, sizeof(out));
	assert_non_null(strstr(out, "m-two"));
	/* A policy already seen keeps its socket (prepared once). */
	swap(&sp, a);
	get_m(&sp, out, sizeof(out));
	assert_non_null(strstr(out, "m-one"));
	assert_int_equal(atomic_load(&m1.requests), 2);
	assert_int_equal(atomic_load(&m2.requests), 1);
	/* Set without being prepared (a caller's bug): the routed name fails closed, never dialled directly. */
	snprintf(out, sizeof(out), "%s/m-three.sock", dir);
	dc = mitm_doc(out);
	c = load(dc);
	sandbox_proxy_set_policy(&sp, c);
	get_m(&sp, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 502 "));

	sandbox_proxy_stop(&sp);
	mitm_stop(&m1);
	mitm_stop(&m2);
	rmdir(dir);
	policy_free(off);
	policy_free(a);
	policy_free(b);
	policy_free(c);
	free(da);
	free(db);
	free(dc);
}

/* ---- tlsTerminate's bounds: held tunnels (handshake not begun), a new one after each swap ---- */

struct tls_fixture {
	struct tls_ca *ca;
	struct tls_leaf_cache *leaves;
	SSL_CTX *upstream;
	struct proxy_tls tls;
	int up_fd;		/* listens on 127.0.0.1, never accepts: the kernel completes the dials */
	unsigned short up_port;
	struct sandbox_proxy sp;
};

static char *tls_doc(unsigned max_tunnels)
{
	char *s = NULL;

	assert_true(asprintf(&s, "\"network\": {\"deniedDomains\": [], \"allowedDomains\": [\"127.0.0.1\"], \"tlsTerminate\": "
			     "{\"maxTunnels\": %u, \"handshakeTimeoutMs\": 60000}}", max_tunnels) > 0);
	return s;
}

static void tls_fixture_start(struct tls_fixture *f, const struct policy *p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct errmsg em = { "" };
	const char *why = NULL;

	assert_int_equal(tls_ca_generate("test", 3600, &f->ca), 0);
	assert_int_equal(tls_leaf_cache_new(f->ca, 8, 3600, &f->leaves), 0);
	assert_int_equal(tls_upstream_ctx_new(NULL, NULL, 0, &f->upstream, &why), 0);
	/* The start's values; the policy in force decides (its bounds callback). */
	f->tls = (struct proxy_tls){ .leaves = f->leaves, .upstream = f->upstream, .max_tunnels = 1000,
				     .handshake_ms = 60000 };
	f->up_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(f->up_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->up_fd, 16), 0);
	assert_int_equal(getsockname(f->up_fd, (struct sockaddr *)&a, &alen), 0);
	f->up_port = ntohs(a.sin_port);
	if (sandbox_proxy_start_transparent(&f->sp, p, NULL, NULL, -1, 0, &f->tls, NULL, &em))
		fail_msg("start: %s", em.text);
}

static void tls_fixture_stop(struct tls_fixture *f)
{
	sandbox_proxy_stop(&f->sp);
	close(f->up_fd);
	SSL_CTX_free(f->upstream);
	tls_leaf_cache_free(f->leaves);
	tls_ca_free(f->ca);
}

/* A CONNECT to the upstream: its answer's head in out; the socket, kept open by the caller. */
static int tunnel(struct tls_fixture *f, char *out, size_t cap)
{
	char req[128];
	int fd = connect_to(f->sp.port);

	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", f->up_port,
		 f->up_port);
	ask(fd, req, out, cap);
	return fd;
}

/* Still open: no end, no error within a moment. */
static bool still_open(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 100) == 0;
}

static void max_tunnels_follows_swap(void **state)
{
	struct tls_fixture f = { 0 };
	char out[1024], *d3 = tls_doc(3), *d1 = tls_doc(1);
	struct policy *three = load(d3), *one = load(d1);
	int held[3], fd;

	tls_fixture_start(&f, three);
	for (int i = 0; i < 2; i++) {
		held[i] = tunnel(&f, out, sizeof(out));
		assert_non_null(strstr(out, "HTTP/1.1 200 "));
	}
	/* Lowered under the two held: they go on, a new one is refused as at start. */
	swap(&f.sp, one);
	fd = tunnel(&f, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 503 "));
	assert_non_null(strstr(out, "X-Proxy-Error: too-many-tunnels"));
	close(fd);
	assert_true(still_open(held[0]));
	assert_true(still_open(held[1]));
	/* Raised again: room for a third. */
	swap(&f.sp, three);
	held[2] = tunnel(&f, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 "));
	for (int i = 0; i < 3; i++)
		close(held[i]);
	tls_fixture_stop(&f);
	policy_free(three);
	policy_free(one);
	free(d3);
	free(d1);
}

/* A new handshake gets the bound in force: lowered to 100 ms, a silent client's tunnel ends soon. */
static void handshake_timeout_follows_swap(void **state)
{
	struct tls_fixture f = { 0 };
	char out[1024], *d = tls_doc(3), *fast = NULL;
	struct policy *slow = load(d), *quick;
	struct pollfd p;
	int fd;

	assert_true(asprintf(&fast, "\"network\": {\"deniedDomains\": [], \"allowedDomains\": [\"127.0.0.1\"], \"tlsTerminate\": "
			     "{\"maxTunnels\": 3, \"handshakeTimeoutMs\": 100}}") > 0);
	quick = load(fast);
	tls_fixture_start(&f, slow);
	swap(&f.sp, quick);
	fd = tunnel(&f, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 "));
	/* No ClientHello: the proxy's side gives up after 100 ms (well before 60 s). */
	p = (struct pollfd){ .fd = fd, .events = POLLIN | POLLRDHUP };
	assert_int_equal(poll(&p, 1, 10000), 1);
	close(fd);
	tls_fixture_stop(&f);
	policy_free(slow);
	policy_free(quick);
	free(d);
	free(fast);
}

/* mitmProxy beside tlsTerminate: refused by the settings file as at start, and by the running proxy. */
static void mitm_with_tls_refused(void **state)
{
	struct tls_fixture f = { 0 };
	char why[512] = "", *d = tls_doc(3), *both = NULL, *m = mitm_doc("/tmp/bpfbox-no.sock");
	struct policy *tls = load(d), *mitm = load(m);
	struct errmsg em = { "" };

	assert_true(asprintf(&both, "\"network\": {\"deniedDomains\": [], \"allowedDomains\": [\"m.test\"], \"tlsTerminate\": {}, "
			     "\"mitmProxy\": {\"socketPath\": \"/tmp/x.sock\", \"domains\": [\"m.test\"]}}") > 0);
	assert_null(load_doc(both, why, sizeof(why)));
	assert_non_null(strstr(why, "mitmProxy and tlsTerminate are exclusive"));
	tls_fixture_start(&f, tls);
	assert_int_equal(sandbox_proxy_prepare(&f.sp, mitm, &em), -EINVAL);
	assert_non_null(strstr(em.text, "mitmProxy and tlsTerminate are exclusive"));
	tls_fixture_stop(&f);
	policy_free(tls);
	policy_free(mitm);
	free(d);
	free(m);
	free(both);
}

/* ---- credentials.sigv4: the modes the proxy asks for each request ---- */

static void sigv4_follows_swap(void **state)
{
	static const char net[] = "\"network\": {\"deniedDomains\": [], \"allowedDomains\": [\"a.test\"]}";
	struct cred_table *t = cred_table_new();
	struct sandbox_cred sc = { 0 };
	struct cred_sigv4_policy modes;
	struct sandbox_proxy sp;
	struct errmsg em = { "" };
	struct policy *deny, *pass;
	char *doc = NULL;

	assert_non_null(t);
	assert_true(cred_table_add(t, "K", "SENTINEL", 8, "REALVALUE", 9) >= 0);
	sc.table = t;
	sc.n_pairs = 1;
	deny = load(net);
	assert_true(asprintf(&doc, "%s, \"credentials\": {\"sigv4\": {\"streaming\": \"passthrough\", "
			     "\"sigv4a\": \"passthrough\"}}", net) > 0);
	pass = load(doc);
	assert_int_equal(sandbox_proxy_start_transparent(&sp, deny, NULL, NULL, -1, 0, NULL, &sc, &em), 0);
	assert_non_null(sp.pcred.sigv4_modes);
	sp.pcred.sigv4_modes(&sp, &modes);
	assert_int_equal(modes.streaming, CRED_SIGV4_POLICY_DENY);
	assert_int_equal(modes.sigv4a, CRED_SIGV4_POLICY_DENY);
	swap(&sp, pass);
	sp.pcred.sigv4_modes(&sp, &modes);
	assert_int_equal(modes.streaming, CRED_SIGV4_POLICY_PASSTHROUGH);
	assert_int_equal(modes.presigned, CRED_SIGV4_POLICY_DENY);
	assert_int_equal(modes.sigv4a, CRED_SIGV4_POLICY_PASSTHROUGH);
	swap(&sp, deny);
	sp.pcred.sigv4_modes(&sp, &modes);
	assert_int_equal(modes.streaming, CRED_SIGV4_POLICY_DENY);
	sandbox_proxy_stop(&sp);
	cred_table_free(t);
	policy_free(deny);
	policy_free(pass);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mitm_follows_swap),
		cmocka_unit_test(max_tunnels_follows_swap),
		cmocka_unit_test(handshake_timeout_follows_swap),
		cmocka_unit_test(mitm_with_tls_refused),
		cmocka_unit_test(sigv4_follows_swap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
