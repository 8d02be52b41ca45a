// SPDX-License-Identifier: MIT
/*
 * Event timestamps (log_time.c) computed without the C library's calendar:
 * the same text as gmtime_r and strftime for the epoch, leap days, century
 * years, the end of a year, and a sweep of a million seconds apart over
 * three centuries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "log/log_time.h"

static void expected(time_t t, long nsec, char *buf, size_t size)
{
	struct tm tm;
	size_t n;

	assert_non_null(gmtime_r(&t, &tm));
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%06ldZ", nsec / 1000);
}

static void check(time_t t, long nsec)
{
	struct timespec ts = { .tv_sec = t, .tv_nsec = nsec };
	char got[LOG_TIME_LEN], want[64];

	log_format_utc(&ts, got, sizeof(got));
	expected(t, nsec, want, sizeof(want));
	assert_string_equal(got, want);
}

static void test_known_instants(void **state)
{
	struct timespec ts = { .tv_sec = 1796532900, .tv_nsec = 123456789 };
	char got[LOG_TIME_LEN];

	(void)state;
	log_format_utc(&ts, got, sizeof(got));
	assert_string_equal(got, "2026-12-06T04:55:00.123456Z");
	ts = (struct timespec){ 0, 0 };
	log_format_utc(&ts, got, sizeof(got));
	assert_string_equal(got, "1970-01-01T00:00:00.000000Z");
	ts = (struct timespec){ 951782400, 999999999 }; /* a century's leap day */
	log_format_utc(&ts, got, sizeof(got));
	assert_string_equal(got, "2000-02-29T00:00:00.999999Z");
	ts = (struct timespec){ 4107542399, 0 }; /* 2100 is no leap year */
	log_format_utc(&ts, got, sizeof(got));
	assert_string_equal(got, "2100-02-28T23:59:59.000000Z");
	ts.tv_sec++;
	log_format_utc(&ts, got, sizeof(got));
	assert_string_equal(got, "2100-03-01T00:00:00.000000Z");
}

static void test_same_as_the_c_library(void **state)
{
	(void)state;
	check(-1, 0);
	check(-86400 * 365, 5000);
	for (time_t t = 0; t < (time_t)86400 * 366 * 300; t += 999983)
		check(t, (long)(t % 1000000000));
	for (time_t t = 1577836800 - 5; t < 1577836800 + 5; t++) /* a new year */
		check(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_instants),
		cmocka_unit_test(test_same_as_the_c_library),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
