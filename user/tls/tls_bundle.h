/* SPDX-License-Identifier: MIT */
/*
 * The trust bundle a terminated sandbox reads: the system CAs and the
 * sandbox's CA in one file, and the environment variables that point the
 * usual tools at it.
 */
#ifndef BPFBOX_TLS_BUNDLE_H
#define BPFBOX_TLS_BUNDLE_H

#include <stddef.h>

/*
 * The environment variables srt points at the trust bundle, in this order:
 * NODE_EXTRA_CA_CERTS SSL_CERT_FILE CURL_CA_BUNDLE REQUESTS_CA_BUNDLE PIP_CERT
 * GIT_SSL_CAINFO AWS_CA_BUNDLE CARGO_HTTP_CAINFO DENO_CERT
 * CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE NIX_SSL_CERT_FILE; then npm's
 * npm_config_cafile, which srt does not set.
 */
#define TLS_BUNDLE_NENV 12
extern const char *const tls_bundle_env[TLS_BUNDLE_NENV];

/*
 * Writes name inside the directory dirfd (openat
 * O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0444 whatever the
 * umask): the system CAs (the first readable of
 * /etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt; none
 * is fine) followed by ca_pem. name is one path component (-EINVAL
 * otherwise); an existing file or link there is -EEXIST. On any failure the
 * partial file is unlinked. Negative errno.
 */
int tls_bundle_write_at(int dirfd, const char *name, const char *ca_pem, size_t ca_len);

#endif
