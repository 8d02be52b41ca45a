// SPDX-License-Identifier: MIT
/*
 * A connection the kernel redirected to the proxy (it was going straight to
 * an address the sandbox learned from its DNS): its first bytes give the
 * name (TLS server_name, HTTP Host) or none, the policy callback decides by
 * name and original address together, the guard checks the address, and the
 * proxy dials exactly where the client was going. HTTP is rebuilt like a
 * forwarded request (one request per connection); TLS and the rest are
 * relayed as byte pipes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_canon.h"
#include "proxy_conn.h"
#include "proxy_cred.h"
#include "proxy_http_sniff.h"
#include "proxy_parent.h"
#include "proxy_relay.h"
#include "proxy_reply.h"
#include "proxy_terminate.h"
#include "proxy_tls.h"
#include "proxy_transparent.h"
#include "proxy_upstream.h"

static unsigned orig_port(const struct proxy_conn *c)
{
	if (c->orig.ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)&c->orig)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)&c->orig)->sin6_port);
}

/* The original address as a host, without the port (for the event and a nameless Host). */
static void orig_host(const struct proxy_conn *c, char *out, size_t len)
{
	const void *a = c->orig.ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)&c->orig)->sin_addr
						      : (const void *)&((const struct sockaddr_in6 *)&c->orig)->sin6_addr;

	if (!inet_ntop(c->orig.ss_family, a, out, (socklen_t)len))
		snprintf(out, len, "?");
}

/* HTTP answers like the explicit proxy's; anything else is closed without a byte. */
static void refuse(struct proxy_conn *c, bool http, bool guard, const char *error)
{
	c->allowed = false;
	if (http) {
		if (guard)
			proxy_reply_http(c, 403, "Forbidden", PROXY_XERR_GUARD, PROXY_BODY_GUARD, error);
		else
			proxy_reply_http(c, 403, "Forbidden", PROXY_XERR_ALLOWLIST, PROXY_BODY_ALLOWLIST, error);
		return;
	}
	proxy_conn_close(c, error);
}

/*
 * Decides with the name (NULL: none) and, when allowed, checks the original
 * address with the guard. True when the connection may be dialled.
 */
static bool decide(struct proxy_conn *c, const char *name, bool http)
{
	const struct proxy_config *cfg = proxy_cfg(c->p);
	struct proxy_decision d = { 0 };
	char canon[PROXY_HOST_MAX], msg[sizeof(c->error)];
	const char *why = NULL;

	c->saw_bytes = true; /* every redirected connection decided is an event, even a silent one */
	c->port = orig_port(c);
	if (name) {
		snprintf(c->host, sizeof(c->host), "%s", name);
		if (cfg->canonicalise(name, canon, sizeof(canon), &why) < 0 || !canon[0]) {
			snprintf(c->rule, sizeof(c->rule), "malformed");
			refuse(c, http, false, why ? why : "malformed name");
			return false;
		}
		name = canon;
		snprintf(c->host, sizeof(c->host), "%s", canon);
	} else {
		orig_host(c, c->host, sizeof(c->host));
	}
	cfg->transparent->decide(cfg->ctx, name, &c->orig, &d);
	c->allowed = d.allow;
	snprintf(c->rule, sizeof(c->rule), "%s", d.rule ? d.rule : "");
	snprintf(c->reason, sizeof(c->reason), "%s", d.reason ? d.reason : "");
	if (!d.allow) {
		refuse(c, http, false, "denied by policy");
		return false;
	}
	/* What a recheck decides again: the name, or the one the address was learned for. */
	snprintf(c->decided, sizeof(c->decided), "%s", name ? name : d.name ? d.name : "");
	c->decided_port = c->port;
	/*
	 * Through a parent the original address is not dialled (with a parent
	 * the sandbox's DNS answers with synthesized addresses, which lead
	 * nowhere): the parent is asked for the name it was learned for.
	 */
	if (proxy_parent_for(c->p, name ? name : d.name ? d.name : c->host, c->port)) {
		if (!name && d.name)
			snprintf(c->host, sizeof(c->host), "%s", d.name);
		return true;
	}
	if (addr_guard_refuses_name(proxy_guard(c->p), name ? name : "", (const struct sockaddr *)&c->orig, &why)) {
		snprintf(msg, sizeof(msg), "address %s port %u refused: %s", c->orig_addr, c->port, why ? why : "refused");
		refuse(c, http, true, msg);
		return false;
	}
	return true;
}

