// SPDX-License-Identifier: MIT
/* Level and format names, shared by the logger and the event builder. */
#include <errno.h>
#include <strings.h>

#include "log_level.h"

static const char *const level_names[LOG_LEVELS] = { "debug", "info", "warn", "error" };

const char *log_level_name(enum log_level level)
{
	return (unsigned int)level < LOG_LEVELS ? level_names[level] : "error";
}

int log_level_parse(const char *s, enum log_level *out)
{
	if (!s)
		return -EINVAL;
	for (int i = 0; i < LOG_LEVELS; i++) {
		if (!strcasecmp(s, level_names[i])) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	if (!strcasecmp(s, "warning")) {
		*out = LOG_WARN;
		return 0;
	}
	return -EINVAL;
}

int log_format_parse(const char *s, enum log_format *out)
{
	static const char *const names[] = { "auto", "json", "text" };

	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(s, names[i])) {
			*out = (enum log_format)i;
			return 0;
		}
	}
	return -EINVAL;
}
