/* SPDX-License-Identifier: MIT */
/* Connections the kernel redirected to the proxy: their first bytes, decision and dial. */
#ifndef BPFBOX_PROXY_TRANSPARENT_H
#define BPFBOX_PROXY_TRANSPARENT_H

#include <stdbool.h>

#include "proxy_conn.h"

/* The first bytes so far (PS_TSNIFF); true when it made progress. */
bool proxy_transparent_sniff(struct proxy_conn *c);
/* No complete first bytes within the sniff time. */
void proxy_transparent_timeout(struct proxy_conn *c);

#endif
