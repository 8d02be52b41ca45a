/* SPDX-License-Identifier: MIT */
/*
 * Putting a connection's socket behind a TLS bridge: the bridge takes the
 * socket, the connection keeps the plaintext end in its place, and the
 * loop's epoll set follows. Below the upstream and the relay, which use it.
 */
#ifndef BPFBOX_PROXY_TLS_WRAP_H
#define BPFBOX_PROXY_TLS_WRAP_H

#include <stddef.h>

#include "proxy_conn.h"

/*
 * tlsTerminate's bounds in force now: the config's bounds callback (a live
 * policy may change them), else its fields. Loop thread.
 */
void proxy_tls_bounds(const struct proxy *p, unsigned *max_tunnels, unsigned *handshake_ms);
/*
 * The client's side: preface goes out in the clear first (a CONNECT's 200,
 * a SOCKS reply), c->in holds bytes already read (a ClientHello), the
 * handshake presents a leaf for c->tunnel within handshake_ms. Negative errno.
 */
int proxy_tls_wrap_client(struct proxy_conn *c, const void *preface, size_t n, unsigned handshake_ms);
/* The upstream's side: verified against c->tunnel. Negative errno. */
int proxy_tls_wrap_upstream(struct proxy_conn *c);
/* Why a bridge failed (its handshake, its verification), or NULL. */
const char *proxy_tls_wrap_error(const struct proxy_conn *c, bool upstream);

#endif
