// SPDX-License-Identifier: MIT
/*
 * One explicit client's way from its first byte to a decision: protocol
 * sniffing, HTTP and SOCKS negotiation, the policy decision and the answers
 * to malformed or refused requests. proxy_upstream.c takes a decided
 * connection on; proxy_session_step runs the step of every state, the
 * transparent path's, the parent's and the relay's included.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy_conn.h"
#include "proxy_cred.h"
#include "proxy_parent.h"
#include "proxy_relay.h"
#include "proxy_reply.h"
#include "proxy_session.h"
#include "proxy_socks.h"
#include "proxy_terminate.h"
#include "proxy_transparent.h"
#include "proxy_upstream.h"

#define LINGER_MS 2000

static void set_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static void consume(struct proxy_buf *b, size_t n)
{
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

static void reply_bad_request(struct proxy_conn *c, const char *why)
{
	if (proxy_conn_is_socks(c))
		proxy_reply_socks(c, SOCKS5_REP_DENIED, why, true);
	else
		proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request", why);
}

static void reply_denied(struct proxy_conn *c)
{
	char reason[sizeof(c->reason)];

	if (proxy_conn_is_socks(c)) {
		proxy_reply_socks(c, SOCKS5_REP_DENIED, "denied by policy", true);
		return;
	}
	/* CONNECT shows the policy's reason phrase; a plain request says Forbidden. */
	proxy_sanitise_reason(c->proto == PP_CONNECT ? c->reason : NULL, reason, sizeof(reason));
	proxy_reply_http(c, 403, reason, PROXY_XERR_ALLOWLIST, PROXY_BODY_ALLOWLIST,
			 "denied by policy");
}

/* 1 allowed, 0 denied (answered), negative malformed (answered). */
static int canon_and_decide(struct proxy_conn *c, const char *host, unsigned port)
{
	const struct proxy_config *cfg = proxy_cfg(c->p);
	struct proxy_decision d = { 0 };
	char canon[PROXY_HOST_MAX];
	const char *err = NULL;

	set_str(c->host, sizeof(c->host), host);
	c->port = port;
	if (cfg->canonicalise(host, canon, sizeof(canon), &err) < 0 || !canon[0]) {
		reply_bad_request(c, err ? err : "malformed host");
		return -EINVAL;
	}
	set_str(c->host, sizeof(c->host), canon);
	cfg->decide(cfg->ctx, canon, port, &d);
	c->allowed = d.allow;
	set_str(c->rule, sizeof(c->rule), d.rule);
	set_str(c->reason, sizeof(c->reason), d.reason);
	if (!d.allow) {
		reply_denied(c);
		return 0;
	}
	set_str(c->decided, sizeof(c->decided), canon);
	c->decided_port = port;
	return 1;
}

static void handle_connect(struct proxy_conn *c, const struct proxy_request *req, size_t head)
{
	struct proxy_authority auth;

	c->proto = PP_CONNECT;
	if (proxy_parse_authority(req->target.p, req->target.n, 0, &auth)) {
		/* Logged as sent (visible ASCII only, the parser saw to that). */
		snprintf(c->host, sizeof(c->host), "%.*s", (int)req->target.n, req->target.p);
		reply_bad_request(c, "malformed CONNECT target");
		return;
	}
	/* Bytes after the head are early tunnel data (e.g. a TLS ClientHello). */
	consume(&c->in, head);
	if (canon_and_decide(c, auth.host, auth.port) == 1 && proxy_terminate_tunnel(c, c->host) == 0)
		proxy_upstream_connect(c);
}

/* requireHostMatch: a forwarded request's Host names its URL's authority. 1 yes; 0 answered. */
static int host_matches_url(struct proxy_conn *c, const struct proxy_request *req,
			    const struct proxy_url *url)
{
	const struct proxy_config *cfg = proxy_cfg(c->p);
	struct proxy_authority auth;
	struct proxy_span host;
	char canon[PROXY_HOST_MAX];
	const char *why = NULL;
	int rc;

	if (!cfg->rules.require_host_match)
		return 1;
	rc = proxy_request_host(req, &host);
	if (rc == 0)
		return 1;	/* no Host: the URL alone names the server, as it is sent on */
	if (rc > 0 && !proxy_parse_authority(host.p, host.n, url->auth.port, &auth) &&
	    cfg->canonicalise(auth.host, canon, sizeof(canon), &why) == 0 &&
	    !strcmp(canon, c->host) && auth.port == url->auth.port)
		return 1;
	c->allowed = false;
	snprintf(c->rule, sizeof(c->rule), "requireHostMatch");
	proxy_reply_http(c, 421, "Misdirected Request", "host-mismatch",
			 "Misdirected Request: Host does not name the request's server",
			 "Host differs from the request's target");
	return 0;
}

