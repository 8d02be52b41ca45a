/* SPDX-License-Identifier: MIT */
/*
 * Chaining to the host's proxy (proxy_config.parent): once a connection is
 * decided and the parent is dialled, the handshake that makes the parent
 * reach the destination by name (HTTP CONNECT, or SOCKS5 CONNECT with
 * optional username/password), and the rewrite of a forwarded plain HTTP
 * request into the absolute form the parent expects.
 */
#ifndef BPFBOX_PROXY_PARENT_H
#define BPFBOX_PROXY_PARENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proxy_conn.h"

/* The CONNECT request for host (canonical, IPv6 without brackets) and port; -ENOSPC. */
ssize_t proxy_parent_connect_request(const char *host, unsigned port, const char *authorization, char *out,
				     size_t cap);
/*
 * The parent's answer to CONNECT: the head's length with *status set, 0 when
 * incomplete, -EINVAL when it is no HTTP/1.x status line.
 */
ssize_t proxy_parent_http_reply(const char *buf, size_t len, unsigned *status);
/*
 * A SOCKS5 CONNECT request for host: literals as addresses, names as
 * ATYP 3 (the parent resolves). Returns its length; -EINVAL (name too
 * long), -ENOSPC.
 */
ssize_t proxy_parent_socks5_connect(const char *host, unsigned port, unsigned char *out, size_t cap);
/*
 * The parent's SOCKS5 CONNECT reply: its length with *rep set, 0 when
 * incomplete, -EINVAL when malformed.
 */
ssize_t proxy_parent_socks5_reply(const unsigned char *buf, size_t len, unsigned *rep);
/*
 * Rewrites an origin-form head built by proxy_build_upstream_head (len
 * bytes in a buffer of cap) into absolute-form for an HTTP parent, with its
 * Proxy-Authorization when given. New length, or -ENOSPC.
 */
ssize_t proxy_parent_absolute(char *head, size_t len, size_t cap, const char *host, unsigned port,
			      const char *authorization);

/*
 * A forwarded HTTP head of n bytes in c->up, rewritten for an HTTP parent
 * (absolute-form, Proxy-Authorization); n unchanged without one. Negative
 * when it does not fit (the client has been answered).
 */
ssize_t proxy_parent_head(struct proxy_conn *c, ssize_t n);
/*
 * The parent is connected: starts its handshake (PS_PARENT), or, for a
 * forwarded HTTP request through an HTTP parent, needs none. Returns true
 * when the connection is ready to relay now.
 */
bool proxy_parent_begin(struct proxy_conn *c);
/* One step of the handshake; true when it made progress. */
bool proxy_parent_step(struct proxy_conn *c);

#endif
