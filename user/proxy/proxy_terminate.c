// SPDX-License-Identifier: MIT
/*
 * Ending an allowed tunnel's TLS in the proxy (srt's tlsTerminate). The
 * client gets a leaf for the name it asked for; each request inside is
 * read as a plain HTTP one, must carry that same name in Host (a fronted
 * request on a shared address is refused, 421), is decided again, and goes
 * on over TLS the proxy verifies itself. One request per connection, as
 * for plain HTTP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxy_cred.h"
#include "proxy_relay.h"
#include "proxy_reply.h"
#include "proxy_socks.h"
#include "proxy_terminate.h"
#include "proxy_tls_wrap.h"
#include "proxy_upstream.h"
#include "tls/tls_bridge.h"

#define XERR_OPAQUE "opaque-tunnel"
#define XERR_TUNNELS "too-many-tunnels"
#define XERR_HOST "host-mismatch"

bool proxy_method_refused(const char *method)
{
	return !strcmp(method, "TRACE") || !strcmp(method, "TRACK");
}

/* A tunnel refused before it began: the answer the client's protocol expects. */
static void refuse_tunnel(struct proxy_conn *c, unsigned status, const char *reason,
			  const char *xerr, const char *error)
{
	char body[96];

	if (c->transparent) {
		proxy_conn_close(c, error);
	} else if (proxy_conn_is_socks(c)) {
		proxy_reply_socks(c, SOCKS5_REP_FAIL, error, true);
	} else {
		snprintf(body, sizeof(body), "Connection blocked by sandbox runtime: %s", error);
		proxy_reply_http(c, status, reason, xerr, body, error);
	}
}

/* What the client is told before its TLS begins: its protocol's "connected". */
static size_t preface(const struct proxy_conn *c, unsigned char *b)
{
	static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

	if (c->transparent)
		return 0;
	if (c->proto == PP_SOCKS5)
		return proxy_socks5_reply(b, SOCKS5_REP_OK);
	if (c->proto == PP_SOCKS4)
		return proxy_socks4_reply(b, SOCKS4_REP_OK);
	memcpy(b, ok, sizeof(ok) - 1);
	return sizeof(ok) - 1;
}

int proxy_terminate_tunnel(struct proxy_conn *c, const char *name)
{
	const struct proxy_config *cfg = proxy_cfg(c->p);
	const struct proxy_tls *t = cfg->tls;
	unsigned char pre[64];
	unsigned max_tunnels, handshake_ms;
	size_t n;
	int err;

	if (!t || (c->transparent && !name) || !t->terminates(cfg->ctx, c->host, c->port)) {
		if (!cfg->rules.refuse_opaque_tunnels)
			return 0;
		c->allowed = false;
		snprintf(c->rule, sizeof(c->rule), "refuseOpaqueTunnels");
		refuse_tunnel(c, 403, "Forbidden", XERR_OPAQUE, "a tunnel that is not inspected");
		return -1;
	}
	/* The bounds in force now: a lowered maxTunnels refuses new tunnels, cuts none. */
	proxy_tls_bounds(c->p, &max_tunnels, &handshake_ms);
	/* Two bridges a tunnel (the client's and the upstream's), the threads of ended tunnels among them. */
	if (c->p->ntunnels >= max_tunnels || tls_bridge_live() >= 2ULL * max_tunnels) {
		refuse_tunnel(c, 503, "Service Unavailable", XERR_TUNNELS,
			      "too many terminated TLS tunnels (tlsTerminate.maxTunnels)");
		return -1;
	}
	snprintf(c->tunnel, sizeof(c->tunnel), "%s", c->host);
	c->tunnel_port = c->port;
	n = preface(c, pre);
	err = proxy_tls_wrap_client(c, pre, n, handshake_ms);
	if (err) {
		/* The client's socket went with the bridge: nothing can be answered. */
		snprintf(c->error, sizeof(c->error), "TLS termination failed to start: %s", strerror(-err));
		proxy_conn_close(c, NULL);
		return -1;
	}
	c->p->ntunnels++;
	c->tunnel_counted = true;
	c->terminated = true;
	c->proto = PP_HTTP;
	c->status = 0;
	c->head_scan = 0;
	c->st = PS_THEAD;
	c->deadline = proxy_now(c->p) + handshake_ms + proxy_idle_ms(c->p);
	return 1;
}

const char *proxy_terminate_client_gone(const struct proxy_conn *c)
{
	const char *why = proxy_tls_wrap_error(c, false);

	return why ? why : "client closed before completing its request";
}

