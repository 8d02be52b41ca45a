// SPDX-License-Identifier: MIT
/* The daemon's passwd cache: answers kept, lookups bounded per second, users kept before uids without an entry. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/passwd_cache.h"

/* Far above any uid a system hands out, inside what a subordinate range may map. */
#define NO_ENTRY 3999000000u

static struct passwd_cache cache;

static void test_root_and_nobody(void **state)
{
	const char *name = NULL;

	(void)state;
	passwd_cache_init(&cache);
	assert_int_equal(passwd_cache_lookup(&cache, 0, 100, &name), 1);
	assert_string_equal(name, "root");
	assert_int_equal(passwd_cache_lookup(&cache, NO_ENTRY, 100, &name), 0);
	assert_string_equal(name, "?");
	assert_string_equal(passwd_cache_name(&cache, 0), "root");
	assert_string_equal(passwd_cache_name(&cache, NO_ENTRY), "?");
	assert_int_equal(cache.total, 2);
}

static void test_answers_are_kept(void **state)
{
	(void)state;
	passwd_cache_init(&cache);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(passwd_cache_lookup(&cache, 0, 100 + i % PASSWD_CACHE_TTL_S, NULL), 1);
		assert_int_equal(passwd_cache_lookup(&cache, NO_ENTRY, 100 + i % PASSWD_CACHE_TTL_S, NULL), 0);
	}
	assert_int_equal(cache.total, 2);
	/* Until they expire. */
	assert_int_equal(passwd_cache_lookup(&cache, 0, 100 + PASSWD_CACHE_TTL_S, NULL), 1);
	assert_int_equal(cache.total, 3);
}

static void test_lookups_bounded_per_second(void **state)
{
	uid_t u = NO_ENTRY;

	(void)state;
	passwd_cache_init(&cache);
	for (int i = 0; i < PASSWD_LOOKUPS_PER_S; i++)
		assert_int_equal(passwd_cache_lookup(&cache, u++, 100, NULL), 0);
	/* Spent: a new uid is not looked up this second, a cached one still answers. */
	assert_int_equal(passwd_cache_lookup(&cache, u, 100, NULL), -EAGAIN);
	assert_int_equal(passwd_cache_lookup(&cache, NO_ENTRY, 100, NULL), 0);
	assert_int_equal(cache.total, PASSWD_LOOKUPS_PER_S);
	/* The next second has its own budget. */
	assert_int_equal(passwd_cache_lookup(&cache, u, 101, NULL), 0);
	assert_int_equal(cache.total, PASSWD_LOOKUPS_PER_S + 1);
}

/* A flood of uids without an entry fills the table, and root's entry stays. */
static void test_full_table_keeps_users(void **state)
{
	uid_t u = NO_ENTRY;

	(void)state;
	passwd_cache_init(&cache);
	assert_int_equal(passwd_cache_lookup(&cache, 0, 100, NULL), 1);
	for (time_t t = 101; t < 101 + 4 * PASSWD_CACHE_SIZE / PASSWD_LOOKUPS_PER_S; t++)
		for (int i = 0; i < PASSWD_LOOKUPS_PER_S; i++)
			assert_int_equal(passwd_cache_lookup(&cache, u++, t, NULL), 0);
	assert_int_equal(cache.total, 1 + 4 * PASSWD_CACHE_SIZE);
	assert_int_equal(passwd_cache_lookup(&cache, 0, 101 + 4 * PASSWD_CACHE_SIZE / PASSWD_LOOKUPS_PER_S, NULL), 1);
	assert_int_equal(cache.total, 1 + 4 * PASSWD_CACHE_SIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_and_nobody),
		cmocka_unit_test(test_answers_are_kept),
		cmocka_unit_test(test_lookups_bounded_per_second),
		cmocka_unit_test(test_full_table_keeps_users),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
