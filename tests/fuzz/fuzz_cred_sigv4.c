// SPDX-License-Identifier: MIT
/*
 * SigV4 for masked AWS credentials (cred_sigv4.h). The input is read twice:
 * whole, as an Authorization value for the strict parser (what it accepts
 * is well formed and survives a reprint); and as a request, one line each for
 * the path, the query and up to 8 "name:value" fields, which is classified,
 * put in canonical form, planned against a pair and re-signed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cred/cred_sigv4.h"
#include "fuzz.h"

#define MAX_LINES 10
#define SENTINEL "fake_value_0001"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static bool inside(struct cred_span s, const char *p, size_t n)
{
	return s.p >= p && s.n <= n && (size_t)(s.p - p) <= n - s.n;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int lower_cmp(struct cred_span a, struct cred_span b)
{
	for (size_t i = 0; i < a.n && i < b.n; i++)
		if (lower(a.p[i]) != lower(b.p[i]))
			return (unsigned char)lower(a.p[i]) < (unsigned char)lower(b.p[i]) ? -1 : 1;
	return a.n < b.n ? -1 : a.n > b.n;
}

static bool same(struct cred_span a, struct cred_span b)
{
	return a.n == b.n && !memcmp(a.p, b.p, a.n);
}

static void check_auth(const char *p, size_t n)
{
	struct cred_sigv4_auth auth, again;
	char out[CRED_SIGV4_AUTH_MAX + 256];
	size_t len;

	if (cred_sigv4_parse_auth(p, n, &auth))
		return;
	FUZZ_CHECK(n <= CRED_SIGV4_AUTH_MAX && !memcmp(p, CRED_SIGV4_ALGORITHM " ", 17));
	FUZZ_CHECK(inside(auth.akid, p, n) && inside(auth.date, p, n) &&
		   inside(auth.region, p, n) && inside(auth.service, p, n));
	FUZZ_CHECK(auth.akid.n >= 1 && auth.akid.n <= CRED_SIGV4_AKID_MAX &&
		   !memchr(auth.akid.p, '/', auth.akid.n));
	FUZZ_CHECK(auth.date.n == 8 && auth.region.n && auth.service.n);
	FUZZ_CHECK(auth.nsigned >= 1 && auth.nsigned <= CRED_SIGV4_MAX_SIGNED);
	for (size_t i = 0; i < auth.nsigned; i++) {
		FUZZ_CHECK(inside(auth.signed_hdr[i], p, n) && auth.signed_hdr[i].n);
		FUZZ_CHECK(!i || lower_cmp(auth.signed_hdr[i - 1], auth.signed_hdr[i]) < 0);
	}
	/* Reprinted (names lower-cased, the usual separators), it reads the same. */
	FUZZ_CHECK(cred_sigv4_format_auth(auth.akid, &auth, auth.signature, out, sizeof(out),
					  &len) == 0);
	FUZZ_CHECK(len == strlen(out));
	FUZZ_CHECK(cred_sigv4_parse_auth(out, len, &again) == 0);
	FUZZ_CHECK(same(auth.akid, again.akid) && same(auth.date, again.date) &&
		   same(auth.region, again.region) && same(auth.service, again.service));
	FUZZ_CHECK(auth.nsigned == again.nsigned &&
		   !memcmp(auth.signature, again.signature, sizeof(auth.signature)));
	for (size_t i = 0; i < auth.nsigned; i++)
		FUZZ_CHECK(!lower_cmp(auth.signed_hdr[i], again.signed_hdr[i]));
}

static bool uri_byte(char c, bool query)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(query ? "-_.~%=&" : "-_.~%/", c));
}

