// SPDX-License-Identifier: MIT
/*
 * The proxy's event loop: one thread, one edge-triggered epoll set, every
 * client and upstream socket non-blocking. Idle clients cost a struct and a
 * head buffer; nothing a client does can block the loop (names are resolved
 * by proxy_resolve.c's workers). See docs/proxy.md for the reasoning.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/mono_clock.h"
#include "lib/nofile.h"
#include "proxy_canon.h"
#include "proxy_conn.h"
#include "proxy_cred.h"
#include "proxy_session.h"
#include "proxy_upstream.h"

#define TAG_LISTEN 1ULL
#define TAG_WAKE 2ULL
#define TAG_TLISTEN4 4ULL
#define TAG_TLISTEN6 8ULL
#define MAX_EVENTS 64
#define ACCEPT_BURST 64
#define ACCEPT_PAUSE_MS 100
#define PUMP_ROUNDS 16


static void free_conn(struct proxy_conn *c)
{
	proxy_cred_free(c);
	free(c->in.data);
	free(c->up.data);
	free(c->down.data);
	free(c);
}

static void free_dead(struct proxy *p)
{
	struct proxy_conn **pp = &p->dead;

	while (*pp) {
		struct proxy_conn *c = *pp;

		if (c->in_ready) {	/* still queued for the next round */
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		free_conn(c);
	}
}

static void ready_add(struct proxy_conn *c)
{
	if (c->in_ready)
		return;
	c->in_ready = true;
	c->ready_next = c->p->ready;
	c->p->ready = c;
}

/* Progress until nothing moves; a busy connection yields after a budget. */
static void pump(struct proxy_conn *c)
{
	for (int round = 0; round < PUMP_ROUNDS; round++) {
		enum proxy_state before = c->st;
		bool progress = proxy_session_step(c);

		/* A new state has new work even when the old one moved no byte. */
		if (c->st == PS_DEAD || (!progress && c->st == before))
			return;
	}
	if (c->st != PS_DEAD)
		ready_add(c);
}

static void run_ready(struct proxy *p)
{
	struct proxy_conn *list = p->ready;

	p->ready = NULL;
	while (list) {
		struct proxy_conn *c = list;

		list = c->ready_next;
		c->in_ready = false;
		if (c->st != PS_DEAD)
			pump(c);
	}
}

static void capacity_event(struct proxy *p, const struct sockaddr_storage *ss, const struct proxy_peer *peer)
{
	struct proxy_event ev = { .protocol = "unknown", .error = "too many clients" };
	char addr[64];

	proxy_format_addr((const struct sockaddr *)ss, addr, sizeof(addr));
	ev.client_addr = addr;
	ev.peer = peer && peer->known ? peer : NULL;
	if (p->cfg.on_event)
		p->cfg.on_event(p->cfg.ctx, &ev);
}

static struct proxy_conn *conn_new(struct proxy *p, int fd, const struct sockaddr_storage *ss)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET };
	struct proxy_conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (!c)
		goto fail;
	c->in.cap = p->cfg.header_limit;
	c->in.data = malloc(c->in.cap);
	if (!c->in.data)
		goto fail;
	c->p = p;
	c->cfd = fd;
	c->ufd = -1;
	c->st = PS_SNIFF;
	c->deadline = p->now + p->cfg.idle_timeout_ms;
	proxy_format_addr((const struct sockaddr *)ss, c->client_addr, sizeof(c->client_addr));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ev.data.u64 = (uint64_t)(uintptr_t)c;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev))
		goto fail;
	c->next = p->conns;
	if (p->conns)
		p->conns->prev = c;
	p->conns = c;
	p->nconns++;
	return c;
fail:
	if (c)
		free(c->in.data);
	free(c);
	close(fd);
	return NULL;
}

/* Every listener at once: out of descriptors, one still watched would wake the loop in a spin. */
static void set_accepting(struct proxy *p, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.u64 = TAG_LISTEN };

	epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->lfd, &ev);
	for (int i = 0; i < 2; i++) {
		if (p->tlfd[i] < 0)
			continue;
		ev.data.u64 = i ? TAG_TLISTEN6 : TAG_TLISTEN4;
		epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->tlfd[i], &ev);
	}
	p->accept_paused = !on;
	p->accept_resume = p->now + ACCEPT_PAUSE_MS;
}

/* Out of descriptors or memory: the listeners pause, or they would spin. */
static void accept_failed(struct proxy *p, int err)
{
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM)
		set_accepting(p, false);
}

