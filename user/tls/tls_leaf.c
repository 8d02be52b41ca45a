// SPDX-License-Identifier: MIT
/*
 * Leaf certificates and their server SSL_CTXs, cached by name (tls_leaf.h).
 * A miss builds the leaf outside the lock (a P-256 key and a signature take
 * about a millisecond), so threads asking for other names do not wait.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/openssl_lazy.h"

#include "tls_leaf.h"
#include "tls_suites.h"
#include "tls_x509.h"

/* Five minutes of backdating absorbs a client clock slightly behind the host's. */
#define LEAF_BACKDATE_S 300

struct leaf_entry {
	char key[TLS_LEAF_KEY_MAX];
	SSL_CTX *ctx;		/* the cache's reference; NULL: a free slot */
	time_t not_after;
	uint64_t used;		/* the tick of the last hit: the least is evicted */
};

struct tls_leaf_cache {
	const struct tls_ca *ca;
	unsigned capacity, lifetime_s;
	pthread_mutex_t lock;
	uint64_t tick;
	struct leaf_entry *e;
};

int tls_leaf_cache_new(const struct tls_ca *ca, unsigned capacity, unsigned lifetime_s,
		       struct tls_leaf_cache **out)
{
	struct tls_leaf_cache *c;

	*out = NULL;
	if (!ca || !capacity)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->e = calloc(capacity, sizeof(*c->e));
	if (!c->e) {
		free(c);
		return -ENOMEM;
	}
	c->ca = ca;
	c->capacity = capacity;
	c->lifetime_s = lifetime_s ? lifetime_s : TLS_LEAF_LIFETIME_S;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void tls_leaf_cache_free(struct tls_leaf_cache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->capacity; i++)
		SSL_CTX_free(c->e[i].ctx);
	pthread_mutex_destroy(&c->lock);
	free(c->e);
	free(c);
}

/* The SAN: one dNSName, or one iPAddress for a literal. */
static int add_san(X509 *x, const char *key)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	GENERAL_NAME *g = GENERAL_NAME_new();
	ASN1_STRING *v = NULL;
	int ret = -EIO;

	if (!gens || !g)
		goto cleanup;
	if (tls_leaf_key_family(key)) {
		v = a2i_IPADDRESS(key);
		if (!v)
			goto cleanup;
		GENERAL_NAME_set0_value(g, GEN_IPADD, v);
	} else {
		v = ASN1_IA5STRING_new();
		if (!v || !ASN1_STRING_set(v, key, (int)strlen(key))) {
			ASN1_STRING_free(v);
			goto cleanup;
		}
		GENERAL_NAME_set0_value(g, GEN_DNS, v);
	}
	if (!sk_GENERAL_NAME_push(gens, g))
		goto cleanup;
	g = NULL;
	if (X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1)
		ret = 0;
cleanup:
	GENERAL_NAME_free(g);
	GENERAL_NAMES_free(gens);
	return ret;
}

static int leaf_extensions(X509 *x, X509 *issuer, const char *key)
{
	if (tls_x509_add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
	    tls_x509_add_ext(x, issuer, NID_key_usage, "critical,digitalSignature") ||
	    tls_x509_add_ext(x, issuer, NID_ext_key_usage, "serverAuth") ||
	    tls_x509_add_ext(x, issuer, NID_subject_key_identifier, "hash") ||
	    tls_x509_add_ext(x, issuer, NID_authority_key_identifier, "keyid:always") ||
	    add_san(x, key))
		return -EIO;
	return 0;
}

/* The leaf's notAfter as a time_t, after it was cut to the CA's. */
static int not_after(X509 *x, X509 *issuer, time_t *out)
{
	struct tm tm;

	if (ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(issuer)) > 0 &&
	    !X509_set1_notAfter(x, X509_get0_notAfter(issuer)))
		return -EIO;
	if (!ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm))
		return -EIO;
	*out = timegm(&tm);
	return 0;
}