/* Line 2 (URI) and 3 (query) of a canonical request hold encoded bytes only. */
static void check_canonical(const struct cred_sigv4_request *req, const char *service)
{
	char authz[256], *creq, *l2, *l3, *l4;
	struct cred_sigv4_auth auth;
	size_t len;
	int err;

	snprintf(authz, sizeof(authz), "AWS4-HMAC-SHA256 Credential=" SENTINEL "/20260101/"
		 "us-east-1/%s/aws4_request, SignedHeaders=host, Signature=" EMPTY_SHA, service);
	FUZZ_CHECK(cred_sigv4_parse_auth(authz, strlen(authz), &auth) == 0);
	err = cred_sigv4_canonical_request(req, &auth, (struct cred_span){ EMPTY_SHA, 64 }, &creq,
					   &len, NULL);
	FUZZ_CHECK(err == 0 || err == -ENOENT || err == -E2BIG || err == -ENOMEM);
	if (err)
		return;
	/* An s3 path is kept as sent, NUL bytes and all: look by length. */
	l2 = memchr(creq, '\n', len);
	FUZZ_CHECK(l2++);
	l3 = memchr(l2, '\n', len - (size_t)(l2 - creq));
	FUZZ_CHECK(l3++);
	l4 = memchr(l3, '\n', len - (size_t)(l3 - creq));
	FUZZ_CHECK(l4++);
	if (!strcmp(service, "service")) {
		FUZZ_CHECK(*l2 == '/');
		for (char *c = l2; c < l3 - 1; c++)
			FUZZ_CHECK(uri_byte(*c, false));
	}
	for (char *c = l3; c < l4 - 1; c++)
		FUZZ_CHECK(uri_byte(*c, true));
	free(creq);
}

static void check_request(const struct cred_sigv4_request *req)
{
	const struct cred_sigv4_pair pair = {
		.sentinel_akid = { SENTINEL, sizeof(SENTINEL) - 1 },
		.real_akid = { "AKIDREAL", 8 },
		.real_secret = { "real-secret", 11 },
		.real_token = { "real-token", 10 },
	};
	struct cred_sigv4_class cls;
	struct cred_sigv4_plan plan;
	struct cred_sigv4_auth auth;
	char out[CRED_SIGV4_AUTH_MAX + 256], msg[1024];
	size_t len;
	int err;

	cred_sigv4_classify(req, &cls);
	FUZZ_CHECK(cls.akid_len <= CRED_SIGV4_AKID_MAX && cls.akid[cls.akid_len] == '\0');
	FUZZ_CHECK(cls.kind != CRED_SIGV4_NOT_SIGNED || !cls.akid_len);
	check_canonical(req, "service");
	check_canonical(req, "s3");
	FUZZ_CHECK(cred_sigv4_plan(req, &pair, 1, NULL, &plan) == 0);
	FUZZ_CHECK((plan.action == CRED_SIGV4_NOT_OURS) ==
		   (cls.kind == CRED_SIGV4_NOT_SIGNED || cls.akid_len != sizeof(SENTINEL) - 1 ||
		    memcmp(cls.akid, SENTINEL, cls.akid_len)));
	FUZZ_CHECK(plan.action != CRED_SIGV4_PASSTHROUGH);
	if (plan.action == CRED_SIGV4_DENY)
		FUZZ_CHECK(cred_sigv4_deny_message(&plan, msg, sizeof(msg)) > 0);
	if (plan.action != CRED_SIGV4_RESIGN)
		return;
	FUZZ_CHECK(cls.kind == CRED_SIGV4_PLAIN);
	err = cred_sigv4_resign(&plan, req, &pair, (struct cred_span){ EMPTY_SHA, 64 }, out,
				sizeof(out), &len);
	FUZZ_CHECK(err == 0 || err == -ENOENT || err == -EINVAL || err == -ENOSPC ||
		   err == -ENOMEM);
	if (err)
		return;
	FUZZ_CHECK(cred_sigv4_parse_auth(out, len, &auth) == 0);
	FUZZ_CHECK(auth.akid.n == 8 && !memcmp(auth.akid.p, "AKIDREAL", 8));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cred_header hdr[MAX_LINES - 2];
	struct cred_span line[MAX_LINES];
	struct cred_sigv4_request req = { .method = { "GET", 3 }, .hdr = hdr };
	const char *p = (const char *)data;
	size_t nline = 0, start = 0;

	check_auth(p, size);
	for (size_t i = 0; i <= size && nline < MAX_LINES; i++) {
		if (i < size && p[i] != '\n')
			continue;
		line[nline++] = (struct cred_span){ p + start, i - start };
		start = i + 1;
	}
	if (nline < 2)
		return 0;
	req.path = line[0];
	req.query = line[1];
	for (size_t i = 2; i < nline; i++) {
		const char *colon = memchr(line[i].p, ':', line[i].n);

		if (!colon)
			continue;
		hdr[req.nhdr].name = (struct cred_span){ line[i].p, (size_t)(colon - line[i].p) };
		hdr[req.nhdr].value = (struct cred_span){ colon + 1,
							  line[i].n - (size_t)(colon + 1 - line[i].p) };
		req.nhdr++;
	}
	check_request(&req);
	return 0;
}
