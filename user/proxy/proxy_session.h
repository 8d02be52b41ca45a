/* SPDX-License-Identifier: MIT */
/* A client from its first byte to a relay: the step of each state, and its timeout. */
#ifndef BPFBOX_PROXY_SESSION_H
#define BPFBOX_PROXY_SESSION_H

#include <stdbool.h>

#include "proxy_conn.h"

/* One step of work; true when it made progress. */
bool proxy_session_step(struct proxy_conn *c);
/* The connection's deadline passed. */
void proxy_session_timeout(struct proxy_conn *c);
/* The policy changed: closes a decided connection whose name is now denied (event: policy-revoked). */
void proxy_session_recheck(struct proxy_conn *c);

#endif