/*
 * A full proxy makes room by closing the oldest client that has not yet
 * finished its request: idle and trickling connections (slowloris) cannot
 * lock out clients that ask at once, and a slot that is doing work (resolving,
 * dialling, relaying) is never taken. Connections are pushed at the head of
 * the list, so the last waiting one is the oldest. Returns whether one went.
 */
static bool evict_waiting(struct proxy *p)
{
	struct proxy_conn *c, *oldest = NULL;

	for (c = p->conns; c; c = c->next)
		if (c->st <= PS_THEAD)	/* waiting for a request: SOCKS, a transparent first byte, a terminated head */
			oldest = c;
	if (!oldest)
		return false;
	proxy_conn_close(oldest, "evicted: too many clients");
	return true;
}

static void accept_clients(struct proxy *p)
{
	for (int i = 0; i < ACCEPT_BURST; i++) {
		struct proxy_peer peer;
		struct proxy_conn *c;
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(p->lfd, (struct sockaddr *)&ss, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			accept_failed(p, errno);
			return;
		}
		if (!p->cfg.peer || p->cfg.peer(p->cfg.ctx, &ss, ntohs(p->self.sin_port), &peer))
			peer.known = false;
		if (p->nconns >= p->cfg.max_clients && !evict_waiting(p)) {
			/* Refuse at once: a full proxy must stay responsive to the others. */
			capacity_event(p, &ss, &peer);
			close(fd);
			continue;
		}
		c = conn_new(p, fd, &ss);
		if (c)
			c->peer = peer;
	}
}

/* A connection the kernel redirected: where it was going decides, with what its first bytes name. */
static void accept_transparent(struct proxy *p, int idx)
{
	const struct proxy_transparent *t = p->cfg.transparent;

	for (int i = 0; i < ACCEPT_BURST; i++) {
		struct sockaddr_storage ss, orig;
		struct proxy_peer peer;
		socklen_t len = sizeof(ss);
		struct proxy_conn *c;
		int fd = accept4(p->tlfd[idx], (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int err;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			accept_failed(p, errno);
			return;
		}
		/* Taken first, so the kernel's entry goes even when the connection does not stay. */
		peer.known = false;
		err = t->orig_dst(p->cfg.ctx, &ss, p->tport[idx], &orig, &peer);
		if (p->nconns >= p->cfg.max_clients) {
			capacity_event(p, &ss, &peer);
			close(fd);
			continue;
		}
		c = conn_new(p, fd, &ss);
		if (!c)
			continue;
		c->transparent = true;
		c->kind = "tcp";
		c->proto = PP_TRANSPARENT;
		c->st = PS_TSNIFF;
		c->deadline = p->now + (t->sniff_ms ? t->sniff_ms : 1000);
		c->peer = peer;
		if (err) {
			/* Nothing to decide on: never dial anything for it. */
			c->saw_bytes = true;
			proxy_conn_close(c, "original destination unknown");
			continue;
		}
		c->orig = orig;
		inet_ntop(c->orig.ss_family,
			  c->orig.ss_family == AF_INET ? (void *)&((struct sockaddr_in *)&c->orig)->sin_addr
						       : (void *)&((struct sockaddr_in6 *)&c->orig)->sin6_addr,
			  c->orig_addr, sizeof(c->orig_addr));
	}
}

static void take_resolved(struct proxy *p)
{
	struct proxy_rjob *job;
	uint64_t n;

	/* Reset the counter before taking the list: a later push wakes us again. */
	if (read(p->wakefd, &n, sizeof(n)) < 0) {
		/* EAGAIN: already drained; the done list is the truth. */
	}
	job = proxy_resolver_take_done(p->res);
	while (job) {
		struct proxy_rjob *next = job->next;
		struct proxy_conn *c = job->owner;

		if (c) {
			c->job = NULL;
			proxy_upstream_resolved(c, job);
			if (c->st != PS_DEAD)
				pump(c);
		}
		free(job);
		job = next;
	}
}

/* proxy_recheck's request, on the loop thread: every decided connection asked again. */
static void recheck_all(struct proxy *p)
{
	struct proxy_conn *c, *next;

	if (!atomic_exchange(&p->recheck, false))
		return;
	for (c = p->conns; c; c = next) {
		next = c->next;	/* a close moves c to the dead list */
		proxy_session_recheck(c);
	}
}

void proxy_recheck(struct proxy *p)
{
	uint64_t one = 1;

	if (!p)
		return;
	atomic_store(&p->recheck, true);
	if (write(p->wakefd, &one, sizeof(one)) < 0) {
		/* cannot fail on a valid eventfd short of overflow, which still wakes the loop */
	}
}

static void on_conn_event(struct proxy_conn *c, bool upstream, uint32_t e)
{
	if (c->st == PS_DEAD)
		return;
	if (upstream) {
		if (c->ufd < 0)
			return;
		c->urd |= !!(e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR));
		c->uwr |= !!(e & (EPOLLOUT | EPOLLHUP | EPOLLERR));
	} else {
		c->crd |= !!(e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR));
		c->cwr |= !!(e & (EPOLLOUT | EPOLLHUP | EPOLLERR));
	}
	pump(c);
}

