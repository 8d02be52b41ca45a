/* SPDX-License-Identifier: MIT */
/*
 * What every part of the log shares: levels, formats, the ECS version and
 * the longest value kept. The logger (log.c) and the event builder
 * (log_event.c) both use these; neither owns them.
 */
#ifndef BPFBOX_LOG_LEVEL_H
#define BPFBOX_LOG_LEVEL_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
#define LOG_LEVELS 4

enum log_format {
	LOG_FORMAT_AUTO, /* text when the destination is a terminal, else JSON */
	LOG_FORMAT_JSON,
	LOG_FORMAT_TEXT,
};

/* The ECS version whose field names the events follow (ecs.version). */
#define LOG_ECS_VERSION "8.11.0"

/* Longest string value kept, in bytes; longer ones are cut and flagged. */
#define LOG_VALUE_MAX 16384

/*
 * Parse "debug", "info", "warn"/"warning", "error" and "auto", "json",
 * "text" (case-insensitive). Return 0 or -EINVAL (*out untouched).
 */
int log_level_parse(const char *s, enum log_level *out);
int log_format_parse(const char *s, enum log_format *out);

/* "debug", "info", "warn", "error" (the JSON log.level values). */
const char *log_level_name(enum log_level level);

#endif
