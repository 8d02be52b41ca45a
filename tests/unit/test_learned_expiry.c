// SPDX-License-Identifier: MIT
/*
 * How long an address learned from a DNS answer stays (sandbox_learned_expiry_ms):
 * the answer's TTL, raised to the administrator's floor, cut to a day (an
 * upstream's TTL of 68 years must not hold a share for as long).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sandbox/sandbox_learned.h"

static void test_ttl_as_answered(void **state)
{
	(void)state;
	assert_int_equal(sandbox_learned_expiry_ms(1000, 300, 60), 1000 + 300 * 1000ULL);
}

static void test_floor(void **state)
{
	(void)state;
	assert_int_equal(sandbox_learned_expiry_ms(1000, 0, 60), 1000 + 60 * 1000ULL);
	assert_int_equal(sandbox_learned_expiry_ms(1000, 5, 60), 1000 + 60 * 1000ULL);
}

static void test_a_day_at_most(void **state)
{
	(void)state;
	assert_int_equal(sandbox_learned_expiry_ms(1000, 2147483647L, 60), 1000 + 86400 * 1000ULL);
	assert_int_equal(sandbox_learned_expiry_ms(1000, 86401, 60), 1000 + 86400 * 1000ULL);
	assert_int_equal(sandbox_learned_expiry_ms(1000, 86400, 60), 1000 + 86400 * 1000ULL);
}

static void test_for_the_sandbox_life(void **state)
{
	(void)state;
	assert_int_equal(sandbox_learned_expiry_ms(1000, -1, 60), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ttl_as_answered),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_a_day_at_most),
		cmocka_unit_test(test_for_the_sandbox_life),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
