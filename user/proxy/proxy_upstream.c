// SPDX-License-Identifier: MIT
/*
 * A decided connection's way to its upstream, shared by the explicit
 * proxy (proxy_session.c), the transparent path (proxy_transparent.c) and
 * the parent's handshake (proxy_parent.c): through the parent or not,
 * resolution with the address guard, the dial over each address in turn,
 * the established connection handed to the relay, and the answer the
 * client's protocol expects when the upstream cannot be reached.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy_canon.h"
#include "proxy_conn.h"
#include "proxy_dial.h"
#include "proxy_relay.h"
#include "proxy_reply.h"
#include "proxy_socks.h"
#include "proxy_tls_wrap.h"
#include "proxy_upstream.h"

void proxy_upstream_failed(struct proxy_conn *c, int err, const char *what)
{
	char msg[sizeof(c->error)];

	/* err 0: what says it all (a parent proxy's refusal has no errno). */
	if (err)
		snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err < 0 ? -err : err));
	else
		snprintf(msg, sizeof(msg), "%s", what);
	if (c->proto == PP_TRANSPARENT)
		proxy_conn_close(c, msg); /* TLS or a raw protocol: no answer of ours makes sense */
	else if (c->proto == PP_SOCKS5)
		proxy_reply_socks(c, !err ? SOCKS5_REP_FAIL : err == -ECONNREFUSED ? SOCKS5_REP_REFUSED :
				  err == -ENETUNREACH ? SOCKS5_REP_NETUNREACH :
				  SOCKS5_REP_HOSTUNREACH, msg, true);
	else if (c->proto == PP_SOCKS4)
		proxy_reply_socks(c, SOCKS5_REP_FAIL, msg, true);
	else
		proxy_reply_http(c, 502, "Bad Gateway", NULL, "Upstream connection failed", msg);
}

static void reply_guard(struct proxy_conn *c, const char *error)
{
	/* The name was allowed, the place it leads to is not. */
	c->allowed = false;
	if (proxy_conn_is_socks(c))
		proxy_reply_socks(c, SOCKS5_REP_DENIED, error, true);
	else
		proxy_reply_http(c, 403, "Forbidden", PROXY_XERR_GUARD, PROXY_BODY_GUARD, error);
}

static bool is_self(const struct proxy_conn *c, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *self = proxy_self(c->p);
	const unsigned char *a;
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (htons((unsigned short)c->port) != self->sin_port)
		return false;
	if (ss->ss_family == AF_INET) {
		a = (const unsigned char *)&((const struct sockaddr_in *)ss)->sin_addr;
	} else {
		a = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
		if (memcmp(a, mapped, 12))
			return false;
		a += 12;
	}
	/* 0.0.0.0 also reaches a socket bound to 127.0.0.1. */
	return !memcmp(a, &self->sin_addr, 4) || !memcmp(a, "\0\0\0\0", 4);
}

const struct proxy_parent *proxy_parent_for(struct proxy *p, const char *host, unsigned port)
{
	const struct proxy_config *cfg = proxy_cfg(p);
	const struct proxy_parent *mitm = cfg->mitm ? cfg->mitm(cfg->ctx, host, port) : NULL;

	if (mitm)
		return mitm;
	if (!cfg->parent || proxy_host_is_local(host))
		return NULL;
	return cfg->parent;
}

const char *proxy_upstream_dial_what(const struct proxy_conn *c)
{
	if (!c->via_parent)
		return "connect";
	/* Two parents only: the policy's, or mitmProxy's (whichever one was in force for this connection). */
	return c->parent != proxy_cfg(c->p)->parent ? "connect to the MITM proxy" : "connect to the parent proxy";
}

bool proxy_upstream_use_parent(struct proxy_conn *c)
{
	const struct proxy_parent *pp = proxy_parent_for(c->p, c->host, c->port);

	if (!pp)
		return false;
	/* The parent's address is the policy's own choice: dialled as given, not guarded. */
	memcpy(c->addrs, pp->addrs, pp->naddrs * sizeof(pp->addrs[0]));
	c->naddrs = pp->naddrs;
	c->next_addr = 0;
	c->via_parent = true;
	c->parent = pp;
	return true;
}

