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

#include "policy/policy.h"
#include "sandbox/bpf_state.h"

struct proxy_peer;

/* Names and addresses kept per sandbox; answers beyond this teach nothing. */
#define LEARNED_MAX 4096
/*
 * An answer's addresses stay learned for its TTL, but at least this long:
 * clients cache answers past their TTL (the JVM, connection pools), and an
 * established connection is never cut (the kernel decides at connect).
 */
#define LEARNED_TTL_FLOOR_S 300

struct learned_entry {
	int family; /* AF_INET (addr[0..3]) or AF_INET6 */
	uint8_t addr[16];
	char name[256];
	unsigned long long expires_ms; /* CLOCK_MONOTONIC; 0 = for the sandbox's life */
};

struct sandbox_learned {
	pthread_mutex_t lock;
	struct learned_entry *v;
	size_t n;
	const struct policy *policy;
	int map_fd, tconn_fd;
	uint64_t sandbox;
	uint32_t next_synth4, next_synth6; /* addresses handed out so far in each range */
};

int sandbox_learned_init(struct sandbox_learned *l, const struct policy *p, const struct bpf_state *st,
			 uint64_t sandbox);
/* Frees the table; the kernel entries go with sandbox_maps_remove. */
void sandbox_learned_free(struct sandbox_learned *l);
/* Learns family/addr (4 or 16 bytes) for a canonical name; ttl_s < 0: for the sandbox's life. */
void sandbox_learned_add(struct sandbox_learned *l, const char *name, int family, const void *addr, long ttl_s);
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
 * keeps its address. 0, or -ENOSPC when the table or the range is full.
 */
int sandbox_learned_synthesize(struct sandbox_learned *l, const char *name, int family, uint8_t addr[16]);
/* Is addr in the synthesized ranges? */
bool sandbox_learned_is_synthetic(int family, const uint8_t addr[16]);
/*
 * The original destination of a connection the proxy accepted on a
 * transparent listener, and who connected (taken once).
 */
int sandbox_learned_orig_dst(struct sandbox_learned *l, const struct sockaddr_storage *client,
			     unsigned short listener, struct sockaddr_storage *orig, struct proxy_peer *peer);

#endif
