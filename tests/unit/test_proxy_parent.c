// SPDX-License-Identifier: MIT
/*
 * Chaining to a parent proxy: the bytes bpfbox sends the parent (CONNECT
 * with Proxy-Authorization, SOCKS5 CONNECT by name or address, the
 * absolute-form rewrite of a forwarded request) and the parsers for what
 * the parent answers, including truncated and hostile answers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_connect_request),
		cmocka_unit_test(test_http_reply),
		cmocka_unit_test(test_socks5_connect),
		cmocka_unit_test(test_socks5_reply),
		cmocka_unit_test(test_absolute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
