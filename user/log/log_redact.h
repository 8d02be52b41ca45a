/* SPDX-License-Identifier: MIT */
/*
 * Secrets a log must never show (the values of credentials a policy
 * denies or masks): every occurrence in an event's strings becomes
 * "[masked:NAME]" before the line is rendered, JSON or text. Values
 * shorter than LOG_REDACT_MIN are not registered: they cannot be told
 * apart from ordinary text, and replacing them would garble every line.
 */
#ifndef BPFBOX_LOG_REDACT_H
#define BPFBOX_LOG_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define LOG_REDACT_MIN 4

struct log_secret;

struct log_redact {
	struct log_secret *v;	/* longest first, so a secret inside another is never half replaced */
	size_t n;
};

/* Registers value under name (both copied); 0, or -ENOMEM, -EINVAL (no name). Short values: 0, ignored. */
int log_redact_add(struct log_redact *r, const char *name, const char *value);
/*
 * s with every secret replaced (malloc'd), or NULL when nothing matched
 * (*failed stays false) or memory ran out (*failed set true).
 */
char *log_redact_string(const struct log_redact *r, const char *s, bool *failed);
/* Every string value under node, redacted in place; one that cannot be is emptied to "[masked]". */
void log_redact_json(const struct log_redact *r, cJSON *node);
/* Wipes and frees the copies. */
void log_redact_free(struct log_redact *r);

#endif
