// SPDX-License-Identifier: MIT
/*
 * The ceiling's cuts: the list policy_ceiling_apply fills, the one-line
 * message of each ("p.json: filesystem.allowWrite[1] "/srv": outside the
 * administrator's allowWrite (/etc/bpfbox/policy.json); not granted"), and
 * the copies into the effective policy that the sections share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

/* A cut's list of places ("granted only at A, B") names at most this many. */
#define CUT_LIST_MAX 8

void ceiling_cuts_free(struct ceiling_cuts *cuts)
{
	for (size_t i = 0; i < cuts->n; i++) {
		free(cuts->items[i].path);
		free(cuts->items[i].line);
	}
	free(cuts->items);
	memset(cuts, 0, sizeof(*cuts));
}

void ceiling_cuts_print(const struct ceiling_cuts *cuts, FILE *out)
{
	for (size_t i = 0; i < cuts->n; i++)
		fprintf(out, "bpfbox: %s\n", cuts->items[i].line);
	if (cuts->oom)
		fprintf(out, "bpfbox: out of memory while recording what the ceiling takes away\n");
}

const struct ceiling_cut *ceiling_cuts_find(const struct ceiling_cuts *cuts, const char *path)
{
	for (size_t i = 0; i < cuts->n; i++)
		if (!strcmp(cuts->items[i].path, path))
			return &cuts->items[i];
	return NULL;
}

/*
 * One cut: "CALLER: PATH VALUE: WHY (ADMIN); OUTCOME". value is printed as
 * given (callers quote strings), and may be NULL.
 */
void ceiling_cut(struct ceiling *c, const char *path, const char *value, const char *why,
		 const char *outcome)
{
	struct ceiling_cuts *l = c->cuts;
	struct ceiling_cut k = { 0 };

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct ceiling_cut *items = realloc(l->items, cap * sizeof(*items));

		if (!items)
			goto oom;
		l->items = items;
		l->cap = cap;
	}
	k.path = strdup(path);
	if (!k.path || asprintf(&k.line, "%s: %s%s%s: %s (%s); %s", c->caller_file, path,
				value ? " " : "", value ? value : "", why, c->admin_file,
				outcome) < 0) {
		free(k.path);
		goto oom;
	}
	l->items[l->n++] = k;
	return;
oom:
	l->oom = true;
	c->oom = true;
}

/*
 * An entry as written, in quotes (unescaped, as in the loader's messages),
 * then what it means when that differs.
 */
char *ceiling_quoted(struct ceiling *c, const char *s, const char *normalised)
{
	char *q = NULL;
	int ret;

	if (normalised && strcmp(s, normalised))
		ret = asprintf(&q, "\"%s\" (%s)", s, normalised);
	else
		ret = asprintf(&q, "\"%s\"", s);
	if (ret < 0) {
		c->oom = true;
		return NULL;
	}
	return q;
}

void ceiling_cut_quoted(struct ceiling *c, const char *path, const char *written,
			const char *normalised, const char *why, const char *outcome)
{
	char *v = ceiling_quoted(c, written, normalised);

	if (v)
		ceiling_cut(c, path, v, why, outcome);
	free(v);
}

void places_add(struct ceiling *c, struct cut_places *l, const char *item)
{
	char *t = NULL;

	if (l->n++ >= CUT_LIST_MAX)
		return;
	if (asprintf(&t, "%s%s%s", l->text ? l->text : "", l->text ? ", " : "", item) < 0) {
		c->oom = true;
		return;
	}
	free(l->text);
	l->text = t;
}

/* "granted only at A, B" from prefix "granted only at"; NULL when empty. */
static char *places_finish(struct ceiling *c, struct cut_places *l, const char *prefix)
{
	char *t = NULL;
	int ret;

	if (!l->n)
		return NULL;
	if (l->n > CUT_LIST_MAX)
		ret = asprintf(&t, "%s %s, and %zu more", prefix, l->text ? l->text : "",
			       l->n - CUT_LIST_MAX);
	else
		ret = asprintf(&t, "%s %s", prefix, l->text ? l->text : "");
	free(l->text);
	l->text = NULL;
	if (ret < 0) {
		c->oom = true;
		return NULL;
	}
	return t;
}

void ceiling_cut_places(struct ceiling *c, const char *path, const char *value, const char *why,
			struct cut_places *l, const char *prefix)
{
	char *outcome = places_finish(c, l, prefix);

	if (outcome)
		ceiling_cut(c, path, value, why, outcome);
	free(outcome);
}

char *ceiling_strdup(struct ceiling *c, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		c->oom = true;
	return d;
}

bool ceiling_strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* Appends a copy of s (the vector stays NULL-terminated). */
void ceiling_strv_add(struct ceiling *c, char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof(*nv));

	if (!nv) {
		c->oom = true;
		return;
	}
	*v = nv;
	nv[*n] = ceiling_strdup(c, s);
	if (!nv[*n])
		return;
	nv[++*n] = NULL;
}

void ceiling_strv_add_unique(struct ceiling *c, char ***v, size_t *n, const char *s)
{
	if (!ceiling_strv_has(*v, *n, s))
		ceiling_strv_add(c, v, n, s);
}

void ceiling_cut_flag(struct ceiling *c, const char *path, bool caller, bool admin,
		      const char *outcome)
{
	if (caller && !admin)
		ceiling_cut(c, path, "true", "not allowed by the administrator's policy", outcome);
}

char *ceiling_jpath_at(struct ceiling *c, const char *list, size_t i)
{
	char *s = NULL;

	if (asprintf(&s, "%s[%zu]", list, i) < 0) {
		c->oom = true;
		return NULL;
	}
	return s;
}
