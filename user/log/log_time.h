/* SPDX-License-Identifier: MIT */
/* Event timestamps: RFC 3339, UTC, microseconds. */
#ifndef BPFBOX_LOG_TIME_H
#define BPFBOX_LOG_TIME_H

#include <stddef.h>
#include <time.h>

#define LOG_TIME_LEN 32 /* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" and room */

/* "2026-12-06T04:55:00.123456Z": computed, no time zone file read (gmtime would load /etc/localtime once). */
void log_format_utc(const struct timespec *ts, char *buf, size_t size);

#endif
