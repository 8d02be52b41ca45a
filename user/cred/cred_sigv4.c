// SPDX-License-Identifier: MIT
/*
 * Re-signing a request made with a masked AWS pair (cred_sigv4.h), by srt's
 * rules: only a request whose Credential (or presigned X-Amz-Credential) names
 * a pair's sentinel key id is ours; anything else, a real key id included, is
 * neither rewritten nor denied. Streaming, presigned and SigV4a requests are
 * denied unless the policy passes them through. The client's signature is not
 * checked first (srt does not: the command holds the sentinel secret, so a
 * check would stop nothing it could not sign anyway); cred_sigv4_verify is
 * there for a caller that wants it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/openssl_lazy.h"

#include "cred_sigv4.h"

#define TOKEN_FIELD "x-amz-security-token"

static bool akid_is(struct cred_span a, const char *b, size_t n)
{
	return a.n == n && n && !CRYPTO_memcmp(a.p, b, n);
}

static bool match_pair(const struct cred_sigv4_class *cls, const struct cred_sigv4_pair *pairs,
		       size_t npairs, size_t *index)
{
	for (size_t i = 0; i < npairs; i++) {
		if (cls->akid_len && akid_is(pairs[i].sentinel_akid, cls->akid, cls->akid_len)) {
			*index = i;
			return true;
		}
	}
	return false;
}

static int deny(struct cred_sigv4_plan *plan, enum cred_sigv4_reason reason)
{
	plan->action = CRED_SIGV4_DENY;
	plan->reason = reason;
	return 0;
}

/* Every signed header present (Host is the proxy's own; a token the pair carries is set later). */
static bool signed_present(const struct cred_sigv4_request *req, const struct cred_sigv4_auth *auth,
			   const struct cred_sigv4_pair *pair, struct cred_sigv4_plan *plan)
{
	bool host = false;

	for (size_t s = 0; s < auth->nsigned; s++) {
		struct cred_span name = auth->signed_hdr[s];
		char lower[CRED_SIGV4_NAME_MAX];

		for (size_t i = 0; i < name.n; i++)
			lower[i] = name.p[i] >= 'A' && name.p[i] <= 'Z' ?
					   (char)(name.p[i] - 'A' + 'a') : name.p[i];
		lower[name.n] = '\0';
		host |= !strcmp(lower, "host");
		if (!strcmp(lower, "host") || (pair->real_token.n && !strcmp(lower, TOKEN_FIELD)))
			continue;
		if (!cred_sigv4_find(req, lower, NULL)) {
			memcpy(plan->missing, lower, name.n + 1);
			plan->reason = CRED_SIGV4_DENY_MISSING_HEADER;
			return false;
		}
	}
	/*
	 * SigV4 requires host among the signed headers; a signature the real
	 * key made without it would be good for another endpoint of the service.
	 */
	if (!host)
		plan->reason = CRED_SIGV4_DENY_HOST_UNSIGNED;
	return host;
}

static int plan_resign(const struct cred_sigv4_request *req, const struct cred_sigv4_pair *pair,
		       struct cred_sigv4_plan *plan)
{
	struct cred_span auth_value, date, content;
	struct cred_sigv4_auth auth;
	size_t ncontent;

	if (cred_sigv4_find(req, "authorization", &auth_value) != 1 ||
	    cred_sigv4_parse_auth(auth_value.p, auth_value.n, &auth))
		return deny(plan, CRED_SIGV4_DENY_MALFORMED);
	if (cred_sigv4_find(req, "x-amz-date", &date) != 1 || !date.n ||
	    date.n >= sizeof(plan->amz_date) || memchr(date.p, '\0', date.n))
		return deny(plan, CRED_SIGV4_DENY_NO_DATE);
	ncontent = cred_sigv4_find(req, "x-amz-content-sha256", &content);
	if (ncontent > 1)
		return deny(plan, CRED_SIGV4_DENY_MALFORMED);
	if (!signed_present(req, &auth, pair, plan))
		return deny(plan, plan->reason);
	memcpy(plan->auth, auth_value.p, auth_value.n);
	plan->auth_len = auth_value.n;
	memcpy(plan->amz_date, date.p, date.n);
	plan->amz_date[date.n] = '\0';
	plan->unsigned_payload = ncontent && cred_sigv4_span_eq(content, CRED_SIGV4_UNSIGNED_PAYLOAD);
	plan->add_token = pair->real_token.n > 0;
	plan->action = CRED_SIGV4_RESIGN;
	return 0;
}

