/* SPDX-License-Identifier: MIT */
/*
 * One sandbox's DNS resolver. The kernel sends every port-53 query of the
 * sandbox here (UDP and TCP, IPv4 on 127.0.0.1 and IPv6 on ::1). A name the
 * decide callback allows is asked of the upstream servers (the host's
 * /etc/resolv.conf); the answer's addresses are handed to on_answer before
 * the answer leaves. Any other name gets NXDOMAIN. Answers are cached
 * (dns_cache.h; every sandbox has its own resolver, so its own cache): a
 * repeated question the policy still allows is answered from the cache, its
 * addresses handed to on_answer again with their remaining TTL first.
 */
#ifndef BPFBOX_DNS_SERVER_H
#define BPFBOX_DNS_SERVER_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "dns_msg.h"

#define DNS_MAX_UPSTREAMS 3

/* The task that sent a query, when the embedder can tell (dns_server_config.sender). */
struct dns_sender {
	bool known;
	int pid, tid;
	unsigned uid;
	char comm[16]; /* NUL-terminated */
};

/* Who asked: the address as the resolver saw it, and which of its sockets got it. */
struct dns_client {
	char text[INET6_ADDRSTRLEN + 8]; /* "127.0.0.1:40000", "[::1]:40000" */
	unsigned short port; /* the client's */
	unsigned short listener; /* the resolver's port it reached */
	int family; /* of that listener: AF_INET or AF_INET6 */
	bool tcp;
	struct dns_sender sender;
};

/* What happened to one query, for the log. */
struct dns_query_event {
	const char *name; /* the question, canonical; NULL when malformed */
	unsigned qtype;
	const char *transport; /* "udp" or "tcp" */
	const struct dns_client *client;
	bool allowed;
	const char *rule;
	const char *reason;
	unsigned rcode; /* what the client got; DNS_RCODE_SERVFAIL when no upstream answered */
	size_t n_addrs; /* addresses in the answer bound to the name */
	const char *error;
	bool synthesized; /* answered by the resolver itself (synthesize), upstream not asked */
	bool cached; /* answered from the cache, upstream not asked */
};

struct dns_server_config {
	/* Is the name allowed? rule (and reason) name the policy entry; they must outlive the call. */
	bool (*decide)(void *ctx, const char *name, const char **rule, const char **reason);
	/*
	 * Is this query type answered for an allowed name? Others get REFUSED
	 * and are never asked upstream. NULL: A and AAAA only.
	 */
	bool (*answers_type)(void *ctx, unsigned qtype);
	/*
	 * Optional: does the policy deny this name outright (deniedDomains, not
	 * merely left out of the allowed)? Asked of each name an upstream
	 * answer's CNAMEs lead to: such an answer becomes NXDOMAIN, with nothing
	 * learned or kept.
	 */
	bool (*denied_outright)(void *ctx, const char *name, const char **rule);
	/* Called with the addresses of an allowed answer before the client sees it. */
	void (*on_answer)(void *ctx, const char *name, const struct dns_addr *addrs, size_t n);
	void (*on_event)(void *ctx, const struct dns_query_event *ev);
	/* Optional: called about once a second from the resolver's thread, busy or idle. */
	void (*tick)(void *ctx);
	/*
	 * Optional: who sent from this client's address, asked as the query
	 * arrives (a datagram's socket may be gone by the time the answer is).
	 */
	void (*sender)(void *ctx, const struct dns_client *c, struct dns_sender *out);
	/*
	 * Optional: the resolver answers allowed names itself, never asking
	 * upstream (a parent proxy reaches them by name). Writes at most max
	 * addresses for qtype (none for a type with no address: NODATA) and
	 * returns how many; negative errno answers SERVFAIL.
	 */
	int (*synthesize)(void *ctx, const char *name, unsigned qtype, struct dns_addr *out, size_t max);
	void *ctx;
	/* Upstream servers; n_upstreams 0 means those of /etc/resolv.conf. */
	struct sockaddr_storage upstreams[DNS_MAX_UPSTREAMS];
	size_t n_upstreams;
	unsigned timeout_ms; /* per upstream try; 0 = 2000 */
};

struct dns_server;

/*
 * Binds UDP and TCP on 127.0.0.1 (same port, *port4) and on ::1 (*port6,
 * 0 when the host has no IPv6 loopback) and starts the resolver's thread.
 */
int dns_server_start(const struct dns_server_config *cfg, struct dns_server **out, unsigned short *port4,
		     unsigned short *port6);
void dns_server_stop(struct dns_server *s);
/*
 * Forgets every cached answer before the next query is answered (a live
 * policy update). Any thread: the resolver's thread empties the cache itself.
 */
void dns_server_flush_cache(struct dns_server *s);

/* The nameserver lines of a resolv.conf (port 53). Returns how many, or a negative errno. */
int dns_read_resolv_conf(const char *path, struct sockaddr_storage *out, size_t max);

#endif
