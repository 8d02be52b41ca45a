/* SPDX-License-Identifier: MIT */
/*
 * AWS Signature Version 4 for masked AWS credentials (srt's credentials.awsPairs
 * and credentials.sigv4): the sandboxed command holds a sentinel access key id
 * and secret, so a request it signs carries the sentinel key id in its
 * Credential scope and an HMAC over the sentinel secret. The proxy re-signs it
 * with the real pair: same scope, x-amz-date and signed header set, the real key
 * id, a signature over the request as it goes upstream. Pure logic, no I/O.
 *
 * The proxy's steps, as srt takes them:
 *   1. cred_sigv4_plan() on the request as the client sent it (before sentinel
 *      substitution: the trigger is the sentinel key id), with the pairs whose
 *      injectHosts cover the destination. NOT_OURS and PASSTHROUGH: forward as
 *      is (ordinary substitution still runs). DENY: answer 403,
 *      X-Proxy-Error: blocked-by-sandbox-runtime, cred_sigv4_deny_message().
 *   2. RESIGN: substitute sentinels, set x-amz-security-token to the pair's real
 *      token when plan.add_token; unless plan.unsigned_payload, buffer the body
 *      as forwarded (at most CRED_SIGV4_MAX_BODY, else deny BODY_TOO_LARGE),
 *      hash it (cred_sigv4_sha256_hex), put that hash in x-amz-content-sha256 if
 *      the request has that field, and frame it with Content-Length.
 *   3. cred_sigv4_resign() on the request as it goes upstream: the new
 *      Authorization value replaces the client's.
 */
#ifndef BPFBOX_CRED_SIGV4_H
#define BPFBOX_CRED_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRED_SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define CRED_SIGV4A_ALGORITHM "AWS4-ECDSA-P256-SHA256"
#define CRED_SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"
#define CRED_SIGV4_MAX_SIGNED 64	/* names in SignedHeaders */
#define CRED_SIGV4_NAME_MAX 64		/* one signed header name, with its NUL */
#define CRED_SIGV4_AUTH_MAX 4096	/* an Authorization value */
#define CRED_SIGV4_AKID_MAX 128		/* an access key id */
#define CRED_SIGV4_DATE_MAX 32		/* an x-amz-date value, with its NUL */
#define CRED_SIGV4_HEX 64		/* a SHA-256 or a signature in hex */
#define CRED_SIGV4_MAX_BODY (64u << 20)	/* srt's MAX_SIGV4_RESIGN_BODY_BYTES */

struct cred_span {
	const char *p;
	size_t n;
};

struct cred_header {
	struct cred_span name, value;	/* value without surrounding whitespace */
};

/* A request as HTTP/1.1 carries it; path and query as on the wire. */
struct cred_sigv4_request {
	struct cred_span method;
	struct cred_span path;		/* the origin-form target up to '?' */
	struct cred_span query;		/* after '?', without it; n = 0: none */
	const struct cred_header *hdr;
	size_t nhdr;
};

/* A parsed "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=..."; spans point into the value. */
struct cred_sigv4_auth {
	struct cred_span akid, date, region, service;
	size_t nsigned;
	struct cred_span signed_hdr[CRED_SIGV4_MAX_SIGNED];	/* sorted by lower case, distinct */
	uint8_t signature[32];
};

enum cred_sigv4_kind {
	CRED_SIGV4_NOT_SIGNED,	/* no SigV4 signature recognised */
	CRED_SIGV4_PLAIN,	/* AWS4-HMAC-SHA256 Authorization: can be re-signed */
	CRED_SIGV4_STREAMING,	/* ... with x-amz-content-sha256: STREAMING-*: chunk signatures */
	CRED_SIGV4_PRESIGNED,	/* X-Amz-Algorithm and X-Amz-Signature in the query */
	CRED_SIGV4_SIGV4A,	/* AWS4-ECDSA-P256-SHA256 Authorization */
};

struct cred_sigv4_class {
	enum cred_sigv4_kind kind;
	size_t akid_len;	/* 0: none found, or longer than CRED_SIGV4_AKID_MAX */
	char akid[CRED_SIGV4_AKID_MAX + 1];
};

enum cred_sigv4_shape_policy { CRED_SIGV4_POLICY_DENY = 0, CRED_SIGV4_POLICY_PASSTHROUGH };

/* credentials.sigv4; zeroed: deny all three (srt's default). */
struct cred_sigv4_policy {
	enum cred_sigv4_shape_policy streaming, presigned, sigv4a;
};

struct cred_sigv4_pair {
	struct cred_span sentinel_akid;	/* what the command holds as its access key id */
	struct cred_span real_akid, real_secret;
	struct cred_span real_token;	/* n = 0: no session token */
};

enum cred_sigv4_action {
	CRED_SIGV4_NOT_OURS,	/* no pair's sentinel key id: forward untouched, never deny */
	CRED_SIGV4_PASSTHROUGH,	/* ours, a shape the policy passes through unsigned */
	CRED_SIGV4_RESIGN,
	CRED_SIGV4_DENY,
};

