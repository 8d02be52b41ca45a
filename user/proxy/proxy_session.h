/* SPDX-License-Identifier: MIT */
/* A client from its first byte to a relay: protocol negotiation, decision, dialling. */
#ifndef BPFBOX_PROXY_SESSION_H
#define BPFBOX_PROXY_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "proxy_conn.h"

/* One step of work; true when it made progress. */
bool proxy_session_step(struct proxy_conn *c);
/* A resolution submitted with proxy_submit_resolve() has finished. */
void proxy_session_resolved(struct proxy_conn *c, struct proxy_rjob *job);
/* The connection's deadline passed. */
void proxy_session_timeout(struct proxy_conn *c);
/* Dials c->addrs[c->next_addr..c->naddrs), already decided and checked (for proxy_transparent.c). */
void proxy_session_dial(struct proxy_conn *c);

/* proxy_transparent.c: a redirected connection's first bytes, its decision and dial. */
bool proxy_transparent_sniff(struct proxy_conn *c);
void proxy_transparent_timeout(struct proxy_conn *c);

#endif
