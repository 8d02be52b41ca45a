// SPDX-License-Identifier: MIT
/* Proxy HTTP parsers: heads, targets, framing, rebuilt requests, chunked bodies. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/proxy.h"
#include "proxy/proxy_chunked.h"
#include "proxy/proxy_http.h"

static ssize_t head_end(const char *s)
{
	size_t scan = 0;

	return proxy_head_end(s, strlen(s), &scan);
}

static void test_head_end(void **state)
{
	size_t scan = 0;
	const char *s = "GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY";

	assert_int_equal(head_end(s), (ssize_t)strlen(s) - 4);
	assert_int_equal(head_end("GET / HTTP/1.1\r\nHost: a\r\n"), 0);
	assert_int_equal(head_end("GET / HTTP/1.1\nHost: a\n\n"), -EBADMSG);
	assert_int_equal(head_end("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), -EBADMSG);
	/* NUL inside the head */
	assert_int_equal(proxy_head_end("GET /\0 HTTP/1.1\r\n\r\n", 20, &scan), -EBADMSG);
	/* Incremental: a CR at the end waits for its LF. */
	scan = 0;
	assert_int_equal(proxy_head_end("GET / HTTP/1.1\r\n\r", 17, &scan), 0);
	assert_int_equal(proxy_head_end("GET / HTTP/1.1\r\n\r\n", 18, &scan), 18);
}

static int parse(const char *s, struct proxy_request *req)
{
	return proxy_parse_request(s, strlen(s), req);
}

