// SPDX-License-Identifier: MIT
/* Learned addresses: the table the proxy reads, the map the kernel reads. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "lib/mono_clock.h"
#include "bpfbox.h"
#include "policy/domain.h"
#include "dns/dns_cache.h"
#include "sandbox_learned.h"
#include "sandbox_tconn.h"

/* IPv4-mapped IPv6 is IPv4, as in the kernel. */
static void normalise(int *family, uint8_t addr[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (*family == AF_INET6 && !memcmp(addr, mapped, 12)) {
		memmove(addr, addr + 12, 4);
		memset(addr + 4, 0, 12);
		*family = AF_INET;
	}
	if (*family == AF_INET)
		memset(addr + 4, 0, 12);
}

static bool from_sockaddr(const struct sockaddr *sa, int *family, uint8_t addr[16], unsigned *port)
{
	memset(addr, 0, 16);
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		memcpy(addr, &s4->sin_addr, 4);
		*family = AF_INET;
		if (port)
			*port = ntohs(s4->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		memcpy(addr, &s6->sin6_addr, 16);
		*family = AF_INET6;
		if (port)
			*port = ntohs(s6->sin6_port);
	} else {
		return false;
	}
	normalise(family, addr);
	return true;
}

/* Loopback and unspecified addresses are never learned: they stay the kernel's loopback rule. */
static bool learnable(int family, const uint8_t *a)
{
	static const uint8_t zero[16], one[16] = { [15] = 1 };

	if (family == AF_INET)
		return a[0] != 127 && a[0] != 0;
	return memcmp(a, zero, 16) && memcmp(a, one, 16);
}

int sandbox_learned_init(struct sandbox_learned *l, const struct policy *p, const struct bpf_state *st,
			 uint64_t sandbox, const struct quota_limits *q, uint32_t uid)
{
	memset(l, 0, sizeof(*l));
	l->cap = q->learned;
	l->v = calloc(l->cap, sizeof(*l->v));
	if (!l->v)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	l->policy = p;
	l->st = st;
	l->quota = q;
	l->uid = uid;
	l->map_fd = st->maps.learned;
	l->tconn_fd = st->maps.tconns;
	l->sandbox = sandbox;
	return 0;
}

void sandbox_learned_free(struct sandbox_learned *l)
{
	if (!l->v)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->v);
	l->v = NULL;
}

static void learned_key(const struct sandbox_learned *l, int family, const uint8_t *addr, struct bb_learned_key *key)
{
	*key = (struct bb_learned_key){ .sandbox = l->sandbox, .family = (bb_u32)family };
	memcpy(key->addr, addr, 16);
}

/*
 * The kernel's entry for the address: the loosest port and the latest expiry
 * of its names. A new entry is first reserved in the ledger, in steps, from
 * the sandbox's and its uid's shares. Under the lock.
 */
static int kernel_learn(struct sandbox_learned *l, int family, const uint8_t *addr, unsigned port,
			unsigned long long expires_ms, struct errmsg *em)
{
	struct bb_learned_key key;
	struct bb_learned v = { .port = port, .expires_ns = expires_ms * 1000000ULL }, old;
	uint32_t step;
	int err;

	learned_key(l, family, addr, &key);
	if (!bpf_map_lookup_elem(l->map_fd, &key, &old)) {
		if (old.port != v.port)
			v.port = 0;
		if (!old.expires_ns || (v.expires_ns && old.expires_ns > v.expires_ns))
			v.expires_ns = old.expires_ns;
		if (bpf_map_update_elem(l->map_fd, &key, &v, BPF_EXIST))
			return errmsg_set(em, -errno, "updating the learned map");
		return 0;
	}
	if (l->in_kernel >= l->reserved) {
		step = (uint32_t)(l->cap - l->reserved) < LEARNED_RESERVE_STEP ? (uint32_t)(l->cap - l->reserved)
										: LEARNED_RESERVE_STEP;
		if (!step)
			return errmsg_set(em, -ENOSPC, "the sandbox holds its whole share of %zu learned addresses; "
					  "the administrator raises it with %s learned=N", l->cap, l->quota->option);
		err = quota_reserve(l->st, l->quota, l->sandbox, l->uid, QUOTA_LEARNED, step, em);
		if (err)
			return err;
		l->reserved += step;
	}
	/* A map full all the same teaches the kernel nothing: those connects stay refused (fail closed). */
	if (bpf_map_update_elem(l->map_fd, &key, &v, BPF_NOEXIST))
		return errmsg_set(em, -errno, "writing the learned map (limit %d)", BB_MAX_LEARNED);
	l->in_kernel++;
	return 0;
}

