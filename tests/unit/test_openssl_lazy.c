// SPDX-License-Identifier: MIT
/* OpenSSL through the table dlopen fills (user/lib/openssl_lazy.c). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/openssl_lazy.h"

/* The table holds the very functions of the libssl the process has loaded. */
static void test_table_is_the_library(void **state)
{
	struct errmsg em = { { 0 } };
	const struct openssl_lazy *t;
	void *ssl;

	assert_int_equal(openssl_lazy_load(&em), 0);
	assert_string_equal(em.text, "");
	t = openssl_lazy();
	/* Loaded now, and each name below is the header's macro: the table's entry is libssl's own. */
	ssl = dlopen("libssl.so." OPENSSL_MSTR(OPENSSL_VERSION_MAJOR), RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(ssl);
	assert_ptr_equal((void *)SSL_new, dlsym(ssl, "SSL_new"));
	assert_ptr_equal((void *)RAND_bytes, dlsym(ssl, "RAND_bytes"));
	assert_ptr_equal((void *)X509_free, dlsym(ssl, "X509_free"));
	dlclose(ssl);
	/* Loading again is the same table, not a second load. */
	assert_int_equal(openssl_lazy_load(NULL), 0);
	assert_ptr_equal(openssl_lazy(), t);
}

/* A call written as OpenSSL's goes through the table and does OpenSSL's work. */
static void test_calls_go_through(void **state)
{
	unsigned char a[32] = { 0 }, b[32] = { 0 }, zero[32] = { 0 }, md[32];
	unsigned int n = 0;
	static const unsigned char abc_sha256[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};

	assert_int_equal(RAND_bytes(a, sizeof(a)), 1);
	assert_int_equal(RAND_bytes(b, sizeof(b)), 1);
	assert_memory_not_equal(a, zero, sizeof(a));
	assert_memory_not_equal(a, b, sizeof(a));
	assert_int_equal(EVP_Digest("abc", 3, md, &n, EVP_sha256(), NULL), 1);
	assert_int_equal(n, 32);
	assert_memory_equal(md, abc_sha256, sizeof(md));
	assert_int_equal(CRYPTO_memcmp(a, a, sizeof(a)), 0);
	assert_int_not_equal(CRYPTO_memcmp(a, b, sizeof(a)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_is_the_library),
		cmocka_unit_test(test_calls_go_through),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
