// SPDX-License-Identifier: MIT
/*
 * Event timestamps. glibc's gmtime_r initialises the time zone on its first
 * call and so opens /etc/localtime, a file read on every sandbox's start
 * for a UTC time that needs none: the civil date is computed from the day
 * number instead (Howard Hinnant's days-to-civil algorithm).
 */
#include <stdint.h>
#include <stdio.h>

#include "log_time.h"

void log_format_utc(const struct timespec *ts, char *buf, size_t size)
{
	int64_t secs = ts->tv_sec, days = secs / 86400, rem = secs % 86400;
	int64_t era, doe, yoe, doy, mp, y;
	unsigned m, d;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	days += 719468; /* from 1970-01-01 to 0000-03-01 */
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	y = yoe + era * 400 + (m <= 2);
	snprintf(buf, size, "%04lld-%02u-%02uT%02u:%02u:%02u.%06ldZ", (long long)y, m, d, (unsigned)(rem / 3600),
		 (unsigned)(rem / 60 % 60), (unsigned)(rem % 60), ts->tv_nsec / 1000);
}