static void handle_forward(struct proxy_conn *c, const struct proxy_request *req, size_t head)
{
	struct proxy_url url;
	struct proxy_body body, fwd;
	ssize_t n;
	int rc;

	c->proto = PP_HTTP;
	rc = proxy_parse_absolute_url(req->target, &url);
	if (rc == -EBADMSG && req->target.n > 7 && !strncasecmp(req->target.p, "http://", 7)) {
		/*
		 * srt's ambiguousRequestTarget: an authority two parsers could read
		 * differently (userinfo, a malformed host or port) is never forwarded,
		 * whichever way the policy asks; a path is sent as spelled, decisions
		 * never read it.
		 */
		snprintf(c->host, sizeof(c->host), "%.*s", (int)req->target.n, req->target.p);
		proxy_reply_http(c, 400, "Bad Request", "ambiguous-request-target", "Bad Request",
				 "ambiguous request target");
		return;
	}
	if (rc) {
		snprintf(c->host, sizeof(c->host), "%.*s", (int)req->target.n, req->target.p);
		reply_bad_request(c, rc == -EPROTONOSUPPORT ? "unsupported URL scheme" :
				     req->target.p[0] == '/' ? "not a proxy request (origin-form)" :
				     "malformed request target");
		return;
	}
	if (proxy_request_framing(req, &body)) {
		reply_bad_request(c, "ambiguous or unsupported request body framing");
		return;
	}
	if (proxy_method_refused(c->method)) {
		proxy_reply_http(c, 405, "Method Not Allowed", "method-not-allowed", "Method Not Allowed",
				 "TRACE and TRACK are refused");
		return;
	}
	if (canon_and_decide(c, url.auth.host, url.auth.port) != 1 || !host_matches_url(c, req, &url))
		return;
	if (proxy_relay_alloc(c)) {
		proxy_conn_close(c, "out of memory");
		return;
	}
	if (proxy_cred_begin(c, req, c->host, true, &body, &fwd))
		return;
	n = proxy_build_upstream_head(req, &url, c->host, &fwd, c->up.data, c->up.cap);
	if (n < 0) {
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL,
				 "Request Header Fields Too Large", "rebuilt request too large");
		return;
	}
	n = proxy_cred_head(c, n);
	if (n >= 0)
		n = proxy_parent_head(c, n);
	if (n < 0)
		return;
	c->up.off = 0;
	c->up.len = (size_t)n;
	c->body = body;
	c->body_done = body.kind == PROXY_BODY_NONE ||
		       (body.kind == PROXY_BODY_LENGTH && !body.length);
	consume(&c->in, head);
	proxy_upstream_connect(c);
}

static void handle_http_head(struct proxy_conn *c, size_t head)
{
	struct proxy_request *req = malloc(sizeof(*req));
	int rc;

	if (!req) {
		proxy_conn_close(c, "out of memory");
		return;
	}
	rc = proxy_parse_request(c->in.data, head, req);
	if (rc == -E2BIG) {
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL,
				 "Request Header Fields Too Large", "too many header fields");
	} else if (rc) {
		reply_bad_request(c, "malformed request head");
	} else {
		snprintf(c->method, sizeof(c->method), "%.*s", (int)req->method.n, req->method.p);
		/* Methods are case-sensitive: "connect" is some other method. */
		if (req->method.n == 7 && !memcmp(req->method.p, "CONNECT", 7))
			handle_connect(c, req, head);
		else
			handle_forward(c, req, head);
	}
	free(req);
}

static void socks_target(struct proxy_conn *c, const struct proxy_socks_req *r, size_t used)
{
	set_str(c->method, sizeof(c->method), "CONNECT");
	consume(&c->in, used);
	if (canon_and_decide(c, r->host, r->port) == 1 && proxy_terminate_tunnel(c, c->host) == 0)
		proxy_upstream_connect(c);
}