static void test_request_line(void **state)
{
	struct proxy_request req;

	assert_int_equal(parse("GET http://a.example/x?y HTTP/1.1\r\nHost: a\r\nX-A:  v v \r\n\r\n",
			       &req), 0);
	assert_true(proxy_span_ieq(req.method, "GET"));
	assert_int_equal(req.target.n, strlen("http://a.example/x?y"));
	assert_int_equal(req.minor, 1);
	assert_int_equal(req.nhdr, 2);
	assert_int_equal(req.hdr[1].value.n, 3);	/* "v v": outer whitespace trimmed */
	assert_int_equal(parse("CONNECT a:443 HTTP/1.0\r\n\r\n", &req), 0);
	assert_int_equal(req.minor, 0);

	assert_int_equal(parse("GET  / HTTP/1.1\r\n\r\n", &req), -EBADMSG);	/* two spaces */
	assert_int_equal(parse("GET / HTTP/2.0\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("GET / HTTP/1.1 \r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("GET /\x7f HTTP/1.1\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("G(T / HTTP/1.1\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse(" GET / HTTP/1.1\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost : a\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("GET / HTTP/1.1\r\n: a\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("GET / HTTP/1.1\r\nX: a\x01\r\n\r\n", &req), -EBADMSG);
	assert_int_equal(parse("GET / HTTP/1.1\r\nNoColon\r\n\r\n", &req), -EBADMSG);
}

static void test_too_many_headers(void **state)
{
	static char buf[8192];
	struct proxy_request req;
	size_t n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\n");

	for (int i = 0; i <= PROXY_MAX_HEADERS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "X-%d: y\r\n", i);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\r\n");
	assert_int_equal(proxy_parse_request(buf, n, &req), -E2BIG);
}

static int auth(const char *s, unsigned dflt, struct proxy_authority *a)
{
	return proxy_parse_authority(s, strlen(s), dflt, a);
}

static void test_authority(void **state)
{
	struct proxy_authority a;

	assert_int_equal(auth("example.com:443", 0, &a), 0);
	assert_string_equal(a.host, "example.com");
	assert_int_equal(a.port, 443);
	assert_int_equal(auth("[2001:db8::1]:8443", 0, &a), 0);
	assert_string_equal(a.host, "2001:db8::1");
	assert_true(a.bracketed);
	assert_int_equal(a.port, 8443);
	assert_int_equal(auth("[::1]:1", 0, &a), 0);
	assert_int_equal(auth("1.2.3.4:65535", 0, &a), 0);
	assert_int_equal(a.port, 65535);
	assert_int_equal(auth("example.com", 80, &a), 0);
	assert_int_equal(a.port, 80);

	assert_int_equal(auth("example.com", 0, &a), -EBADMSG);	/* CONNECT needs a port */
	assert_int_equal(auth("example.com:", 80, &a), -EBADMSG);
	assert_int_equal(auth("example.com:0", 0, &a), -EBADMSG);
	assert_int_equal(auth("example.com:65536", 0, &a), -EBADMSG);
	assert_int_equal(auth("example.com:0443", 0, &a), -EBADMSG);
	assert_int_equal(auth("example.com:+443", 0, &a), -EBADMSG);
	assert_int_equal(auth("example.com:443x", 0, &a), -EBADMSG);
	assert_int_equal(auth("example.com:100000", 0, &a), -EBADMSG);
	assert_int_equal(auth("2001:db8::1:443", 0, &a), -EBADMSG);	/* unbracketed */
	assert_int_equal(auth("[fe80::1%eth0]:443", 0, &a), -EBADMSG);	/* zone id */
	assert_int_equal(auth("[v1.x]:443", 0, &a), -EBADMSG);
	assert_int_equal(auth("[::1:443", 0, &a), -EBADMSG);
	assert_int_equal(auth("[::1]443", 0, &a), -EBADMSG);
	assert_int_equal(auth(":443", 0, &a), -EBADMSG);
	assert_int_equal(auth("a b:443", 0, &a), -EBADMSG);
	assert_int_equal(auth("a%2e:443", 0, &a), -EBADMSG);
	assert_int_equal(auth("user@a:443", 0, &a), -EBADMSG);
}

static int url(const char *s, struct proxy_url *u)
{
	return proxy_parse_absolute_url((struct proxy_span){ s, strlen(s) }, u);
}

static void test_absolute_url(void **state)
{
	struct proxy_url u;

	assert_int_equal(url("http://Example.COM/a/b?c=d#frag", &u), 0);
	assert_string_equal(u.auth.host, "Example.COM");
	assert_int_equal(u.auth.port, 80);
	assert_int_equal(u.path.n, strlen("/a/b?c=d"));
	assert_int_equal(url("HTTP://a.b:8080", &u), 0);
	assert_int_equal(u.auth.port, 8080);
	assert_int_equal(u.path.n, 0);
	assert_int_equal(url("http://[::1]:81/", &u), 0);
	assert_string_equal(u.auth.host, "::1");
	assert_int_equal(url("http://a.b?q", &u), 0);
	assert_int_equal(u.path.p[0], '?');

	assert_int_equal(url("https://a.b/", &u), -EPROTONOSUPPORT);
	assert_int_equal(url("/just/a/path", &u), -EBADMSG);
	assert_int_equal(url("http://user:pw@a.b/", &u), -EBADMSG);
	assert_int_equal(url("http://a.b:0/", &u), -EBADMSG);
	assert_int_equal(url("http:///x", &u), -EBADMSG);
	assert_int_equal(url("http://a.b:08/", &u), -EBADMSG);
}

static int framing(const char *s, struct proxy_body *b)
{
	struct proxy_request req;

	assert_int_equal(parse(s, &req), 0);
	return proxy_request_framing(&req, b);
}

static void test_framing(void **state)
{
	struct proxy_body b;

	assert_int_equal(framing("GET http://a.b/ HTTP/1.1\r\n\r\n", &b), 0);
	assert_int_equal(b.kind, PROXY_BODY_NONE);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: 12\r\n\r\n", &b), 0);
	assert_int_equal(b.kind, PROXY_BODY_LENGTH);
	assert_int_equal(b.length, 12);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: 5, 5\r\n"
				 "content-length: 5\r\n\r\n", &b), 0);
	assert_int_equal(b.length, 5);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n",
				 &b), 0);
	assert_int_equal(b.kind, PROXY_BODY_CHUNKED);

	/* The smuggling classics. */
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: 5\r\n"
				 "Transfer-Encoding: chunked\r\n\r\n", &b), -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: 5\r\n"
				 "Content-Length: 6\r\n\r\n", &b), -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n", &b),
			 -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", &b),
			 -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", &b),
			 -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: \r\n\r\n", &b),
			 -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nContent-Length: 1234567890123456789"
				 "\r\n\r\n", &b), -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked"
				 "\r\n\r\n", &b), -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
				 "Transfer-Encoding: chunked\r\n\r\n", &b), -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
				 &b), -EBADMSG);
	assert_int_equal(framing("POST http://a.b/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
				 &b), -EBADMSG);
}

