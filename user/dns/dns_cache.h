/* SPDX-License-Identifier: MIT */
/*
 * One sandbox's DNS answer cache (the resolver's; one resolver per sandbox,
 * so the cache is per sandbox by construction). It keeps upstream answers the
 * resolver already accepted, keyed by the question (the canonical lower-case
 * name, type, class) and whether the query carried EDNS (the upstream was
 * asked with or without it, and the answer's size and OPT record follow).
 * A positive answer lives as long as the smallest TTL of its answer section,
 * a negative one (NXDOMAIN, NODATA) as its SOA says (RFC 2308) and not at all
 * without one; SERVFAIL, other errors and truncated answers are never kept.
 * Bounded in entries and bytes, least recently used evicted first. Not
 * thread-safe: the resolver's thread alone uses it. It never decides
 * anything: the resolver asks the policy first, for every query.
 */
#ifndef BPFBOX_DNS_CACHE_H
#define BPFBOX_DNS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns_msg.h"

#define DNS_CACHE_ENTRIES 512
#define DNS_CACHE_BYTES (512 * 1024)
/* A larger answer is not kept (it is rare, and one would crowd out many small ones). */
#define DNS_CACHE_MSG_MAX DNS_UDP_MAX
/* Addresses kept per answer for re-learning them on a hit. */
#define DNS_CACHE_ADDRS 64
/* No answer is kept longer than a day, whatever its TTL says. */
#define DNS_CACHE_TTL_MAX 86400

struct dns_cache;

/* What a hit gave (dns_cache_get). */
struct dns_cache_hit {
	size_t len; /* of the answer written */
	unsigned rcode;
	size_t n_addrs; /* addresses written, each with its remaining TTL */
};

/* 0 for either limit: the default above. NULL when out of memory. */
struct dns_cache *dns_cache_new(size_t max_entries, size_t max_bytes);
void dns_cache_free(struct dns_cache *c);
/* Forgets every answer (a live policy update). */
void dns_cache_flush(struct dns_cache *c);
size_t dns_cache_entries(const struct dns_cache *c);
size_t dns_cache_bytes(const struct dns_cache *c);

/*
 * Keeps msg (len bytes), the upstream's answer to question q that the
 * resolver accepted, with the addresses it bound to q (n, at most
 * DNS_CACHE_ADDRS are kept), at now_ms (CLOCK_MONOTONIC). An answer already
 * kept for the same key is replaced. Returns 0 when kept; -EAGAIN when the
 * answer is not to be cached (an error, truncated, no lifetime), -EINVAL when
 * it is malformed or not to q, -EFBIG when too large, -ENOMEM.
 */
int dns_cache_put(struct dns_cache *c, const struct dns_question *q, const uint8_t *msg, size_t len,
		  const struct dns_addr *addrs, size_t n, long long now_ms);

/*
 * The kept answer to the client's query (its bytes, question q parsed from
 * them), or nothing. On a hit writes the answer to out with the client's id
 * and the client's question bytes (its letter case), every TTL lowered by the
 * whole seconds since it was kept, and up to max addresses with their
 * remaining TTL; fills *hit and returns 1. An entry whose answer section's
 * smallest TTL has run out is dropped: 0, as for a miss.
 */
int dns_cache_get(struct dns_cache *c, const uint8_t *query, const struct dns_question *q, long long now_ms,
		  uint8_t *out, size_t outlen, struct dns_addr *addrs, size_t max, struct dns_cache_hit *hit);

/* A fuzzing entry point: the bytes kept as an answer and read back. Returns 0. */
int dns_cache_fuzz_one(const uint8_t *data, size_t len);

#endif