static X509 *leaf_cert(const struct tls_ca *ca, const char *key, EVP_PKEY *pkey, unsigned lifetime_s,
		       time_t *expires)
{
	X509 *issuer = tls_ca_x509(ca);
	EVP_PKEY *ca_key = tls_ca_pkey(ca);
	X509 *x = tls_x509_new(key, pkey, LEAF_BACKDATE_S, lifetime_s);

	if (!x)
		return NULL;
	if (!X509_set_issuer_name(x, X509_get_subject_name(issuer)) ||
	    not_after(x, issuer, expires) || leaf_extensions(x, issuer, key) ||
	    !X509_sign(x, ca_key, tls_x509_md(ca_key))) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/*
 * ALPN: "http/1.1" when the client offers it, else no protocol acknowledged
 * (the client goes on without ALPN). The bridge relays HTTP/1.1 only, so
 * HTTP/2 is negotiated away here: h2 is never selected, whatever the order
 * of the client's list.
 */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	static const char want[] = "http/1.1";

	for (unsigned int i = 0; i < inlen;) {
		unsigned int n = in[i];

		if (n > inlen - i - 1)
			break;
		if (n == sizeof(want) - 1 && !memcmp(in + i + 1, want, n)) {
			*out = in + i + 1;
			*outlen = (unsigned char)n;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

static SSL_CTX *server_ctx(X509 *leaf, EVP_PKEY *pkey, X509 *ca_cert)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx)
		return NULL;
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, pkey) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1 || !SSL_CTX_add1_chain_cert(ctx, ca_cert) ||
	    !SSL_CTX_set_ciphersuites(ctx, TLS_SUITES_13) ||
	    !SSL_CTX_set_cipher_list(ctx, TLS_SUITES_12_LEAF)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* Our order (tls_suites.h), unless the client puts ChaCha20 first (no AES instructions). */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
				 SSL_OP_PRIORITIZE_CHACHA);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	return ctx;
}

/* A new server ctx for key, with its leaf's notAfter. */
static int build_ctx(const struct tls_leaf_cache *c, const char *key, SSL_CTX **out, time_t *expires)
{
	EVP_PKEY *pkey = tls_x509_p256_key();
	X509 *leaf = NULL;

	*out = NULL;
	if (pkey)
		leaf = leaf_cert(c->ca, key, pkey, c->lifetime_s, expires);
	if (leaf)
		*out = server_ctx(leaf, pkey, tls_ca_x509(c->ca));
	/* The ctx holds its own references. */
	X509_free(leaf);
	EVP_PKEY_free(pkey);
	if (*out)
		return 0;
	ERR_clear_error();
	return pkey ? -EIO : -ENOMEM;
}

/* Usable until the last tenth of its life, so a handshake never gets a leaf about to expire. */
static bool fresh(const struct tls_leaf_cache *c, const struct leaf_entry *e, time_t now)
{
	return now < e->not_after - (time_t)(c->lifetime_s / 10);
}

/* Under the lock: the entry for key, else the slot to fill (free, else least recently used). */
static struct leaf_entry *slot_for(struct tls_leaf_cache *c, const char *key, bool *hit)
{
	struct leaf_entry *victim = NULL;

	*hit = false;
	for (unsigned i = 0; i < c->capacity; i++) {
		struct leaf_entry *e = &c->e[i];

		if (e->ctx && !strcmp(e->key, key)) {
			*hit = true;
			return e;
		}
		if (!victim || (victim->ctx && (!e->ctx || e->used < victim->used)))
			victim = e;
	}
	return victim;
}

/* Under the lock: a fresh cached ctx for key, with a reference for the caller, or NULL. */
static SSL_CTX *lookup(struct tls_leaf_cache *c, const char *key, time_t now)
{
	bool hit;
	struct leaf_entry *e = slot_for(c, key, &hit);

	if (!hit || !fresh(c, e, now))
		return NULL;
	e->used = ++c->tick;
	SSL_CTX_up_ref(e->ctx);
	return e->ctx;
}

/* Under the lock: ctx (whose reference passes to the cache) kept for key. */
static void store(struct tls_leaf_cache *c, const char *key, SSL_CTX *ctx, time_t not_after)
{
	bool hit;
	struct leaf_entry *e = slot_for(c, key, &hit);

	/* An evicted or replaced ctx lives on in the connections that hold it. */
	SSL_CTX_free(e->ctx);
	memcpy(e->key, key, strlen(key) + 1);
	e->ctx = ctx;
	e->not_after = not_after;
	e->used = ++c->tick;
}

int tls_leaf_ctx(struct tls_leaf_cache *c, const char *name, SSL_CTX **out)
{
	char key[TLS_LEAF_KEY_MAX];
	SSL_CTX *ctx, *found;
	time_t not_after;
	int ret;

	*out = NULL;
	if (tls_leaf_key(name, key, sizeof(key)))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	found = lookup(c, key, time(NULL));
	pthread_mutex_unlock(&c->lock);
	if (found) {
		*out = found;
		return 0;
	}
	ret = build_ctx(c, key, &ctx, &not_after);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	/* Another thread may have built one meanwhile: every caller then shares the first. */
	found = lookup(c, key, time(NULL));
	if (!found) {
		store(c, key, ctx, not_after);
		SSL_CTX_up_ref(ctx);
	}
	pthread_mutex_unlock(&c->lock);
	if (found) {
		SSL_CTX_free(ctx);
		ctx = found;
	}
	*out = ctx;
	return 0;
}