static void check_timers(struct proxy *p)
{
	struct proxy_conn *c, *next;

	if (p->accept_paused && p->now >= p->accept_resume)
		set_accepting(p, true);
	for (c = p->conns; c; c = next) {
		next = c->next;
		if (p->now >= c->deadline) {
			proxy_session_timeout(c);
			if (c->st != PS_DEAD)
				pump(c);
		}
	}
}

static void *loop(void *arg)
{
	struct proxy *p = arg;
	struct epoll_event evs[MAX_EVENTS];

	while (!atomic_load(&p->stop)) {
		int timeout = p->ready ? 0 : (p->nconns || p->accept_paused) ? (int)p->tick_ms : -1;
		int n = epoll_wait(p->epfd, evs, MAX_EVENTS, timeout);

		if (n < 0 && errno != EINTR)
			break;
		p->now = mono_ms();
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;

			if (tag == TAG_LISTEN)
				accept_clients(p);
			else if (tag == TAG_TLISTEN4 || tag == TAG_TLISTEN6)
				accept_transparent(p, tag == TAG_TLISTEN6);
			else if (tag == TAG_WAKE) {
				take_resolved(p);
				recheck_all(p);
			}
			else
				on_conn_event((struct proxy_conn *)(uintptr_t)(tag & ~PROXY_TAG_UPSTREAM),
					      tag & PROXY_TAG_UPSTREAM, evs[i].events);
		}
		run_ready(p);
		if (p->now >= p->next_tick) {
			check_timers(p);
			p->next_tick = p->now + p->tick_ms;
		}
		free_dead(p);
	}
	p->now = mono_ms();
	while (p->conns)
		proxy_conn_close(p->conns, "proxy stopped");
	p->ready = NULL;
	for (struct proxy_conn *c = p->dead; c; c = c->next)
		c->in_ready = false;
	free_dead(p);
	return NULL;
}

static int listen_loopback(struct proxy *p)
{
	socklen_t len = sizeof(p->self);

	p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->lfd < 0)
		return -errno;
	p->self.sin_family = AF_INET;
	p->self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->self.sin_port = 0;	/* the kernel picks a free port */
	if (bind(p->lfd, (struct sockaddr *)&p->self, sizeof(p->self)) ||
	    listen(p->lfd, SOMAXCONN) ||
	    getsockname(p->lfd, (struct sockaddr *)&p->self, &len))
		return -errno;
	return 0;
}

/* The transparent listeners, on 127.0.0.1 and ::1 (none on a host without IPv6 loopback). */
static int listen_transparent(struct proxy *p)
{
	for (int i = 0; i < 2; i++) {
		struct sockaddr_storage ss = { 0 };
		struct sockaddr_in *s4 = (void *)&ss;
		struct sockaddr_in6 *s6 = (void *)&ss;
		socklen_t len = i ? sizeof(*s6) : sizeof(*s4);
		int one = 1, fd;

		ss.ss_family = i ? AF_INET6 : AF_INET;
		if (i)
			s6->sin6_addr = in6addr_loopback;
		else
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return i ? 0 : -errno;
		if (i)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, SOMAXCONN) ||
		    getsockname(fd, (struct sockaddr *)&ss, &len)) {
			int err = -errno;

			close(fd);
			if (i)
				return 0;
			return err;
		}
		p->tlfd[i] = fd;
		p->tport[i] = ntohs(i ? s6->sin6_port : s4->sin_port);
	}
	return 0;
}

void proxy_transparent_ports(const struct proxy *p, unsigned short *port4, unsigned short *port6)
{
	*port4 = p->tport[0];
	*port6 = p->tport[1];
}

