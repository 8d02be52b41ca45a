// SPDX-License-Identifier: MIT
/*
 * JSON-walking helpers for the policy loader: JSON paths for messages, type
 * checks that report instead of stopping, key tables that turn unknown,
 * tool-specific and unsupported keys into the right diagnostic, and member
 * tables that hand an object's members to their parsers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_keys.h"
#include "policy_json.h"

void *pcheck(struct pctx *c, void *ptr)
{
	if (!ptr)
		c->oom = true;
	return ptr;
}

static bool is_ident(const char *k)
{
	if (!*k || (*k >= '0' && *k <= '9'))
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == '$'))
			return false;
	return true;
}

char *jpath_key(struct pctx *c, const char *parent, const char *key)
{
	char *out = NULL, *q;
	size_t len = strlen(key);
	int ret;

	if (is_ident(key)) {
		ret = asprintf(&out, "%s%s%s", parent, *parent ? "." : "", key);
		return pcheck(c, ret < 0 ? NULL : out);
	}
	/* Quote keys such as "git push" (ignoreViolations) JSON-style. */
	q = malloc(len * 6 + 3);
	if (!pcheck(c, q))
		return NULL;
	char *w = q;
	*w++ = '"';
	for (const unsigned char *k = (const unsigned char *)key; *k; k++) {
		if (*k == '"' || *k == '\\')
			w += sprintf(w, "\\%c", *k);
		else if (*k < 0x20)
			w += sprintf(w, "\\u%04x", *k);
		else
			*w++ = *k;
	}
	*w++ = '"';
	*w = '\0';
	ret = asprintf(&out, "%s[%s]", parent, q);
	free(q);
	return pcheck(c, ret < 0 ? NULL : out);
}

char *jpath_index(struct pctx *c, const char *parent, size_t i)
{
	char *out = NULL;

	if (asprintf(&out, "%s[%zu]", parent, i) < 0)
		out = NULL;
	return pcheck(c, out);
}

static void vadd(struct pctx *c, enum diag_severity sev, const char *path,
		 const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0) {
		c->oom = true;
		return;
	}
	if (diag_add(c->diags, sev, path, "%s", msg))
		c->oom = true;
	free(msg);
}

void perr(struct pctx *c, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(c, DIAG_ERROR, path, fmt, ap);
	va_end(ap);
}

void pwarn(struct pctx *c, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(c, c->strict ? DIAG_ERROR : DIAG_WARNING, path, fmt, ap);
	va_end(ap);
}

void pdebug(struct pctx *c, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(c, DIAG_DEBUG, path, fmt, ap);
	va_end(ap);
}

const char *json_type_name(const cJSON *v)
{
	if (!v)
		return "nothing";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "an unknown value";
}

bool want_object(struct pctx *c, const cJSON *v, const char *path)
{
	if (cJSON_IsObject(v))
		return true;
	perr(c, path, "expected an object, got %s", json_type_name(v));
	return false;
}

void check_duplicate_keys(struct pctx *c, const cJSON *obj, const char *path)
{
	for (const cJSON *m = obj->child; m; m = m->next)
		if (json_key_repeated(m)) {
			char *p = jpath_key(c, path, m->string);

			/* Parsers disagree on which copy wins: refuse the ambiguity. */
			perr(c, p ? p : path, "duplicate key");
			free(p);
		}
}

/* A refused feature that is switched off or lists nothing weakens nothing. */
static bool off_value(const cJSON *v)
{
	return cJSON_IsNull(v) || cJSON_IsFalse(v) ||
	       (cJSON_IsArray(v) && !v->child);
}

void check_keys_ex(struct pctx *c, const cJSON *obj, const char *path,
		   const struct key_spec *specs, const char *unknown_error)
{
	check_duplicate_keys(c, obj, path);
	for (const cJSON *m = obj->child; m; m = m->next) {
		const struct key_spec *s = specs;
		char *p;

		while (s->name && strcmp(s->name, m->string))
			s++;
		if (s->name && s->action == KEY_KNOWN)
			continue;
		p = jpath_key(c, path, m->string);
		if (!p)
			return;
		if (!s->name && unknown_error)
			perr(c, p, "unknown key (%s)", unknown_error);
		else if (!s->name)
			pwarn(c, p, "unknown key (ignored)");
		else if (s->action == KEY_IGNORED)
			pdebug(c, p, "ignored: %s", s->note);
		else if (off_value(m))
			pdebug(c, p, "accepted: %s is off", m->string);
		else
			perr(c, p, "not supported by bpfbox: %s; refusing the policy "
			     "rather than dropping the field", s->note);
		free(p);
	}
}