enum cred_sigv4_reason {
	CRED_SIGV4_OK,
	CRED_SIGV4_DENY_STREAMING,
	CRED_SIGV4_DENY_PRESIGNED,
	CRED_SIGV4_DENY_SIGV4A,
	CRED_SIGV4_DENY_MALFORMED,	/* Authorization (or x-amz-content-sha256) not usable */
	CRED_SIGV4_DENY_NO_DATE,	/* no x-amz-date, or more than one */
	CRED_SIGV4_DENY_MISSING_HEADER,	/* a signed header is absent: plan.missing */
	CRED_SIGV4_DENY_BODY_TOO_LARGE,	/* the caller's: the body exceeds CRED_SIGV4_MAX_BODY */
	CRED_SIGV4_DENY_HOST_UNSIGNED,	/* SignedHeaders lacks host: a signature bound to no destination */
};

/* Self-contained (no pointer into the request): it may be kept while the body is read. */
struct cred_sigv4_plan {
	enum cred_sigv4_action action;
	enum cred_sigv4_reason reason;
	enum cred_sigv4_kind kind;
	size_t pair;			/* the pair matched (PASSTHROUGH, RESIGN, DENY) */
	bool unsigned_payload;		/* sign UNSIGNED-PAYLOAD; else the body's hash as forwarded */
	bool add_token;			/* x-amz-security-token signed (added if the client did not) */
	size_t auth_len;
	char auth[CRED_SIGV4_AUTH_MAX];	/* the client's Authorization */
	char amz_date[CRED_SIGV4_DATE_MAX];
	char missing[CRED_SIGV4_NAME_MAX];
};

/* cred_sigv4_parse.c */
/* 0, or -EINVAL for anything but the strict form (each part once, any order). */
int cred_sigv4_parse_auth(const char *value, size_t len, struct cred_sigv4_auth *auth);
void cred_sigv4_classify(const struct cred_sigv4_request *req, struct cred_sigv4_class *cls);
/* The fields named name (any case): how many, and the first. */
size_t cred_sigv4_find(const struct cred_sigv4_request *req, const char *name,
		       struct cred_span *first);
bool cred_sigv4_span_eq(struct cred_span a, const char *lit);

/* cred_sigv4_canon.c */
/*
 * The canonical request, malloc'd (NUL-terminated; the caller frees). Signed
 * headers come from auth, the path rule from its service (s3: as sent; others:
 * dot segments resolved, encoded once more). -ENOENT: a signed header is not
 * in req (*missing, if given, is its index in auth); -E2BIG, -ENOMEM.
 */
int cred_sigv4_canonical_request(const struct cred_sigv4_request *req,
				 const struct cred_sigv4_auth *auth, struct cred_span payload_hash,
				 char **out, size_t *out_len, size_t *missing);

/* cred_sigv4_sign.c */
void cred_sigv4_sha256_hex(const void *data, size_t len, char hex[CRED_SIGV4_HEX + 1]);
int cred_sigv4_string_to_sign(const char *creq, size_t creq_len, struct cred_span amz_date,
			      const struct cred_sigv4_auth *auth, char *out, size_t cap,
			      size_t *out_len);
int cred_sigv4_signing_key(struct cred_span secret, const struct cred_sigv4_auth *auth,
			   uint8_t key[32]);
/* The signature over req with secret, the scope and signed headers of auth. */
int cred_sigv4_signature(const struct cred_sigv4_request *req, const struct cred_sigv4_auth *auth,
			 struct cred_span amz_date, struct cred_span payload_hash,
			 struct cred_span secret, uint8_t sig[32], size_t *missing);
/* 0: auth's signature is the one secret makes over req; -EACCES: it is not. */
int cred_sigv4_verify(const struct cred_sigv4_request *req, const struct cred_sigv4_auth *auth,
		      struct cred_span amz_date, struct cred_span payload_hash,
		      struct cred_span secret);
int cred_sigv4_format_auth(struct cred_span akid, const struct cred_sigv4_auth *auth,
			   const uint8_t sig[32], char *out, size_t cap, size_t *out_len);

/* cred_sigv4.c */
/* 0 with the plan filled (any action); -EINVAL for bad arguments. */
int cred_sigv4_plan(const struct cred_sigv4_request *req, const struct cred_sigv4_pair *pairs,
		    size_t npairs, const struct cred_sigv4_policy *policy,
		    struct cred_sigv4_plan *plan);
/*
 * The new Authorization value for fwd (the request as it goes upstream: Host as
 * sent, sentinels substituted, the pair's token set) signed with pair (the
 * plan's), NUL-terminated in out. payload_hash: 64 lower-case hex digits, and
 * fwd's x-amz-content-sha256, if any, must say the same; ignored when
 * plan.unsigned_payload. -EPERM: the plan's key id is not pair's sentinel;
 * -ENOENT: a signed header is not in fwd; -EINVAL (also a secret over 256
 * bytes); -ENOSPC: out too small; -E2BIG: the request too big to sign; -ENOMEM.
 */
int cred_sigv4_resign(const struct cred_sigv4_plan *plan, const struct cred_sigv4_request *fwd,
		      const struct cred_sigv4_pair *pair, struct cred_span payload_hash,
		      char *out, size_t cap, size_t *out_len);
/* srt's text for a denial (the 403's body, without the newline); its length, as snprintf counts. */
size_t cred_sigv4_deny_message(const struct cred_sigv4_plan *plan, char *out, size_t cap);

#endif
