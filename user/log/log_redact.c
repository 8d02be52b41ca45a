// SPDX-License-Identifier: MIT
/* Secrets out of log lines (log_redact.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_redact.h"

struct log_secret {
	char *name;
	char *value;
	size_t len;
};

int log_redact_add(struct log_redact *r, const char *name, const char *value)
{
	struct log_secret *v, s;
	size_t at;

	if (!name || !*name)
		return -EINVAL;
	if (!value || strlen(value) < LOG_REDACT_MIN)
		return 0;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].value, value))
			return 0;
	s.len = strlen(value);
	s.name = strdup(name);
	s.value = strdup(value);
	v = realloc(r->v, (r->n + 1) * sizeof(*v));
	if (!s.name || !s.value || !v) {
		free(s.name);
		if (s.value)
			explicit_bzero(s.value, s.len);
		free(s.value);
		if (v)
			r->v = v;
		return -ENOMEM;
	}
	r->v = v;
	/* Longest first: the first match at a position is the longest one. */
	for (at = 0; at < r->n && r->v[at].len >= s.len; at++)
		;
	memmove(&r->v[at + 1], &r->v[at], (r->n - at) * sizeof(*v));
	r->v[at] = s;
	r->n++;
	return 0;
}

static const struct log_secret *match_at(const struct log_redact *r, const char *p, size_t left)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].len <= left && !memcmp(p, r->v[i].value, r->v[i].len))
			return &r->v[i];
	return NULL;
}

/* Bytes s needs redacted (without its NUL); 0 when nothing matches. */
static size_t redacted_len(const struct log_redact *r, const char *s, size_t n)
{
	size_t out = 0, i = 0;
	bool any = false;

	while (i < n) {
		const struct log_secret *m = match_at(r, s + i, n - i);

		if (m) {
			out += strlen("[masked:]") + strlen(m->name);
			i += m->len;
			any = true;
		} else {
			out++;
			i++;
		}
	}
	return any ? out : 0;
}

char *log_redact_string(const struct log_redact *r, const char *s, bool *failed)
{
	size_t n, need, i = 0, o = 0;
	char *out;

	*failed = false;
	if (!r->n || !s)
		return NULL;
	n = strlen(s);
	need = redacted_len(r, s, n);
	if (!need)
		return NULL;
	out = malloc(need + 1);
	if (!out) {
		*failed = true;
		return NULL;
	}
	while (i < n) {
		const struct log_secret *m = match_at(r, s + i, n - i);

		if (m) {
			o += (size_t)sprintf(out + o, "[masked:%s]", m->name);
			i += m->len;
		} else {
			out[o++] = s[i++];
		}
	}
	out[o] = 0;
	return out;
}

void log_redact_json(const struct log_redact *r, cJSON *node)
{
	if (!r->n)
		return;
	for (; node; node = node->next) {
		if (cJSON_IsString(node) && node->valuestring) {
			bool failed;
			char *red = log_redact_string(r, node->valuestring, &failed);

			/* Out of memory: nothing of the value stays rather than all of it. */
			if ((red || failed) && !cJSON_SetValuestring(node, red ? red : "[masked]"))
				node->valuestring[0] = 0;
			free(red);
		}
		if (node->child)
			log_redact_json(r, node->child);
	}
}

void log_redact_free(struct log_redact *r)
{
	for (size_t i = 0; i < r->n; i++) {
		explicit_bzero(r->v[i].value, r->v[i].len);
		free(r->v[i].value);
		free(r->v[i].name);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}