/* Parses whatever complete messages the client has sent. Returns progress. */
static bool negotiate(struct proxy_conn *c)
{
	const unsigned char *b = (const unsigned char *)c->in.data;
	struct proxy_socks_req r;
	unsigned char rep;
	ssize_t n;
	bool noauth;

	switch (c->st) {
	case PS_SNIFF:
		if (!c->in.len)
			return false;
		/* The first byte tells the protocol: 5 and 4 are never an HTTP method. */
		c->st = b[0] == 5 ? PS_SOCKS5_GREET : b[0] == 4 ? PS_SOCKS4 : PS_HTTP_HEAD;
		c->proto = b[0] == 5 ? PP_SOCKS5 : b[0] == 4 ? PP_SOCKS4 : PP_HTTP;
		return true;
	case PS_HTTP_HEAD:
	case PS_THEAD:
		n = proxy_head_end(c->in.data, c->in.len, &c->head_scan);
		if (n < 0) {
			reply_bad_request(c, "bare CR, bare LF or NUL in request head");
		} else if (!n) {
			if (c->in.len < c->in.cap)
				return false;
			proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL,
					 "Request Header Fields Too Large",
					 "request head too large");
		} else if (c->st == PS_THEAD) {
			proxy_terminate_head(c, (size_t)n);
		} else {
			handle_http_head(c, (size_t)n);
		}
		return true;
	case PS_SOCKS5_GREET:
		n = proxy_socks5_greeting(b, c->in.len, &noauth);
		if (!n)
			return false;
		if (n < 0) {
			proxy_conn_close(c, "malformed SOCKS5 greeting");
			return false;
		}
		consume(&c->in, (size_t)n);
		if (!noauth) {
			proxy_reply_bytes(c, "\x05\xff", 2, 0xff,
					  "no acceptable SOCKS5 auth method", true);
			return true;
		}
		proxy_reply_bytes(c, "\x05\x00", 2, 0, NULL, false);
		c->st = PS_SOCKS5_REQ;
		return true;
	case PS_SOCKS5_REQ:
		n = proxy_socks5_request(b, c->in.len, &r, &rep);
		if (!n)
			return false;
		set_str(c->method, sizeof(c->method), r.cmd == 1 ? "CONNECT" :
			r.cmd == 2 ? "BIND" : r.cmd == 3 ? "UDP ASSOCIATE" : "?");
		if (n < 0) {
			set_str(c->host, sizeof(c->host), r.host);
			c->port = r.port;
			proxy_reply_socks(c, rep, rep == SOCKS5_REP_CMD ? "unsupported SOCKS5 command" :
					  rep == SOCKS5_REP_ATYP ? "unsupported SOCKS5 address type" :
					  rep == SOCKS5_REP_DENIED ? "malformed SOCKS5 destination" :
					  "malformed SOCKS5 request", true);
			return true;
		}
		socks_target(c, &r, (size_t)n);
		return true;
	case PS_TSNIFF:
		return proxy_transparent_sniff(c);
	case PS_SOCKS4:
		n = proxy_socks4_request(b, c->in.len, &r);
		if (!n)
			return false;
		if (n < 0) {
			set_str(c->method, sizeof(c->method), r.cmd == 2 ? "BIND" : "CONNECT");
			set_str(c->host, sizeof(c->host), r.host);
			c->port = r.port;
			proxy_reply_socks(c, SOCKS5_REP_FAIL, "malformed or unsupported SOCKS4 request",
					  true);
			return true;
		}
		socks_target(c, &r, (size_t)n);
		return true;
	default:
		return false;
	}
}

static bool negotiation_step(struct proxy_conn *c)
{
	bool progress = false, eof = false;

	if (c->crd && c->in.len < c->in.cap) {
		ssize_t n = recv(c->cfd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);

		if (n > 0) {
			c->in.len += (size_t)n;
			c->saw_bytes = true;
			progress = true;
		} else if (n == 0) {
			eof = true;
			c->crd = false;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			c->crd = false;
		} else if (errno != EINTR) {
			proxy_conn_close(c, "client read failed");
			return false;
		}
	}
	while (c->st <= PS_THEAD && negotiate(c))
		progress = true;
	if (c->st == PS_DEAD)
		return false;
	if (eof) {
		if (c->st <= PS_THEAD) {
			proxy_conn_close(c, c->terminated ? proxy_terminate_client_gone(c) :
					 c->saw_bytes ? "client closed before completing its request" : NULL);
			return false;
		}
		/* A half-close right after a complete request is legitimate. */
		c->up_eof = true;
	}
	if (proxy_flush_client(c))
		progress = true;
	return progress;
}

