/* SPDX-License-Identifier: MIT */
/*
 * The client side of TLS termination: the proxy's own TLS connection to the
 * server the sandbox asked for, verified as a browser would (and never
 * accepted when verification fails).
 */
#ifndef BPFBOX_TLS_UPSTREAM_H
#define BPFBOX_TLS_UPSTREAM_H

#include <stddef.h>

#include <openssl/ssl.h>

/*
 * The client SSL_CTX for upstream servers: TLS 1.2+, SSL_VERIFY_PEER, the
 * system trust store (SSL_CTX_set_default_verify_paths) plus the given extra
 * CA PEM blobs (srt's extraCaCertPaths, read by the caller), ALPN offering
 * only "http/1.1". -EINVAL with *why when an extra blob holds no
 * certificate (or a malformed one).
 */
int tls_upstream_ctx_new(const char *const *extra_pem, const size_t *extra_len, size_t n,
			 SSL_CTX **out, const char **why);

/*
 * One SSL for an upstream connection to name (in connect state): SNI set
 * (not for an IP literal), the reference identity set with
 * X509_VERIFY_PARAM_set1_host (X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS) or
 * set1_ip_asc for a literal, so a wrong name fails the handshake; no
 * fallback to accepting. name is read as tls_leaf_key reads it; -EINVAL for
 * one it refuses.
 */
int tls_upstream_ssl(SSL_CTX *ctx, const char *name, SSL **out);

#endif
