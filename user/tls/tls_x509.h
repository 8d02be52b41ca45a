/* SPDX-License-Identifier: MIT */
/*
 * What the CA and the leaves share when a certificate is made: a fresh
 * P-256 key, a v3 certificate with a random serial and a validity window,
 * extensions in OpenSSL's configuration syntax, the signing digest.
 */
#ifndef BPFBOX_TLS_X509_H
#define BPFBOX_TLS_X509_H

#include <openssl/types.h>

/* A fresh EC P-256 key, or NULL. */
EVP_PKEY *tls_x509_p256_key(void);

/*
 * An unsigned v3 certificate for key: subject CN cn (truncated to the 64
 * bytes X.509 allows), a random positive 128-bit serial, valid from
 * now - backdate_s for lifetime_s seconds. Issuer and extensions are the
 * caller's. NULL on failure (cn not UTF-8, no memory).
 */
X509 *tls_x509_new(const char *cn, EVP_PKEY *key, long backdate_s, unsigned lifetime_s);

/* One extension, value in OpenSSL's configuration syntax ("critical,CA:TRUE"). 0 or -EIO. */
int tls_x509_add_ext(X509 *x, X509 *issuer, int nid, const char *value);

/* The digest a key signs with: SHA-256, none for Ed25519/Ed448 (which hash themselves). */
const EVP_MD *tls_x509_md(const EVP_PKEY *key);

#endif
