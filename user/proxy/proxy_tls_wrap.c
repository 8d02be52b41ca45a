// SPDX-License-Identifier: MIT
/* A connection's socket handed to a TLS bridge; its plaintext end takes the socket's place. */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "lib/openssl_lazy.h"
#include "tls/tls_bridge.h"
#include "tls/tls_leaf.h"
#include "tls/tls_upstream.h"

#include "proxy_tls_wrap.h"

/* The plaintext end joins the epoll set under the socket's tag. */
static int rewatch(struct proxy_conn *c, int plain, uint64_t tag)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		.data.u64 = tag,
	};

	if (epoll_ctl(c->p->epfd, EPOLL_CTL_ADD, plain, &ev))
		return -errno;
	return 0;
}

void proxy_tls_bounds(const struct proxy *p, unsigned *max_tunnels, unsigned *handshake_ms)
{
	const struct proxy_config *cfg = proxy_cfg(p);
	const struct proxy_tls *t = cfg->tls;

	*max_tunnels = t->max_tunnels;
	*handshake_ms = t->handshake_ms;
	if (t->bounds)
		t->bounds(cfg->ctx, max_tunnels, handshake_ms);
}

int proxy_tls_wrap_client(struct proxy_conn *c, const void *preface, size_t n, unsigned handshake_ms)
{
	const struct proxy_tls *t = proxy_cfg(c->p)->tls;
	struct tls_bridge_spec spec = {
		.server = true,
		.preread = c->in.data,
		.preread_len = c->in.len,
		.preface = preface,
		.preface_len = n,
		.handshake_ms = handshake_ms,
		.idle_ms = proxy_idle_ms(c->p),
		.expect_sni = c->tunnel,
	};
	SSL_CTX *ctx = NULL;
	int plain, old = c->cfd, err;

	err = tls_leaf_ctx(t->leaves, c->tunnel, &ctx);
	if (err)
		return err;
	spec.ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);	/* the SSL holds its own reference */
	if (!spec.ssl)
		return -ENOMEM;
	/*
	 * From here the bridge owns the client's socket, even when it fails
	 * to start; it leaves the epoll set first, or its events would still
	 * reach the loop while the bridge keeps it open.
	 */
	epoll_ctl(c->p->epfd, EPOLL_CTL_DEL, old, NULL);
	spec.tls_fd = old;
	c->cfd = -1;
	err = tls_bridge_start(&spec, &plain, &c->cbridge);
	if (err)
		return err;
	c->cfd = plain;
	c->in.len = 0;
	c->crd = c->cwr = false;
	return rewatch(c, plain, (uint64_t)(uintptr_t)c);
}

int proxy_tls_wrap_upstream(struct proxy_conn *c)
{
	const struct proxy_tls *t = proxy_cfg(c->p)->tls;
	struct tls_bridge_spec spec = {
		.server = false,
		.idle_ms = proxy_idle_ms(c->p),
	};
	unsigned max_tunnels;
	int plain, old = c->ufd, err;

	/* A new handshake: the bound in force now. */
	proxy_tls_bounds(c->p, &max_tunnels, &spec.handshake_ms);

	err = tls_upstream_ssl(t->upstream, c->tunnel, &spec.ssl);
	if (err)
		return err;
	epoll_ctl(c->p->epfd, EPOLL_CTL_DEL, old, NULL);
	spec.tls_fd = old;
	c->ufd = -1;
	err = tls_bridge_start(&spec, &plain, &c->ubridge);
	if (err)
		return err;
	c->ufd = plain;
	c->urd = c->uwr = false;
	return rewatch(c, plain, (uint64_t)(uintptr_t)c | PROXY_TAG_UPSTREAM);
}

const char *proxy_tls_wrap_error(const struct proxy_conn *c, bool upstream)
{
	struct tls_bridge_status *st = upstream ? c->ubridge : c->cbridge;

	if (!st || atomic_load(&st->state) != TLS_BRIDGE_FAILED)
		return NULL;
	return st->error;
}
