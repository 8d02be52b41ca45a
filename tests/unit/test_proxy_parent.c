// SPDX-License-Identifier: MIT
/*
 * Chaining to a parent proxy: the bytes bpfbox sends the parent (CONNECT
 * with Proxy-Authorization, SOCKS5 CONNECT by name or address, the
 * absolute-form rewrite of a forwarded request) and the parsers for what
 * the parent answers, including truncated and hostile answers; mitmProxy's
 * HTTP proxy on a Unix socket, used for the names it routes and no other.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "proxy/addr_guard.h"
#include "proxy/proxy_canon.h"
#include "proxy/proxy.h"
#include "proxy/proxy_parent.h"

static void test_basic(void **state)
{
	char out[64];

	assert_int_equal(proxy_parent_basic("Aladdin", "open sesame", out, sizeof(out)), 0);
	assert_string_equal(out, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");	/* RFC 7617's example */
	assert_int_equal(proxy_parent_basic("a", "", out, sizeof(out)), 0);
	assert_string_equal(out, "Basic YTo=");
	assert_int_equal(proxy_parent_basic("ab", "c", out, sizeof(out)), 0);
	assert_string_equal(out, "Basic YWI6Yw==");
	assert_int_equal(proxy_parent_basic("Aladdin", "open sesame", out, 20), -ENOSPC);
}

static void test_connect_request(void **state)
{
	char out[256];

	assert_int_equal(proxy_parent_connect_request("allowed.test", 443, NULL, out, sizeof(out)),
			 (ssize_t)strlen("CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n"));
	assert_string_equal(out, "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n");
	assert_true(proxy_parent_connect_request("fd00::2", 22, "Basic YTo=", out, sizeof(out)) > 0);
	assert_string_equal(out, "CONNECT [fd00::2]:22 HTTP/1.1\r\nHost: [fd00::2]:22\r\n"
			    "Proxy-Authorization: Basic YTo=\r\n\r\n");
	assert_int_equal(proxy_parent_connect_request("allowed.test", 443, NULL, out, 20), -ENOSPC);
}

static void test_http_reply(void **state)
{
	static const char ok[] = "HTTP/1.0 200 Connection established\r\nProxy-agent: tinyproxy/1.11.1\r\n\r\nSSH-2.0";
	unsigned status = 0;

	assert_int_equal(proxy_parent_http_reply(ok, sizeof(ok) - 1, &status), (ssize_t)(sizeof(ok) - 1 - 7));
	assert_int_equal(status, 200);
	/* Incomplete: wait for more; but a non-HTTP start is refused at once. */
	assert_int_equal(proxy_parent_http_reply(ok, 20, &status), 0);
	assert_int_equal(proxy_parent_http_reply("HTTP/1.", 7, &status), 0);
	assert_int_equal(proxy_parent_http_reply("SSH-2.0-x\r\n\r\n", 13, &status), -EINVAL);
	assert_int_equal(proxy_parent_http_reply("HTTP/2.0 200 OK\r\n\r\n", 19, &status), -EINVAL);
	assert_int_equal(proxy_parent_http_reply("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", 46, &status),
			 46);
	assert_int_equal(status, 407);
	assert_int_equal(proxy_parent_http_reply("HTTP/1.1 2x0 OK\r\n\r\n", 19, &status), -EINVAL);
	assert_int_equal(proxy_parent_http_reply("HTTP/1.1 099 OK\r\n\r\n", 19, &status), -EINVAL);
	assert_int_equal(proxy_parent_http_reply("HTTP/1.1 2000 OK\r\n\r\n", 20, &status), -EINVAL);
	assert_int_equal(proxy_parent_http_reply("HTTP/1.1 204\r\n\r\n", 16, &status), 16);
	assert_int_equal(status, 204);
}

static void test_socks5_connect(void **state)
{
	unsigned char out[300];

	assert_int_equal(proxy_parent_socks5_connect("allowed.test", 443, out, sizeof(out)), 4 + 1 + 12 + 2);
	assert_memory_equal(out, "\x05\x01\x00\x03\x0c" "allowed.test" "\x01\xbb", 19);
	assert_int_equal(proxy_parent_socks5_connect("10.0.0.5", 22, out, sizeof(out)), 10);
	assert_memory_equal(out, "\x05\x01\x00\x01\x0a\x00\x00\x05\x00\x16", 10);
	assert_int_equal(proxy_parent_socks5_connect("::1", 80, out, sizeof(out)), 22);
	assert_int_equal(out[3], 4);
	assert_int_equal(out[19], 1);
	assert_int_equal(proxy_parent_socks5_connect("", 80, out, sizeof(out)), -EINVAL);
	assert_int_equal(proxy_parent_socks5_connect("x", 80, out, 100), -ENOSPC);
}

