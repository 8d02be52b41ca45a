// SPDX-License-Identifier: MIT
/* Masked credentials: the table, the streaming replacer, the one-shot and the redactor (user/cred/). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cred/cred_redact.h"
#include "cred/cred_sentinel.h"
#include "cred/cred_subst.h"

#define SENT "fake_value_0f0f0f0f-1111-4222-8333-444455556666"
#define REAL "ghp_realsecret_abcdef0123456789_padpadpadpadpad"

static struct cred_table *table_of(const char *const *pairs)
{
	struct cred_table *t = cred_table_new();

	assert_non_null(t);
	for (size_t i = 0; pairs[i]; i += 3)
		assert_int_equal(cred_table_add(t, pairs[i], pairs[i + 1], strlen(pairs[i + 1]),
						pairs[i + 2], strlen(pairs[i + 2])),
				 (int)(i / 3));
	return t;
}

/* Feeds chunks (lengths in cuts[], summing to len) and returns the output, NUL-terminated. */
static char *run_chunks(const struct cred_table *t, const bool *sel, const char *in, size_t len,
			const size_t *cuts, size_t ncuts, size_t *replaced)
{
	struct cred_stream *s;
	struct cred_buf out = { 0 };
	size_t off = 0, max = 0, slen;

	for (size_t i = 0; i < cred_table_count(t); i++)
		if (!sel || sel[i]) {
			cred_table_sentinel(t, i, &slen);
			max = slen > max ? slen : max;
		}
	assert_int_equal(cred_stream_new(t, sel, &s), 0);
	for (size_t i = 0; i < ncuts; i++) {
		assert_int_equal(cred_stream_feed(s, in + off, cuts[i], &out), 0);
		off += cuts[i];
		/* The bound: never more than the longest sentinel less one byte. */
		assert_true(cred_stream_held(s) <= (max ? max - 1 : 0));
	}
	assert_int_equal(off, len);
	assert_int_equal(cred_stream_finish(s, &out), 0);
	assert_int_equal(cred_stream_held(s), 0);
	if (replaced)
		*replaced = cred_stream_replaced(s);
	cred_stream_free(s);
	assert_int_equal(cred_buf_append(&out, "", 1), 0);
	return out.data;
}

static void test_split_everywhere(void **state)
{
	const char *pairs[] = { "GH", SENT, REAL, NULL };
	struct cred_table *t = table_of(pairs);
	const char *body = "{\"key\":\"" SENT "\",\"other\":1}";
	size_t len = strlen(body), n;

	for (size_t i = 0; i <= len; i++) {
		size_t cuts[2] = { i, len - i };
		char *out = run_chunks(t, NULL, body, len, cuts, 2, &n);

		assert_string_equal(out, "{\"key\":\"" REAL "\",\"other\":1}");
		assert_int_equal(n, 1);
		free(out);
	}
	cred_table_free(t);
}

static void test_byte_by_byte_interleaved(void **state)
{
	const char *pairs[] = { "A", "fake_value_short-aaaa-4bbb-8ccc-ddddeeee", "tok-A",
				"B", SENT "_extra_padding_zzz", "much-longer-real-B", NULL };
	struct cred_table *t = table_of(pairs);
	char body[512];
	size_t cuts[512], len, n;
	char *out;

	snprintf(body, sizeof(body), "a=%s&b=%s&c=%s", pairs[1], pairs[4], pairs[1]);
	len = strlen(body);
	for (size_t i = 0; i < len; i++)
		cuts[i] = 1;
	out = run_chunks(t, NULL, body, len, cuts, len, &n);
	assert_string_equal(out, "a=tok-A&b=much-longer-real-B&c=tok-A");
	assert_int_equal(n, 3);
	free(out);
	cred_table_free(t);
}

