// SPDX-License-Identifier: MIT
/*
 * What a request says about SigV4 (cred_sigv4.h): the strict Authorization
 * parser, and the classification srt makes before it looks up a pair.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "cred_sigv4.h"

#define CRED_TERMINATOR "aws4_request"

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Access key ids: AWS's are upper-case alphanumerics; sentinels stay inside this set too. */
static bool akid_byte(char c)
{
	return is_alnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+';
}

static bool scope_byte(char c)
{
	return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

/* RFC 9110 tchar: what a field name is made of. */
static bool tchar(char c)
{
	return is_alnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool cred_sigv4_span_eq(struct cred_span a, const char *lit)
{
	return a.n == strlen(lit) && !memcmp(a.p, lit, a.n);
}

static bool starts_with(struct cred_span a, const char *lit)
{
	return a.n >= strlen(lit) && !memcmp(a.p, lit, strlen(lit));
}

size_t cred_sigv4_find(const struct cred_sigv4_request *req, const char *name,
		       struct cred_span *first)
{
	size_t count = 0, len = strlen(name);

	for (size_t i = 0; i < req->nhdr; i++) {
		const struct cred_header *h = &req->hdr[i];

		if (h->name.n != len || strncasecmp(h->name.p, name, len))
			continue;
		if (!count++ && first)
			*first = h->value;
	}
	return count;
}

/* Lower-case byte order: the order AWS sorts signed header names in. */
static int name_cmp(struct cred_span a, struct cred_span b)
{
	size_t n = a.n < b.n ? a.n : b.n;

	for (size_t i = 0; i < n; i++) {
		unsigned char x = (unsigned char)lower(a.p[i]), y = (unsigned char)lower(b.p[i]);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return a.n < b.n ? -1 : a.n > b.n;
}

static int parse_scope_part(struct cred_span *out, const char *p, size_t n, size_t max)
{
	if (!n || n > max)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!scope_byte(p[i]))
			return -EINVAL;
	*out = (struct cred_span){ p, n };
	return 0;
}

/* AKID/YYYYMMDD/REGION/SERVICE/aws4_request */
static int parse_credential(const char *p, size_t n, struct cred_sigv4_auth *a)
{
	const char *end = p + n, *slash;
	size_t i = 0;

	while (i < n && p[i] != '/') {
		if (!akid_byte(p[i]))
			return -EINVAL;
		i++;
	}
	if (!i || i > CRED_SIGV4_AKID_MAX || i + 10 > n)
		return -EINVAL;
	a->akid = (struct cred_span){ p, i };
	p += i + 1;
	for (i = 0; i < 8; i++)
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
	if (p[8] != '/')
		return -EINVAL;
	a->date = (struct cred_span){ p, 8 };
	p += 9;
	slash = memchr(p, '/', (size_t)(end - p));
	if (!slash || parse_scope_part(&a->region, p, (size_t)(slash - p), 64))
		return -EINVAL;
	p = slash + 1;
	slash = memchr(p, '/', (size_t)(end - p));
	if (!slash || parse_scope_part(&a->service, p, (size_t)(slash - p), 64))
		return -EINVAL;
	p = slash + 1;
	return (size_t)(end - p) == strlen(CRED_TERMINATOR) &&
	       !memcmp(p, CRED_TERMINATOR, strlen(CRED_TERMINATOR)) ? 0 : -EINVAL;
}

/* a;b;c: tchar names, sorted here by lower case; a repeated name is refused. */
static int parse_signed_headers(const char *p, size_t n, struct cred_sigv4_auth *a)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		struct cred_span name = { p + start, i - start };
		size_t j;

		if (i < n && p[i] != ';') {
			if (!tchar(p[i]))
				return -EINVAL;
			continue;
		}
		if (!name.n || name.n >= CRED_SIGV4_NAME_MAX || a->nsigned == CRED_SIGV4_MAX_SIGNED)
			return -EINVAL;
		for (j = a->nsigned; j > 0 && name_cmp(a->signed_hdr[j - 1], name) > 0; j--)
			a->signed_hdr[j] = a->signed_hdr[j - 1];
		if (j > 0 && !name_cmp(a->signed_hdr[j - 1], name))
			return -EINVAL;
		a->signed_hdr[j] = name;
		a->nsigned++;
		start = i + 1;
	}
	return 0;
}