static void test_socks5_reply(void **state)
{
	unsigned rep = 99;

	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x00\x00\x01\0\0\0\0\0\0", 10, &rep), 10);
	assert_int_equal(rep, 0);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x05\x00\x01\0\0\0\0\0\0", 10, &rep), 10);
	assert_int_equal(rep, 5);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x00\x00\x01\0\0\0", 7, &rep), 0);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x00\x00\x03\x03" "abc\0\x50", 10, &rep),
			 10);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x00\x00\x03\x03" "abc\0", 9, &rep), 0);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x00\x00\x04", 4, &rep), 0);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x04\x5a", 2, &rep), -EINVAL);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x00\x01", 3, &rep), -EINVAL);
	assert_int_equal(proxy_parent_socks5_reply((const unsigned char *)"\x05\x00\x00\x09\0", 5, &rep), -EINVAL);
}

static void test_absolute(void **state)
{
	char buf[256];
	static const char head[] = "GET /hello.txt?x=1 HTTP/1.1\r\nHost: allowed.test\r\nAccept: */*\r\n\r\n";
	ssize_t n;

	memcpy(buf, head, sizeof(head) - 1);
	n = proxy_parent_absolute(buf, sizeof(head) - 1, sizeof(buf), "allowed.test", 80, "Basic YTo=");
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "GET http://allowed.test/hello.txt?x=1 HTTP/1.1\r\nProxy-Authorization: Basic YTo=\r\n"
			    "Host: allowed.test\r\nAccept: */*\r\n\r\n");
	memcpy(buf, head, sizeof(head) - 1);
	n = proxy_parent_absolute(buf, sizeof(head) - 1, sizeof(buf), "fd00::2", 8080, NULL);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "GET http://[fd00::2]:8080/hello.txt?x=1 HTTP/1.1\r\nHost: allowed.test\r\nAccept: */*\r\n\r\n");
	memcpy(buf, head, sizeof(head) - 1);
	assert_int_equal(proxy_parent_absolute(buf, sizeof(head) - 1, sizeof(head) + 5, "allowed.test", 80, NULL),
			 -ENOSPC);
	assert_int_equal(proxy_parent_absolute(buf, 3, sizeof(buf), "allowed.test", 80, NULL), -EINVAL);
}

/* This host's loopback is never the parent's to reach. */
static void test_local_hosts(void **state)
{
	assert_true(proxy_host_is_local("localhost"));
	assert_true(proxy_host_is_local("api.localhost"));
	assert_true(proxy_host_is_local("127.0.0.1"));
	assert_true(proxy_host_is_local("127.9.9.9"));
	assert_true(proxy_host_is_local("::1"));
	assert_false(proxy_host_is_local("notlocalhost"));
	assert_false(proxy_host_is_local("localhost.example"));
	assert_false(proxy_host_is_local("10.0.0.1"));
	assert_false(proxy_host_is_local("198.18.0.1"));
	assert_false(proxy_host_is_local("::2"));
}

/* ---- end to end: a fake SOCKS5 parent with username/password, echoing after CONNECT ---- */

struct fake_parent {
	int lfd;
	unsigned short port;
	pthread_t thread;
	char seen_user[64], seen_pass[64], seen_host[256];
	unsigned seen_port;
	bool refuse_auth;
};

