/* SPDX-License-Identifier: MIT */
/*
 * The cipher suites bpfbox prefers on both legs of a terminated tunnel.
 *
 * AES-128-GCM first: the leaves' P-256 keys (and the ephemeral CA's) give
 * 128-bit security, so AES-256 buys nothing on these legs, and where AES runs
 * without the CPU's instructions it costs up to twice as much per byte (under
 * QEMU's TCG: 51 against 27 MB/s). BoringSSL and Go order them the same way.
 * Every suite of OpenSSL's default set stays offered; only the order changes.
 */
#ifndef BPFBOX_TLS_SUITES_H
#define BPFBOX_TLS_SUITES_H

/* TLS 1.3 (SSL_CTX_set_ciphersuites), for the client side and the leaves. */
#define TLS_SUITES_13 "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"

/*
 * TLS 1.2 on the leaves (SSL_CTX_set_cipher_list): their keys are ECDSA, so
 * the ECDSA AEAD suites in the same order, then OpenSSL's defaults for older
 * clients (a suite already listed keeps its place).
 */
#define TLS_SUITES_12_LEAF \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES256-GCM-SHA384:DEFAULT"

#endif
