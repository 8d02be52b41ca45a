/* SPDX-License-Identifier: MIT */
/*
 * The addresses a sandbox learned for the names its policy allows: from its
 * DNS answers, from /etc/hosts and from IP literals in allowedDomains at
 * launch. Each is written to the kernel (the learned map: TCP connects to
 * it go to the proxy's transparent listener) and kept here with the name,
 * for the proxy's decision. Shared by the DNS thread and the proxy thread.
 */
#ifndef BPFBOX_SANDBOX_LEARNED_H
#define BPFBOX_SANDBOX_LEARNED_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/errmsg.h"
#include "policy/policy.h"
#include "sandbox/bpf_state.h"
#include "sandbox/quota.h"

struct proxy_peer;

/*
 * An answer's addresses stay learned for its TTL, but at least this long by
 * default (quota learned-min-ttl): clients cache answers past their TTL (the
 * JVM, connection pools), and an established connection is never cut (the
 * kernel decides at connect).
 */
#define LEARNED_TTL_FLOOR_S QUOTA_DEFAULT_LEARNED_MIN_TTL_S
/* The kernel entries a sandbox reserves at a time from its uid's share. */
#define LEARNED_RESERVE_STEP 64

struct learned_entry {
	int family; /* AF_INET (addr[0..3]) or AF_INET6 */
	uint8_t addr[16];
	char name[256];
	unsigned long long expires_ms; /* CLOCK_MONOTONIC; 0 = for the sandbox's life */
	unsigned port; /* the name's port when the kernel's entry was last written for it */
};

/*
 * The table holds at most the sandbox's share (quota learned) of (name,
 * address) pairs, and the kernel one entry per distinct address among them,
 * each reserved in the quota ledger before it is written. Expired pairs are
 * reclaimed while the sandbox runs: all of them when the table is full, and
 * at most a second after they expire whenever an answer comes; an address
 * no live pair holds leaves the kernel with its last pair.
 */
struct sandbox_learned {
	pthread_mutex_t lock;
	struct learned_entry *v;
	size_t n, cap;
	const struct policy *policy;
	const struct bpf_state *st;
	const struct quota_limits *quota;
	uint32_t uid; /* whose share the kernel entries count against */
	int map_fd, tconn_fd;
	uint64_t sandbox;
	uint32_t in_kernel, reserved; /* the sandbox's learned entries, and its reservation */
	unsigned long long last_sweep_ms;
	unsigned long long refused; /* addresses not learned for want of a share */
	uint32_t next_synth4, next_synth6; /* addresses handed out so far in each range */
};

/* q (kept, not copied) gives the table's size, the TTL floor and the shares. */
int sandbox_learned_init(struct sandbox_learned *l, const struct policy *p, const struct bpf_state *st,
			 uint64_t sandbox, const struct quota_limits *q, uint32_t uid);
/* Frees the table; the kernel entries go with sandbox_maps_remove. */
void sandbox_learned_free(struct sandbox_learned *l);
/*
 * When a pair learned at now_ms from an answer of ttl_s seconds expires: the
 * TTL at least floor_s (the administrator's floor) and at most a day, as the
 * answer cache keeps answers; 0 (never) for a negative TTL.
 */
unsigned long long sandbox_learned_expiry_ms(unsigned long long now_ms, long ttl_s, unsigned long long floor_s);
/*
 * Learns family/addr (4 or 16 bytes) for a canonical name; ttl_s < 0: for
 * the sandbox's life. 0 (also for an address never learned, such as
 * loopback); -ENOSPC when the sandbox's share is full of live pairs, -EDQUOT
 * when its uid's or the host's share is, with em saying which limit.
 */
int sandbox_learned_add(struct sandbox_learned *l, const char *name, int family, const void *addr, long ttl_s,
			struct errmsg *em);
/* Reclaims the expired pairs now (and their addresses no live pair holds). Returns how many. */
size_t sandbox_learned_reclaim(struct sandbox_learned *l);
/*
 * Live policy (issue 32): p decides from now on, and every pair whose name p
 * no longer allows (nor names as an allowed IP literal) is dropped, its
 * address leaving the kernel's learned map when no other pair holds it, so
 * a transparent connect to it is refused. Returns how many pairs went. Any
 * thread (under the table's lock); the caller keeps the old policy.
 */
size_t sandbox_learned_set_policy(struct sandbox_learned *l, const struct policy *p);
/* /etc/hosts lines for allowed names, and allowedDomains IP literals. Returns how many were learned. */
int sandbox_learned_at_launch(struct sandbox_learned *l, const char *hosts_path);
/* Was addr learned, and not expired, for this canonical name? */
bool sandbox_learned_has(struct sandbox_learned *l, const char *name, const struct sockaddr *addr);
/*
 * Some name addr was learned for whose policy allows port: *rule names its
 * allowedDomains entry (it lives as long as the policy). False when none.
 */
bool sandbox_learned_allowed_name(struct sandbox_learned *l, const struct sockaddr *addr, unsigned port,
				  const char **rule, char *name, size_t name_len);
/*
 * With a parent proxy the sandbox's DNS asks nothing upstream: an allowed
 * name gets an address of its own from a reserved range (198.18.0.0/15,
 * benchmarking, RFC 2544; 2001:2::/48 for IPv6, RFC 5180), learned for that
 * name alone, so a connection to it is attributed to the name. The same name
 * keeps its address. 0, or -ENOSPC when the table or the range is full, or
 * an error of sandbox_learned_add (em).
 */
int sandbox_learned_synthesize(struct sandbox_learned *l, const char *name, int family, uint8_t addr[16],
			       struct errmsg *em);
/* Is addr in the synthesized ranges? */
bool sandbox_learned_is_synthetic(int family, const uint8_t addr[16]);
/*
 * The original destination of a connection the proxy accepted on a
 * transparent listener, and who connected (taken once).
 */
int sandbox_learned_orig_dst(struct sandbox_learned *l, const struct sockaddr_storage *client,
			     unsigned short listener, struct sockaddr_storage *orig, struct proxy_peer *peer);

#endif
