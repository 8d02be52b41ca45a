/* SPDX-License-Identifier: MIT */
/*
 * A decided connection's way to its upstream: what the explicit proxy
 * (proxy_session.c), the transparent path (proxy_transparent.c) and the
 * parent's handshake (proxy_parent.c) share, below all three.
 */
#ifndef BPFBOX_PROXY_UPSTREAM_H
#define BPFBOX_PROXY_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "proxy_conn.h"

/*
 * The proxy a decided host goes through: mitmProxy's when it routes the
 * name, else the parent's unless the host is local; NULL: none.
 */
const struct proxy_parent *proxy_parent_for(struct proxy *p, const char *host, unsigned port);
/* What a failed dial was, for the event: "connect", "connect to the parent proxy" or "... MITM proxy". */
const char *proxy_upstream_dial_what(const struct proxy_conn *c);
/* A decided connection goes to its parent proxy when there is one: its addresses replace the destination's. */
bool proxy_upstream_use_parent(struct proxy_conn *c);
/*
 * Reaches the decided c->host and c->port: through the parent, a literal
 * as decided, or a name resolved first (proxy_upstream_resolved).
 */
void proxy_upstream_connect(struct proxy_conn *c);
/* A resolution submitted by proxy_upstream_connect has finished: each address guarded, then dialled. */
void proxy_upstream_resolved(struct proxy_conn *c, struct proxy_rjob *job);
/* A redirected connection: where it was going, or the parent when there is one. */
void proxy_upstream_dial_orig(struct proxy_conn *c);
/* Dials c->addrs[c->next_addr..c->naddrs), already decided and checked. */
void proxy_upstream_dial(struct proxy_conn *c);
/*
 * The dial's outcome once the socket is writable: 1 connected, 0 not yet
 * (waits for the next edge), -1 failed (the next address was dialled, or
 * the client answered).
 */
int proxy_upstream_connect_result(struct proxy_conn *c);
/*
 * The destination is reached (directly, or through the parent's tunnel):
 * tells the client and relays; early holds bytes the destination already
 * sent (after the parent's answer).
 */
void proxy_upstream_established(struct proxy_conn *c, const void *early, size_t n);
/*
 * The upstream could not be reached: the answer the client's protocol
 * expects; what, with err's text unless err is 0, becomes the event's error.
 */
void proxy_upstream_failed(struct proxy_conn *c, int err, const char *what);

#endif
