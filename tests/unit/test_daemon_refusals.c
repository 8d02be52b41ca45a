// SPDX-License-Identifier: MIT
/* The daemon's refusal limiter: the first refusals of a uid in full, the rest counted and summarised once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/refusals.h"

#define MAX_SEEN (REFUSALS_UIDS + 2)

struct seen {
	size_t n;
	struct refusal_summary s[MAX_SEEN];
};

static void collect(void *ctx, const struct refusal_summary *s)
{
	struct seen *seen = ctx;

	assert_true(seen->n < MAX_SEEN);
	seen->s[seen->n++] = *s;
}

static void test_first_in_full_rest_counted(void **state)
{
	struct refusals r;
	struct seen seen = { 0 };
	size_t logged = 0;

	(void)state;
	refusals_init(&r);
	for (int i = 0; i < 1000; i++)
		logged += refusals_note(&r, 1001, 100 + i / 100);
	assert_int_equal(logged, REFUSALS_FIRST);
	/* Nothing before the window ends. */
	assert_int_equal(refusals_flush(&r, 100 + REFUSALS_WINDOW_S - 1, false, collect, &seen), 0);
	assert_int_equal(refusals_flush(&r, 100 + REFUSALS_WINDOW_S, false, collect, &seen), 1);
	assert_false(seen.s[0].other);
	assert_int_equal(seen.s[0].uid, 1001);
	assert_int_equal(seen.s[0].count, 1000 - REFUSALS_FIRST);
	assert_int_equal(seen.s[0].seconds, REFUSALS_WINDOW_S);
	/* Reported once: the window is closed, and the next refusal opens a new one, logged in full. */
	assert_int_equal(refusals_flush(&r, 100 + 3 * REFUSALS_WINDOW_S, false, collect, &seen), 0);
	assert_true(refusals_note(&r, 1001, 500));
}

static void test_uids_apart(void **state)
{
	struct refusals r;

	(void)state;
	refusals_init(&r);
	for (int i = 0; i < REFUSALS_FIRST; i++)
		assert_true(refusals_note(&r, 1001, 10));
	assert_false(refusals_note(&r, 1001, 10));
	/* Another user's refusals are logged in full whatever the first one did. */
	assert_true(refusals_would_log(&r, 1002, 10));
	assert_true(refusals_note(&r, 1002, 10));
}

static void test_no_summary_without_counted(void **state)
{
	struct refusals r;
	struct seen seen = { 0 };

	(void)state;
	refusals_init(&r);
	for (int i = 0; i < REFUSALS_FIRST; i++)
		refusals_note(&r, 7, 0);
	/* Every refusal was logged: the window closes with nothing to say, and frees its slot. */
	assert_int_equal(refusals_flush(&r, REFUSALS_WINDOW_S, false, collect, &seen), 0);
	assert_false(r.uids[0].used);
}

static void test_stopping_flushes_all(void **state)
{
	struct refusals r;
	struct seen seen = { 0 };

	(void)state;
	refusals_init(&r);
	for (int i = 0; i < REFUSALS_FIRST + 3; i++)
		refusals_note(&r, 1001, 50);
	assert_int_equal(refusals_flush(&r, 52, true, collect, &seen), 1);
	assert_int_equal(seen.s[0].count, 3);
	assert_int_equal(seen.s[0].seconds, 2);
}

/* A full table still counts: uids beyond it share one bucket, with its own first lines and summary. */
static void test_full_table_shares_a_bucket(void **state)
{
	struct refusals r;
	struct seen seen = { 0 };
	size_t logged = 0, other = 0;

	(void)state;
	refusals_init(&r);
	for (uid_t u = 0; u < REFUSALS_UIDS; u++)
		assert_true(refusals_note(&r, 100000 + u, 0));
	for (uid_t u = 0; u < 5000; u++)
		logged += refusals_note(&r, 200000 + u, 1);
	assert_int_equal(logged, REFUSALS_FIRST);
	/* The uids in the table keep their own windows. */
	assert_true(refusals_note(&r, 100000, 1));
	assert_int_equal(refusals_flush(&r, 1 + REFUSALS_WINDOW_S, false, collect, &seen), 1);
	assert_true(seen.s[0].other);
	assert_int_equal(seen.s[0].count, 5000 - REFUSALS_FIRST);
	/* The table's own windows ended a second earlier and had nothing unlogged. */
	for (size_t i = 0; i < REFUSALS_UIDS; i++)
		other += r.uids[i].used;
	assert_int_equal(other, 0);
	/* With the table free again, a new uid gets a window of its own. */
	assert_true(refusals_note(&r, 300000, 100));
	assert_true(r.uids[0].used);
	assert_int_equal(r.uids[0].uid, 300000);
}

/* Logged elsewhere (a worker wrote it) or not: both count against the same window. */
static void test_count_from_elsewhere(void **state)
{
	struct refusals r;
	struct seen seen = { 0 };

	(void)state;
	refusals_init(&r);
	for (int i = 0; i < REFUSALS_FIRST; i++)
		refusals_count(&r, 1001, 0, true);
	assert_false(refusals_would_log(&r, 1001, 0));
	/* A line that was written although the budget was spent is counted, never logged twice. */
	refusals_count(&r, 1001, 0, true);
	refusals_count(&r, 1001, 0, false);
	assert_int_equal(refusals_flush(&r, 0, true, collect, &seen), 1);
	assert_int_equal(seen.s[0].count, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_in_full_rest_counted),
		cmocka_unit_test(test_uids_apart),
		cmocka_unit_test(test_no_summary_without_counted),
		cmocka_unit_test(test_stopping_flushes_all),
		cmocka_unit_test(test_full_table_shares_a_bucket),
		cmocka_unit_test(test_count_from_elsewhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
