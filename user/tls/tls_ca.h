/* SPDX-License-Identifier: MIT */
/*
 * The CA that signs the leaf certificates of TLS termination (srt's
 * network.tlsTerminate): an ephemeral one made per sandbox, or the
 * administrator's, read from PEM. Its certificate is what the sandbox
 * trusts (tls_bundle.h).
 */
#ifndef BPFBOX_TLS_CA_H
#define BPFBOX_TLS_CA_H

#include <stddef.h>

#include <openssl/types.h>

struct tls_ca;	/* a CA certificate and its private key */

/* The lifetime of a generated CA when lifetime_s is 0: one day. */
#define TLS_CA_LIFETIME_S 86400u

/*
 * An ephemeral CA: EC P-256 key, self-signed, CN "bpfbox sandbox CA <label>",
 * valid from now-1h for 1 day (or as lifetime_s gives), basicConstraints
 * critical CA:TRUE pathlen:0, keyUsage critical keyCertSign,cRLSign,
 * subjectKeyIdentifier. Negative errno (-EINVAL: a label that is not
 * printable ASCII).
 */
int tls_ca_generate(const char *label, unsigned lifetime_s, struct tls_ca **out);

/*
 * A CA from PEM in memory (the caller reads the files with the right
 * credentials). -EINVAL with *why set (static string) when: not PEM, the key
 * does not match the certificate, the certificate is not a CA
 * (basicConstraints CA:TRUE missing, or a keyUsage without keyCertSign) or
 * is expired or not valid yet. An encrypted key is refused (no prompt).
 */
int tls_ca_load_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
		    struct tls_ca **out, const char **why);

/* The CA certificate as PEM, malloc'd; *len without NUL (string NUL-terminated anyway). */
int tls_ca_cert_pem(const struct tls_ca *ca, char **pem, size_t *len);

/* Borrowed, for signing leaves (tls_leaf.c): valid while ca is. */
X509 *tls_ca_x509(const struct tls_ca *ca);
EVP_PKEY *tls_ca_pkey(const struct tls_ca *ca);

void tls_ca_free(struct tls_ca *ca);

#endif