/* 1 when Host names the tunnel; 0 when answered (missing, repeated, malformed, another name). */
static int host_is_tunnel(struct proxy_conn *c, const struct proxy_request *req)
{
	const struct proxy_config *cfg = proxy_cfg(c->p);
	struct proxy_authority auth;
	struct proxy_span host;
	char canon[PROXY_HOST_MAX], msg[sizeof(c->error)];
	const char *why = NULL;
	int rc = proxy_request_host(req, &host);

	if (rc == 0 && req->minor == 0)
		return 1;	/* HTTP/1.0 may omit Host: the tunnel's name is the request's */
	if (rc <= 0 || proxy_parse_authority(host.p, host.n, c->tunnel_port, &auth) ||
	    cfg->canonicalise(auth.host, canon, sizeof(canon), &why) < 0) {
		proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request", "missing, repeated or malformed Host");
		return 0;
	}
	if (!strcmp(canon, c->tunnel) && auth.port == c->tunnel_port)
		return 1;
	c->allowed = false;
	snprintf(c->rule, sizeof(c->rule), "tlsTerminate:host-mismatch");
	snprintf(msg, sizeof(msg), "Host %.100s:%u inside TLS for %.100s:%u", canon, auth.port, c->tunnel,
		 c->tunnel_port);
	proxy_reply_http(c, 421, "Misdirected Request", XERR_HOST,
			 "Misdirected Request: Host does not name the TLS connection's server", msg);
	return 0;
}

/* 1 allowed; 0 refused and answered. */
static int decide(struct proxy_conn *c)
{
	const struct proxy_config *cfg = proxy_cfg(c->p);
	struct proxy_decision d = { 0 };

	cfg->decide(cfg->ctx, c->tunnel, c->tunnel_port, &d);
	c->allowed = d.allow;
	snprintf(c->rule, sizeof(c->rule), "%s", d.rule ? d.rule : "");
	snprintf(c->reason, sizeof(c->reason), "%s", d.reason ? d.reason : "");
	if (d.allow)
		return 1;
	proxy_reply_http(c, 403, "Forbidden", PROXY_XERR_ALLOWLIST, PROXY_BODY_ALLOWLIST, "denied by policy");
	return 0;
}

/* The request goes on: rebuilt for the tunnel's server, dialled, verified once connected. */
static void forward(struct proxy_conn *c, const struct proxy_request *req, size_t head)
{
	struct proxy_url url;
	struct proxy_body body, fwd;
	ssize_t n;

	if (proxy_request_framing(req, &body)) {
		proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request",
				 "ambiguous or unsupported request body framing");
		return;
	}
	if (!decide(c))
		return;
	memset(&url, 0, sizeof(url));
	snprintf(url.auth.host, sizeof(url.auth.host), "%s", c->tunnel);
	url.auth.port = c->tunnel_port;
	url.default_port = 443;
	url.path = req->target;
	if (proxy_relay_alloc(c)) {
		proxy_conn_close(c, "out of memory");
		return;
	}
	if (proxy_cred_begin(c, req, c->tunnel, false, &body, &fwd))
		return;
	n = proxy_build_upstream_head(req, &url, c->tunnel, &fwd, c->up.data, c->up.cap);
	if (n < 0) {
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL,
				 "Request Header Fields Too Large", "rebuilt request too large");
		return;
	}
	n = proxy_cred_head(c, n);
	if (n < 0)
		return;
	c->up.off = 0;
	c->up.len = (size_t)n;
	c->body = body;
	c->body_done = body.kind == PROXY_BODY_NONE || (body.kind == PROXY_BODY_LENGTH && !body.length);
	memmove(c->in.data, c->in.data + head, c->in.len - head);
	c->in.len -= head;
	snprintf(c->host, sizeof(c->host), "%s", c->tunnel);
	c->port = c->tunnel_port;
	if (c->transparent)
		proxy_upstream_dial_orig(c);
	else
		proxy_upstream_connect(c);
}

void proxy_terminate_head(struct proxy_conn *c, size_t head)
{
	struct proxy_request *req = malloc(sizeof(*req));

	if (!req) {
		proxy_conn_close(c, "out of memory");
		return;
	}
	if (proxy_parse_request(c->in.data, head, req)) {
		proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request", "malformed request head");
		goto out;
	}
	snprintf(c->method, sizeof(c->method), "%.*s", (int)req->method.n, req->method.p);
	if (proxy_method_refused(c->method)) {
		proxy_reply_http(c, 405, "Method Not Allowed", "method-not-allowed", "Method Not Allowed",
				 "TRACE and TRACK are refused");
		goto out;
	}
	/* Inside TLS a request names its server by Host alone: other targets are not what was decided. */
	if (!req->target.n || req->target.p[0] != '/') {
		proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request",
				 "not an origin-form request inside TLS");
		goto out;
	}
	if (host_is_tunnel(c, req))
		forward(c, req, head);
out:
	free(req);
}