void proxy_upstream_dial(struct proxy_conn *c)
{
	while (c->next_addr < c->naddrs) {
		const struct sockaddr_storage *ss = &c->addrs[c->next_addr];
		int fd;

		if (!c->via_parent && is_self(c, ss)) {
			reply_guard(c, "destination is the proxy itself");
			return;
		}
		/* A parent's address carries its own port. */
		fd = proxy_dial_start(ss, c->via_parent ? 0 : c->port);
		if (fd < 0) {
			c->dial_err = fd;
			c->next_addr++;
			continue;
		}
		c->ufd = fd;
		c->dial_err = proxy_watch_upstream(c);
		if (c->dial_err) {
			proxy_drop_upstream(c);
			c->next_addr++;
			continue;
		}
		c->st = PS_CONNECT;
		c->deadline = proxy_now(c->p) + proxy_idle_ms(c->p);
		return;
	}
	proxy_upstream_failed(c, c->dial_err ? c->dial_err : -EHOSTUNREACH, proxy_upstream_dial_what(c));
}

void proxy_upstream_dial_orig(struct proxy_conn *c)
{
	if (proxy_upstream_use_parent(c)) {
		proxy_upstream_dial(c);
		return;
	}
	c->addrs[0] = c->orig;
	c->naddrs = 1;
	c->next_addr = 0;
	proxy_upstream_dial(c);
}

void proxy_upstream_connect(struct proxy_conn *c)
{
	struct sockaddr_storage ss;
	struct proxy_rjob *job;

	/* Through a parent the name is not resolved here: the parent reaches it by name. */
	if (proxy_upstream_use_parent(c)) {
		proxy_upstream_dial(c);
		return;
	}
	/* A literal was decided as a literal: dial it, no resolution, no guard. */
	if (proxy_host_literal(c->host, &ss)) {
		c->addrs[0] = ss;
		c->naddrs = 1;
		c->next_addr = 0;
		proxy_upstream_dial(c);
		return;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		proxy_upstream_failed(c, -ENOMEM, "resolve");
		return;
	}
	snprintf(job->host, sizeof(job->host), "%s", c->host);
	c->st = PS_RESOLVE;
	c->deadline = proxy_now(c->p) + proxy_idle_ms(c->p);
	proxy_submit_resolve(c, job);
}

void proxy_upstream_resolved(struct proxy_conn *c, struct proxy_rjob *job)
{
	const struct addr_guard *g = proxy_guard(c->p);

	if (c->st != PS_RESOLVE)
		return;
	if (job->err) {
		proxy_upstream_failed(c, job->err, "resolve");
		return;
	}
	/* Every address is checked before any is dialled; one bad answer refuses all. */
	for (size_t i = 0; i < job->n; i++) {
		struct sockaddr_storage ss = job->addrs[i];
		const char *why = "refused";
		char addr[64], msg[sizeof(c->error)];

		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = htons((unsigned short)c->port);
		else if (ss.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&ss)->sin6_port = htons((unsigned short)c->port);
		if (!addr_guard_refuses_name(g, c->host, (struct sockaddr *)&ss, &why)) {
			c->addrs[i] = ss;
			continue;
		}
		proxy_format_addr((struct sockaddr *)&ss, addr, sizeof(addr));
		snprintf(msg, sizeof(msg), "resolved address %s refused: %s", addr, why);
		reply_guard(c, msg);
		return;
	}
	c->naddrs = job->n;
	c->next_addr = 0;
	proxy_upstream_dial(c);
}

int proxy_upstream_connect_result(struct proxy_conn *c)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int err = proxy_dial_result(c->ufd);

	if (!err && getpeername(c->ufd, (struct sockaddr *)&peer, &len)) {
		if (errno == ENOTCONN) {	/* not done yet: wait for the next edge */
			c->uwr = false;
			return 0;
		}
		err = -errno;
	}
	if (err) {
		proxy_drop_upstream(c);
		c->dial_err = err;
		c->next_addr++;
		proxy_upstream_dial(c);
		return -1;
	}
	return 1;
}

void proxy_upstream_established(struct proxy_conn *c, const void *early, size_t n)
{
	int err;

	/* Terminated: what goes up is TLS the proxy makes, verified against the tunnel's name. */
	if (c->terminated && (err = proxy_tls_wrap_upstream(c))) {
		proxy_reply_http(c, 502, "Bad Gateway", NULL, "Bad Gateway", "TLS to the upstream failed to start");
		return;
	}
	if (proxy_relay_begin(c)) {
		proxy_conn_close(c, "out of memory");
		return;
	}
	/* down is empty here and as large as the parent's answer buffer. */
	if (n && n <= c->down.cap) {
		memcpy(c->down.data, early, n);
		c->down.len = n;
	}
	c->st = PS_RELAY;
	c->deadline = proxy_now(c->p) + proxy_idle_ms(c->p);
	if (c->proto == PP_CONNECT) {
		static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

		proxy_reply_bytes(c, ok, sizeof(ok) - 1, 200, NULL, false);
	} else if (proxy_conn_is_socks(c)) {
		proxy_reply_socks(c, SOCKS5_REP_OK, NULL, false);
	}
}
