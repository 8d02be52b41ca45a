// SPDX-License-Identifier: MIT
/*
 * The SigV4 canonical request (cred_sigv4.h), as AWS's specification and its
 * test suite spell it, with srt's choices where the specification leaves one:
 *   METHOD \n URI \n QUERY \n name:value \n ... \n \n names;... \n payload-hash
 * URI: for s3 the path as sent; for other services dot segments resolved,
 * empty ones dropped, then every byte but unreserved and '/' percent-encoded
 * (an already encoded path is encoded once more, as the SDKs do). QUERY: each
 * key and value decoded (decodeURIComponent: a bad escape or bad UTF-8 keeps
 * it as written; '+' stays '+'), encoded strictly, sorted by key then value.
 * Header values: trimmed, runs of blanks made one space, repeats joined by ','.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cred_sigv4.h"

#define CANON_MAX (1u << 20)

struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void sb_reserve(struct sbuf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->err)
		return;
	if (more > CANON_MAX - b->len) {
		b->err = -E2BIG;
		return;
	}
	if (b->len + more + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	if (b->err)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_ch(struct sbuf *b, char c)
{
	sb_add(b, &c, 1);
}

static bool unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '~';
}

/* RFC 3986 strict: all but unreserved as %XX, upper-case hex. */
static void sb_encode(struct sbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char pct[3] = { '%', hex[c >> 4], hex[c & 15] };

		if (unreserved(c))
			sb_ch(b, (char)c);
		else
			sb_add(b, pct, 3);
	}
}

static void canon_path(struct sbuf *b, struct cred_span path, struct cred_span service)
{
	size_t root = b->len, nseg = 0, start = 0;

	if (!path.n) {
		sb_ch(b, '/');
		return;
	}
	if (cred_sigv4_span_eq(service, "s3")) {
		sb_add(b, path.p, path.n);
		return;
	}
	sb_ch(b, '/');
	for (size_t i = 0; i <= path.n; i++) {
		struct cred_span seg = { path.p + start, i - start };

		if (i < path.n && path.p[i] != '/')
			continue;
		start = i + 1;
		if (!seg.n || cred_sigv4_span_eq(seg, "."))
			continue;
		if (cred_sigv4_span_eq(seg, "..")) {
			if (nseg && !b->err)
				b->len = --nseg ? (size_t)((char *)memrchr(b->p + root, '/',
									   b->len - root) - b->p)
						: root + 1;
			continue;
		}
		if (nseg++)
			sb_ch(b, '/');
		sb_encode(b, seg.p, seg.n);
	}
	if (nseg && path.p[path.n - 1] == '/')
		sb_ch(b, '/');
	if (!b->err)
		b->p[b->len] = '\0';
}

/* Well-formed UTF-8 (no overlong form, surrogate or value past U+10FFFF), as decodeURIComponent wants. */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			     (c & 0xf8) == 0xf0 ? 4 : 0;
		unsigned long cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;

		if (!len || len > n - i)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* decodeURIComponent's result, or the text as written where it would throw. */
static struct cred_span uri_decode(const char *s, size_t n, char *tmp)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			tmp[o++] = s[i];
			continue;
		}
		if (i + 2 >= n || hex_digit(s[i + 1]) < 0 || hex_digit(s[i + 2]) < 0)
			return (struct cred_span){ s, n };
		tmp[o++] = (char)(hex_digit(s[i + 1]) << 4 | hex_digit(s[i + 2]));
		i += 2;
	}
	if (!utf8_ok((const unsigned char *)tmp, o))
		return (struct cred_span){ s, n };
	return (struct cred_span){ tmp, o };
}

struct qpair {
	size_t k, kn, v, vn;	/* offsets into the scratch buffer */
	const char *base;
};

static int qpair_cmp(const void *a, const void *b)
{
	const struct qpair *x = a, *y = b;
	size_t n = x->kn < y->kn ? x->kn : y->kn;
	int c = memcmp(x->base + x->k, y->base + y->k, n);

	if (c || x->kn != y->kn)
		return c ? c : x->kn < y->kn ? -1 : 1;
	n = x->vn < y->vn ? x->vn : y->vn;
	c = memcmp(x->base + x->v, y->base + y->v, n);
	return c ? c : x->vn < y->vn ? -1 : x->vn > y->vn;
}

