/* SPDX-License-Identifier: MIT */
/* A client from its first byte to a relay: protocol negotiation, decision, dialling. */
#ifndef BPFBOX_PROXY_SESSION_H
#define BPFBOX_PROXY_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proxy_conn.h"

/* One step of work; true when it made progress. */
bool proxy_session_step(struct proxy_conn *c);
/* A resolution submitted with proxy_submit_resolve() has finished. */
void proxy_session_resolved(struct proxy_conn *c, struct proxy_rjob *job);
/* The connection's deadline passed. */
void proxy_session_timeout(struct proxy_conn *c);
/* Dials c->addrs[c->next_addr..c->naddrs), already decided and checked (for proxy_transparent.c). */
void proxy_session_dial(struct proxy_conn *c);

/*
 * The destination is reached (directly, or through the parent's tunnel):
 * tells the client and relays; early holds bytes the destination already
 * sent (after the parent's answer).
 */
void proxy_session_established(struct proxy_conn *c, const void *early, size_t n);
/* The upstream could not be reached: the answer the client's protocol expects. */
void proxy_session_upstream_failed(struct proxy_conn *c, int err, const char *msg);
/*
 * A forwarded HTTP head of n bytes in c->up, rewritten for an HTTP parent
 * (absolute-form, Proxy-Authorization); n unchanged without one. Negative
 * when it does not fit (the client has been answered).
 */
ssize_t proxy_session_parent_head(struct proxy_conn *c, ssize_t n);
/* A decided connection goes to the parent proxy when there is one: its addresses replace the destination's. */
bool proxy_session_use_parent(struct proxy_conn *c);

/* proxy_transparent.c: a redirected connection's first bytes, its decision and dial. */
bool proxy_transparent_sniff(struct proxy_conn *c);
void proxy_transparent_timeout(struct proxy_conn *c);

#endif
