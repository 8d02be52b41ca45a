// SPDX-License-Identifier: MIT
/* ignoreViolations' rules (log_ignore.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log_ignore.h"

struct log_rule {
	char *command;
	char **lines;
	size_t n_lines;
};

void log_ignore_free(struct log_ignore *ig)
{
	for (size_t i = 0; ig->rules && i < ig->n; i++) {
		for (size_t j = 0; j < ig->rules[i].n_lines; j++)
			free(ig->rules[i].lines[j]);
		free(ig->rules[i].lines);
		free(ig->rules[i].command);
	}
	free(ig->rules);
	ig->rules = NULL;
	ig->n = 0;
}

static int copy_rule(const struct log_ignore_rule *src, struct log_rule *dst)
{
	dst->command = strdup(src->command ? src->command : "*");
	dst->lines = calloc(src->n_lines ? src->n_lines : 1, sizeof(*dst->lines));
	if (!dst->command || !dst->lines)
		return -ENOMEM;
	for (size_t j = 0; j < src->n_lines; j++) {
		dst->lines[j] = strdup(src->lines[j] ? src->lines[j] : "");
		if (!dst->lines[j])
			return -ENOMEM;
		dst->n_lines = j + 1;
	}
	return 0;
}

int log_ignore_copy(const struct log_ignore_rule *rules, size_t n, struct log_ignore *out)
{
	out->rules = NULL;
	out->n = 0;
	if (!rules || !n)
		return 0;
	out->rules = calloc(n, sizeof(*out->rules));
	if (!out->rules)
		return -ENOMEM;
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		if (copy_rule(&rules[i], &out->rules[i])) {
			log_ignore_free(out);
			return -ENOMEM;
		}
	}
	return 0;
}

bool log_ignore_matches(const struct log_ignore *ig, const char *command_line, const char *msg, const char *text)
{
	const char *cmd = command_line ? command_line : "";

	for (size_t i = 0; i < ig->n; i++) {
		const struct log_rule *r = &ig->rules[i];

		if (strcmp(r->command, "*") && !strstr(cmd, r->command))
			continue;
		for (size_t j = 0; j < r->n_lines; j++)
			if ((msg && strstr(msg, r->lines[j])) || (text && strstr(text, r->lines[j])))
				return true;
	}
	return false;
}
