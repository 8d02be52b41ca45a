/* SPDX-License-Identifier: MIT */
/* Hostile bytes made safe: valid UTF-8 for JSON, escaped text for a terminal. */
#ifndef BPFBOX_LOG_UTF8_H
#define BPFBOX_LOG_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "log_level.h"

/* Copies len bytes (stopping at NUL) as valid UTF-8, at most LOG_VALUE_MAX bytes. */
char *log_utf8_sanitize(const char *s, size_t len, bool *truncated);
/* Escapes control and bidi characters of valid UTF-8 for a terminal. */
char *log_text_escape(const char *s);
/* Any bytes (a caller's path, a name from a log) made safe to print: sanitised, then escaped. */
char *log_terminal_text(const char *s);

#endif