void check_keys(struct pctx *c, const cJSON *obj, const char *path,
		const struct key_spec *specs)
{
	check_keys_ex(c, obj, path, specs, NULL);
}

int jget_bool(struct pctx *c, const cJSON *obj, const char *key, const char *parent,
	      bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char *p;

	if (!v)
		return 0;
	if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v);
		return 1;
	}
	p = jpath_key(c, parent, key);
	perr(c, p ? p : parent, "expected a boolean, got %s", json_type_name(v));
	free(p);
	return -1;
}

int jget_int(struct pctx *c, const cJSON *obj, const char *key, const char *parent,
	     long long min, long long max, long long *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	double d;
	char *p;

	if (!v)
		return 0;
	p = jpath_key(c, parent, key);
	if (!cJSON_IsNumber(v)) {
		perr(c, p ? p : parent, "expected an integer, got %s", json_type_name(v));
		goto bad;
	}
	d = v->valuedouble;
	/* Range first, so the cast back is defined; then reject fractions. */
	if (d < (double)min || d > (double)max || d != (double)(long long)d) {
		perr(c, p ? p : parent, "expected an integer from %lld to %lld, got %g",
		     min, max, d);
		goto bad;
	}
	free(p);
	*out = (long long)d;
	return 1;
bad:
	free(p);
	return -1;
}

const cJSON *jget_array(struct pctx *c, const cJSON *obj, const char *key,
			const char *parent, bool required, const char *what)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char *p;

	if (v && cJSON_IsArray(v))
		return v;
	if (!v && !required)
		return NULL;
	p = jpath_key(c, parent, key);
	if (!v)
		perr(c, p ? p : parent, "Required");
	else
		perr(c, p ? p : parent, "expected an array of %s, got %s", what,
		     json_type_name(v));
	free(p);
	return NULL;
}

const char *jelem_string(struct pctx *c, const cJSON *item, const char *path,
			 bool nonempty)
{
	if (!cJSON_IsString(item)) {
		perr(c, path, "expected a string, got %s", json_type_name(item));
		return NULL;
	}
	if (nonempty && !item->valuestring[0]) {
		perr(c, path, "must not be empty");
		return NULL;
	}
	return item->valuestring;
}

int strv_push(struct pctx *c, char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	char *d;

	if (!pcheck(c, nv))
		return -ENOMEM;
	*v = nv;
	d = s ? strdup(s) : NULL;
	if (s && !pcheck(c, d))
		return -ENOMEM;
	nv[(*n)++] = d;
	return 0;
}

void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void grant_cut(struct pctx *c, const char *path, const char *source, const char *lex)
{
	struct policy *p = c->p;
	char **nv = realloc(p->grant_cuts, (p->n_grant_cuts + 2) * sizeof(*nv));

	if (!pcheck(c, nv))
		return;
	p->grant_cuts = nv;
	/* NULL-terminated, for the start event's list. */
	if (asprintf(&nv[p->n_grant_cuts], "%s \"%s\" (%s)", path, source, lex) < 0) {
		nv[p->n_grant_cuts] = NULL;
		c->oom = true;
		return;
	}
	nv[++p->n_grant_cuts] = NULL;
}

void parse_members(struct pctx *c, const cJSON *obj, const char *parent,
		   const struct json_member *members)
{
	for (const struct json_member *m = members; m->key; m++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, m->key);
		char *p;

		if (v) {
			m->parse(c, v);
			continue;
		}
		if (!m->required)
			continue;
		p = jpath_key(c, parent, m->key);
		perr(c, p ? p : m->key, "Required");
		free(p);
	}
}