static bool same_addr(const struct learned_entry *e, int family, const uint8_t *addr)
{
	return e->family == family && !memcmp(e->addr, addr, 16);
}

/* Drops pair i; its address leaves the kernel when no other pair holds it. Under the lock. */
static void forget(struct sandbox_learned *l, size_t i)
{
	struct learned_entry gone = l->v[i];
	struct bb_learned_key key;

	l->v[i] = l->v[--l->n];
	for (size_t k = 0; k < l->n; k++)
		if (same_addr(&l->v[k], gone.family, gone.addr))
			return;
	learned_key(l, gone.family, gone.addr, &key);
	if (!bpf_map_delete_elem(l->map_fd, &key))
		l->in_kernel--;
}

/* Every expired pair goes; a reservation far above what is held is given back. Under the lock. */
static size_t sweep(struct sandbox_learned *l, unsigned long long now)
{
	size_t gone = 0;

	for (size_t i = 0; i < l->n;) {
		if (l->v[i].expires_ms && l->v[i].expires_ms < now) {
			forget(l, i);
			gone++;
		} else {
			i++;
		}
	}
	l->last_sweep_ms = now;
	if (gone && l->reserved > l->in_kernel + LEARNED_RESERVE_STEP) {
		l->reserved = l->in_kernel + LEARNED_RESERVE_STEP;
		quota_settle(l->st, l->sandbox, QUOTA_LEARNED, l->reserved);
	}
	return gone;
}

size_t sandbox_learned_reclaim(struct sandbox_learned *l)
{
	size_t gone;

	pthread_mutex_lock(&l->lock);
	gone = sweep(l, mono_ms());
	pthread_mutex_unlock(&l->lock);
	return gone;
}

/*
 * May p's connects to name's addresses go to the proxy: an allowed name, or
 * an IP literal allowedDomains names (what sandbox_learned_at_launch learns).
 */
static bool learnable_name(const struct policy *p, const char *name)
{
	if (!host_ip_family(name))
		return policy_decide_name(p, name, NULL, NULL) == NET_ALLOW;
	for (size_t i = 0; i < p->n_allowed_domains; i++) {
		const struct domain_pattern *d = &p->allowed_domains[i];

		if ((d->kind == DOMAIN_IPV4 || d->kind == DOMAIN_IPV6) && !strcmp(d->host, name))
			return true;
	}
	return false;
}

