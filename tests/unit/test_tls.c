// SPDX-License-Identifier: MIT
/* TLS termination's certificates, contexts and trust bundle (user/tls/). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tls/tls_bundle.h"
#include "tls/tls_ca.h"
#include "tls/tls_leaf.h"
#include "tls/tls_upstream.h"

struct fx {
	struct tls_ca *ca;
	struct tls_leaf_cache *cache;
	char *pem;
	size_t pem_len;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || tls_ca_generate("test", 0, &f->ca) ||
	    tls_leaf_cache_new(f->ca, 4, 3600, &f->cache) ||
	    tls_ca_cert_pem(f->ca, &f->pem, &f->pem_len))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tls_leaf_cache_free(f->cache);
	tls_ca_free(f->ca);
	free(f->pem);
	free(f);
	return 0;
}

/* The leaf chains to ca alone (as a client trusting only it would check). */
static int verify_chain(X509 *ca, X509 *leaf, int purpose)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int ok;

	assert_non_null(store);
	assert_non_null(ctx);
	assert_int_equal(X509_STORE_add_cert(store, ca), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
	X509_STORE_CTX_set_purpose(ctx, purpose);
	ok = X509_verify_cert(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return ok;
}

static void test_ca_generated(void **state)
{
	struct fx *f = *state;
	X509 *ca = tls_ca_x509(f->ca);
	char cn[128];

	assert_true(X509_check_ca(ca) == 1);
	assert_int_equal(X509_get_extension_flags(ca) & (EXFLAG_CA | EXFLAG_SS), EXFLAG_CA | EXFLAG_SS);
	assert_true(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN);
	assert_non_null(X509_get0_subject_key_id(ca));
	assert_int_equal(X509_get_pathlen(ca), 0);
	X509_NAME_get_text_by_NID(X509_get_subject_name(ca), NID_commonName, cn, sizeof(cn));
	assert_string_equal(cn, "bpfbox sandbox CA test");
	assert_int_equal(verify_chain(ca, ca, X509_PURPOSE_ANY), 1);
	assert_non_null(strstr(f->pem, "-----BEGIN CERTIFICATE-----"));
	assert_int_equal(strlen(f->pem), f->pem_len);
}

static void check_leaf(struct fx *f, const char *name, const char *other, bool ip)
{
	SSL_CTX *ctx = NULL;
	STACK_OF(X509) *chain = NULL;
	X509 *leaf;

	assert_int_equal(tls_leaf_ctx(f->cache, name, &ctx), 0);
	leaf = SSL_CTX_get0_certificate(ctx);
	assert_non_null(leaf);
	assert_int_equal(verify_chain(tls_ca_x509(f->ca), leaf, X509_PURPOSE_SSL_SERVER), 1);
	if (ip) {
		assert_int_equal(X509_check_ip_asc(leaf, name, 0), 1);
		assert_int_not_equal(X509_check_ip_asc(leaf, other, 0), 1);
	} else {
		assert_int_equal(X509_check_host(leaf, name, 0, 0, NULL), 1);
		assert_int_not_equal(X509_check_host(leaf, other, 0, 0, NULL), 1);
	}
	assert_true(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER);
	assert_false(X509_get_extension_flags(leaf) & EXFLAG_CA);
	assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
	assert_int_equal(sk_X509_num(chain), 1);
	assert_int_equal(X509_cmp(sk_X509_value(chain, 0), tls_ca_x509(f->ca)), 0);
	SSL_CTX_free(ctx);
}

static void test_leaves(void **state)
{
	struct fx *f = *state;

	check_leaf(f, "api.example.test", "other.example.test", false);
	check_leaf(f, "127.0.0.1", "127.0.0.2", true);
	check_leaf(f, "::1", "::2", true);
}

static void test_cache(void **state)
{
	struct fx *f = *state;
	SSL_CTX *a = NULL, *b = NULL, *c = NULL;
	const char *names[] = {"n1.test", "n2.test", "n3.test", "n4.test", "n5.test"};

	assert_int_equal(tls_leaf_ctx(f->cache, "api.example.test", &a), 0);
	assert_int_equal(tls_leaf_ctx(f->cache, "API.Example.test.", &b), 0);
	assert_ptr_equal(a, b);
	SSL_CTX_free(b);
	/* Five other names through a cache of four evict it; the ctx lives on while held. */
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(tls_leaf_ctx(f->cache, names[i], &c), 0);
		SSL_CTX_free(c);
	}
	assert_int_equal(tls_leaf_ctx(f->cache, "api.example.test", &b), 0);
	assert_ptr_not_equal(a, b);
	assert_non_null(SSL_CTX_get0_certificate(a));
	SSL_CTX_free(a);
	SSL_CTX_free(b);
	assert_int_equal(tls_leaf_ctx(f->cache, "a..b", &c), -EINVAL);
	assert_null(c);
}

