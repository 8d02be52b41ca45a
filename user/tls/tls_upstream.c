// SPDX-License-Identifier: MIT
/* The verified client side of TLS termination (tls_upstream.h). */
#include <errno.h>
#include <stdint.h>

#include "lib/openssl_lazy.h"

#include "tls_leaf.h"
#include "tls_suites.h"
#include "tls_upstream.h"

/* Every certificate of one PEM blob into store: 0, or -EINVAL with *why. */
static int add_blob(X509_STORE *store, const char *pem, size_t len, const char **why)
{
	BIO *bio;
	X509 *x;
	unsigned long err;
	int n = 0;

	if (len > (size_t)INT32_MAX) {
		*why = "an extra CA certificate file is too large";
		return -EINVAL;
	}
	bio = BIO_new_mem_buf(pem, (int)len);
	if (!bio)
		return -ENOMEM;
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
		int ok = X509_STORE_add_cert(store, x);

		X509_free(x);
		if (!ok) {
			BIO_free(bio);
			ERR_clear_error();
			return -ENOMEM;
		}
		n++;
	}
	BIO_free(bio);
	/* The loop ends at the end of the blob ("no start line"), or at a bad certificate. */
	err = ERR_peek_last_error();
	ERR_clear_error();
	if (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE && n)
		return 0;
	*why = n ? "an extra CA certificate file holds a malformed certificate"
		 : "an extra CA certificate file holds no PEM certificate";
	return -EINVAL;
}

int tls_upstream_ctx_new(const char *const *extra_pem, const size_t *extra_len, size_t n,
			 SSL_CTX **out, const char **why)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	int ret = -ENOMEM;

	*out = NULL;
	*why = NULL;
	if (!ctx)
		return -ENOMEM;
	/* TLS 1.2 keeps OpenSSL's default list: servers old enough to need it choose from it. */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    !SSL_CTX_set_ciphersuites(ctx, TLS_SUITES_13))
		goto cleanup;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* No system store (an odd host) leaves only the extra CAs: verification still applies. */
	SSL_CTX_set_default_verify_paths(ctx);
	for (size_t i = 0; i < n; i++) {
		ret = add_blob(SSL_CTX_get_cert_store(ctx), extra_pem[i], extra_len[i], why);
		if (ret)
			goto cleanup;
	}
	ret = -ENOMEM;
	/* set_alpn_protos returns 0 on success. */
	if (SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1))
		goto cleanup;
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	ERR_clear_error();
	*out = ctx;
	return 0;
cleanup:
	ERR_clear_error();
	SSL_CTX_free(ctx);
	return ret;
}

static int set_identity(SSL *ssl, const char *key)
{
	X509_VERIFY_PARAM *param = SSL_get0_param(ssl);

	if (tls_leaf_key_family(key))
		return X509_VERIFY_PARAM_set1_ip_asc(param, key) == 1 ? 0 : -EINVAL;
	if (SSL_set_tlsext_host_name(ssl, key) != 1)
		return -ENOMEM;
	X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	return X509_VERIFY_PARAM_set1_host(param, key, 0) == 1 ? 0 : -ENOMEM;
}

int tls_upstream_ssl(SSL_CTX *ctx, const char *name, SSL **out)
{
	char key[TLS_LEAF_KEY_MAX];
	SSL *ssl;
	int ret;

	*out = NULL;
	if (tls_leaf_key(name, key, sizeof(key)))
		return -EINVAL;
	ssl = SSL_new(ctx);
	if (!ssl) {
		ERR_clear_error();
		return -ENOMEM;
	}
	ret = set_identity(ssl, key);
	if (ret) {
		ERR_clear_error();
		SSL_free(ssl);
		return ret;
	}
	/* The ctx's SSL_VERIFY_PEER applies: a failed verification fails the handshake. */
	SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL);
	SSL_set_connect_state(ssl);
	*out = ssl;
	return 0;
}