static bool find_host(const struct proxy_request *req, struct proxy_span *host, bool *dup)
{
	bool found = false;

	*dup = false;
	for (size_t i = 0; i < req->nhdr; i++) {
		if (!proxy_span_ieq(req->hdr[i].name, "host"))
			continue;
		if (found)
			*dup = true;
		*host = req->hdr[i].value;
		found = true;
	}
	return found;
}

/* A whole HTTP/1.x head: decided by its Host, rebuilt as one request, like a forwarded one. */
static void http_head(struct proxy_conn *c, size_t head)
{
	struct proxy_request *req = malloc(sizeof(*req));
	struct proxy_authority auth;
	struct proxy_span host;
	struct proxy_url url;
	struct proxy_body body, fwd;
	const char *name = NULL;
	bool dup;
	ssize_t n;

	c->kind = "http";
	c->proto = PP_HTTP;
	if (!req) {
		proxy_conn_close(c, "out of memory");
		return;
	}
	if (proxy_parse_request(c->in.data, head, req)) {
		c->saw_bytes = true;
		proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request", "malformed request head");
		goto out;
	}
	snprintf(c->method, sizeof(c->method), "%.*s", (int)req->method.n, req->method.p);
	c->port = orig_port(c);
	if (proxy_method_refused(c->method)) {
		c->saw_bytes = true;
		proxy_reply_http(c, 405, "Method Not Allowed", "method-not-allowed", "Method Not Allowed",
				 "TRACE and TRACK are refused");
		goto out;
	}
	if (find_host(req, &host, &dup)) {
		if (dup || proxy_parse_authority(host.p, host.n, c->port, &auth)) {
			c->saw_bytes = true;
			proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request", "malformed or repeated Host");
			goto out;
		}
		name = auth.host;
	}
	/* Only origin-form: a request naming another server in its target is not what was decided. */
	if (!req->target.n || req->target.p[0] != '/' || proxy_request_framing(req, &body)) {
		c->saw_bytes = true;
		proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request",
				 "not an origin-form request, or ambiguous framing");
		goto out;
	}
	if (!decide(c, name, true))
		goto out;
	memset(&url, 0, sizeof(url));
	snprintf(url.auth.host, sizeof(url.auth.host), "%s", c->host);
	url.auth.port = c->port;
	url.path = req->target;
	if (proxy_relay_alloc(c)) {
		proxy_conn_close(c, "out of memory");
		goto out;
	}
	if (proxy_cred_begin(c, req, c->host, true, &body, &fwd))
		goto out;
	n = proxy_build_upstream_head(req, &url, c->host, &fwd, c->up.data, c->up.cap);
	if (n < 0) {
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL, "Request Header Fields Too Large",
				 "rebuilt request too large");
		goto out;
	}
	n = proxy_cred_head(c, n);
	if (n >= 0)
		n = proxy_parent_head(c, n);
	if (n < 0)
		goto out;
	c->up.off = 0;
	c->up.len = (size_t)n;
	c->body = body;
	c->body_done = body.kind == PROXY_BODY_NONE || (body.kind == PROXY_BODY_LENGTH && !body.length);
	memmove(c->in.data, c->in.data + head, c->in.len - head);
	c->in.len -= head;
	proxy_upstream_dial_orig(c);
out:
	free(req);
}

bool proxy_transparent_sniff(struct proxy_conn *c)
{
	char name[PROXY_HOST_MAX];
	ssize_t head;
	bool full;
	int rc;

	switch (proxy_http_sniff(c->in.data, c->in.len, c->in.cap)) {
	case PROXY_SNIFF_MORE:
		return false;
	case PROXY_SNIFF_TLS:
		c->kind = "tls";
		rc = proxy_tls_sni((const unsigned char *)c->in.data, c->in.len, name, sizeof(name));
		if (rc == 0) {
			if (c->in.len < c->in.cap)
				return false;
			rc = -EINVAL;
		}
		if (rc < 0) {
			c->saw_bytes = true;
			c->port = orig_port(c);
			orig_host(c, c->host, sizeof(c->host));
			snprintf(c->rule, sizeof(c->rule), "malformed");
			proxy_conn_close(c, "malformed TLS ClientHello");
			return false;
		}
		/* A ClientHello without server_name is decided as a connection without a name. */
		if (decide(c, name[0] ? name : NULL, false) &&
		    proxy_terminate_tunnel(c, name[0] ? c->host : NULL) == 0)
			proxy_upstream_dial_orig(c);
		return true;
	case PROXY_SNIFF_HTTP:
		/* Leading empty lines and loose whitespace as servers read them; the head is rescanned. */
		full = c->in.len >= c->in.cap;
		c->in.len = proxy_http_sniff_normalize(c->in.data, c->in.len);
		c->head_scan = 0;
		head = proxy_head_end(c->in.data, c->in.len, &c->head_scan);
		if (head < 0) {
			c->saw_bytes = true;
			c->kind = "http";
			proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request",
					 "bare CR, bare LF or NUL in request head");
			return true;
		}
		if (!head) {
			if (!full)
				return false;
			c->saw_bytes = true;
			c->kind = "http";
			proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL,
					 "Request Header Fields Too Large", "request head too large");
			return true;
		}
		http_head(c, (size_t)head);
		return true;
	case PROXY_SNIFF_OTHER:
		if (decide(c, NULL, false) && proxy_terminate_tunnel(c, NULL) == 0)
			proxy_upstream_dial_orig(c);
		return true;
	}
	return false;
}

