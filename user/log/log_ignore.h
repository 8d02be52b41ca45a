/* SPDX-License-Identifier: MIT */
/*
 * ignoreViolations: refusals that match a rule (the command line contains
 * its command, or it is "*", and the message or text line contains one of
 * its lines) are counted, not written.
 */
#ifndef BPFBOX_LOG_IGNORE_H
#define BPFBOX_LOG_IGNORE_H

#include <stdbool.h>
#include <stddef.h>

#include "log.h"

struct log_rule;

struct log_ignore {
	struct log_rule *rules;
	size_t n;
};

/* A copy of rules[0..n) into out; -ENOMEM (out left empty). */
int log_ignore_copy(const struct log_ignore_rule *rules, size_t n, struct log_ignore *out);
void log_ignore_free(struct log_ignore *ig);
bool log_ignore_matches(const struct log_ignore *ig, const char *command_line, const char *msg, const char *text);

#endif
