/* SPDX-License-Identifier: MIT */
/*
 * OpenSSL, loaded when first needed rather than with bpfbox. Only TLS
 * termination and masked credentials use it; mapping and relocating
 * libssl and libcrypto at every exec was a large share of a sandbox's
 * start (docs/benchmarks.md). A file that calls OpenSSL includes this
 * header: it brings in OpenSSL's own headers first, then turns each
 * function below into a call through a table filled by dlopen(3).
 *
 * bpfbox is not linked with -lssl or -lcrypto, so a function missing here
 * is a link error ("undefined reference"): add it to both lists.
 */
#ifndef BPFBOX_OPENSSL_LAZY_H
#define BPFBOX_OPENSSL_LAZY_H

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "lib/errmsg.h"

#define OPENSSL_LAZY_FUNCS(X) \
	X(ASN1_IA5STRING_new) \
	X(ASN1_STRING_free) \
	X(ASN1_STRING_set) \
	X(ASN1_TIME_compare) \
	X(ASN1_TIME_to_tm) \
	X(BIO_ctrl) \
	X(BIO_ctrl_get_write_guarantee) \
	X(BIO_ctrl_pending) \
	X(BIO_ctrl_wpending) \
	X(BIO_free) \
	X(BIO_new) \
	X(BIO_new_bio_pair) \
	X(BIO_new_mem_buf) \
	X(BIO_nread) \
	X(BIO_nread0) \
	X(BIO_number_read) \
	X(BIO_nwrite) \
	X(BIO_nwrite0) \
	X(BIO_s_mem) \
	X(BIO_write) \
	X(BN_bin2bn) \
	X(BN_free) \
	X(BN_to_ASN1_INTEGER) \
	X(CRYPTO_memcmp) \
	X(ERR_clear_error) \
	X(ERR_error_string_n) \
	X(ERR_peek_last_error) \
	X(EVP_Digest) \
	X(EVP_PKEY_Q_keygen) \
	X(EVP_PKEY_free) \
	X(EVP_PKEY_is_a) \
	X(EVP_sha256) \
	X(GENERAL_NAMES_free) \
	X(GENERAL_NAME_free) \
	X(GENERAL_NAME_new) \
	X(GENERAL_NAME_set0_value) \
	X(HMAC) \
	X(OPENSSL_sk_new_null) \
	X(OPENSSL_sk_push) \
	X(OPENSSL_thread_stop) \
	X(PEM_read_bio_PrivateKey) \
	X(PEM_read_bio_X509) \
	X(PEM_write_bio_X509) \
	X(RAND_bytes) \
	X(SSL_CTX_check_private_key) \
	X(SSL_CTX_ctrl) \
	X(SSL_CTX_free) \
	X(SSL_CTX_get_cert_store) \
	X(SSL_CTX_new) \
	X(SSL_CTX_set_alpn_protos) \
	X(SSL_CTX_set_alpn_select_cb) \
	X(SSL_CTX_set_cipher_list) \
	X(SSL_CTX_set_ciphersuites) \
	X(SSL_CTX_set_default_verify_paths) \
	X(SSL_CTX_set_options) \
	X(SSL_CTX_set_verify) \
	X(SSL_CTX_up_ref) \
	X(SSL_CTX_use_PrivateKey) \
	X(SSL_CTX_use_certificate) \
	X(SSL_ctrl) \
	X(SSL_do_handshake) \
	X(SSL_free) \
	X(SSL_get0_alpn_selected) \
	X(SSL_get0_param) \
	X(SSL_get_error) \
	X(SSL_get_servername) \
	X(SSL_get_verify_result) \
	X(SSL_new) \
	X(SSL_read) \
	X(SSL_set_accept_state) \
	X(SSL_set_bio) \
	X(SSL_set_connect_state) \
	X(SSL_set_options) \
	X(SSL_set_verify) \
	X(SSL_shutdown) \
	X(SSL_write) \
	X(TLS_client_method) \
	X(TLS_server_method) \
	X(X509V3_EXT_conf_nid) \
	X(X509V3_set_ctx) \
	X(X509_EXTENSION_free) \
	X(X509_NAME_add_entry_by_NID) \
	X(X509_STORE_add_cert) \
	X(X509_VERIFY_PARAM_set1_host) \
	X(X509_VERIFY_PARAM_set1_ip_asc) \
	X(X509_VERIFY_PARAM_set_hostflags) \
	X(X509_add1_ext_i2d) \
	X(X509_add_ext) \
	X(X509_check_private_key) \
	X(X509_cmp_current_time) \
	X(X509_free) \
	X(X509_get0_notAfter) \
	X(X509_get0_notBefore) \
	X(X509_get_extension_flags) \
	X(X509_get_key_usage) \
	X(X509_get_serialNumber) \
	X(X509_get_subject_name) \
	X(X509_getm_notAfter) \
	X(X509_getm_notBefore) \
	X(X509_gmtime_adj) \
	X(X509_new) \
	X(X509_set1_notAfter) \
	X(X509_set_issuer_name) \
	X(X509_set_pubkey) \
	X(X509_set_version) \
	X(X509_sign) \
	X(X509_verify_cert_error_string) \
	X(a2i_IPADDRESS)

