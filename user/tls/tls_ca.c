// SPDX-License-Identifier: MIT
/* The signing CA of TLS termination: generated, or loaded from PEM (tls_ca.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/openssl_lazy.h"

#include "tls_ca.h"
#include "tls_x509.h"

struct tls_ca {
	X509 *cert;
	EVP_PKEY *key;
};

/* An hour of backdating absorbs clock skew between the host and whoever checks. */
#define CA_BACKDATE_S 3600

static int ca_extensions(X509 *x)
{
	if (tls_x509_add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    tls_x509_add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    tls_x509_add_ext(x, x, NID_subject_key_identifier, "hash"))
		return -EIO;
	return 0;
}

int tls_ca_generate(const char *label, unsigned lifetime_s, struct tls_ca **out)
{
	struct tls_ca *ca = calloc(1, sizeof(*ca));
	char cn[128];
	int ret = -ENOMEM;

	*out = NULL;
	/* Printable ASCII only: the CN is shown to people, in trust stores and warnings. */
	for (const char *p = label ? label : ""; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			ret = -EINVAL;
	if (!ca || ret == -EINVAL) {
		free(ca);
		return ret;
	}
	snprintf(cn, sizeof(cn), "bpfbox sandbox CA %s", label ? label : "");
	ca->key = tls_x509_p256_key();
	if (!ca->key)
		goto cleanup;
	ca->cert = tls_x509_new(cn, ca->key, CA_BACKDATE_S, lifetime_s ? lifetime_s : TLS_CA_LIFETIME_S);
	if (!ca->cert)
		goto cleanup;
	ret = -EIO;
	if (!X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) ||
	    ca_extensions(ca->cert) || !X509_sign(ca->cert, ca->key, tls_x509_md(ca->key)))
		goto cleanup;
	*out = ca;
	return 0;
cleanup:
	ERR_clear_error();
	tls_ca_free(ca);
	return ret;
}

/* Never prompts for a passphrase: an encrypted key is refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

/* NULL when the certificate may sign leaves now, else why not. */
static const char *ca_unusable(X509 *cert)
{
	uint32_t flags = X509_get_extension_flags(cert);

	if (flags & EXFLAG_INVALID)
		return "the certificate has malformed extensions";
	if (!(flags & EXFLAG_CA))
		return "the certificate is not a CA (basicConstraints CA:TRUE missing)";
	if ((flags & EXFLAG_KUSAGE) && !(X509_get_key_usage(cert) & KU_KEY_CERT_SIGN))
		return "the certificate is not a CA (its keyUsage lacks keyCertSign)";
	if (X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0)
		return "the certificate has expired";
	if (X509_cmp_current_time(X509_get0_notBefore(cert)) >= 0)
		return "the certificate is not valid yet";
	return NULL;
}

static void *read_pem(const char *pem, size_t len, bool key)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	void *obj = NULL;

	if (!bio)
		return NULL;
	if (key)
		obj = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	else
		obj = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL);
	BIO_free(bio);
	return obj;
}

int tls_ca_load_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
		    struct tls_ca **out, const char **why)
{
	struct tls_ca *ca = calloc(1, sizeof(*ca));
	int ret = -EINVAL;

	*out = NULL;
	*why = NULL;
	if (!ca)
		return -ENOMEM;
	if (cert_len > (size_t)INT32_MAX || key_len > (size_t)INT32_MAX) {
		*why = "the PEM is too large";
		goto cleanup;
	}
	ca->cert = read_pem(cert_pem, cert_len, false);
	if (!ca->cert) {
		*why = "the certificate is not PEM";
		goto cleanup;
	}
	ca->key = read_pem(key_pem, key_len, true);
	if (!ca->key) {
		*why = "the key is not PEM (or is encrypted)";
		goto cleanup;
	}
	if (X509_check_private_key(ca->cert, ca->key) != 1) {
		*why = "the key does not match the certificate";
		goto cleanup;
	}
	*why = ca_unusable(ca->cert);
	if (*why)
		goto cleanup;
	*out = ca;
	return 0;
cleanup:
	ERR_clear_error();
	tls_ca_free(ca);
	return ret;
}

int tls_ca_cert_pem(const struct tls_ca *ca, char **pem, size_t *len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data;
	long n;
	int ret = -ENOMEM;

	*pem = NULL;
	*len = 0;
	if (!bio)
		return -ENOMEM;
	if (!PEM_write_bio_X509(bio, ca->cert))
		goto cleanup;
	n = BIO_get_mem_data(bio, &data);
	if (n <= 0)
		goto cleanup;
	*pem = malloc((size_t)n + 1);
	if (!*pem)
		goto cleanup;
	memcpy(*pem, data, (size_t)n);
	(*pem)[n] = '\0';
	*len = (size_t)n;
	ret = 0;
cleanup:
	if (ret)
		ERR_clear_error();
	BIO_free(bio);
	return ret;
}

X509 *tls_ca_x509(const struct tls_ca *ca)
{
	return ca->cert;
}

EVP_PKEY *tls_ca_pkey(const struct tls_ca *ca)
{
	return ca->key;
}

void tls_ca_free(struct tls_ca *ca)
{
	if (!ca)
		return;
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	free(ca);
}
