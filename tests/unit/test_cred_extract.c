// SPDX-License-Identifier: MIT
/* extract, onExtractNoMatch and srt's patterns as POSIX EREs (user/cred/cred_extract.c). */
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

#include "cred/cred_extract.h"
#include "cred/cred_subst.h"

#define DB_PASSWORD "s3cret-real-pw-0123456789"
#define DB_URL "postgres://alice:" DB_PASSWORD "@db.example.com:5432/mydb"
#define DB_EXTRACT "://[^:]+:([^@]+)@"

static struct cred_extract *compile(const char *pattern)
{
	struct cred_extract *x = NULL;
	char why[256];

	if (cred_extract_compile(pattern, &x, why, sizeof(why)))
		fail_msg("%s: %s", pattern, why);
	return x;
}

/* The real value the table restores for the sentinel at fake[at..at+len). */
static const char *real_of(const struct cred_table *t, const char *s, size_t len)
{
	for (size_t i = 0; i < cred_table_count(t); i++) {
		size_t sl, rl;
		const char *sent = cred_table_sentinel(t, i, &sl);

		if (sl == len && !memcmp(sent, s, len))
			return cred_table_real(t, i, &rl);
	}
	return NULL;
}

static void test_database_url(void **state)
{
	struct cred_extract *x = compile(DB_EXTRACT);
	struct cred_table *t = cred_table_new();
	char *fake;
	size_t flen, caps;
	const char *at;

	assert_int_equal(cred_extract_mask(x, t, "DATABASE_URL", DB_URL, strlen(DB_URL), false,
					   &fake, &flen, &caps), 0);
	assert_int_equal(caps, 1);
	assert_int_equal(cred_table_count(t), 1);
	assert_int_equal(strncmp(fake, "postgres://alice:fake_value_", 28), 0);
	at = strchr(fake + 17, '@');
	assert_non_null(at);
	assert_string_equal(at, "@db.example.com:5432/mydb");
	assert_null(strstr(fake, DB_PASSWORD));
	assert_string_equal(real_of(t, fake + 17, (size_t)(at - fake - 17)), DB_PASSWORD);
	assert_string_equal(cred_table_name(t, 0), "DATABASE_URL");
	free(fake);
	cred_table_free(t);
	cred_extract_free(x);
}

static void test_distinct_and_repeated_captures(void **state)
{
	struct cred_extract *x = compile("(?:secret|backup)=([^;]+)");
	struct cred_table *t = cred_table_new();
	const char *v = "id=abc;secret=tok-A;backup=tok-B;secret=tok-A";
	char *fake;
	size_t caps, s1, s2, s3;

	assert_int_equal(cred_extract_mask(x, t, "COMPOSITE", v, strlen(v), false, &fake, NULL,
					   &caps), 0);
	assert_int_equal(caps, 2);
	assert_int_equal(cred_table_count(t), 2);
	assert_int_equal(strncmp(fake, "id=abc;secret=fake_value_", 25), 0);
	assert_null(strstr(fake, "tok-"));
	s1 = strlen("id=abc;secret=");
	s2 = s1 + 47 + strlen(";backup=");
	s3 = s2 + 47 + strlen(";secret=");
	assert_string_equal(real_of(t, fake + s1, 47), "tok-A");
	assert_string_equal(real_of(t, fake + s2, 47), "tok-B");
	/* The same captured value has the same sentinel. */
	assert_memory_equal(fake + s1, fake + s3, 47);
	assert_int_equal(strlen(fake), s3 + 47);
	free(fake);
	cred_table_free(t);
	cred_extract_free(x);
}

static void test_no_match_leaves_table(void **state)
{
	struct cred_extract *x = compile("nope=([^ ]+)");
	struct cred_extract *empty = compile("x=([^;]*)");
	struct cred_extract *optional = compile("a(b)?");
	struct cred_table *t = cred_table_new();
	char *fake = NULL;

	assert_int_equal(cred_extract_mask(x, t, "V", DB_URL, strlen(DB_URL), false, &fake, NULL,
					   NULL), -ENOENT);
	/* Empty captures mask nothing. */
	assert_int_equal(cred_extract_mask(empty, t, "V", "x=;y", 4, false, &fake, NULL, NULL),
			 -ENOENT);
	assert_int_equal(cred_table_count(t), 0);
	assert_null(fake);
	/* A match that leaves group 1 unset: srt refuses the entry. */
	assert_int_equal(cred_extract_mask(optional, t, "V", "a", 1, false, &fake, NULL, NULL),
			 -EINVAL);
	cred_table_free(t);
	cred_extract_free(x);
	cred_extract_free(empty);
	cred_extract_free(optional);
}