static bool rd(int fd, void *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 5000) <= 0)
			return false;
		r = recv(fd, (char *)b + got, n - got, 0);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static void *fake_main(void *arg)
{
	struct fake_parent *f = arg;
	unsigned char b[600];
	int fd = accept(f->lfd, NULL, NULL);
	ssize_t n;

	if (fd < 0)
		return NULL;
	/* Greeting: VER 5, one method, username/password. */
	if (!rd(fd, b, 3) || memcmp(b, "\x05\x01\x02", 3))
		goto out;
	send(fd, "\x05\x02", 2, 0);
	if (!rd(fd, b, 2) || b[0] != 1 || !rd(fd, b + 2, b[1] + 1u))
		goto out;
	memcpy(f->seen_user, b + 2, b[1]);
	n = b[2 + b[1]];
	if (!rd(fd, f->seen_pass, (size_t)n))
		goto out;
	if (f->refuse_auth) {
		send(fd, "\x01\x01", 2, 0);
		goto out;
	}
	send(fd, "\x01\x00", 2, 0);
	if (!rd(fd, b, 5) || memcmp(b, "\x05\x01\x00\x03", 4) || !rd(fd, f->seen_host, b[4]) || !rd(fd, b + 5, 2))
		goto out;
	f->seen_port = (unsigned)b[5] << 8 | b[6];
	/* The reply, then a banner at once (a server that speaks first), then echo. */
	send(fd, "\x05\x00\x00\x01\x0a\x00\x00\x01\x00\x16SSH-2.0-fake\r\n", 10 + 14, 0);
	while ((n = recv(fd, b, sizeof(b), 0)) > 0)
		send(fd, b, (size_t)n, 0);
out:
	close(fd);
	return NULL;
}

static void decide_all(void *ctx, const char *host, unsigned port, struct proxy_decision *out)
{
	out->allow = true;
	out->rule = "test";
}

static int connect_lo(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void run_socks_parent(bool refuse)
{
	struct fake_parent f = { .refuse_auth = refuse };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct proxy_parent pp = { .kind = PROXY_PARENT_SOCKS5, .naddrs = 1, .user = "bbuser", .pass = "pw:1",
				   .shown = "socks5://***@127.0.0.1:1" };
	struct addr_guard g;
	struct proxy_config cfg = { .decide = decide_all, .guard = &g, .parent = &pp };
	struct proxy *p;
	unsigned short port;
	char buf[256] = { 0 };
	static const char req[] = "CONNECT ssh.test:22 HTTP/1.1\r\nHost: ssh.test:22\r\n\r\n";
	int fd;

	f.lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(f.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f.lfd, 4), 0);
	assert_int_equal(getsockname(f.lfd, (struct sockaddr *)&a, &len), 0);
	memcpy(&pp.addrs[0], &a, sizeof(a));
	assert_int_equal(pthread_create(&f.thread, NULL, fake_main, &f), 0);
	addr_guard_init_empty(&g);
	assert_int_equal(proxy_start(&cfg, &p, &port), 0);
	fd = connect_lo(port);
	send(fd, req, sizeof(req) - 1, 0);
	if (refuse) {
		assert_true(rd(fd, buf, 12));
		assert_memory_equal(buf, "HTTP/1.1 502", 12);
	} else {
		static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\nSSH-2.0-fake\r\n";

		assert_true(rd(fd, buf, sizeof(ok) - 1));
		assert_memory_equal(buf, ok, sizeof(ok) - 1);
		send(fd, "ping", 4, 0);
		assert_true(rd(fd, buf, 4));
		assert_memory_equal(buf, "ping", 4);
	}
	close(fd);
	pthread_join(f.thread, NULL);
	proxy_stop(p);
	addr_guard_free(&g);
	close(f.lfd);
	assert_string_equal(f.seen_user, "bbuser");
	assert_string_equal(f.seen_pass, "pw:1");
	if (!refuse) {
		assert_string_equal(f.seen_host, "ssh.test");
		assert_int_equal(f.seen_port, 22);
	}
}

/* A CONNECT from the client goes to a SOCKS5 parent by name, with RFC 1929 credentials. */
static void test_socks_parent(void **state)
{
	run_socks_parent(false);
}

/* The parent refusing the credentials is a 502 to the client, never a direct dial. */
static void test_socks_parent_refuses(void **state)
{
	run_socks_parent(true);
}

/* mitmProxy's proxy: one Unix socket, each connection's request line kept, answered by its kind. */
struct fake_mitm {
	int lfd;
	pthread_t thread;
	char lines[4][160];
	int n;
};

static void *mitm_main(void *arg)
{
	struct fake_mitm *f = arg;

	for (int i = 0; i < 4; i++) {
		struct pollfd pl = { .fd = f->lfd, .events = POLLIN };
		char b[1024] = { 0 };
		size_t got = 0;
		ssize_t n;
		int fd;

		/* Quiet for 2 s: the test is done with the socket (no cancellation, which ASan mishandles). */
		if (poll(&pl, 1, 2000) <= 0)
			return NULL;
		fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		while (got < sizeof(b) - 1 && !strstr(b, "\r\n\r\n")) {
			if (!rd(fd, b + got, 1))
				break;
			got++;
		}
		*strchrnul(b, '\r') = 0;
		snprintf(f->lines[f->n++], sizeof(f->lines[0]), "%s", b);
		if (!strncmp(b, "CONNECT ", 8)) {
			send(fd, "HTTP/1.1 200 OK\r\n\r\n", 19, 0);
			while ((n = recv(fd, b, sizeof(b), 0)) > 0)
				send(fd, b, (size_t)n, 0);
		} else {
			send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmitm", 61, 0);
		}
		close(fd);
	}
	return NULL;
}