/* The dial's answer; once connected, the parent's handshake when there is one, then the relay. */
static bool connect_step(struct proxy_conn *c)
{
	int rc;

	if (!c->uwr)
		return false;
	rc = proxy_upstream_connect_result(c);
	if (rc <= 0)
		return rc < 0;	/* the next address was tried, or the client answered */
	if (c->via_parent && !proxy_parent_begin(c))
		return true;
	proxy_upstream_established(c, NULL, 0);
	return true;
}

static bool reply_step(struct proxy_conn *c)
{
	bool progress = proxy_flush_client(c);

	if (c->st == PS_DEAD || c->cout_off < c->cout_len)
		return progress;
	/*
	 * Half-close, then read what the client still sends: closing with
	 * unread data would reset the connection and could destroy the answer
	 * before the client reads it.
	 */
	shutdown(c->cfd, SHUT_WR);
	c->st = PS_LINGER;
	c->deadline = proxy_now(c->p) + (proxy_idle_ms(c->p) < LINGER_MS ?
					 proxy_idle_ms(c->p) : LINGER_MS);
	return true;
}

bool proxy_session_step(struct proxy_conn *c)
{
	switch (c->st) {
	case PS_SNIFF:
	case PS_HTTP_HEAD:
	case PS_SOCKS5_GREET:
	case PS_SOCKS5_REQ:
	case PS_SOCKS4:
	case PS_TSNIFF:
	case PS_THEAD:
		return negotiation_step(c);
	case PS_CONNECT:
		return connect_step(c);
	case PS_PARENT:
		return proxy_parent_step(c);
	case PS_RELAY:
		return proxy_relay_step(c);
	case PS_REPLY:
		return reply_step(c);
	case PS_LINGER:
		return proxy_linger_step(c);
	default:
		return false;
	}
}

void proxy_session_timeout(struct proxy_conn *c)
{
	switch (c->st) {
	case PS_RESOLVE:
		proxy_upstream_failed(c, -ETIMEDOUT, "resolve");
		break;
	case PS_CONNECT:
		proxy_upstream_failed(c, -ETIMEDOUT, proxy_upstream_dial_what(c));
		break;
	case PS_PARENT:
		proxy_upstream_failed(c, -ETIMEDOUT, c->parent != proxy_cfg(c->p)->parent ? "MITM proxy handshake" :
				      "parent proxy handshake");
		break;
	case PS_RELAY:
		if (c->proto == PP_HTTP && !c->resp_sent) {
			proxy_reply_http(c, 504, "Gateway Timeout", NULL, "Gateway Timeout",
					 "no response from upstream before idle timeout");
			break;
		}
		proxy_conn_close(c, "idle timeout");
		break;
	case PS_REPLY:
	case PS_LINGER:
		proxy_conn_close(c, NULL);
		break;
	case PS_TSNIFF:
		proxy_transparent_timeout(c);
		break;
	default:
		proxy_conn_close(c, "idle timeout before request complete");
		break;
	}
}

/*
 * A decided connection (dialling, through its parent, relaying, or a
 * terminated tunnel between requests) is asked of the decision again with
 * the name it was allowed for. A transparent one is asked of the policy's
 * host decision for that name, not of the learned addresses again: a pair
 * that aged out says nothing about the policy.
 */
void proxy_session_recheck(struct proxy_conn *c)
{
	const struct proxy_config *cfg = proxy_cfg(c->p);
	struct proxy_decision d = { 0 };
	bool decided = c->st >= PS_RESOLVE && c->st <= PS_RELAY;

	if (!c->allowed || !(decided || (c->terminated && c->st == PS_THEAD)))
		return;
	if (c->decided[0])
		cfg->decide(cfg->ctx, c->decided, c->decided_port, &d);
	else if (c->transparent)
		cfg->transparent->decide(cfg->ctx, NULL, &c->orig, &d);
	else
		return;
	if (d.allow)
		return;
	c->allowed = false;
	c->revoked = true;
	set_str(c->rule, sizeof(c->rule), d.rule);
	set_str(c->reason, sizeof(c->reason), d.reason);
	proxy_conn_close(c, "closed: the policy no longer allows this name");
}