/* Each "k[=v]" decoded and encoded into scratch; empty parts dropped. */
static size_t query_pairs(struct cred_span q, struct sbuf *scratch, char *tmp, struct qpair *pairs)
{
	size_t np = 0, start = 0;

	for (size_t i = 0; i <= q.n; i++) {
		const char *part = q.p + start, *eq;
		size_t n = i - start;
		struct cred_span d;

		if (i < q.n && q.p[i] != '&')
			continue;
		start = i + 1;
		if (!n)
			continue;
		eq = memchr(part, '=', n);
		pairs[np].k = scratch->len;
		d = uri_decode(part, eq ? (size_t)(eq - part) : n, tmp);
		sb_encode(scratch, d.p, d.n);
		pairs[np].kn = scratch->len - pairs[np].k;
		pairs[np].v = scratch->len;
		if (eq) {
			d = uri_decode(eq + 1, n - (size_t)(eq + 1 - part), tmp);
			sb_encode(scratch, d.p, d.n);
		}
		pairs[np].vn = scratch->len - pairs[np].v;
		np++;
	}
	return np;
}

static void canon_query(struct sbuf *b, struct cred_span q)
{
	struct sbuf scratch = { 0 };
	struct qpair *pairs = NULL;
	char *tmp = NULL;
	size_t np = 1;

	if (!q.n || b->err)
		return;
	for (size_t i = 0; i < q.n; i++)
		np += q.p[i] == '&';
	pairs = calloc(np, sizeof(*pairs));
	tmp = malloc(q.n);
	if (!pairs || !tmp) {
		b->err = -ENOMEM;
		goto cleanup;
	}
	sb_reserve(&scratch, q.n);	/* allocated even when every pair is empty */
	np = query_pairs(q, &scratch, tmp, pairs);
	if (scratch.err) {
		b->err = scratch.err;
		goto cleanup;
	}
	for (size_t i = 0; i < np; i++)
		pairs[i].base = scratch.p;
	qsort(pairs, np, sizeof(*pairs), qpair_cmp);
	for (size_t i = 0; i < np; i++) {
		if (i)
			sb_ch(b, '&');
		sb_add(b, scratch.p + pairs[i].k, pairs[i].kn);
		sb_ch(b, '=');
		sb_add(b, scratch.p + pairs[i].v, pairs[i].vn);
	}
cleanup:
	free(scratch.p);
	free(pairs);
	free(tmp);
}

static void sb_lower(struct sbuf *b, struct cred_span s)
{
	for (size_t i = 0; i < s.n; i++)
		sb_ch(b, s.p[i] >= 'A' && s.p[i] <= 'Z' ? (char)(s.p[i] - 'A' + 'a') : s.p[i]);
}

/* AWS's Trimall: no blanks at either end, a run of blanks inside made one space. */
static void sb_trimall(struct sbuf *b, struct cred_span v)
{
	size_t i = 0, end = v.n;
	bool blank = false;

	while (i < end && (v.p[i] == ' ' || v.p[i] == '\t'))
		i++;
	while (end > i && (v.p[end - 1] == ' ' || v.p[end - 1] == '\t'))
		end--;
	for (; i < end; i++) {
		if (v.p[i] == ' ' || v.p[i] == '\t') {
			blank = true;
			continue;
		}
		if (blank)
			sb_ch(b, ' ');
		blank = false;
		sb_ch(b, v.p[i]);
	}
}

static int canon_headers(struct sbuf *b, const struct cred_sigv4_request *req,
			 const struct cred_sigv4_auth *auth, size_t *missing)
{
	for (size_t s = 0; s < auth->nsigned; s++) {
		struct cred_span name = auth->signed_hdr[s];
		size_t found = 0;

		sb_lower(b, name);
		sb_ch(b, ':');
		for (size_t i = 0; i < req->nhdr; i++) {
			const struct cred_header *h = &req->hdr[i];

			if (h->name.n != name.n || strncasecmp(h->name.p, name.p, name.n))
				continue;
			if (found++)
				sb_ch(b, ',');
			sb_trimall(b, h->value);
		}
		if (!found) {
			if (missing)
				*missing = s;
			return -ENOENT;
		}
		sb_ch(b, '\n');
	}
	return 0;
}

int cred_sigv4_canonical_request(const struct cred_sigv4_request *req,
				 const struct cred_sigv4_auth *auth, struct cred_span payload_hash,
				 char **out, size_t *out_len, size_t *missing)
{
	struct sbuf b = { 0 };
	int err;

	*out = NULL;
	*out_len = 0;
	sb_add(&b, req->method.p, req->method.n);
	sb_ch(&b, '\n');
	canon_path(&b, req->path, auth->service);
	sb_ch(&b, '\n');
	canon_query(&b, req->query);
	sb_ch(&b, '\n');
	err = canon_headers(&b, req, auth, missing);
	if (err)
		goto cleanup;
	sb_ch(&b, '\n');
	for (size_t s = 0; s < auth->nsigned; s++) {
		if (s)
			sb_ch(&b, ';');
		sb_lower(&b, auth->signed_hdr[s]);
	}
	sb_ch(&b, '\n');
	sb_add(&b, payload_hash.p, payload_hash.n);
	err = b.err;
	if (err)
		goto cleanup;
	*out = b.p;
	*out_len = b.len;
	return 0;
cleanup:
	free(b.p);
	return err;
}
