// SPDX-License-Identifier: MIT
/*
 * SigV4's cryptography (cred_sigv4.h): the string to sign, the signing key
 * (HMAC chain over "AWS4" + secret, date, region, service, "aws4_request"),
 * the signature, its check and the Authorization value. Every key, and the
 * "AWS4" + secret buffer, is wiped before the function returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/openssl_lazy.h"

#include "cred_sigv4.h"

#define SECRET_MAX 256

static void to_hex(const uint8_t *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void cred_sigv4_sha256_hex(const void *data, size_t len, char hex[CRED_SIGV4_HEX + 1])
{
	uint8_t md[32];
	unsigned mdlen = 0;

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != sizeof(md))
		memset(md, 0, sizeof(md));	/* cannot happen with a working libcrypto */
	to_hex(md, sizeof(md), hex);
}

int cred_sigv4_string_to_sign(const char *creq, size_t creq_len, struct cred_span amz_date,
			      const struct cred_sigv4_auth *auth, char *out, size_t cap,
			      size_t *out_len)
{
	char hash[CRED_SIGV4_HEX + 1];
	int n;

	cred_sigv4_sha256_hex(creq, creq_len, hash);
	n = snprintf(out, cap, "%s\n%.*s\n%.*s/%.*s/%.*s/aws4_request\n%s", CRED_SIGV4_ALGORITHM,
		     (int)amz_date.n, amz_date.p, (int)auth->date.n, auth->date.p,
		     (int)auth->region.n, auth->region.p, (int)auth->service.n, auth->service.p,
		     hash);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	*out_len = (size_t)n;
	return 0;
}

static int hmac(const uint8_t *key, size_t klen, struct cred_span data, uint8_t out[32])
{
	unsigned len = 0;

	if (!HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)data.p, data.n, out, &len) ||
	    len != 32)
		return -EIO;
	return 0;
}

int cred_sigv4_signing_key(struct cred_span secret, const struct cred_sigv4_auth *auth,
			   uint8_t key[32])
{
	static const char term[] = "aws4_request";
	uint8_t seed[4 + SECRET_MAX], k_one[32], k_two[32];
	int err = -EINVAL;

	if (secret.n > SECRET_MAX)
		goto cleanup;
	memcpy(seed, "AWS4", 4);
	memcpy(seed + 4, secret.p, secret.n);
	/* Two buffers in turn: HMAC's output never overlaps its key. */
	err = hmac(seed, 4 + secret.n, auth->date, k_one);
	if (!err)
		err = hmac(k_one, sizeof(k_one), auth->region, k_two);
	if (!err)
		err = hmac(k_two, sizeof(k_two), auth->service, k_one);
	if (!err)
		err = hmac(k_one, sizeof(k_one), (struct cred_span){ term, sizeof(term) - 1 }, key);
cleanup:
	explicit_bzero(seed, sizeof(seed));
	explicit_bzero(k_one, sizeof(k_one));
	explicit_bzero(k_two, sizeof(k_two));
	if (err)
		explicit_bzero(key, 32);
	return err;
}

int cred_sigv4_signature(const struct cred_sigv4_request *req, const struct cred_sigv4_auth *auth,
			 struct cred_span amz_date, struct cred_span payload_hash,
			 struct cred_span secret, uint8_t sig[32], size_t *missing)
{
	char *creq = NULL, sts[512];
	size_t creq_len, sts_len;
	uint8_t key[32];
	int err;

	err = cred_sigv4_canonical_request(req, auth, payload_hash, &creq, &creq_len, missing);
	if (!err)
		err = cred_sigv4_string_to_sign(creq, creq_len, amz_date, auth, sts, sizeof(sts),
						&sts_len);
	if (!err)
		err = cred_sigv4_signing_key(secret, auth, key);
	if (!err)
		err = hmac(key, sizeof(key), (struct cred_span){ sts, sts_len }, sig);
	explicit_bzero(key, sizeof(key));
	free(creq);
	return err;
}

int cred_sigv4_verify(const struct cred_sigv4_request *req, const struct cred_sigv4_auth *auth,
		      struct cred_span amz_date, struct cred_span payload_hash,
		      struct cred_span secret)
{
	uint8_t sig[32];
	int err = cred_sigv4_signature(req, auth, amz_date, payload_hash, secret, sig, NULL);

	if (!err && CRYPTO_memcmp(sig, auth->signature, sizeof(sig)))
		err = -EACCES;
	explicit_bzero(sig, sizeof(sig));
	return err;
}

int cred_sigv4_format_auth(struct cred_span akid, const struct cred_sigv4_auth *auth,
			   const uint8_t sig[32], char *out, size_t cap, size_t *out_len)
{
	char hex[CRED_SIGV4_HEX + 1];
	size_t len;
	int n;

	n = snprintf(out, cap, "%s Credential=%.*s/%.*s/%.*s/%.*s/aws4_request, SignedHeaders=",
		     CRED_SIGV4_ALGORITHM, (int)akid.n, akid.p, (int)auth->date.n, auth->date.p,
		     (int)auth->region.n, auth->region.p, (int)auth->service.n, auth->service.p);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	len = (size_t)n;
	for (size_t s = 0; s < auth->nsigned; s++) {
		struct cred_span name = auth->signed_hdr[s];

		if (len + name.n + 2 >= cap)
			return -ENOSPC;
		if (s)
			out[len++] = ';';
		for (size_t i = 0; i < name.n; i++)
			out[len++] = name.p[i] >= 'A' && name.p[i] <= 'Z' ?
					     (char)(name.p[i] - 'A' + 'a') : name.p[i];
	}
	to_hex(sig, 32, hex);
	n = snprintf(out + len, cap - len, ", Signature=%s", hex);
	if (n < 0 || (size_t)n >= cap - len)
		return -ENOSPC;
	*out_len = len + (size_t)n;
	return 0;
}
