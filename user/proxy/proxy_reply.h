/* SPDX-License-Identifier: MIT */
/* The proxy's own answers to a client (errors, refusals, SOCKS replies). */
#ifndef BPFBOX_PROXY_REPLY_H
#define BPFBOX_PROXY_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "proxy_conn.h"

void proxy_reply_http(struct proxy_conn *c, unsigned status, const char *reason,
		      const char *proxy_error, const char *body, const char *error);
/* Queues bytes for the client; then_close: nothing follows, the upstream is dropped. */
void proxy_reply_bytes(struct proxy_conn *c, const void *b, size_t n, int status,
		       const char *error, bool then_close);
/* A SOCKS reply in the client's version; rep is a SOCKS5 code (SOCKS4 says granted or rejected). */
void proxy_reply_socks(struct proxy_conn *c, unsigned char rep, const char *error, bool then_close);

#endif
