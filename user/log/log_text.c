// SPDX-License-Identifier: MIT
/*
 * The human-readable line, for a terminal:
 *   bpfbox: WARN denied open-read of /home/u/.ssh/id_rsa [rule denyRead:/home/u/.ssh] [pid 123 cat]
 * The message carries the meaning; brackets add who and why when known.
 * Every string goes through log_text_escape(): file names are hostile.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "log_text.h"
#include "log_utf8.h"

static const char *const upper_names[LOG_LEVELS] = { "DEBUG", "INFO", "WARN", "ERROR" };

static const cJSON *field(const cJSON *root, const char *a, const char *b)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, a), b);
}

static const char *field_str(const cJSON *root, const char *a, const char *b)
{
	const cJSON *item = field(root, a, b);

	return cJSON_IsString(item) && item->valuestring[0] ? item->valuestring : NULL;
}

/* Prints s escaped; false when out of memory. */
static bool put_escaped(FILE *f, const char *fmt, const char *s)
{
	char *esc = log_text_escape(s);

	if (!esc)
		return false;
	fprintf(f, fmt, esc);
	free(esc);
	return true;
}

char *log_text_render(cJSON *root, enum log_level level)
{
	const char *msg, *rule, *name;
	const cJSON *pid = field(root, "process", "pid");
	const cJSON *count = field(root, "bpfbox", "count");
	char *buf = NULL;
	size_t size = 0;
	bool ok = true;
	FILE *f;

	msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "message"));
	if (!msg || !*msg)
		msg = field_str(root, "event", "action");
	f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	if ((unsigned int)level >= LOG_LEVELS)
		level = LOG_ERROR;
	fprintf(f, "bpfbox: %s ", upper_names[level]);
	ok = put_escaped(f, "%s", msg ? msg : "(no message)");
	rule = field_str(root, "rule", "name");
	if (ok && rule)
		ok = put_escaped(f, " [rule %s]", rule);
	if (cJSON_IsNumber(pid)) {
		fprintf(f, " [pid %.0f", pid->valuedouble);
		name = field_str(root, "process", "name");
		if (ok && name)
			ok = put_escaped(f, " %s", name);
		fputc(']', f);
	}
	if (cJSON_IsTrue(field(root, "bpfbox", "audit")))
		fputs(" [audit: allowed]", f);
	if (cJSON_IsNumber(count) && count->valuedouble > 1)
		fprintf(f, " [%.0f times]", count->valuedouble);
	if (ferror(f))
		ok = false;
	if (fclose(f) || !ok) {
		free(buf);
		return NULL;
	}
	return buf;
}
