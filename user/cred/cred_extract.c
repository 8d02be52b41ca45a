// SPDX-License-Identifier: MIT
/* extract: the captured spans of a value masked (cred_extract.h). */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cred_extract.h"
#include "cred_regex.h"
#include "cred_subst.h"

struct cred_extract {
	regex_t re;
	char *ere;
	size_t group1;
};

/* A span of the value to replace by capture cap's sentinel. */
struct span {
	size_t start, end, cap;
};

struct spans {
	struct span *v;
	size_t n, cap;
	/* The distinct captured values, first seen first (pointers into the value). */
	const char **capv;
	size_t *capl, ncap;
};

int cred_no_match_parse(const char *s, enum cred_no_match *out)
{
	if (!s || !strcmp(s, "warn"))
		*out = CRED_NO_MATCH_WARN;
	else if (!strcmp(s, "deny"))
		*out = CRED_NO_MATCH_DENY;
	else if (!strcmp(s, "error"))
		*out = CRED_NO_MATCH_ERROR;
	else
		return -EINVAL;
	return 0;
}

int cred_extract_compile(const char *pattern, struct cred_extract **out, char *why,
			 size_t why_len)
{
	struct cred_extract *x = calloc(1, sizeof(*x));
	int ret, rc;

	if (!x)
		return -ENOMEM;
	ret = cred_regex_from_js(pattern, &x->ere, &x->group1, why, why_len);
	if (ret) {
		free(x);
		return ret;
	}
	rc = regcomp(&x->re, x->ere, REG_EXTENDED);
	if (rc) {
		regerror(rc, &x->re, why, why_len);
		free(x->ere);
		free(x);
		return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
	}
	*out = x;
	return 0;
}

void cred_extract_free(struct cred_extract *x)
{
	if (!x)
		return;
	regfree(&x->re);
	free(x->ere);
	free(x);
}

const char *cred_extract_posix(const struct cred_extract *x)
{
	return x->ere;
}

static int add_span(struct spans *s, size_t start, size_t end, size_t cap)
{
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 8;
		struct span *v = realloc(s->v, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = c;
	}
	s->v[s->n++] = (struct span){ start, end, cap };
	return 0;
}

/* The index of value[start..end) among the distinct captures, added if new. */
static int capture_index(struct spans *s, const char *value, size_t start, size_t end,
			 size_t *idx)
{
	size_t len = end - start;
	const char **capv;
	size_t *capl;

	for (size_t i = 0; i < s->ncap; i++)
		if (s->capl[i] == len && !memcmp(s->capv[i], value + start, len)) {
			*idx = i;
			return 0;
		}
	capv = realloc(s->capv, (s->ncap + 1) * sizeof(*capv));
	if (capv)
		s->capv = capv;
	capl = realloc(s->capl, (s->ncap + 1) * sizeof(*capl));
	if (capl)
		s->capl = capl;
	if (!capv || !capl)
		return -ENOMEM;
	s->capv[s->ncap] = value + start;
	s->capl[s->ncap] = len;
	*idx = s->ncap++;
	return 0;
}

/* Every match, as JS's matchAll walks them: an empty match steps one byte on. */
static int collect(const struct cred_extract *x, const char *value, size_t len,
		   struct spans *s)
{
	regmatch_t m[x->group1 + 1];
	size_t off = 0, idx;
	int ret;