size_t sandbox_learned_set_policy(struct sandbox_learned *l, const struct policy *p)
{
	size_t gone = 0;

	pthread_mutex_lock(&l->lock);
	l->policy = p;
	for (size_t i = 0; i < l->n;) {
		if (!learnable_name(p, l->v[i].name)) {
			forget(l, i);
			gone++;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&l->lock);
	return gone;
}

unsigned long long sandbox_learned_expiry_ms(unsigned long long now_ms, long ttl_s, unsigned long long floor_s)
{
	unsigned long long ttl = (unsigned long long)ttl_s;

	if (ttl_s < 0)
		return 0;
	/* An answer's TTL of years would hold the sandbox's and the user's shares for as long. */
	if (ttl > DNS_CACHE_TTL_MAX)
		ttl = DNS_CACHE_TTL_MAX;
	return now_ms + (ttl < floor_s ? floor_s : ttl) * 1000;
}

int sandbox_learned_add(struct sandbox_learned *l, const char *name, int family, const void *addr_in, long ttl_s,
			struct errmsg *em)
{
	unsigned long long now = mono_ms(), expires, floor_s = l->quota->learned_min_ttl_s;
	struct learned_entry *e = NULL;
	uint8_t addr[16] = { 0 };
	unsigned port;
	int err = 0;

	memcpy(addr, addr_in, family == AF_INET ? 4 : 16);
	normalise(&family, addr);
	if (!learnable(family, addr) || strlen(name) >= sizeof(e->name))
		return 0;
	expires = sandbox_learned_expiry_ms(now, ttl_s, floor_s);
	pthread_mutex_lock(&l->lock);
	/* An answer decided under a policy replaced since is not learned (sandbox_learned_set_policy). */
	if (!learnable_name(l->policy, name))
		goto out;
	port = policy_name_port(l->policy, name);
	/* Expired pairs leave while the sandbox runs, at most a second late. */
	if (now - l->last_sweep_ms >= 1000)
		sweep(l, now);
	for (size_t i = 0; i < l->n && !e; i++)
		if (same_addr(&l->v[i], family, addr) && !strcmp(l->v[i].name, name))
			e = &l->v[i];
	if (e) {
		/*
		 * The kernel's entry already covers this answer (a repeated or a
		 * cached one): its port is this pair's or looser, its expiry no
		 * earlier than the pair's. Nothing to write: no system call.
		 */
		if (e->port == port && (!e->expires_ms || (expires && e->expires_ms >= expires)))
			goto out;
		err = kernel_learn(l, family, addr, port, expires, em);
		if (err)
			goto out;
		if (e->expires_ms && (!expires || expires > e->expires_ms))
			e->expires_ms = expires;
		e->port = port;
		goto out;
	}
	if (l->n >= l->cap && !sweep(l, now)) {
		err = errmsg_set(em, -ENOSPC, "the sandbox's share of %zu learned (name, address) pairs is full of "
				 "live ones; the administrator raises it with %s learned=N", l->cap, l->quota->option);
		goto out;
	}
	err = kernel_learn(l, family, addr, port, expires, em);
	if (err)
		goto out;
	e = &l->v[l->n++];
	e->port = port;
	e->family = family;
	memcpy(e->addr, addr, 16);
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->expires_ms = expires;
out:
	if (err)
		l->refused++;
	pthread_mutex_unlock(&l->lock);
	return err;
}

int sandbox_learned_at_launch(struct sandbox_learned *l, const char *hosts_path)
{
	const struct policy *p = l->policy;
	struct errmsg em = { { 0 } };
	char line[1024];
	int learned = 0;
	FILE *f;

	for (size_t i = 0; i < p->n_allowed_domains; i++) {
		const struct domain_pattern *d = &p->allowed_domains[i];
		uint8_t a[16];

		if (d->kind != DOMAIN_IPV4 && d->kind != DOMAIN_IPV6)
			continue;
		if (inet_pton(d->kind == DOMAIN_IPV4 ? AF_INET : AF_INET6, d->host, a) != 1)
			continue;
		if (!sandbox_learned_add(l, d->host, d->kind == DOMAIN_IPV4 ? AF_INET : AF_INET6, a, -1, &em))
			learned++;
	}
	f = fopen(hosts_path, "re");
	if (!f)
		return learned;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok, *hash = strchr(line, '#');
		uint8_t a[16];
		int family;

		if (hash)
			*hash = 0;
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		family = strchr(tok, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(family, tok, a) != 1)
			continue;
		while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
			char canon[DOMAIN_HOST_MAX];
			const char *why;

			if (host_canonicalise(tok, canon, sizeof(canon), &why) ||
			    policy_decide_name(p, canon, NULL, NULL) != NET_ALLOW)
				continue;
			if (!sandbox_learned_add(l, canon, family, a, -1, &em))
				learned++;
		}
	}
	fclose(f);
	return learned;
}

static bool live(const struct learned_entry *e, unsigned long long now)
{
	return !e->expires_ms || e->expires_ms >= now;
}

/* The next live entry for the address at or after *i; the caller holds the lock. */
static const struct learned_entry *next_for_addr(const struct sandbox_learned *l, size_t *i, int family,
						 const uint8_t *addr, unsigned long long now)
{
	while (*i < l->n) {
		const struct learned_entry *e = &l->v[(*i)++];

		if (e->family == family && !memcmp(e->addr, addr, 16) && live(e, now))
			return e;
	}
	return NULL;
}

bool sandbox_learned_has(struct sandbox_learned *l, const char *name, const struct sockaddr *sa)
{
	unsigned long long now = mono_ms();
	const struct learned_entry *e;
	uint8_t addr[16];
	bool found = false;
	size_t i = 0;
	int family;

	if (!from_sockaddr(sa, &family, addr, NULL))
		return false;
	pthread_mutex_lock(&l->lock);
	while (!found && (e = next_for_addr(l, &i, family, addr, now)))
		found = !strcmp(e->name, name);
	pthread_mutex_unlock(&l->lock);
	return found;
}