static void test_mask_duplicates(void **state)
{
	struct cred_extract *x = compile("pw=([^ ]+)");
	struct cred_table *t = cred_table_new();
	const char *v = "pw=hunter2hunter2x # was hunter2hunter2x before";
	char *fake;

	assert_int_equal(cred_extract_mask(x, t, "V", v, strlen(v), false, &fake, NULL, NULL), 0);
	assert_non_null(strstr(fake, "# was hunter2hunter2x before"));
	free(fake);
	assert_int_equal(cred_extract_mask(x, t, "W", v, strlen(v), true, &fake, NULL, NULL), 0);
	assert_null(strstr(fake, "hunter2"));
	assert_int_equal(strlen(fake), strlen(v) - 2 * strlen("hunter2hunter2x") + 2 * 47);
	assert_memory_equal(fake + 3, strstr(fake, "# was ") + 6, 47);
	free(fake);
	cred_table_free(t);
	cred_extract_free(x);
}

static void test_js_meaning(void **state)
{
	struct {
		const char *pattern, *value, *captured;
	} cases[] = {
		{ "a(.+)", "abc\ndef", "bc" },			/* JS's dot stops at a line end */
		{ "id=(\\d+)", "id=123x", "123" },
		{ "([\\w.-]+)@", "<john.doe-1@x>", "john.doe-1" },
		{ "([\\]]+)", "a]]b", "]]" },
		{ "([^\\s;]+);", "k v1;", "v1" },
		{ "x\\.(\\w{2,3})", "x.abcd", "abc" },
		{ "^(\\w+)", "ab cd", "ab" },			/* ^ only at the start */
		{ "token\\/([a-f0-9]+)$", "token/beef", "beef" },
		{ "\\x41(B+)", "ABB", "BB" },
		{ "([\\^-]+)", "a^-^b", "^-^" },
		{ "(\\^)", "a^b", "^" },
		{ "(a{2,3})", "aaaa", "aaa" },
		{ "(?:x)+(y{1,})", "xxyy", "yy" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct cred_extract *x = compile(cases[c].pattern);
		struct cred_table *t = cred_table_new();
		char *fake;
		size_t rl;

		assert_int_equal(cred_extract_mask(x, t, "V", cases[c].value, strlen(cases[c].value),
						   false, &fake, NULL, NULL), 0);
		assert_int_equal(cred_table_count(t), 1);
		if (strcmp(cred_table_real(t, 0, &rl), cases[c].captured))
			fail_msg("%s on %s: captured %s, ERE %s", cases[c].pattern, cases[c].value,
				 cred_table_real(t, 0, &rl), cred_extract_posix(x));
		free(fake);
		cred_table_free(t);
		cred_extract_free(x);
	}
}

static void test_refused(void **state)
{
	const char *refused[] = {
		"a(.+?)b", "(a*?)", "(a)(?=b)", "(?!a)(b)", "(?<=a)(b)", "(?<n>a)",
		"(?i)(a)", "(a)\\1", "\\b(a)", "(a)\\B", "(\\D+)", "(\\W)", "(\\S)",
		"(\\u0041)", "(\\p{L})", "(a){", "(a)x{,2}", "([])", "([é])", "no group",
		"(?:only)", "(a)**", "(*a)", "(a)\\", "(é+)", "([z-a])", "(\\x00)",
		"(\\xff)", "(unclosed", "([abc)", "(a{256})", "(a{1,1000})", "(ab){2}",
		"((a)){3,}", "(a{0001})",
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct cred_extract *x = NULL;
		char why[256] = "";

		if (cred_extract_compile(refused[i], &x, why, sizeof(why)) != -EINVAL)
			fail_msg("%s was accepted as %s", refused[i], x ? cred_extract_posix(x) : "?");
		assert_true(why[0] != '\0');
	}
}

static void test_posix_spelling(void **state)
{
	struct cred_extract *x = compile("(?:a|b)=([^@]+)");

	/* (?:...) is an ERE group too; JS's group 1 is the ERE's second. */
	assert_string_equal(cred_extract_posix(x), "(a|b)=([^@]+)");
	cred_extract_free(x);
}

static void test_no_match_parse(void **state)
{
	enum cred_no_match m = CRED_NO_MATCH_ERROR;

	assert_int_equal(cred_no_match_parse(NULL, &m), 0);
	assert_int_equal(m, CRED_NO_MATCH_WARN);
	assert_int_equal(cred_no_match_parse("deny", &m), 0);
	assert_int_equal(m, CRED_NO_MATCH_DENY);
	assert_int_equal(cred_no_match_parse("error", &m), 0);
	assert_int_equal(m, CRED_NO_MATCH_ERROR);
	assert_int_equal(cred_no_match_parse("warn", &m), 0);
	assert_int_equal(m, CRED_NO_MATCH_WARN);
	assert_int_equal(cred_no_match_parse("Warn", &m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_database_url),
		cmocka_unit_test(test_distinct_and_repeated_captures),
		cmocka_unit_test(test_no_match_leaves_table),
		cmocka_unit_test(test_mask_duplicates),
		cmocka_unit_test(test_js_meaning),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_posix_spelling),
		cmocka_unit_test(test_no_match_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
