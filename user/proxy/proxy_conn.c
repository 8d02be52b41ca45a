// SPDX-License-Identifier: MIT
/*
 * What a connection may ask of the proxy it lives in: the loop's clock and
 * limits, its epoll set, the resolver, and closing with its one event.
 * The loop thread is the only caller, so nothing here locks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "proxy_conn.h"
#include "tls/tls_bridge.h"

unsigned long long proxy_now(const struct proxy *p)
{
	return p->now;
}

unsigned proxy_idle_ms(const struct proxy *p)
{
	return p->cfg.idle_timeout_ms;
}

unsigned proxy_header_limit(const struct proxy *p)
{
	return p->cfg.header_limit;
}

const struct proxy_config *proxy_cfg(const struct proxy *p)
{
	return &p->cfg;
}

const struct addr_guard *proxy_guard(const struct proxy *p)
{
	return p->guard;
}

const struct sockaddr_in *proxy_self(const struct proxy *p)
{
	return &p->self;
}

static const char *proto_name(enum proxy_proto proto)
{
	switch (proto) {
	case PP_CONNECT:
		return "http-connect";
	case PP_HTTP:
		return "http";
	case PP_SOCKS5:
		return "socks5";
	case PP_SOCKS4:
		return "socks4";
	case PP_TRANSPARENT:
		return "transparent";
	default:
		return "unknown";
	}
}

static void emit(struct proxy *p, const struct proxy_conn *c)
{
	struct proxy_event ev = {
		.protocol = c->transparent ? "transparent" : c->terminated ? "https" : proto_name(c->proto),
		.transparent = c->transparent ? c->kind : NULL,
		.orig_addr = c->transparent ? c->orig_addr : NULL,
		.method = c->method[0] ? c->method : NULL,
		.host = c->host[0] ? c->host : NULL,
		.port = c->port,
		.allowed = c->allowed,
		.rule = c->rule[0] ? c->rule : NULL,
		.reason = c->reason[0] ? c->reason : NULL,
		.client_addr = c->client_addr,
		.status = c->status,
		.bytes_up = c->bytes_up,
		.bytes_down = c->bytes_down,
		.error = c->error[0] ? c->error : NULL,
		.parent = c->via_parent ? c->parent->shown : NULL,
		.peer = c->peer.known ? &c->peer : NULL,
		.tls = c->terminated ? "terminated" : NULL,
		.credentials = c->cred_names[0] ? c->cred_names : NULL,
		.closed = c->revoked ? "policy-revoked" : NULL,
	};

	if (p->cfg.on_event)
		p->cfg.on_event(p->cfg.ctx, &ev);
}

void proxy_buf_compact(struct proxy_buf *b, size_t *base)
{
	if (!b->off || b->cap - b->len >= b->cap / 2)
		return;
	memmove(b->data, b->data + b->off, b->len - b->off);
	b->len -= b->off;
	if (base)
		*base = *base > b->off ? *base - b->off : 0;
	b->off = 0;
}

void proxy_conn_close(struct proxy_conn *c, const char *error)
{
	struct proxy *p = c->p;

	if (c->st == PS_DEAD)
		return;
	if (error && !c->error[0])
		snprintf(c->error, sizeof(c->error), "%s", error);
	/* A connection that never sent a byte made no request: nothing to log. */
	if (c->saw_bytes)
		emit(p, c);
	if (c->job)
		c->job->owner = NULL;	/* the worker's result will be dropped */
	c->job = NULL;
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	c->cfd = c->ufd = -1;
	proxy_pipe_close(&c->to_up);
	proxy_pipe_close(&c->to_down);
	tls_bridge_put(c->cbridge);
	tls_bridge_put(c->ubridge);
	c->cbridge = c->ubridge = NULL;
	if (c->tunnel_counted)
		p->ntunnels--;
	c->tunnel_counted = false;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->nconns--;
	c->st = PS_DEAD;
	/* Freed after this round of events: later events may still name it. */
	c->next = p->dead;
	p->dead = c;
}

int proxy_watch_upstream(struct proxy_conn *c)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		.data.u64 = (uint64_t)(uintptr_t)c | PROXY_TAG_UPSTREAM,
	};

	c->urd = c->uwr = false;
	if (epoll_ctl(c->p->epfd, EPOLL_CTL_ADD, c->ufd, &ev))
		return -errno;
	return 0;
}

void proxy_submit_resolve(struct proxy_conn *c, struct proxy_rjob *job)
{
	job->owner = c;
	c->job = job;
	proxy_resolver_submit(c->p->res, job);
}

void proxy_drop_upstream(struct proxy_conn *c)
{
	if (c->ufd >= 0)
		close(c->ufd);
	c->ufd = -1;
	c->urd = c->uwr = false;
	if (c->job)
		c->job->owner = NULL;
	c->job = NULL;
}
