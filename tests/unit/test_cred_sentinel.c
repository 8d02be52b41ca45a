// SPDX-License-Identifier: MIT
/* srt's sentinels for masked credentials (user/cred/cred_sentinel.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cred/cred_sentinel.h"

static void assert_shape(const char *s, size_t len)
{
	assert_int_equal(strlen(s), len);
	assert_memory_equal(s, "fake_value_", 11);
	/* A uuid4: 8-4-4-4-12 lowercase hex, version 4, variant 10xx. */
	for (size_t i = 11; i < 47; i++) {
		if (i == 19 || i == 24 || i == 29 || i == 34)
			assert_int_equal(s[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", s[i]));
	}
	assert_int_equal(s[25], '4');
	assert_non_null(strchr("89ab", s[30]));
	for (size_t i = 47; i < len; i++)
		assert_non_null(strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", s[i]));
}

static void test_short_real_keeps_base(void **state)
{
	char *s;
	size_t len;

	assert_int_equal(cred_sentinel_make("ghp_short", 9, &s, &len), 0);
	assert_int_equal(len, CRED_SENTINEL_BASE_LEN);
	assert_int_equal(len, 47);
	assert_shape(s, len);
	free(s);
	/* An empty value (a set but empty variable) still gets one. */
	assert_int_equal(cred_sentinel_make("", 0, &s, &len), 0);
	assert_shape(s, 47);
	free(s);
}

static void test_long_real_padded_to_length(void **state)
{
	char real[300], *s;
	size_t len;

	for (size_t n = 47; n < sizeof(real); n += 17) {
		memset(real, 'Q', n);
		assert_int_equal(cred_sentinel_make(real, n, &s, &len), 0);
		assert_int_equal(len, n);
		assert_shape(s, n);
		assert_null(memmem(s, len, real, n));
		free(s);
	}
}

static void test_unique(void **state)
{
	char *a, *b;
	size_t la, lb;

	for (int i = 0; i < 100; i++) {
		assert_int_equal(cred_sentinel_make("x", 1, &a, &la), 0);
		assert_int_equal(cred_sentinel_make("x", 1, &b, &lb), 0);
		assert_string_not_equal(a, b);
		free(a);
		free(b);
	}
}

static void test_never_contains_real(void **state)
{
	char *s;
	size_t len;

	/* One hex digit is often in a uuid: the maker tries again until it is not. */
	for (int i = 0; i < 50; i++) {
		assert_int_equal(cred_sentinel_make("7", 1, &s, &len), 0);
		assert_null(strchr(s, '7'));
		free(s);
	}
	/* A piece of the fixed prefix is in every sentinel: refused. */
	assert_int_equal(cred_sentinel_make("fake", 4, &s, &len), -EINVAL);
	assert_int_equal(cred_sentinel_make("_value_", 7, &s, &len), -EINVAL);
}

static void test_uuid4(void **state)
{
	char u[37], v[37];

	assert_int_equal(cred_uuid4(u), 0);
	assert_int_equal(cred_uuid4(v), 0);
	assert_int_equal(strlen(u), 36);
	assert_string_not_equal(u, v);
	assert_int_equal(u[14], '4');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_real_keeps_base),
		cmocka_unit_test(test_long_real_padded_to_length),
		cmocka_unit_test(test_unique),
		cmocka_unit_test(test_never_contains_real),
		cmocka_unit_test(test_uuid4),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