static int epoll_add(struct proxy *p, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* Most a connection holds: client, upstream, a splice pipe each way, a TLS bridge's pair each side. */
#define FDS_PER_CONN 10
/* The supervisor's own besides: maps, ring buffer, listeners, resolver, logs, live control. */
#define FDS_RESERVED 128

/* A full proxy refuses a client with an event; out of descriptors, whatever needed one next would fail. */
static unsigned clients_within_nofile(unsigned want)
{
	unsigned long limit = nofile_soft();
	unsigned long fit = limit > FDS_RESERVED + FDS_PER_CONN ? (limit - FDS_RESERVED) / FDS_PER_CONN : 1;

	return fit < want ? (unsigned)fit : want;
}

int proxy_start(const struct proxy_config *cfg, struct proxy **out, unsigned short *port)
{
	struct proxy *p;
	sigset_t all, old;
	const char *err = NULL;
	int ret;

	if (!cfg || !cfg->decide || !out)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->lfd = p->epfd = p->wakefd = -1;
	p->tlfd[0] = p->tlfd[1] = -1;
	p->cfg = *cfg;
	if (!p->cfg.canonicalise)
		p->cfg.canonicalise = proxy_canon_default;
	if (!p->cfg.header_limit)
		p->cfg.header_limit = 16 * 1024;
	if (p->cfg.header_limit < 1024)
		p->cfg.header_limit = 1024;	/* room for any SOCKS message */
	if (!p->cfg.idle_timeout_ms)
		p->cfg.idle_timeout_ms = 60000;
	if (!p->cfg.max_clients)
		p->cfg.max_clients = 256;
	p->cfg.max_clients = clients_within_nofile(p->cfg.max_clients);
	if (!p->cfg.resolver_threads)
		p->cfg.resolver_threads = 4;
	p->tick_ms = p->cfg.idle_timeout_ms / 8;
	p->tick_ms = p->tick_ms < 10 ? 10 : p->tick_ms > 200 ? 200 : p->tick_ms;
	p->guard = cfg->guard;
	if (!p->guard) {
		/* Fail closed: no guard given still means the built-in refusals. */
		ret = addr_guard_init(&p->own_guard, NULL, 0, &err);
		if (ret)
			goto fail;
		p->guard = &p->own_guard;
	}
	ret = listen_loopback(p);
	if (ret)
		goto fail;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->epfd < 0 || p->wakefd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = epoll_add(p, p->lfd, TAG_LISTEN);
	if (!ret)
		ret = epoll_add(p, p->wakefd, TAG_WAKE);
	if (!ret && p->cfg.transparent) {
		if (!p->cfg.transparent->orig_dst || !p->cfg.transparent->decide) {
			ret = -EINVAL;
			goto fail;
		}
		ret = listen_transparent(p);
		if (!ret)
			ret = epoll_add(p, p->tlfd[0], TAG_TLISTEN4);
		if (!ret && p->tlfd[1] >= 0)
			ret = epoll_add(p, p->tlfd[1], TAG_TLISTEN6);
	}
	if (ret)
		goto fail;
	ret = proxy_resolver_start(&p->res, p->cfg.resolver_threads, p->cfg.resolve, p->cfg.ctx,
				   p->wakefd);
	if (ret)
		goto fail;
	p->now = mono_ms();
	p->next_tick = p->now + p->tick_ms;
	/* The loop thread must not receive the supervisor's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&p->thread, NULL, loop, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto fail;
	p->thread_started = true;
	*out = p;
	if (port)
		*port = ntohs(p->self.sin_port);
	return 0;
fail:
	proxy_stop(p);
	return ret;
}

void proxy_stop(struct proxy *p)
{
	uint64_t one = 1;

	if (!p)
		return;
	atomic_store(&p->stop, true);
	if (p->thread_started) {
		if (write(p->wakefd, &one, sizeof(one)) < 0) {
			/* cannot fail on a valid eventfd short of overflow */
		}
		pthread_join(p->thread, NULL);
	}
	proxy_resolver_stop(p->res);
	if (p->lfd >= 0)
		close(p->lfd);
	for (int i = 0; i < 2; i++)
		if (p->tlfd[i] >= 0)
			close(p->tlfd[i]);
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->wakefd >= 0)
		close(p->wakefd);
	if (p->guard == &p->own_guard)
		addr_guard_free(&p->own_guard);
	free(p);
}
