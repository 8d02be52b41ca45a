/* SPDX-License-Identifier: MIT */
/* Relaying an established connection: byte pipes with half-close, HTTP body framing. */
#ifndef BPFBOX_PROXY_RELAY_H
#define BPFBOX_PROXY_RELAY_H

#include <stdbool.h>
#include <stddef.h>

#include "proxy_conn.h"

int proxy_relay_alloc(struct proxy_conn *c);
int proxy_relay_begin(struct proxy_conn *c);
bool proxy_relay_step(struct proxy_conn *c);
bool proxy_flush_client(struct proxy_conn *c);
bool proxy_linger_step(struct proxy_conn *c);

#endif