static int parse_signature(const char *p, size_t n, struct cred_sigv4_auth *a)
{
	if (n != 2 * sizeof(a->signature))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(a->signature); i++) {
		int hi = hex_val(p[2 * i]), lo = hex_val(p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		a->signature[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static const struct {
	const char *key;
	int (*parse)(const char *p, size_t n, struct cred_sigv4_auth *a);
} auth_params[] = {
	{ "Credential=", parse_credential },
	{ "SignedHeaders=", parse_signed_headers },
	{ "Signature=", parse_signature },
};

/* One "Key=value" token: a known key, not seen before, its value well formed. */
static int parse_param(const char *p, size_t n, unsigned *seen, struct cred_sigv4_auth *a)
{
	for (size_t k = 0; k < sizeof(auth_params) / sizeof(auth_params[0]); k++) {
		size_t klen = strlen(auth_params[k].key);

		if (n < klen || memcmp(p, auth_params[k].key, klen))
			continue;
		if (*seen & (1u << k))
			return -EINVAL;
		*seen |= 1u << k;
		return auth_params[k].parse(p + klen, n - klen, a);
	}
	return -EINVAL;
}

int cred_sigv4_parse_auth(const char *v, size_t len, struct cred_sigv4_auth *a)
{
	size_t alen = strlen(CRED_SIGV4_ALGORITHM), i;
	unsigned seen = 0;

	memset(a, 0, sizeof(*a));
	if (len > CRED_SIGV4_AUTH_MAX || len <= alen || memcmp(v, CRED_SIGV4_ALGORITHM, alen) ||
	    v[alen] != ' ')
		return -EINVAL;
	for (i = alen;;) {
		size_t start;
		int err;

		while (i < len && v[i] == ' ')
			i++;
		for (start = i; i < len && v[i] != ',' && v[i] != ' '; i++)
			;
		err = parse_param(v + start, i - start, &seen, a);
		if (err)
			return err;
		while (i < len && v[i] == ' ')
			i++;
		if (i == len)
			break;
		if (v[i++] != ',')
			return -EINVAL;
	}
	return seen == 7 ? 0 : -EINVAL;
}

/* srt's trigger: /Credential=([^/,\s]+)\// anywhere in the value; too long stays unknown. */
static bool credential_akid(struct cred_span auth, struct cred_sigv4_class *cls)
{
	static const char key[] = "Credential=";
	const char *end = auth.p + auth.n;

	for (const char *p = auth.p; p + sizeof(key) - 1 <= end; p++) {
		const char *s = p + sizeof(key) - 1, *q = s;

		if (memcmp(p, key, sizeof(key) - 1))
			continue;
		while (q < end && *q != '/' && *q != ',' && !strchr(" \t\r\n\v\f", *q))
			q++;
		if (q == s || q == end || *q != '/')
			continue;
		cls->akid_len = 0;
		if ((size_t)(q - s) <= CRED_SIGV4_AKID_MAX) {
			cls->akid_len = (size_t)(q - s);
			memcpy(cls->akid, s, cls->akid_len);
			cls->akid[cls->akid_len] = '\0';
		}
		return true;
	}
	return false;
}

/*
 * A query component decoded as URLSearchParams does ('+' is a space, a bad
 * escape stays as written), up to the byte stop (-1: none) or the end; -1 if
 * over cap.
 */
static long form_decode(const char *s, size_t n, int stop, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '+')
			c = ' ';
		else if (c == '%' && i + 2 < n && hex_val(s[i + 1]) >= 0 && hex_val(s[i + 2]) >= 0) {
			c = (char)(hex_val(s[i + 1]) << 4 | hex_val(s[i + 2]));
			i += 2;
		}
		if ((unsigned char)c == stop)
			break;
		if (o == cap)
			return -1;
		out[o++] = c;
	}
	return (long)o;
}

static bool decoded_is(const char *s, long n, const char *lit)
{
	return n == (long)strlen(lit) && !memcmp(s, lit, (size_t)n);
}

struct presign_scan {
	bool algorithm_seen, algorithm_ok, signature, credential_seen, akid;
};

static void presign_param(const char *p, size_t n, struct presign_scan *ps,
			  struct cred_sigv4_class *cls)
{
	const char *eq = memchr(p, '=', n);
	size_t klen = eq ? (size_t)(eq - p) : n, vlen = eq ? n - klen - 1 : 0;
	const char *value = eq ? eq + 1 : p + n;
	char key[24], val[32];
	long k = form_decode(p, klen, -1, key, sizeof(key)), v;

	if (decoded_is(key, k, "X-Amz-Signature")) {
		ps->signature = true;
	} else if (decoded_is(key, k, "X-Amz-Algorithm") && !ps->algorithm_seen) {
		ps->algorithm_seen = true;
		v = form_decode(value, vlen, -1, val, sizeof(val));
		ps->algorithm_ok = decoded_is(val, v, CRED_SIGV4_ALGORITHM) ||
				   decoded_is(val, v, CRED_SIGV4A_ALGORITHM);
	} else if (decoded_is(key, k, "X-Amz-Credential") && !ps->credential_seen) {
		ps->credential_seen = true;
		v = form_decode(value, vlen, '/', cls->akid, CRED_SIGV4_AKID_MAX);
		/* Too long (-1) is a key id all the same, just none of ours. */
		ps->akid = v != 0;
		cls->akid_len = v > 0 ? (size_t)v : 0;
		cls->akid[cls->akid_len] = '\0';
	}
}

/* srt's presigned test: a known X-Amz-Algorithm, an X-Amz-Signature, an X-Amz-Credential. */
static bool presigned(struct cred_span query, struct cred_sigv4_class *cls)
{
	struct presign_scan ps = { 0 };
	size_t start = 0;

	for (size_t i = 0; i <= query.n; i++) {
		if (i < query.n && query.p[i] != '&')
			continue;
		if (i > start)
			presign_param(query.p + start, i - start, &ps, cls);
		start = i + 1;
	}
	return ps.algorithm_ok && ps.signature && ps.akid;
}

void cred_sigv4_classify(const struct cred_sigv4_request *req, struct cred_sigv4_class *cls)
{
	struct cred_span auth, content;

	memset(cls, 0, sizeof(*cls));
	if (cred_sigv4_find(req, "authorization", &auth)) {
		if (starts_with(auth, CRED_SIGV4A_ALGORITHM)) {
			if (credential_akid(auth, cls)) {
				cls->kind = CRED_SIGV4_SIGV4A;
				return;
			}
		} else if (starts_with(auth, CRED_SIGV4_ALGORITHM) && credential_akid(auth, cls)) {
			cls->kind = CRED_SIGV4_PLAIN;
			if (cred_sigv4_find(req, "x-amz-content-sha256", &content) &&
			    starts_with(content, "STREAMING-"))
				cls->kind = CRED_SIGV4_STREAMING;
			return;
		}
	}
	/* A header that did not classify (Basic, junk) does not hide a presigned query. */
	memset(cls, 0, sizeof(*cls));
	if (presigned(req->query, cls))
		cls->kind = CRED_SIGV4_PRESIGNED;
	else
		memset(cls, 0, sizeof(*cls));
}