static void test_rebuild(void **state)
{
	const char *in = "POST http://Evil.example:8080/p?q#f HTTP/1.1\r\n"
			 "Host: other.example\r\n"
			 "Connection: keep-alive, X-Secret\r\n"
			 "X-Secret: s\r\n"
			 "Proxy-Authorization: Basic x\r\n"
			 "Proxy-Connection: keep-alive\r\n"
			 "Keep-Alive: 5\r\n"
			 "TE: trailers\r\n"
			 "Trailer: X\r\n"
			 "Upgrade: websocket\r\n"
			 "Content-Length: 3\r\n"
			 "Accept: */*\r\n\r\n";
	const char *want = "POST /p?q HTTP/1.1\r\n"
			   "Host: evil.example:8080\r\n"
			   "Accept: */*\r\n"
			   "Content-Length: 3\r\n"
			   "Connection: close\r\n\r\n";
	struct proxy_request req;
	struct proxy_url u;
	struct proxy_body b;
	char out[1024];
	ssize_t n;

	assert_int_equal(parse(in, &req), 0);
	assert_int_equal(proxy_parse_absolute_url(req.target, &u), 0);
	assert_int_equal(proxy_request_framing(&req, &b), 0);
	n = proxy_build_upstream_head(&req, &u, "evil.example", &b, out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out, want);

	/* Default port and empty path; IPv6 host gets brackets; chunked is regenerated. */
	assert_int_equal(parse("GET http://[::1] HTTP/1.0\r\nTransfer-Encoding: x\r\n\r\n",
			       &req), 0);
	assert_int_equal(proxy_parse_absolute_url(req.target, &u), 0);
	b.kind = PROXY_BODY_CHUNKED;
	n = proxy_build_upstream_head(&req, &u, "::1", &b, out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out, "GET / HTTP/1.0\r\nHost: [::1]\r\nTransfer-Encoding: chunked\r\n"
			    "Connection: close\r\n\r\n");
	assert_int_equal(proxy_build_upstream_head(&req, &u, "::1", &b, out, 20), -ENOSPC);
}

static void test_response_rewrite(void **state)
{
	const char *in = "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
			 "Keep-Alive: timeout=5\r\nContent-Length: 2\r\nServer: t\r\n\r\n";
	struct proxy_response r;
	char out[512];
	ssize_t n;

	assert_int_equal(proxy_parse_response(in, strlen(in), &r), 0);
	assert_int_equal(r.status, 200);
	n = proxy_build_client_head(&r, NULL, 0, out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: t\r\n"
			    "Connection: close\r\n\r\n");
	assert_int_equal(proxy_parse_response("HTTP/1.1 204\r\n\r\n", 16, &r), 0);
	assert_int_equal(r.status, 204);
	assert_int_equal(proxy_parse_response("HTTP/1.1 20 OK\r\n\r\n", 18, &r), -EBADMSG);
	assert_int_equal(proxy_parse_response("ICY 200 OK\r\n\r\n", 14, &r), -EBADMSG);
}

static void test_reply(void **state)
{
	char out[512], reason[64];
	ssize_t n;

	n = proxy_build_reply(out, sizeof(out), 403, "Forbidden", PROXY_XERR_ALLOWLIST,
			      PROXY_BODY_ALLOWLIST);
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
			    "X-Proxy-Error: blocked-by-allowlist\r\nContent-Length: 39\r\n"
			    "Connection: close\r\n\r\nConnection blocked by network allowlist");
	proxy_sanitise_reason("no\r\nX-Injected: 1", reason, sizeof(reason));
	assert_string_equal(reason, "no  X-Injected: 1");
	proxy_sanitise_reason(NULL, reason, sizeof(reason));
	assert_string_equal(reason, "Forbidden");
	proxy_sanitise_reason("\r\n", reason, sizeof(reason));
	assert_string_equal(reason, "Forbidden");
}

