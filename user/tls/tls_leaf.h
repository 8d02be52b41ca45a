/* SPDX-License-Identifier: MIT */
/*
 * The leaf certificates TLS termination presents to the sandbox, one per
 * name, signed by the sandbox's CA (tls_ca.h), each in a server SSL_CTX,
 * kept in a small cache shared by the proxy's threads.
 */
#ifndef BPFBOX_TLS_LEAF_H
#define BPFBOX_TLS_LEAF_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "tls_ca.h"

/* Room for a cache key: 253 bytes and the NUL. */
#define TLS_LEAF_KEY_MAX 254
/* A leaf's lifetime when lifetime_s is 0: one hour. */
#define TLS_LEAF_LIFETIME_S 3600u

struct tls_leaf_cache;

/*
 * ca is borrowed (outlives the cache). capacity: names cached (the least
 * recently used is evicted; 0 is -EINVAL), lifetime_s of each leaf (e.g.
 * 3600; notBefore now-5min; never past the CA's notAfter). Thread-safe (a
 * mutex): called from several threads.
 */
int tls_leaf_cache_new(const struct tls_ca *ca, unsigned capacity, unsigned lifetime_s,
		       struct tls_leaf_cache **out);

/*
 * A server SSL_CTX (TLS 1.2+) presenting a leaf for name: a DNS name (SAN
 * dNSName) or an IPv4/IPv6 literal (SAN iPAddress), fresh EC P-256 key per
 * leaf, serial random 128-bit, signed by the CA with SHA-256, chain includes
 * the CA cert, extendedKeyUsage serverAuth, CN = name (truncated to 64 for CN
 * only). ALPN: "http/1.1" is selected when the client offers it; otherwise no
 * protocol is acknowledged. HTTP/2 is negotiated away: h2 is never selected.
 * Cached by tls_leaf_key(name); the returned ctx carries a reference the
 * caller drops with SSL_CTX_free. An expired cached leaf (or one in the last
 * tenth of its life) is replaced. -EINVAL for a name tls_leaf_key refuses.
 */
int tls_leaf_ctx(struct tls_leaf_cache *c, const char *name, SSL_CTX **out);

void tls_leaf_cache_free(struct tls_leaf_cache *c);

/*
 * The cache key: lower case, a trailing dot dropped, 1..253 bytes of
 * [a-z0-9-_.] with no empty label, or an IP literal (IPv6 without brackets,
 * as inet_pton reads it, written back canonical by inet_ntop). 0 or
 * -EINVAL/-ENAMETOOLONG (over 253 bytes, or cap too small). A fuzzing
 * target uses it.
 */
int tls_leaf_key(const char *name, char *out, size_t cap);

/* The family of a key tls_leaf_key wrote: AF_INET, AF_INET6, or 0 for a DNS name. */
int tls_leaf_key_family(const char *key);

#endif