int cred_sigv4_plan(const struct cred_sigv4_request *req, const struct cred_sigv4_pair *pairs,
		    size_t npairs, const struct cred_sigv4_policy *policy,
		    struct cred_sigv4_plan *plan)
{
	static const struct cred_sigv4_policy deny_all;
	enum cred_sigv4_shape_policy shape;
	struct cred_sigv4_class cls;

	if (!req || !plan || (npairs && !pairs))
		return -EINVAL;
	if (!policy)
		policy = &deny_all;
	memset(plan, 0, sizeof(*plan));
	cred_sigv4_classify(req, &cls);
	plan->kind = cls.kind;
	if (cls.kind == CRED_SIGV4_NOT_SIGNED || !match_pair(&cls, pairs, npairs, &plan->pair)) {
		plan->action = CRED_SIGV4_NOT_OURS;
		return 0;
	}
	switch (cls.kind) {
	case CRED_SIGV4_STREAMING:
		shape = policy->streaming;
		plan->reason = CRED_SIGV4_DENY_STREAMING;
		break;
	case CRED_SIGV4_PRESIGNED:
		shape = policy->presigned;
		plan->reason = CRED_SIGV4_DENY_PRESIGNED;
		break;
	case CRED_SIGV4_SIGV4A:
		shape = policy->sigv4a;
		plan->reason = CRED_SIGV4_DENY_SIGV4A;
		break;
	default:
		return plan_resign(req, &pairs[plan->pair], plan);
	}
	if (shape == CRED_SIGV4_POLICY_PASSTHROUGH) {
		plan->action = CRED_SIGV4_PASSTHROUGH;
		plan->reason = CRED_SIGV4_OK;
		return 0;
	}
	return deny(plan, plan->reason);
}

/* The session token's field joins the signed set, in its sorted place, when the client left it out. */
static int add_token_field(struct cred_sigv4_auth *auth)
{
	struct cred_span token = { TOKEN_FIELD, sizeof(TOKEN_FIELD) - 1 };
	size_t at = 0;

	for (; at < auth->nsigned; at++) {
		struct cred_span n = auth->signed_hdr[at];
		size_t len = n.n < token.n ? n.n : token.n;
		int c = strncasecmp(n.p, token.p, len);

		if (!c && n.n == token.n)
			return 0;
		if (c > 0 || (!c && n.n > token.n))
			break;
	}
	if (auth->nsigned == CRED_SIGV4_MAX_SIGNED)
		return -E2BIG;
	memmove(&auth->signed_hdr[at + 1], &auth->signed_hdr[at],
		(auth->nsigned - at) * sizeof(auth->signed_hdr[0]));
	auth->signed_hdr[at] = token;
	auth->nsigned++;
	return 0;
}

static bool lower_hex64(struct cred_span h)
{
	if (h.n != CRED_SIGV4_HEX)
		return false;
	for (size_t i = 0; i < h.n; i++)
		if (!((h.p[i] >= '0' && h.p[i] <= '9') || (h.p[i] >= 'a' && h.p[i] <= 'f')))
			return false;
	return true;
}