static void test_adjacent_and_overlapping(void **state)
{
	const char *pairs[] = { "A", "abcd", "1", "B", "cdxy", "2", NULL };
	struct cred_table *t = table_of(pairs);
	struct { const char *in, *want; } cases[] = {
		{ "abcdabcd", "11" },		/* adjacent */
		{ "abcdxy", "1xy" },		/* the earlier one wins, the rest is not rescanned */
		{ "abcxy", "abcxy" },
		{ "abcabcd", "abc1" },		/* a false start just before a match */
		{ "cdxyabcd", "21" },
		{ "ab", "ab" },			/* a prefix that never completes is flushed */
		{ "", "" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t len = strlen(cases[c].in);

		for (size_t i = 0; i <= len; i++) {
			size_t cuts[2] = { i, len - i };
			char *out = run_chunks(t, NULL, cases[c].in, len, cuts, 2, NULL);

			assert_string_equal(out, cases[c].want);
			free(out);
		}
	}
	cred_table_free(t);
}

static void test_real_value_not_rescanned(void **state)
{
	/* The real value contains another sentinel: it must go out as is. */
	const char *pairs[] = { "A", "SENTA", "xSENTBx", "B", "SENTB", "nope", NULL };
	struct cred_table *t = table_of(pairs);
	size_t cuts[] = { 3, 4 };
	char *out = run_chunks(t, NULL, "SENTAzz", 7, cuts, 2, NULL);

	assert_string_equal(out, "xSENTBxzz");
	free(out);
	cred_table_free(t);
}

static void test_table_refuses_nesting(void **state)
{
	struct cred_table *t = cred_table_new();

	assert_int_equal(cred_table_add(t, "A", "fake_abc", 8, "r", 1), 0);
	assert_int_equal(cred_table_add(t, "B", "abc", 3, "r", 1), -EINVAL);
	assert_int_equal(cred_table_add(t, "B", "xfake_abcx", 10, "r", 1), -EINVAL);
	assert_int_equal(cred_table_add(t, "B", "fake_abc", 8, "r", 1), -EINVAL);
	assert_int_equal(cred_table_add(t, "B", "", 0, "r", 1), -EINVAL);
	assert_int_equal(cred_table_add(t, NULL, "zz", 2, "r", 1), -EINVAL);
	assert_int_equal(cred_table_add(t, "B", "zz", 2, "", 0), 1);
	assert_int_equal(cred_table_count(t), 2);
	cred_table_free(t);
}

static void test_hold_back_bound(void **state)
{
	const char *pairs[] = { "GH", SENT, REAL, NULL };
	struct cred_table *t = table_of(pairs);
	struct cred_stream *s;
	struct cred_buf out = { 0 };

	assert_int_equal(cred_stream_new(t, NULL, &s), 0);
	/* All of the sentinel but its last byte: held, nothing out. */
	assert_int_equal(cred_stream_feed(s, SENT, strlen(SENT) - 1, &out), 0);
	assert_int_equal(cred_stream_held(s), strlen(SENT) - 1);
	assert_int_equal(out.len, 0);
	/* A byte that breaks it: the first byte goes, the longest possible prefix stays. */
	assert_int_equal(cred_stream_feed(s, "!", 1, &out), 0);
	assert_int_equal(cred_stream_held(s), strlen(SENT) - 1);
	assert_int_equal(out.len, 1);
	assert_memory_equal(out.data, "f", 1);
	/* 10 KiB without a sentinel: everything but the bound is out. */
	for (int i = 0; i < 10240; i++)
		assert_int_equal(cred_stream_feed(s, "x", 1, &out), 0);
	assert_int_equal(cred_stream_held(s), strlen(SENT) - 1);
	assert_int_equal(out.len, 1 + 10240);
	assert_int_equal(cred_stream_finish(s, &out), 0);
	assert_int_equal(out.len, strlen(SENT) + 10240);
	assert_int_equal(cred_stream_replaced(s), 0);
	cred_stream_free(s);
	cred_buf_wipe(&out);
	cred_table_free(t);
}

static void test_huge_matches_one_shot(void **state)
{
	const char *pairs[] = { "A", SENT, REAL, "B", "fake_value_zz-1", "short", NULL };
	struct cred_table *t = table_of(pairs);
	size_t len = 8u << 20, ncuts = 0, off = 0, n1, n2;
	char *in = malloc(len), *out;
	size_t *cuts = malloc(len / 1000 * sizeof(*cuts) + 16 * sizeof(*cuts));
	struct cred_buf once = { 0 };
	unsigned seed = 7;

	assert_non_null(in);
	assert_non_null(cuts);
	for (size_t i = 0; i < len; i++)
		in[i] = (char)('a' + i % 23);
	for (size_t at = 1000; at + 64 < len; at += 99991)
		memcpy(in + at, (at / 99991) % 2 ? SENT : "fake_value_zz-1",
		       (at / 99991) % 2 ? strlen(SENT) : 15);
	while (off < len) {
		size_t c = (seed = seed * 1103515245 + 12345) % 4093 + 1;

		c = c > len - off ? len - off : c;
		cuts[ncuts++] = c;
		off += c;
	}
	out = run_chunks(t, NULL, in, len, cuts, ncuts, &n1);
	assert_int_equal(cred_subst_once(t, NULL, in, len, &once, &n2), 0);
	assert_int_equal(n1, n2);
	assert_true(n1 > 80);
	assert_int_equal(strlen(out), once.len);
	assert_memory_equal(out, once.data, once.len);
	assert_null(memmem(out, strlen(out), SENT, strlen(SENT)));
	free(out);
	free(in);
	free(cuts);
	cred_buf_wipe(&once);
	cred_table_free(t);
}

static void test_select_names_counts(void **state)
{
	const char *pairs[] = { "A", "sentA-000", "realA", "B", "sentB-000", "realB",
				"A", "sentC-000", "realC", NULL };
	struct cred_table *t = table_of(pairs);
	bool only_b[] = { false, true, false };
	struct cred_stream *s;
	struct cred_buf out = { 0 };
	char names[16], tiny[3];
	const char *in = "sentA-000 sentB-000 sentC-000 sentA-000";

	assert_int_equal(cred_stream_new(t, NULL, &s), 0);
	assert_int_equal(cred_stream_feed(s, in, strlen(in), &out), 0);
	assert_int_equal(cred_stream_finish(s, &out), 0);
	assert_int_equal(cred_stream_replaced(s), 4);
	assert_int_equal(cred_stream_pair_replaced(s, 0), 2);
	assert_int_equal(cred_stream_pair_replaced(s, 2), 1);
	assert_int_equal(cred_stream_names(s, names, sizeof(names)), 0);
	assert_string_equal(names, "A,B");
	assert_int_equal(cred_stream_names(s, tiny, sizeof(tiny)), -ENOSPC);
	assert_int_equal(out.len, strlen("realA realB realC realA"));
	assert_memory_equal(out.data, "realA realB realC realA", out.len);
	cred_stream_free(s);
	cred_buf_wipe(&out);

	/* A host where only B injects: A's and C's sentinels stay sentinels. */
	assert_int_equal(cred_subst_once(t, only_b, in, strlen(in), &out, NULL), 0);
	assert_int_equal(out.len, strlen("sentA-000 realB sentC-000 sentA-000"));
	assert_memory_equal(out.data, "sentA-000 realB sentC-000 sentA-000", out.len);
	cred_buf_wipe(&out);
	assert_false(cred_table_length_matched(t, NULL));
	cred_table_free(t);
}

static void test_length_matched_and_mask(void **state)
{
	struct cred_table *t = cred_table_new();
	char *s;
	size_t slen;
	const char *longer = "ghp_0123456789abcdef0123456789abcdef0123456789abcdef";

	assert_int_equal(cred_table_mask(t, "GH", longer, strlen(longer), &s, &slen), 0);
	assert_int_equal(slen, strlen(longer));
	assert_true(cred_table_length_matched(t, NULL));
	assert_int_equal(cred_table_mask(t, "SHORT", "tok", 3, NULL, NULL), 1);
	assert_false(cred_table_length_matched(t, NULL));
	assert_true(cred_table_length_matched(t, (bool[]){ true, false }));
	free(s);
	cred_table_free(t);
}

static void test_empty_table_passes_through(void **state)
{
	struct cred_table *t = cred_table_new();
	size_t cuts[] = { 2, 0, 3 };
	char *out = run_chunks(t, NULL, "hello", 5, cuts, 3, NULL);

	assert_string_equal(out, "hello");
	free(out);
	cred_table_free(t);
}

static void test_redact(void **state)
{
	const char *pairs[] = { "GH", "S1-0000", "secret", "DB", "S2-0000", "pw123",
				"EMPTY", "S3-0000", "", "LONG", "S4-0000", "secretpw12", NULL };
	struct cred_table *t = table_of(pairs);
	struct { const char *in, *want; size_t count; } cases[] = {
		{ "token=secret and again secret.", "token=[masked:GH] and again [masked:GH].", 2 },
		{ "nothing here", "nothing here", 0 },
		{ "secretpw12", "[masked:LONG]", 1 },	/* the longest value starting there */
		{ "xsecretpw123", "x[masked:LONG]", 1 },	/* pw123 overlaps it: one span */
		{ "secrepw123", "secre[masked:DB]", 1 },
		{ "secretsecret", "[masked:GH][masked:GH]", 2 },
		{ "", "", 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char *out;
		size_t olen, count;

		assert_int_equal(cred_redact(t, cases[c].in, strlen(cases[c].in), &out, &olen,
					     &count), 0);
		assert_string_equal(out, cases[c].want);
		assert_int_equal(olen, strlen(cases[c].want));
		assert_int_equal(count, cases[c].count);
		free(out);
	}
	cred_table_free(t);
}

static void test_redact_overlap_leaves_no_byte(void **state)
{
	/* "xy1" then "1234" overlap: one span covers both, no byte of either is left. */
	const char *pairs[] = { "A", "SA-0000", "xy1", "B", "SB-0000", "1234", NULL };
	struct cred_table *t = table_of(pairs);
	char *out;

	assert_int_equal(cred_redact(t, "<xy1234>", 8, &out, NULL, NULL), 0);
	assert_string_equal(out, "<[masked:A]>");
	free(out);
	assert_int_equal(cred_redact(NULL, "abc", 3, &out, NULL, NULL), 0);
	assert_string_equal(out, "abc");
	free(out);
	cred_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_everywhere),
		cmocka_unit_test(test_byte_by_byte_interleaved),
		cmocka_unit_test(test_adjacent_and_overlapping),
		cmocka_unit_test(test_real_value_not_rescanned),
		cmocka_unit_test(test_table_refuses_nesting),
		cmocka_unit_test(test_hold_back_bound),
		cmocka_unit_test(test_huge_matches_one_shot),
		cmocka_unit_test(test_select_names_counts),
		cmocka_unit_test(test_length_matched_and_mask),
		cmocka_unit_test(test_empty_table_passes_through),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_redact_overlap_leaves_no_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
