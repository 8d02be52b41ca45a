/* SPDX-License-Identifier: MIT */
/*
 * TLS termination: an allowed tunnel (CONNECT, SOCKS, a redirected TLS
 * connection with a name) is ended here instead of relayed, and each
 * request read inside it is checked and decided like a plain HTTP one.
 */
#ifndef BPFBOX_PROXY_TERMINATE_H
#define BPFBOX_PROXY_TERMINATE_H

#include <stddef.h>

#include "proxy_conn.h"

/*
 * A tunnel to the decided c->host and c->port (name: what the client's
 * TLS asked for, NULL when the tunnel is not known to be TLS or carries no
 * name). 1: terminated here, the connection now reads a request inside the
 * TLS; 0: relayed as an opaque tunnel, as without termination; -1: refused
 * and answered (too many tunnels, refuseOpaqueTunnels, a failure).
 */
int proxy_terminate_tunnel(struct proxy_conn *c, const char *name);
/* PS_THEAD: c->in holds a whole request head of head bytes. */
void proxy_terminate_head(struct proxy_conn *c, size_t head);
/* Why a terminated client went away before its request was complete. */
const char *proxy_terminate_client_gone(const struct proxy_conn *c);
/* TRACE and TRACK are refused (405) whatever the policy: they echo credentials back. */
bool proxy_method_refused(const char *method);

#endif
