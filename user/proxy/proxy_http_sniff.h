/* SPDX-License-Identifier: MIT */
/*
 * What the first bytes of a redirected connection are, read as leniently as
 * HTTP servers read a request (Python's http.server, nginx, Node's llhttp):
 * empty lines before the request line, any run of whitespace between its
 * words, a trailing space, a request line longer than the buffer. Whatever
 * may be an HTTP request is classed HTTP, so that it is decided by its Host
 * or refused; only bytes no server would read as a request go on by address.
 */
#ifndef BPFBOX_PROXY_HTTP_SNIFF_H
#define BPFBOX_PROXY_HTTP_SNIFF_H

#include <stddef.h>

enum proxy_sniff {
	PROXY_SNIFF_MORE,  /* too few bytes to tell: wait for more */
	PROXY_SNIFF_TLS,   /* a TLS record: read the ClientHello */
	PROXY_SNIFF_HTTP,  /* may be an HTTP request: parse strictly, decide by Host or refuse */
	PROXY_SNIFF_OTHER, /* no server reads this as an HTTP request */
};

/*
 * Classes the first len bytes of a connection whose sniff buffer holds cap.
 * A full buffer never answers PROXY_SNIFF_MORE, and never PROXY_SNIFF_OTHER
 * while what it holds may still become a request line.
 */
enum proxy_sniff proxy_http_sniff(const char *b, size_t len, size_t cap);

/*
 * Rewrites bytes classed PROXY_SNIFF_HTTP in place to the strict form the
 * request parser reads: leading empty lines dropped, and a request line of
 * three words ending in CRLF rewritten as "METHOD SP target SP version CRLF".
 * Anything else is left as it is (and the strict parser refuses it).
 * Returns the new length (never more than len).
 */
size_t proxy_http_sniff_normalize(char *b, size_t len);

/* A fuzzing entry point: both functions on arbitrary bytes, checked. Returns 0. */
int proxy_http_sniff_fuzz_one(const unsigned char *b, size_t len);

#endif