	while (off <= len) {
		if (regexec(&x->re, value + off, x->group1 + 1, m, off ? REG_NOTBOL : 0))
			break;
		if (m[x->group1].rm_so < 0)
			return -EINVAL;	/* srt: group 1 must capture on every match */
		if (m[x->group1].rm_eo > m[x->group1].rm_so) {
			size_t start = off + (size_t)m[x->group1].rm_so;
			size_t end = off + (size_t)m[x->group1].rm_eo;

			ret = capture_index(s, value, start, end, &idx);
			if (!ret)
				ret = add_span(s, start, end, idx);
			if (ret)
				return ret;
		}
		off += (size_t)(m[0].rm_eo > m[0].rm_so ? m[0].rm_eo : m[0].rm_eo + 1);
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool overlaps(const struct spans *s, size_t start, size_t end)
{
	for (size_t i = 0; i < s->n; i++)
		if (start < s->v[i].end && s->v[i].start < end)
			return true;
	return false;
}

/* maskDuplicates: verbatim copies outside the spans, longest capture first. */
static int duplicates(const char *value, size_t len, struct spans *s)
{
	bool *done = calloc(s->ncap, sizeof(*done));
	int ret = 0;

	if (!done)
		return -ENOMEM;
	for (size_t k = 0; k < s->ncap && !ret; k++) {
		size_t c = SIZE_MAX;

		for (size_t i = 0; i < s->ncap; i++)
			if (!done[i] && (c == SIZE_MAX || s->capl[i] > s->capl[c]))
				c = i;
		done[c] = true;
		for (const char *p = value; !ret && p < value + len; p++) {
			p = memmem(p, len - (size_t)(p - value), s->capv[c], s->capl[c]);
			if (!p)
				break;
			if (!overlaps(s, (size_t)(p - value), (size_t)(p - value) + s->capl[c]))
				ret = add_span(s, (size_t)(p - value),
					       (size_t)(p - value) + s->capl[c], c);
		}
	}
	free(done);
	if (!ret)
		qsort(s->v, s->n, sizeof(*s->v), by_start);
	return ret;
}

/* The value with each span replaced by its capture's sentinel, into out. */
static int build(const char *value, size_t len, const struct spans *s, char *const *sentinels,
		 const size_t *sentinel_lens, struct cred_buf *out)
{
	size_t pos = 0;
	int ret = 0;

	for (size_t i = 0; i < s->n && !ret; i++) {
		ret = cred_buf_append(out, value + pos, s->v[i].start - pos);
		if (!ret)
			ret = cred_buf_append(out, sentinels[s->v[i].cap], sentinel_lens[s->v[i].cap]);
		pos = s->v[i].end;
	}
	if (!ret)
		ret = cred_buf_append(out, value + pos, len - pos);
	if (!ret)
		ret = cred_buf_append(out, "", 1);
	return ret;
}

int cred_extract_mask(const struct cred_extract *x, struct cred_table *t, const char *name,
		      const char *value, size_t len, bool mask_duplicates, char **fake,
		      size_t *fake_len, size_t *captures)
{
	struct spans s = { 0 };
	struct cred_buf out = { 0 };
	char **sentinels = NULL;
	size_t *sentinel_lens = NULL;
	int ret = -EINVAL;

	if (memchr(value, '\0', len) || value[len] != '\0')
		return -EINVAL;
	ret = collect(x, value, len, &s);
	if (!ret && !s.ncap)
		ret = -ENOENT;
	if (!ret && mask_duplicates)
		ret = duplicates(value, len, &s);
	if (ret)
		goto cleanup;
	ret = -ENOMEM;
	sentinels = calloc(s.ncap, sizeof(*sentinels));
	sentinel_lens = calloc(s.ncap, sizeof(*sentinel_lens));
	if (!sentinels || !sentinel_lens)
		goto cleanup;
	for (size_t i = 0; i < s.ncap; i++) {
		ret = cred_table_mask(t, name, s.capv[i], s.capl[i], &sentinels[i],
				      &sentinel_lens[i]);
		if (ret < 0)
			goto cleanup;
	}
	ret = build(value, len, &s, sentinels, sentinel_lens, &out);
	if (ret)
		goto cleanup;
	*fake = out.data;
	if (fake_len)
		*fake_len = out.len - 1;
	if (captures)
		*captures = s.ncap;
	out.data = NULL;
cleanup:
	cred_buf_wipe(&out);
	for (size_t i = 0; sentinels && i < s.ncap; i++)
		free(sentinels[i]);
	free(sentinels);
	free(sentinel_lens);
	free(s.v);
	free(s.capv);
	free(s.capl);
	return ret;
}
