// SPDX-License-Identifier: MIT
/* The TLS ClientHello server_name parser of the transparent path. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/proxy_tls.h"

static size_t put16(unsigned char *b, size_t o, unsigned v)
{
	b[o] = (unsigned char)(v >> 8);
	b[o + 1] = (unsigned char)v;
	return o + 2;
}

/*
 * A ClientHello for name (NULL: no server_name), with an extra extension
 * first, split over records of at most rec bytes. Returns the length.
 */
static size_t hello(unsigned char *out, const char *name, size_t rec)
{
	unsigned char hs[2048];
	size_t o = 4, ext_len_at, ext_start, n = 0, len, off = 0;

	o = put16(hs, o, 0x0303);
	memset(hs + o, 0xab, 32);
	o += 32;
	hs[o++] = 0; /* session id */
	o = put16(hs, o, 4);
	o = put16(hs, o, 0x1301);
	o = put16(hs, o, 0x1302);
	hs[o++] = 1;
	hs[o++] = 0; /* null compression */
	ext_len_at = o;
	o += 2;
	ext_start = o;
	o = put16(hs, o, 0x002b); /* supported_versions */
	o = put16(hs, o, 3);
	hs[o++] = 2;
	o = put16(hs, o, 0x0304);
	if (name) {
		size_t nl = strlen(name);

		o = put16(hs, o, 0); /* server_name */
		o = put16(hs, o, (unsigned)(nl + 5));
		o = put16(hs, o, (unsigned)(nl + 3));
		hs[o++] = 0;
		o = put16(hs, o, (unsigned)nl);
		memcpy(hs + o, name, nl);
		o += nl;
	}
	put16(hs, ext_len_at, (unsigned)(o - ext_start));
	hs[0] = 1;
	hs[1] = 0;
	put16(hs, 2, (unsigned)(o - 4));
	len = o;
	while (off < len) {
		size_t chunk = len - off < rec ? len - off : rec;

		out[n++] = 22;
		out[n++] = 3;
		out[n++] = 1;
		n = put16(out, n, (unsigned)chunk);
		memcpy(out + n, hs + off, chunk);
		n += chunk;
		off += chunk;
	}
	return n;
}

static void test_sni(void **state)
{
	unsigned char b[4096];
	char name[256];
	size_t n = hello(b, "API.Example.com.", 16384);

	assert_int_equal(proxy_tls_sni(b, n, name, sizeof(name)), 1);
	assert_string_equal(name, "api.example.com");
	/* Every prefix asks for more. */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(proxy_tls_sni(b, i, name, sizeof(name)), 0);
	/* Split over small records. */
	n = hello(b, "split.example", 7);
	assert_int_equal(proxy_tls_sni(b, n, name, sizeof(name)), 1);
	assert_string_equal(name, "split.example");
	for (size_t i = 0; i < n; i++)
		assert_int_equal(proxy_tls_sni(b, i, name, sizeof(name)), 0);
}

static void test_no_sni(void **state)
{
	unsigned char b[4096];
	char name[256];
	size_t n = hello(b, NULL, 16384);

	assert_int_equal(proxy_tls_sni(b, n, name, sizeof(name)), 1);
	assert_string_equal(name, "");
}

static void test_malformed(void **state)
{
	unsigned char b[4096], c[4096];
	char name[256];
	size_t n = hello(b, "ok.example", 16384);

	assert_int_equal(proxy_tls_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, name, sizeof(name)),
			 -EINVAL);
	memcpy(c, b, n);
	c[5] = 2; /* ServerHello */
	assert_int_equal(proxy_tls_sni(c, n, name, sizeof(name)), -EINVAL);
	memcpy(c, b, n);
	c[n - 5] = '/'; /* a byte no host name has */
	assert_int_equal(proxy_tls_sni(c, n, name, sizeof(name)), -EINVAL);
	memcpy(c, b, n);
	c[n - 3] = 0; /* NUL inside the name */
	assert_int_equal(proxy_tls_sni(c, n, name, sizeof(name)), -EINVAL);
	n = hello(b, "a..b", 16384);
	assert_int_equal(proxy_tls_sni(b, n, name, sizeof(name)), -EINVAL);
	n = hello(b, "ok.example", 16384);
	assert_int_equal(proxy_tls_sni(b, n, name, 4), -ENAMETOOLONG);
	/* A record of another type after a partial handshake. */
	n = hello(b, "ok.example", 20);
	b[25] = 23;
	assert_int_equal(proxy_tls_sni(b, n, name, sizeof(name)), -EINVAL);
}

static void test_fuzz_smoke(void **state)
{
	unsigned char b[600];
	unsigned seed = 99;

	for (int i = 0; i < 200000; i++) {
		size_t n = hello(b, "fuzz.example", (i % 3) ? 16384 : 9);

		if (n > sizeof(b))
			n = sizeof(b);
		b[rand_r(&seed) % n] ^= (unsigned char)(1u << (rand_r(&seed) % 8));
		if (i & 1)
			b[rand_r(&seed) % n] = (unsigned char)rand_r(&seed);
		assert_int_equal(proxy_tls_fuzz_one(b, n), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sni),
		cmocka_unit_test(test_no_sni),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_fuzz_smoke),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
