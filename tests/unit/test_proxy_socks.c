// SPDX-License-Identifier: MIT
/* SOCKS5 and SOCKS4/4a message parsing and replies. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/proxy.h"
#include "proxy/proxy_socks.h"

#define U(s) ((const unsigned char *)(s))

static void test_greeting(void **state)
{
	bool noauth = false;

	assert_int_equal(proxy_socks5_greeting(U("\x05"), 1, &noauth), 0);
	assert_int_equal(proxy_socks5_greeting(U("\x05\x02\x00"), 3, &noauth), 0);
	assert_int_equal(proxy_socks5_greeting(U("\x05\x02\x02\x00"), 4, &noauth), 4);
	assert_true(noauth);
	assert_int_equal(proxy_socks5_greeting(U("\x05\x01\x02"), 3, &noauth), 3);
	assert_false(noauth);
	assert_int_equal(proxy_socks5_greeting(U("\x05\x00"), 2, &noauth), -EBADMSG);
	assert_int_equal(proxy_socks5_greeting(U("\x04\x01\x00"), 3, &noauth), -EBADMSG);
}

static void test_request_domain(void **state)
{
	const unsigned char m[] = "\x05\x01\x00\x03\x0b" "example.com" "\x01\xbb";
	struct proxy_socks_req r;
	unsigned char rep;

	for (size_t n = 0; n < sizeof(m) - 1; n++)
		assert_int_equal(proxy_socks5_request(m, n, &r, &rep), 0);
	assert_int_equal(proxy_socks5_request(m, sizeof(m) - 1, &r, &rep), (ssize_t)sizeof(m) - 1);
	assert_true(r.is_name);
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(rep, SOCKS5_REP_OK);
}

static void test_request_addresses(void **state)
{
	const unsigned char v4[] = { 5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90 };
	const unsigned char v6[] = { 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
				     0, 0, 0, 0, 0, 0, 0, 1, 0, 80 };
	struct proxy_socks_req r;
	unsigned char rep;

	assert_int_equal(proxy_socks5_request(v4, sizeof(v4), &r, &rep), sizeof(v4));
	assert_false(r.is_name);
	assert_string_equal(r.host, "127.0.0.1");
	assert_int_equal(r.port, 8080);
	assert_int_equal(proxy_socks5_request(v6, sizeof(v6), &r, &rep), sizeof(v6));
	assert_string_equal(r.host, "2001:db8::1");
	assert_int_equal(r.port, 80);
}

static void test_request_errors(void **state)
{
	const unsigned char bind[] = { 5, 2, 0, 1, 1, 2, 3, 4, 0, 80 };
	const unsigned char udp[] = { 5, 3, 0, 1, 1, 2, 3, 4, 0, 80 };
	const unsigned char atyp[] = { 5, 1, 0, 9, 1, 2, 3, 4, 0, 80 };
	const unsigned char port0[] = { 5, 1, 0, 1, 1, 2, 3, 4, 0, 0 };
	const unsigned char rsv[] = { 5, 1, 1, 1, 1, 2, 3, 4, 0, 80 };
	const unsigned char ver[] = { 4, 1, 0, 1, 1, 2, 3, 4, 0, 80 };
	const unsigned char empty[] = { 5, 1, 0, 3, 0, 0, 80 };
	const unsigned char nul[] = { 5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80 };
	struct proxy_socks_req r;
	unsigned char rep;

	assert_true(proxy_socks5_request(bind, sizeof(bind), &r, &rep) < 0);
	assert_int_equal(rep, SOCKS5_REP_CMD);
	assert_true(proxy_socks5_request(udp, sizeof(udp), &r, &rep) < 0);
	assert_int_equal(rep, SOCKS5_REP_CMD);
	assert_true(proxy_socks5_request(atyp, sizeof(atyp), &r, &rep) < 0);
	assert_int_equal(rep, SOCKS5_REP_ATYP);
	assert_true(proxy_socks5_request(port0, sizeof(port0), &r, &rep) < 0);
	assert_int_equal(rep, SOCKS5_REP_DENIED);
	assert_true(proxy_socks5_request(rsv, sizeof(rsv), &r, &rep) < 0);
	assert_int_equal(rep, SOCKS5_REP_FAIL);
	assert_true(proxy_socks5_request(ver, sizeof(ver), &r, &rep) < 0);
	assert_true(proxy_socks5_request(empty, sizeof(empty), &r, &rep) < 0);
	assert_int_equal(rep, SOCKS5_REP_DENIED);
	assert_true(proxy_socks5_request(nul, sizeof(nul), &r, &rep) < 0);
	assert_int_equal(rep, SOCKS5_REP_DENIED);
}

static void test_replies(void **state)
{
	unsigned char b[10];

	assert_int_equal(proxy_socks5_reply(b, SOCKS5_REP_DENIED), 10);
	assert_memory_equal(b, "\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10);
	assert_int_equal(proxy_socks4_reply(b, SOCKS4_REP_REJECT), 8);
	assert_memory_equal(b, "\x00\x5b\x00\x00\x00\x00\x00\x00", 8);
}

static void test_socks4(void **state)
{
	const unsigned char v4[] = "\x04\x01\x00\x50\x0a\x00\x00\x01" "user";	/* + NUL */
	const unsigned char v4a[] = "\x04\x01\x01\xbb\x00\x00\x00\x07" "u\0example.com";
	const unsigned char noname[] = "\x04\x01\x01\xbb\x00\x00\x00\x07" "u\0";
	const unsigned char bind[] = "\x04\x02\x00\x50\x0a\x00\x00\x01";
	unsigned char longuser[300] = { 4, 1, 0, 80, 10, 0, 0, 1 };
	struct proxy_socks_req r;

	assert_int_equal(proxy_socks4_request(v4, sizeof(v4), &r), sizeof(v4));
	assert_false(r.is_name);
	assert_string_equal(r.host, "10.0.0.1");
	assert_int_equal(r.port, 80);
	assert_int_equal(proxy_socks4_request(v4, sizeof(v4) - 1, &r), 0);
	assert_int_equal(proxy_socks4_request(v4a, sizeof(v4a), &r), sizeof(v4a));
	assert_true(r.is_name);
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(proxy_socks4_request(v4a, sizeof(v4a) - 1, &r), 0);
	assert_int_equal(proxy_socks4_request(noname, sizeof(noname), &r), -EINVAL);
	assert_true(proxy_socks4_request(bind, sizeof(bind), &r) < 0);
	memset(longuser + 8, 'u', sizeof(longuser) - 8);
	assert_int_equal(proxy_socks4_request(longuser, sizeof(longuser), &r), -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting),
		cmocka_unit_test(test_request_domain),
		cmocka_unit_test(test_request_addresses),
		cmocka_unit_test(test_request_errors),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_socks4),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