static struct proxy_parent mitm_parent = { .kind = PROXY_PARENT_HTTP, .naddrs = 1, .shown = "unix:test" };

static const struct proxy_parent *routes_mitm_test(void *ctx, const char *host, unsigned port)
{
	return !strcmp(host, "mitm.test") ? &mitm_parent : NULL;
}

static void test_mitm_unix(void **state)
{
	struct fake_mitm f = { 0 };
	char dir[] = "/tmp/bpfbox-test-mitm-XXXXXX";
	struct sockaddr_un *un;
	struct proxy_parent *mitm = &mitm_parent;
	struct addr_guard g;
	struct proxy_config cfg = { .decide = decide_all, .guard = &g, .mitm = routes_mitm_test, .idle_timeout_ms = 3000 };
	struct proxy *p;
	unsigned short port;
	char buf[256] = { 0 };
	static const char conn[] = "CONNECT mitm.test:443 HTTP/1.1\r\nHost: mitm.test:443\r\n\r\n";
	static const char get[] = "GET http://mitm.test/x HTTP/1.1\r\nHost: mitm.test\r\n\r\n";
	static const char other[] = "GET http://other.invalid/ HTTP/1.1\r\nHost: other.invalid\r\n\r\n";
	static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
	int fd;

	assert_non_null(mkdtemp(dir));
	un = (struct sockaddr_un *)&mitm->addrs[0];
	un->sun_family = AF_UNIX;
	snprintf(un->sun_path, sizeof(un->sun_path), "%s/mitm.sock", dir);
	f.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(f.lfd, (struct sockaddr *)un, sizeof(*un)), 0);
	assert_int_equal(listen(f.lfd, 4), 0);
	assert_int_equal(pthread_create(&f.thread, NULL, mitm_main, &f), 0);
	addr_guard_init_empty(&g);
	assert_int_equal(proxy_start(&cfg, &p, &port), 0);

	/* A tunnel to a routed name: CONNECT on the socket, then bytes both ways. */
	fd = connect_lo(port);
	send(fd, conn, sizeof(conn) - 1, 0);
	assert_true(rd(fd, buf, sizeof(ok) - 1));
	assert_memory_equal(buf, ok, sizeof(ok) - 1);
	send(fd, "ping", 4, 0);
	assert_true(rd(fd, buf, 4));
	assert_memory_equal(buf, "ping", 4);
	close(fd);

	/* Plain HTTP to a routed name: absolute-form, as to any HTTP proxy. */
	fd = connect_lo(port);
	send(fd, get, sizeof(get) - 1, 0);
	memset(buf, 0, sizeof(buf));
	assert_true(rd(fd, buf, 12));
	assert_memory_equal(buf, "HTTP/1.1 200", 12);
	close(fd);

	/* Another name never reaches the socket (it is resolved, and .invalid fails: 502). */
	fd = connect_lo(port);
	send(fd, other, sizeof(other) - 1, 0);
	assert_true(rd(fd, buf, 12));
	assert_memory_equal(buf, "HTTP/1.1 502", 12);
	close(fd);

	proxy_stop(p);
	pthread_join(f.thread, NULL);
	close(f.lfd);
	assert_int_equal(f.n, 2);
	assert_string_equal(f.lines[0], "CONNECT mitm.test:443 HTTP/1.1");
	assert_string_equal(f.lines[1], "GET http://mitm.test/x HTTP/1.1");
	unlink(un->sun_path);
	rmdir(dir);
	addr_guard_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_connect_request),
		cmocka_unit_test(test_http_reply),
		cmocka_unit_test(test_socks5_connect),
		cmocka_unit_test(test_socks5_reply),
		cmocka_unit_test(test_absolute),
		cmocka_unit_test(test_local_hosts),
		cmocka_unit_test(test_socks_parent),
		cmocka_unit_test(test_socks_parent_refuses),
		cmocka_unit_test(test_mitm_unix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
