/* SPDX-License-Identifier: MIT */
/*
 * The name a TLS client asks for: the server_name of its ClientHello
 * (RFC 8446 4.1.2, RFC 6066 3). With Encrypted Client Hello only the outer
 * name is visible, and that is the name decided.
 */
#ifndef BPFBOX_PROXY_TLS_H
#define BPFBOX_PROXY_TLS_H

#include <stddef.h>

/* The largest ClientHello read (handshake message bytes, across records). */
#define PROXY_TLS_HELLO_MAX 16384

/*
 * Reads the first bytes of a connection. Returns 1 when a whole ClientHello
 * was read: name holds its host_name in lower case, or "" when it carries
 * none; 0 when more bytes are needed; -EINVAL when the bytes are not a
 * well-formed ClientHello (or one larger than PROXY_TLS_HELLO_MAX); -ENAMETOOLONG
 * when name is too small. The name is checked: 1-253 bytes of letters,
 * digits, '-', '_' and '.', no empty label, a trailing dot dropped.
 */
int proxy_tls_sni(const unsigned char *b, size_t len, char *name, size_t cap);

/* A fuzzing entry point: the parser on arbitrary bytes. Returns 0. */
int proxy_tls_fuzz_one(const unsigned char *b, size_t len);

#endif