/* What a leaf holds beyond its name: validity, serial, signature, CN cut at 64. */
static void test_leaf_fields(void **state)
{
	struct fx *f = *state;
	char name[120], cn[128];
	SSL_CTX *ctx = NULL;
	X509 *leaf;
	BIGNUM *serial;
	int day, sec;

	memset(name, 'a', 100);
	memcpy(name + 100, ".long.test", 11);
	assert_int_equal(tls_leaf_ctx(f->cache, name, &ctx), 0);
	leaf = SSL_CTX_get0_certificate(ctx);
	X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn, sizeof(cn));
	assert_int_equal(strlen(cn), 64);
	assert_int_equal(X509_check_host(leaf, name, 0, 0, NULL), 1);
	assert_int_equal(X509_get_signature_nid(leaf), NID_ecdsa_with_SHA256);
	/* notBefore five minutes back, notAfter the cache's hour ahead. */
	assert_int_equal(ASN1_TIME_diff(&day, &sec, NULL, X509_get0_notBefore(leaf)), 1);
	assert_true(day == 0 && sec <= -295 && sec >= -305);
	assert_int_equal(ASN1_TIME_diff(&day, &sec, NULL, X509_get0_notAfter(leaf)), 1);
	assert_true(day == 0 && sec >= 3595 && sec <= 3600);
	serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
	assert_true(BN_num_bits(serial) > 64 && BN_num_bits(serial) <= 127 && !BN_is_negative(serial));
	BN_free(serial);
	SSL_CTX_free(ctx);
}

/* A CA about to expire: leaves are cut to its notAfter and, never fresh, made anew. */
static void test_leaf_replaced(void **state)
{
	struct tls_ca *ca = NULL;
	struct tls_leaf_cache *cache = NULL;
	SSL_CTX *a = NULL, *b = NULL;

	assert_int_equal(tls_ca_generate("short", 60, &ca), 0);
	assert_int_equal(tls_leaf_cache_new(ca, 2, 3600, &cache), 0);
	assert_int_equal(tls_leaf_ctx(cache, "api.example.test", &a), 0);
	assert_int_equal(ASN1_TIME_compare(X509_get0_notAfter(SSL_CTX_get0_certificate(a)),
					   X509_get0_notAfter(tls_ca_x509(ca))), 0);
	assert_int_equal(tls_leaf_ctx(cache, "api.example.test", &b), 0);
	assert_ptr_not_equal(a, b);
	SSL_CTX_free(a);
	SSL_CTX_free(b);
	tls_leaf_cache_free(cache);
	tls_ca_free(ca);
}

struct worker {
	struct tls_leaf_cache *cache;
	unsigned seed;
	int failures;
};

static void *worker_run(void *arg)
{
	static const char *const names[] = {"a.test", "b.test", "c.test", "d.test", "e.test", "::1"};
	struct worker *w = arg;

	for (int i = 0; i < 60; i++) {
		const char *name = names[rand_r(&w->seed) % 6];
		SSL_CTX *ctx = NULL;
		X509 *leaf;

		if (tls_leaf_ctx(w->cache, name, &ctx)) {
			w->failures++;
			continue;
		}
		leaf = SSL_CTX_get0_certificate(ctx);
		if (strchr(name, ':') ? X509_check_ip_asc(leaf, name, 0) != 1
				      : X509_check_host(leaf, name, 0, 0, NULL) != 1)
			w->failures++;
		SSL_CTX_free(ctx);
	}
	return NULL;
}

/* Four threads over six names in a cache of four: every ctx is the name's. */
static void test_cache_threads(void **state)
{
	struct fx *f = *state;
	struct worker w[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){.cache = f->cache, .seed = (unsigned)i + 1};
		assert_int_equal(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].failures, 0);
	}
}