int cred_sigv4_resign(const struct cred_sigv4_plan *plan, const struct cred_sigv4_request *fwd,
		      const struct cred_sigv4_pair *pair, struct cred_span payload_hash,
		      char *out, size_t cap, size_t *out_len)
{
	struct cred_span date, content, hash = payload_hash;
	struct cred_sigv4_auth auth;
	uint8_t sig[32];
	int err;

	if (!plan || !fwd || !pair || !out || !out_len || plan->action != CRED_SIGV4_RESIGN ||
	    cred_sigv4_parse_auth(plan->auth, plan->auth_len, &auth))
		return -EINVAL;
	if (!akid_is(auth.akid, pair->sentinel_akid.p, pair->sentinel_akid.n))
		return -EPERM;
	if (plan->unsigned_payload)
		hash = (struct cred_span){ CRED_SIGV4_UNSIGNED_PAYLOAD,
					   sizeof(CRED_SIGV4_UNSIGNED_PAYLOAD) - 1 };
	else if (!lower_hex64(hash))
		return -EINVAL;
	/* The field, where the request has it, must say what is signed. */
	if (cred_sigv4_find(fwd, "x-amz-content-sha256", &content) &&
	    !(content.n == hash.n && !memcmp(content.p, hash.p, hash.n)))
		return -EINVAL;
	if (plan->add_token && (err = add_token_field(&auth)))
		return err;
	date = (struct cred_span){ plan->amz_date, strlen(plan->amz_date) };
	err = cred_sigv4_signature(fwd, &auth, date, hash, pair->real_secret, sig, NULL);
	if (!err)
		err = cred_sigv4_format_auth(pair->real_akid, &auth, sig, out, cap, out_len);
	explicit_bzero(sig, sizeof(sig));
	return err;
}

size_t cred_sigv4_deny_message(const struct cred_sigv4_plan *plan, char *out, size_t cap)
{
	static const char *const shape[] = {
		[CRED_SIGV4_DENY_STREAMING] = "streaming",
		[CRED_SIGV4_DENY_PRESIGNED] = "presigned",
		[CRED_SIGV4_DENY_SIGV4A] = "sigv4a",
	};
	static const char lead[] = "AWS SigV4 request uses a masked credential";
	int n;

	switch (plan->reason) {
	case CRED_SIGV4_DENY_STREAMING:
	case CRED_SIGV4_DENY_PRESIGNED:
	case CRED_SIGV4_DENY_SIGV4A:
		n = snprintf(out, cap,
			     "AWS SigV4 %s request uses a masked credential but cannot be re-signed by "
			     "the sandbox proxy; denied by policy. Set credentials.sigv4.%s to "
			     "\"passthrough\" to forward it unmodified (it will fail upstream: the "
			     "signature covers the masked placeholder).",
			     shape[plan->reason], shape[plan->reason]);
		break;
	case CRED_SIGV4_DENY_MALFORMED:
		n = snprintf(out, cap, "%s but its Authorization header is malformed; the proxy "
			     "cannot re-sign it.", lead);
		break;
	case CRED_SIGV4_DENY_NO_DATE:
		n = snprintf(out, cap, "%s but carries no x-amz-date header; the proxy cannot "
			     "re-sign it.", lead);
		break;
	case CRED_SIGV4_DENY_MISSING_HEADER:
		n = snprintf(out, cap, "%s but signed header \"%s\" is missing; the proxy cannot "
			     "re-sign it.", lead, plan->missing);
		break;
	case CRED_SIGV4_DENY_HOST_UNSIGNED:
		n = snprintf(out, cap, "%s but does not sign the host header (SigV4 requires it); a "
			     "signature with the real key would not be bound to its destination, so the "
			     "proxy does not re-sign it.", lead);
		break;
	case CRED_SIGV4_DENY_BODY_TOO_LARGE:
		n = snprintf(out, cap, "%s and signs a literal body hash, so the proxy must buffer "
			     "the body to re-sign it, but the body exceeds the %u-byte buffering "
			     "limit; denied. Sign the payload as UNSIGNED-PAYLOAD to stream it without "
			     "buffering, or use an unmasked credential to have the request forwarded "
			     "untouched.", lead, CRED_SIGV4_MAX_BODY);
		break;
	default:
		n = snprintf(out, cap, "%s", "");
		break;
	}
	return n < 0 ? 0 : (size_t)n;
}