static int dechunk(const char *in, char *out, size_t *outlen)
{
	struct proxy_chunked d = { 0 };
	size_t used, produced, total = 0, len = strlen(in), pos = 0;
	int rc;

	/* One byte at a time: the decoder must carry state across every split. */
	do {
		rc = proxy_chunked_decode(&d, in + pos, len - pos ? 1 : 0, &used, out + total,
					  64, &produced);
		pos += used;
		total += produced;
	} while (rc == 0 && pos < len);
	*outlen = total;
	return rc;
}

static void test_chunked(void **state)
{
	char out[256];
	size_t n;

	assert_int_equal(dechunk("5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n",
				 out, &n), 1);
	assert_int_equal(n, 11);
	assert_memory_equal(out, "hello world", 11);
	assert_int_equal(dechunk("A\r\n0123456789\r\n0\r\n\r\n", out, &n), 1);
	assert_int_equal(dechunk("5\r\nhello\r\n0\r\n", out, &n), 0);	/* needs more */

	assert_int_equal(dechunk("5\nhello\r\n0\r\n\r\n", out, &n), -EBADMSG);
	assert_int_equal(dechunk("5\r\nhelloX\r\n0\r\n\r\n", out, &n), -EBADMSG);
	assert_int_equal(dechunk("-5\r\nhello\r\n0\r\n\r\n", out, &n), -EBADMSG);
	assert_int_equal(dechunk("0x5\r\nhello\r\n0\r\n\r\n", out, &n), -EBADMSG);
	assert_int_equal(dechunk("\r\n", out, &n), -EBADMSG);
	assert_int_equal(dechunk("10000000000000000\r\n", out, &n), -EBADMSG);
	assert_int_equal(dechunk("0\r\n folded\r\n\r\n", out, &n), -EBADMSG);
	assert_int_equal(dechunk("1;a\nb\r\nx\r\n0\r\n\r\n", out, &n), -EBADMSG);
}

static void test_chunked_output_full(void **state)
{
	const char *in = "a\r\n0123456789\r\n0\r\n\r\n";
	struct proxy_chunked d = { 0 };
	size_t used, produced;
	char out[4];

	assert_int_equal(proxy_chunked_decode(&d, in, strlen(in), &used, out, 4, &produced), 0);
	assert_int_equal(produced, 4);
	assert_int_equal(used, 3 + 4);
	assert_memory_equal(out, "0123", 4);
}

static void test_canon_default(void **state)
{
	char out[PROXY_HOST_MAX];
	const char *err;

	assert_int_equal(proxy_canon_default("Example.COM.", out, sizeof(out), &err), 0);
	assert_string_equal(out, "example.com");
	assert_int_equal(proxy_canon_default("127.1", out, sizeof(out), &err), 0);
	assert_string_equal(out, "127.0.0.1");
	assert_int_equal(proxy_canon_default("2130706433", out, sizeof(out), &err), 0);
	assert_string_equal(out, "127.0.0.1");
	assert_int_equal(proxy_canon_default("0x7f.0.0.1", out, sizeof(out), &err), 0);
	assert_string_equal(out, "127.0.0.1");
	assert_int_equal(proxy_canon_default("::FFFF:10.0.0.1", out, sizeof(out), &err), 0);
	assert_string_equal(out, "10.0.0.1");
	assert_int_equal(proxy_canon_default("2001:DB8:0:0::1", out, sizeof(out), &err), 0);
	assert_string_equal(out, "2001:db8::1");
	assert_int_equal(proxy_canon_default("a\r\nb", out, sizeof(out), &err), -EINVAL);
	assert_int_equal(proxy_canon_default("fe80::1%eth0", out, sizeof(out), &err), -EINVAL);
	assert_int_equal(proxy_canon_default("a..b", out, sizeof(out), &err), -EINVAL);
	assert_int_equal(proxy_canon_default("", out, sizeof(out), &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_end),
		cmocka_unit_test(test_request_line),
		cmocka_unit_test(test_too_many_headers),
		cmocka_unit_test(test_authority),
		cmocka_unit_test(test_absolute_url),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_rebuild),
		cmocka_unit_test(test_response_rewrite),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_chunked_output_full),
		cmocka_unit_test(test_canon_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