static void test_key(void **state)
{
	char out[TLS_LEAF_KEY_MAX], name[300];

	assert_int_equal(tls_leaf_key("API.Example.test.", out, sizeof(out)), 0);
	assert_string_equal(out, "api.example.test");
	assert_int_equal(tls_leaf_key("a_b-c.d", out, sizeof(out)), 0);
	assert_string_equal(out, "a_b-c.d");
	assert_int_equal(tls_leaf_key("::0001", out, sizeof(out)), 0);
	assert_string_equal(out, "::1");
	assert_int_equal(tls_leaf_key("2001:DB8:0:0:0:0:0:1", out, sizeof(out)), 0);
	assert_string_equal(out, "2001:db8::1");
	assert_int_equal(tls_leaf_key("10.0.0.1", out, sizeof(out)), 0);
	assert_string_equal(out, "10.0.0.1");
	assert_int_equal(tls_leaf_key_family("10.0.0.1"), AF_INET);
	assert_int_equal(tls_leaf_key_family("::1"), AF_INET6);
	assert_int_equal(tls_leaf_key_family("a.test"), 0);

	assert_int_equal(tls_leaf_key("", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key(".", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("a..b", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key(".a", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("a..", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("a b", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("x\n", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("[::1]", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("fe80::1%eth0", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("a*.test", out, sizeof(out)), -EINVAL);
	assert_int_equal(tls_leaf_key("caf\xc3\xa9.test", out, sizeof(out)), -EINVAL);
	/* 253 bytes (with or without a trailing dot) fit, 254 do not. */
	memset(name, 'a', 254);
	for (size_t i = 63; i < 254; i += 64)
		name[i] = '.';
	name[253] = '\0';
	assert_int_equal(tls_leaf_key(name, out, sizeof(out)), 0);
	assert_int_equal(strlen(out), 253);
	name[253] = '.';
	name[254] = '\0';
	assert_int_equal(tls_leaf_key(name, out, sizeof(out)), 0);
	name[253] = 'a';
	assert_int_equal(tls_leaf_key(name, out, sizeof(out)), -ENAMETOOLONG);
	/* Too small an output is refused, never overrun. */
	assert_int_equal(tls_leaf_key("abcdef", out, 6), -ENAMETOOLONG);
	assert_int_equal(tls_leaf_key("2001:db8::1", out, 8), -ENAMETOOLONG);
}

static char *key_pem(EVP_PKEY *key, size_t *len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;

	assert_int_equal(PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL), 1);
	n = BIO_get_mem_data(bio, &data);
	out = strndup(data, (size_t)n);
	*len = (size_t)n;
	BIO_free(bio);
	return out;
}

static char *cert_pem(X509 *x, size_t *len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;

	assert_int_equal(PEM_write_bio_X509(bio, x), 1);
	n = BIO_get_mem_data(bio, &data);
	out = strndup(data, (size_t)n);
	*len = (size_t)n;
	BIO_free(bio);
	return out;
}

/* A self-signed CA:TRUE certificate for key that expired a day ago. */
static X509 *expired_ca(EVP_PKEY *key)
{
	X509 *x = X509_new();
	X509V3_CTX v3;
	X509_EXTENSION *ext;

	X509_set_version(x, X509_VERSION_3);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), -2 * 86400);
	X509_gmtime_adj(X509_getm_notAfter(x), -86400);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)"old", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_set_pubkey(x, key);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);
	return x;
}

static void test_load_pem(void **state)
{
	struct fx *f = *state;
	struct tls_ca *ca = NULL, *other = NULL;
	SSL_CTX *leaf_ctx = NULL;
	const char *why = NULL;
	char *key, *other_key, *leaf, *leaf_key, *old;
	size_t key_len, other_len, leaf_len, leaf_key_len, old_len;
	X509 *old_x;

	key = key_pem(tls_ca_pkey(f->ca), &key_len);
	assert_int_equal(tls_ca_load_pem(f->pem, f->pem_len, key, key_len, &ca, &why), 0);
	assert_null(why);
	assert_int_equal(X509_cmp(tls_ca_x509(ca), tls_ca_x509(f->ca)), 0);
	tls_ca_free(ca);

	assert_int_equal(tls_ca_generate("other", 0, &other), 0);
	other_key = key_pem(tls_ca_pkey(other), &other_len);
	assert_int_equal(tls_ca_load_pem(f->pem, f->pem_len, other_key, other_len, &ca, &why), -EINVAL);
	assert_null(ca);
	assert_non_null(strstr(why, "does not match"));

	assert_int_equal(tls_leaf_ctx(f->cache, "leaf.test", &leaf_ctx), 0);
	leaf = cert_pem(SSL_CTX_get0_certificate(leaf_ctx), &leaf_len);
	leaf_key = key_pem(SSL_CTX_get0_privatekey(leaf_ctx), &leaf_key_len);
	assert_int_equal(tls_ca_load_pem(leaf, leaf_len, leaf_key, leaf_key_len, &ca, &why), -EINVAL);
	assert_non_null(strstr(why, "not a CA"));

	old_x = expired_ca(tls_ca_pkey(other));
	old = cert_pem(old_x, &old_len);
	assert_int_equal(tls_ca_load_pem(old, old_len, other_key, other_len, &ca, &why), -EINVAL);
	assert_non_null(strstr(why, "expired"));

	assert_int_equal(tls_ca_load_pem("junk", 4, key, key_len, &ca, &why), -EINVAL);
	assert_non_null(strstr(why, "not PEM"));
	assert_int_equal(tls_ca_load_pem(f->pem, f->pem_len, "junk", 4, &ca, &why), -EINVAL);
	assert_non_null(strstr(why, "not PEM"));
	/* Nothing is left in the thread's error queue for a later SSL_get_error to misread. */
	assert_int_equal(ERR_peek_error(), 0);

	X509_free(old_x);
	free(old);
	free(leaf);
	free(leaf_key);
	SSL_CTX_free(leaf_ctx);
	free(other_key);
	free(key);
	tls_ca_free(other);
}

/*
 * Both sides driven over a BIO pair until both finish or one fails.
 * Returns 1 when both finished, 0 when a side failed.
 */
static int handshake(SSL *client, SSL *server)
{
	BIO *cb, *sb;
	bool c_done = false, s_done = false;

	assert_int_equal(BIO_new_bio_pair(&cb, 0, &sb, 0), 1);
	SSL_set_bio(client, cb, cb);
	SSL_set_bio(server, sb, sb);
	SSL_set_accept_state(server);
	for (int i = 0; i < 100 && !(c_done && s_done); i++) {
		int rc, err;

		if (!c_done) {
			rc = SSL_do_handshake(client);
			err = SSL_get_error(client, rc);
			if (rc == 1)
				c_done = true;
			else if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE)
				return 0;
		}
		if (!s_done) {
			rc = SSL_do_handshake(server);
			err = SSL_get_error(server, rc);
			if (rc == 1)
				s_done = true;
			else if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE)
				return 0;
		}
	}
	return c_done && s_done;
}

/* A handshake between a leaf for server_name and a client for client_name, offering alpn. */
static int connect_pair(struct fx *f, SSL_CTX *uctx, const char *server_name, const char *client_name,
			const unsigned char *alpn, unsigned alpn_len, long *verify, char *proto)
{
	SSL_CTX *sctx = NULL;
	SSL *client = NULL, *server;
	const unsigned char *sel = NULL;
	unsigned sel_len = 0;
	int ok;

	assert_int_equal(tls_leaf_ctx(f->cache, server_name, &sctx), 0);
	server = SSL_new(sctx);
	assert_non_null(server);
	assert_int_equal(tls_upstream_ssl(uctx, client_name, &client), 0);
	if (alpn)
		assert_int_equal(SSL_set_alpn_protos(client, alpn, alpn_len), 0);
	ok = handshake(client, server);
	*verify = SSL_get_verify_result(client);
	SSL_get0_alpn_selected(client, &sel, &sel_len);
	snprintf(proto, 32, "%.*s", (int)sel_len, sel ? (const char *)sel : "");
	if (ok && !tls_leaf_key_family(client_name))
		assert_string_equal(SSL_get_servername(server, TLSEXT_NAMETYPE_host_name), client_name);
	ERR_clear_error();
	SSL_free(client);
	SSL_free(server);
	SSL_CTX_free(sctx);
	return ok;
}

static void test_handshake(void **state)
{
	static const unsigned char h2_first[] = "\x02h2\x08http/1.1";
	static const unsigned char h2_only[] = "\x02h2";
	struct fx *f = *state;
	const char *blob = f->pem, *why = NULL;
	size_t len = f->pem_len;
	SSL_CTX *uctx = NULL, *plain = NULL;
	long verify;
	char proto[32];

	assert_int_equal(tls_upstream_ctx_new(&blob, &len, 1, &uctx, &why), 0);
	assert_int_equal(connect_pair(f, uctx, "api.example.test", "api.example.test", NULL, 0,
				      &verify, proto), 1);
	assert_int_equal(verify, X509_V_OK);
	assert_string_equal(proto, "http/1.1");

	/* HTTP/2 is negotiated away: the client's h2 is never selected. */
	assert_int_equal(connect_pair(f, uctx, "api.example.test", "api.example.test", h2_first,
				      sizeof(h2_first) - 1, &verify, proto), 1);
	assert_string_equal(proto, "http/1.1");
	assert_int_equal(connect_pair(f, uctx, "api.example.test", "api.example.test", h2_only,
				      sizeof(h2_only) - 1, &verify, proto), 1);
	assert_string_equal(proto, "");

	assert_int_equal(connect_pair(f, uctx, "api.example.test", "other.example.test", NULL, 0,
				      &verify, proto), 0);
	assert_int_equal(verify, X509_V_ERR_HOSTNAME_MISMATCH);

	assert_int_equal(connect_pair(f, uctx, "127.0.0.1", "127.0.0.1", NULL, 0, &verify, proto), 1);
	assert_int_equal(connect_pair(f, uctx, "::1", "::1", NULL, 0, &verify, proto), 1);
	assert_int_equal(connect_pair(f, uctx, "127.0.0.1", "127.0.0.2", NULL, 0, &verify, proto), 0);
	assert_int_equal(verify, X509_V_ERR_IP_ADDRESS_MISMATCH);

	/* Without the CA as an extra blob the leaf is not trusted: no fallback. */
	assert_int_equal(tls_upstream_ctx_new(NULL, NULL, 0, &plain, &why), 0);
	assert_int_equal(connect_pair(f, plain, "api.example.test", "api.example.test", NULL, 0,
				      &verify, proto), 0);
	assert_int_not_equal(verify, X509_V_OK);

	SSL_CTX_free(plain);
	SSL_CTX_free(uctx);
}

/*
 * The suite a client gets from a leaf for api.example.test. With
 * client_order the server follows the client's order (as a server without
 * a preference of its own does) and lists AES-256 first itself.
 */
static void suite_of(struct fx *f, SSL *client, bool client_order, char *out, size_t len)
{
	SSL_CTX *sctx = NULL;
	SSL *server;

	assert_int_equal(tls_leaf_ctx(f->cache, "api.example.test", &sctx), 0);
	server = SSL_new(sctx);
	assert_non_null(server);
	if (client_order) {
		SSL_clear_options(server, SSL_OP_CIPHER_SERVER_PREFERENCE);
		assert_int_equal(SSL_set_ciphersuites(server, "TLS_AES_256_GCM_SHA384:"
						      "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"), 1);
	}
	SSL_set_connect_state(client);
	assert_int_equal(handshake(client, server), 1);
	snprintf(out, len, "%s", SSL_CIPHER_get_name(SSL_get_current_cipher(client)));
	SSL_free(client);
	SSL_free(server);
	SSL_CTX_free(sctx);
}

/* A client with OpenSSL's defaults (AES-256 first), optionally capped at TLS 1.2 or ChaCha20 first. */
static SSL *default_client(SSL_CTX **ctx, bool tls12, bool chacha_first)
{
	SSL *ssl;

	*ctx = SSL_CTX_new(TLS_client_method());
	assert_non_null(*ctx);
	if (tls12)
		assert_int_equal(SSL_CTX_set_max_proto_version(*ctx, TLS1_2_VERSION), 1);
	if (chacha_first) {
		assert_int_equal(SSL_CTX_set_ciphersuites(*ctx, "TLS_CHACHA20_POLY1305_SHA256:"
							  "TLS_AES_256_GCM_SHA384"), 1);
		assert_int_equal(SSL_CTX_set_cipher_list(*ctx, "ECDHE-ECDSA-CHACHA20-POLY1305:DEFAULT"), 1);
	}
	ssl = SSL_new(*ctx);
	assert_non_null(ssl);
	return ssl;
}

/* Both legs prefer AES-128-GCM (tls_suites.h); a client that puts ChaCha20 first gets it. */
static void test_suites(void **state)
{
	struct fx *f = *state;
	const char *blob = f->pem, *why = NULL;
	size_t len = f->pem_len;
	SSL_CTX *uctx = NULL, *dctx = NULL;
	SSL *client = NULL;
	char suite[64];

	suite_of(f, default_client(&dctx, false, false), false, suite, sizeof(suite));
	assert_string_equal(suite, "TLS_AES_128_GCM_SHA256");
	SSL_CTX_free(dctx);
	suite_of(f, default_client(&dctx, true, false), false, suite, sizeof(suite));
	assert_string_equal(suite, "ECDHE-ECDSA-AES128-GCM-SHA256");
	SSL_CTX_free(dctx);
	suite_of(f, default_client(&dctx, false, true), false, suite, sizeof(suite));
	assert_string_equal(suite, "TLS_CHACHA20_POLY1305_SHA256");
	SSL_CTX_free(dctx);
	suite_of(f, default_client(&dctx, true, true), false, suite, sizeof(suite));
	assert_string_equal(suite, "ECDHE-ECDSA-CHACHA20-POLY1305");
	SSL_CTX_free(dctx);

	/* The proxy's own client side asks AES-128-GCM first of a server that follows the client. */
	assert_int_equal(tls_upstream_ctx_new(&blob, &len, 1, &uctx, &why), 0);
	assert_int_equal(tls_upstream_ssl(uctx, "api.example.test", &client), 0);
	suite_of(f, client, true, suite, sizeof(suite));
	assert_string_equal(suite, "TLS_AES_128_GCM_SHA256");
	SSL_CTX_free(uctx);
}

static void test_upstream_refusals(void **state)
{
	struct fx *f = *state;
	const char *blobs[2] = {f->pem, "no certificate here\n"};
	size_t lens[2] = {f->pem_len, strlen(blobs[1])};
	const char *why = NULL;
	SSL_CTX *ctx = NULL;
	SSL *ssl = NULL;

	assert_int_equal(tls_upstream_ctx_new(blobs, lens, 2, &ctx, &why), -EINVAL);
	assert_null(ctx);
	assert_non_null(why);
	assert_int_equal(ERR_peek_error(), 0);
	assert_int_equal(tls_upstream_ctx_new(blobs, lens, 1, &ctx, &why), 0);
	assert_int_equal(tls_upstream_ssl(ctx, "a b", &ssl), -EINVAL);
	assert_null(ssl);
	SSL_CTX_free(ctx);
}

static void read_file(int dirfd, const char *name, char **data, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	*data = malloc((size_t)st.st_size + 1);
	assert_int_equal(read(fd, *data, (size_t)st.st_size), st.st_size);
	(*data)[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	close(fd);
}

static void test_bundle(void **state)
{
	struct fx *f = *state;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[512], *data;
	size_t len;
	int dirfd;

	snprintf(dir, sizeof(dir), "%s/test_tls.XXXXXX", tmp);
	assert_non_null(mkdtemp(dir));
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);

	assert_int_equal(tls_bundle_write_at(dirfd, "ca.pem", f->pem, f->pem_len), 0);
	read_file(dirfd, "ca.pem", &data, &len);
	assert_true(len >= f->pem_len);
	assert_memory_equal(data + len - f->pem_len, f->pem, f->pem_len);
	free(data);

	assert_int_equal(tls_bundle_write_at(dirfd, "ca.pem", f->pem, f->pem_len), -EEXIST);
	assert_int_equal(symlinkat("elsewhere.pem", dirfd, "link.pem"), 0);
	assert_int_equal(tls_bundle_write_at(dirfd, "link.pem", f->pem, f->pem_len), -EEXIST);
	assert_int_equal(faccessat(dirfd, "elsewhere.pem", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(tls_bundle_write_at(dirfd, "../x.pem", f->pem, f->pem_len), -EINVAL);
	assert_int_equal(tls_bundle_write_at(dirfd, "", f->pem, f->pem_len), -EINVAL);

	assert_string_equal(tls_bundle_env[0], "NODE_EXTRA_CA_CERTS");
	assert_string_equal(tls_bundle_env[TLS_BUNDLE_NENV - 2], "NIX_SSL_CERT_FILE");
	assert_string_equal(tls_bundle_env[TLS_BUNDLE_NENV - 1], "npm_config_cafile");

	unlinkat(dirfd, "ca.pem", 0);
	unlinkat(dirfd, "link.pem", 0);
	close(dirfd);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ca_generated),
		cmocka_unit_test(test_leaves),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_leaf_fields),
		cmocka_unit_test(test_leaf_replaced),
		cmocka_unit_test(test_cache_threads),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_load_pem),
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_suites),
		cmocka_unit_test(test_upstream_refusals),
		cmocka_unit_test(test_bundle),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
