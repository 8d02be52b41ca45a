// SPDX-License-Identifier: MIT
/* Certificate building blocks shared by tls_ca.c and tls_leaf.c (tls_x509.h). */
#include <errno.h>
#include <string.h>

#include "lib/openssl_lazy.h"

#include "tls_x509.h"

/* RFC 5280 ub-common-name. */
#define CN_MAX 64

EVP_PKEY *tls_x509_p256_key(void)
{
	return EVP_EC_gen("P-256");
}

static int set_random_serial(X509 *x)
{
	unsigned char b[16];
	BIGNUM *bn = NULL;
	int ret = -EIO;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -EIO;
	/* Positive (DER integers are signed) and never zero. */
	b[0] &= 0x7f;
	b[sizeof(b) - 1] |= 1;
	bn = BN_bin2bn(b, sizeof(b), NULL);
	if (bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
		ret = 0;
	BN_free(bn);
	return ret;
}

/* The CN cut at CN_MAX bytes, never inside a UTF-8 sequence. */
static int add_cn(X509_NAME *n, const char *cn)
{
	size_t len = strnlen(cn, CN_MAX + 1);

	if (len > CN_MAX) {
		len = CN_MAX;
		while (len && ((unsigned char)cn[len] & 0xc0) == 0x80)
			len--;
	}
	if (!X509_NAME_add_entry_by_NID(n, NID_commonName, MBSTRING_UTF8,
					(const unsigned char *)cn, (int)len, -1, 0))
		return -EINVAL;
	return 0;
}

X509 *tls_x509_new(const char *cn, EVP_PKEY *key, long backdate_s, unsigned lifetime_s)
{
	X509 *x = X509_new();

	if (!x)
		return NULL;
	if (!X509_set_version(x, X509_VERSION_3) || set_random_serial(x) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -backdate_s) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), (long)lifetime_s) ||
	    add_cn(X509_get_subject_name(x), cn) || !X509_set_pubkey(x, key)) {
		X509_free(x);
		return NULL;
	}
	return x;
}

int tls_x509_add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -EIO;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -EIO;
}

const EVP_MD *tls_x509_md(const EVP_PKEY *key)
{
	if (EVP_PKEY_is_a(key, "ED25519") || EVP_PKEY_is_a(key, "ED448"))
		return NULL;
	return EVP_sha256();
}
