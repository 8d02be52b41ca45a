/* SPDX-License-Identifier: MIT */
/*
 * Masked credentials put back into a forwarded request (proxy_config.cred):
 * the head (header values and target), the body, and a SigV4 signature
 * made with a sentinel secret, re-signed with the real one. Only for the
 * pairs whose injectHosts cover the request's host, chosen once per request.
 *
 * A body streams through the replacer when its framing survives that
 * (chunked, or every selected sentinel as long as its real value); else, and
 * for a SigV4 request whose signature covers its payload, the whole body is
 * read first (at most CRED_SIGV4_MAX_BODY) and the head goes after it, with
 * its Content-Length, payload hash and signature. Bodies with a
 * Content-Encoding pass as they are.
 */
#ifndef BPFBOX_PROXY_CRED_H
#define BPFBOX_PROXY_CRED_H

#include <stdbool.h>
#include <sys/types.h>

#include "proxy_conn.h"
#include "proxy_http.h"

/*
 * Before the upstream head is built from req: chooses the pairs for host
 * (plaintext: not inside terminated TLS), plans SigV4, and says in *fwd
 * how the body is framed upstream (body: as the client frames it). 0 to go
 * on, -1 when the client was answered (a SigV4 request refused, 413).
 */
int proxy_cred_begin(struct proxy_conn *c, const struct proxy_request *req, const char *host, bool plaintext,
		     const struct proxy_body *body, struct proxy_body *fwd);
/*
 * The head of n bytes at the start of c->up, sentinels replaced and, unless
 * the body is awaited, re-signed. The new length, or negative when the
 * client was answered (431: it no longer fits).
 */
ssize_t proxy_cred_head(struct proxy_conn *c, ssize_t n);
/* Has c a request body that goes through the replacer (proxy_cred_frame)? */
bool proxy_cred_frames(const struct proxy_conn *c);
/* Is the head held back until the whole body is read? */
bool proxy_cred_holding(const struct proxy_conn *c);
/*
 * The client's body bytes in c->in through the replacer into c->up.
 * 1 progress, 0 more input needed, 2 c->up is full, -1 the connection was
 * answered or closed.
 */
int proxy_cred_frame(struct proxy_conn *c);
/* Frees what c holds for its credentials, wiping what may be a real value. */
void proxy_cred_free(struct proxy_conn *c);

#endif