bool sandbox_learned_allowed_name(struct sandbox_learned *l, const struct sockaddr *sa, unsigned port,
				  const char **rule, char *name, size_t name_len)
{
	unsigned long long now = mono_ms();
	const struct learned_entry *e;
	uint8_t addr[16];
	bool found = false;
	size_t i = 0;
	int family;

	if (!from_sockaddr(sa, &family, addr, NULL))
		return false;
	pthread_mutex_lock(&l->lock);
	while (!found && (e = next_for_addr(l, &i, family, addr, now))) {
		found = policy_decide_host(l->policy, e->name, port, rule, NULL) == NET_ALLOW;
		if (found && name)
			snprintf(name, name_len, "%s", e->name);
	}
	pthread_mutex_unlock(&l->lock);
	return found;
}

#define SYNTH4_SIZE (1u << 17)	/* 198.18.0.0/15 */
#define SYNTH6_SIZE (1u << 31)	/* within 2001:2::/48; the table fills first */

bool sandbox_learned_is_synthetic(int family, const uint8_t a[16])
{
	if (family == AF_INET)
		return a[0] == 198 && (a[1] & 0xfe) == 18;
	return a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 2 && a[4] == 0 && a[5] == 0;
}

static void synth_addr(int family, uint32_t i, uint8_t a[16])
{
	memset(a, 0, 16);
	if (family == AF_INET) {
		uint32_t v = (198u << 24 | 18u << 16) + i;

		a[0] = (uint8_t)(v >> 24);
		a[1] = (uint8_t)(v >> 16);
		a[2] = (uint8_t)(v >> 8);
		a[3] = (uint8_t)v;
		return;
	}
	a[0] = 0x20;
	a[1] = 0x01;
	a[3] = 2;
	a[12] = (uint8_t)(i >> 24);
	a[13] = (uint8_t)(i >> 16);
	a[14] = (uint8_t)(i >> 8);
	a[15] = (uint8_t)i;
}

int sandbox_learned_synthesize(struct sandbox_learned *l, const char *name, int family, uint8_t addr[16],
			       struct errmsg *em)
{
	uint32_t *next = family == AF_INET ? &l->next_synth4 : &l->next_synth6;
	uint32_t size = family == AF_INET ? SYNTH4_SIZE : SYNTH6_SIZE;
	bool found = false;

	if (strlen(name) >= sizeof(l->v[0].name))
		return -EINVAL;
	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->n && !found; i++) {
		const struct learned_entry *e = &l->v[i];

		if (e->family == family && sandbox_learned_is_synthetic(family, e->addr) && !strcmp(e->name, name)) {
			memcpy(addr, e->addr, 16);
			found = true;
		}
	}
	if (found) {
		pthread_mutex_unlock(&l->lock);
		return 0;
	}
	/* .0 and the last address of the range stay unused, as a network's would. */
	if (l->n >= l->cap || *next + 2 >= size) {
		pthread_mutex_unlock(&l->lock);
		return -ENOSPC;
	}
	synth_addr(family, ++*next, addr);
	pthread_mutex_unlock(&l->lock);
	/* For the sandbox's life: the address is this name's and no other's. */
	return sandbox_learned_add(l, name, family, addr, -1, em);
}

int sandbox_learned_orig_dst(struct sandbox_learned *l, const struct sockaddr_storage *client,
			     unsigned short listener, struct sockaddr_storage *orig, struct proxy_peer *peer)
{
	struct bb_tconn v;
	int err = sandbox_tconn_take(l->tconn_fd, l->sandbox, client, listener, &v);

	if (err)
		return err;
	sandbox_peer_from_kernel(&v.peer, peer);
	if (v.kind != BB_REDIRECT_TRANSPARENT)
		return -ENOENT; /* a connection to the explicit proxy is no redirected one */
	memset(orig, 0, sizeof(*orig));
	if (v.family == AF_INET || (v.family == AF_INET6 && !memcmp(v.orig_addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))) {
		struct sockaddr_in *s4 = (void *)orig;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, v.family == AF_INET ? v.orig_addr : v.orig_addr + 12, 4);
		s4->sin_port = htons(v.orig_port);
	} else {
		struct sockaddr_in6 *s6 = (void *)orig;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, v.orig_addr, 16);
		s6->sin6_port = htons(v.orig_port);
	}
	return 0;
}