struct openssl_lazy {
#define OPENSSL_LAZY_MEMBER(f) __typeof__(&f) f;
	OPENSSL_LAZY_FUNCS(OPENSSL_LAZY_MEMBER)
#undef OPENSSL_LAZY_MEMBER
};

/*
 * Loads libssl and libcrypto once. 0, or a negative errno with em saying
 * what is missing: a feature that needs OpenSSL calls it first, so a host
 * without the library is told at setup, not by a crash later.
 */
int openssl_lazy_load(struct errmsg *em);
/* The table; loads it on first use, and ends the process if it cannot. */
const struct openssl_lazy *openssl_lazy(void);

#ifndef OPENSSL_LAZY_TABLE_ONLY
#define ASN1_IA5STRING_new (openssl_lazy()->ASN1_IA5STRING_new)
#define ASN1_STRING_free (openssl_lazy()->ASN1_STRING_free)
#define ASN1_STRING_set (openssl_lazy()->ASN1_STRING_set)
#define ASN1_TIME_compare (openssl_lazy()->ASN1_TIME_compare)
#define ASN1_TIME_to_tm (openssl_lazy()->ASN1_TIME_to_tm)
#define BIO_ctrl (openssl_lazy()->BIO_ctrl)
#define BIO_ctrl_get_write_guarantee (openssl_lazy()->BIO_ctrl_get_write_guarantee)
#define BIO_ctrl_pending (openssl_lazy()->BIO_ctrl_pending)
#define BIO_ctrl_wpending (openssl_lazy()->BIO_ctrl_wpending)
#define BIO_free (openssl_lazy()->BIO_free)
#define BIO_new (openssl_lazy()->BIO_new)
#define BIO_new_bio_pair (openssl_lazy()->BIO_new_bio_pair)
#define BIO_new_mem_buf (openssl_lazy()->BIO_new_mem_buf)
#define BIO_nread (openssl_lazy()->BIO_nread)
#define BIO_nread0 (openssl_lazy()->BIO_nread0)
#define BIO_number_read (openssl_lazy()->BIO_number_read)
#define BIO_nwrite (openssl_lazy()->BIO_nwrite)
#define BIO_nwrite0 (openssl_lazy()->BIO_nwrite0)
#define BIO_s_mem (openssl_lazy()->BIO_s_mem)
#define BIO_write (openssl_lazy()->BIO_write)
#define BN_bin2bn (openssl_lazy()->BN_bin2bn)
#define BN_free (openssl_lazy()->BN_free)
#define BN_to_ASN1_INTEGER (openssl_lazy()->BN_to_ASN1_INTEGER)
#define CRYPTO_memcmp (openssl_lazy()->CRYPTO_memcmp)
#define ERR_clear_error (openssl_lazy()->ERR_clear_error)
#define ERR_error_string_n (openssl_lazy()->ERR_error_string_n)
#define ERR_peek_last_error (openssl_lazy()->ERR_peek_last_error)
#define EVP_Digest (openssl_lazy()->EVP_Digest)
#define EVP_PKEY_Q_keygen (openssl_lazy()->EVP_PKEY_Q_keygen)
#define EVP_PKEY_free (openssl_lazy()->EVP_PKEY_free)
#define EVP_PKEY_is_a (openssl_lazy()->EVP_PKEY_is_a)
#define EVP_sha256 (openssl_lazy()->EVP_sha256)
#define GENERAL_NAMES_free (openssl_lazy()->GENERAL_NAMES_free)
#define GENERAL_NAME_free (openssl_lazy()->GENERAL_NAME_free)
#define GENERAL_NAME_new (openssl_lazy()->GENERAL_NAME_new)
#define GENERAL_NAME_set0_value (openssl_lazy()->GENERAL_NAME_set0_value)
#define HMAC (openssl_lazy()->HMAC)
#define OPENSSL_sk_new_null (openssl_lazy()->OPENSSL_sk_new_null)
#define OPENSSL_sk_push (openssl_lazy()->OPENSSL_sk_push)
#define OPENSSL_thread_stop (openssl_lazy()->OPENSSL_thread_stop)
#define PEM_read_bio_PrivateKey (openssl_lazy()->PEM_read_bio_PrivateKey)
#define PEM_read_bio_X509 (openssl_lazy()->PEM_read_bio_X509)
#define PEM_write_bio_X509 (openssl_lazy()->PEM_write_bio_X509)
#define RAND_bytes (openssl_lazy()->RAND_bytes)
#define SSL_CTX_check_private_key (openssl_lazy()->SSL_CTX_check_private_key)
#define SSL_CTX_ctrl (openssl_lazy()->SSL_CTX_ctrl)
#define SSL_CTX_free (openssl_lazy()->SSL_CTX_free)
#define SSL_CTX_get_cert_store (openssl_lazy()->SSL_CTX_get_cert_store)
#define SSL_CTX_new (openssl_lazy()->SSL_CTX_new)
#define SSL_CTX_set_alpn_protos (openssl_lazy()->SSL_CTX_set_alpn_protos)
#define SSL_CTX_set_alpn_select_cb (openssl_lazy()->SSL_CTX_set_alpn_select_cb)
#define SSL_CTX_set_cipher_list (openssl_lazy()->SSL_CTX_set_cipher_list)
#define SSL_CTX_set_ciphersuites (openssl_lazy()->SSL_CTX_set_ciphersuites)
#define SSL_CTX_set_default_verify_paths (openssl_lazy()->SSL_CTX_set_default_verify_paths)
#define SSL_CTX_set_options (openssl_lazy()->SSL_CTX_set_options)
#define SSL_CTX_set_verify (openssl_lazy()->SSL_CTX_set_verify)
#define SSL_CTX_up_ref (openssl_lazy()->SSL_CTX_up_ref)
#define SSL_CTX_use_PrivateKey (openssl_lazy()->SSL_CTX_use_PrivateKey)
#define SSL_CTX_use_certificate (openssl_lazy()->SSL_CTX_use_certificate)
#define SSL_ctrl (openssl_lazy()->SSL_ctrl)
#define SSL_do_handshake (openssl_lazy()->SSL_do_handshake)
#define SSL_free (openssl_lazy()->SSL_free)
#define SSL_get0_alpn_selected (openssl_lazy()->SSL_get0_alpn_selected)
#define SSL_get0_param (openssl_lazy()->SSL_get0_param)
#define SSL_get_error (openssl_lazy()->SSL_get_error)
#define SSL_get_servername (openssl_lazy()->SSL_get_servername)
#define SSL_get_verify_result (openssl_lazy()->SSL_get_verify_result)
#define SSL_new (openssl_lazy()->SSL_new)
#define SSL_read (openssl_lazy()->SSL_read)
#define SSL_set_accept_state (openssl_lazy()->SSL_set_accept_state)
#define SSL_set_bio (openssl_lazy()->SSL_set_bio)
#define SSL_set_connect_state (openssl_lazy()->SSL_set_connect_state)
#define SSL_set_options (openssl_lazy()->SSL_set_options)
#define SSL_set_verify (openssl_lazy()->SSL_set_verify)
#define SSL_shutdown (openssl_lazy()->SSL_shutdown)
#define SSL_write (openssl_lazy()->SSL_write)
#define TLS_client_method (openssl_lazy()->TLS_client_method)
#define TLS_server_method (openssl_lazy()->TLS_server_method)
#define X509V3_EXT_conf_nid (openssl_lazy()->X509V3_EXT_conf_nid)
#define X509V3_set_ctx (openssl_lazy()->X509V3_set_ctx)
#define X509_EXTENSION_free (openssl_lazy()->X509_EXTENSION_free)
#define X509_NAME_add_entry_by_NID (openssl_lazy()->X509_NAME_add_entry_by_NID)
#define X509_STORE_add_cert (openssl_lazy()->X509_STORE_add_cert)
#define X509_VERIFY_PARAM_set1_host (openssl_lazy()->X509_VERIFY_PARAM_set1_host)
#define X509_VERIFY_PARAM_set1_ip_asc (openssl_lazy()->X509_VERIFY_PARAM_set1_ip_asc)
#define X509_VERIFY_PARAM_set_hostflags (openssl_lazy()->X509_VERIFY_PARAM_set_hostflags)
#define X509_add1_ext_i2d (openssl_lazy()->X509_add1_ext_i2d)
#define X509_add_ext (openssl_lazy()->X509_add_ext)
#define X509_check_private_key (openssl_lazy()->X509_check_private_key)
#define X509_cmp_current_time (openssl_lazy()->X509_cmp_current_time)
#define X509_free (openssl_lazy()->X509_free)
#define X509_get0_notAfter (openssl_lazy()->X509_get0_notAfter)
#define X509_get0_notBefore (openssl_lazy()->X509_get0_notBefore)
#define X509_get_extension_flags (openssl_lazy()->X509_get_extension_flags)
#define X509_get_key_usage (openssl_lazy()->X509_get_key_usage)
#define X509_get_serialNumber (openssl_lazy()->X509_get_serialNumber)
#define X509_get_subject_name (openssl_lazy()->X509_get_subject_name)
#define X509_getm_notAfter (openssl_lazy()->X509_getm_notAfter)
#define X509_getm_notBefore (openssl_lazy()->X509_getm_notBefore)
#define X509_gmtime_adj (openssl_lazy()->X509_gmtime_adj)
#define X509_new (openssl_lazy()->X509_new)
#define X509_set1_notAfter (openssl_lazy()->X509_set1_notAfter)
#define X509_set_issuer_name (openssl_lazy()->X509_set_issuer_name)
#define X509_set_pubkey (openssl_lazy()->X509_set_pubkey)
#define X509_set_version (openssl_lazy()->X509_set_version)
#define X509_sign (openssl_lazy()->X509_sign)
#define X509_verify_cert_error_string (openssl_lazy()->X509_verify_cert_error_string)
#define a2i_IPADDRESS (openssl_lazy()->a2i_IPADDRESS)
#endif

#endif