static bool late_check(struct proxy_conn *c);

void proxy_transparent_timeout(struct proxy_conn *c)
{
	/*
	 * Silence: a protocol where the server speaks first (smtp, mysql).
	 * Part of a ClientHello or request head, then silence: never decided
	 * without the name the rest would carry.
	 */
	if (c->in.len) {
		c->saw_bytes = true;
		c->port = orig_port(c);
		orig_host(c, c->host, sizeof(c->host));
		proxy_conn_close(c, "idle timeout before the first bytes were complete");
		return;
	}
	/*
	 * Decided by the address alone for now; what the client sends first
	 * is still read for a name before a byte of it goes on (a slow client
	 * is no way around the name check).
	 */
	if (decide(c, NULL, false) && proxy_terminate_tunnel(c, NULL) == 0) {
		c->late_check = late_check;
		proxy_upstream_dial_orig(c);
	}
}

/*
 * Late first bytes that carry a name, while the server has said nothing:
 * the silent dial is dropped and the connection is decided again from the
 * start, by its name, exactly as if those bytes had come in time.
 */
static void decide_again(struct proxy_conn *c, size_t len)
{
	memcpy(c->in.data, c->up.data + c->up.off, len);
	c->in.len = len;
	c->head_scan = 0;
	c->up.off = c->up.len = 0;
	proxy_drop_upstream(c);
	c->late_check = NULL;
	c->allowed = false;
	c->rule[0] = c->reason[0] = c->host[0] = 0;
	c->via_parent = false;
	c->parent = NULL;
	c->pstep = 0;
	c->hs_off = c->hs_len = c->hr_len = 0;
	/* Nothing came down yet, but the pipes may be open: the new decision starts afresh. */
	proxy_pipe_close(&c->to_up);
	proxy_pipe_close(&c->to_down);
	c->up_spliced = c->down_spliced = false;
	c->down.off = c->down.len = 0;
	c->resp_done = c->resp_sent = false;
	c->resp_base = c->resp_scan = 0;
	c->status = 0;
	c->down_eof = c->down_shut = false;
	c->kind = "tcp";
	c->st = PS_TSNIFF;
	/* The rest of a ClientHello or head gets the idle time, then is closed unfinished. */
	c->deadline = proxy_now(c->p) + proxy_idle_ms(c->p);
	proxy_transparent_sniff(c);
}

static bool late_check(struct proxy_conn *c)
{
	/* The relay reads held bytes no further than in.cap: they fit where a timely sniff keeps them. */
	size_t len = c->up.len - c->up.off;
	enum proxy_sniff fb;

	if (!len) {
		if (c->up_eof)
			c->late_check = NULL; /* closed without a byte: nothing to read a name from */
		return true;
	}
	fb = proxy_http_sniff(c->up.data + c->up.off, len, c->in.cap);
	if (fb == PROXY_SNIFF_OTHER) {
		c->late_check = NULL;
		return true;
	}
	if (fb == PROXY_SNIFF_MORE && !c->up_eof)
		return true;
	c->port = orig_port(c);
	if (fb == PROXY_SNIFF_MORE) {
		proxy_conn_close(c, "client closed before its first bytes were complete");
		return false;
	}
	c->kind = fb == PROXY_SNIFF_TLS ? "tls" : "http";
	/* A name after the server spoke (or closed) is a conversation already under way: not decided twice. */
	if (c->bytes_down || c->down.len || c->to_down.held || c->down_eof || c->down_shut) {
		c->allowed = false;
		snprintf(c->rule, sizeof(c->rule), "transparent:late-name");
		snprintf(c->reason, sizeof(c->reason), "a name came after the server spoke first");
		proxy_conn_close(c, "a TLS ClientHello or HTTP request after the server spoke first");
		return false;
	}
	decide_again(c, len);
	return false;
}
