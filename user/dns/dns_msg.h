/* SPDX-License-Identifier: MIT */
/*
 * DNS messages (RFC 1035) as the sandbox's resolver sees them: a strict
 * parser for the one question a client may ask, a parser for the upstream's
 * answer that finds the addresses bound to that question (through CNAMEs),
 * and the few answers the resolver writes itself. Pure functions, no
 * allocation: safe to feed hostile bytes (see dns_fuzz_one).
 */
#ifndef BPFBOX_DNS_MSG_H
#define BPFBOX_DNS_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_LEN 12
/* A name as text: at most 253 characters and the NUL. */
#define DNS_NAME_MAX 254
/* Largest message over UDP the resolver reads or sends; TCP allows 65535. */
#define DNS_UDP_MAX 4096
#define DNS_TCP_MAX 65535

#define DNS_TYPE_A 1
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_SOA 6
#define DNS_TYPE_AAAA 28
#define DNS_TYPE_OPT 41
#define DNS_CLASS_IN 1

#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5
/* The UDP payload size the resolver offers upstream with EDNS (the DNS flag day's 1232). */
#define DNS_EDNS_PAYLOAD 1232

struct dns_question {
	char name[DNS_NAME_MAX]; /* lower case, dots between labels, no trailing dot; "" = the root */
	uint16_t id;
	uint16_t qtype;
	uint16_t qclass;
	bool rd; /* recursion desired, echoed in our own answers */
	bool edns; /* the query carried an EDNS OPT record */
	size_t end; /* offset just past the question in the message */
};

/* An address an answer binds to the question's name. */
struct dns_addr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint32_t ttl;
};

/*
 * A client's query: header with QR 0, opcode QUERY, exactly one question and
 * no answer or authority records, at most one additional record which must
 * be an EDNS OPT at the root; nothing after it. The name must not be
 * compressed, labels are 1-63 bytes of letters, digits, '-' and '_'.
 * Returns 0; -EINVAL when malformed (then *q->id and q->rd are set if the
 * header could be read, and q->end is 0 unless the question parsed);
 * -EOPNOTSUPP for an opcode other than QUERY.
 */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *q);

/*
 * Optional to dns_parse_answer: asked of every name the question's leads to
 * through CNAMEs. When denied says so (and names its rule), the answer gives
 * no address: *n is 0, hit is set and via names the name.
 */
struct dns_chain_check {
	bool (*denied)(void *ctx, const char *name, const char **rule);
	void *ctx;
	bool hit;
	const char *rule;
	char via[DNS_NAME_MAX];
};

/*
 * An upstream answer to question q (sent with id): QR set, the same id and
 * the same single question. Every record of the answer section is checked
 * for bounds; A and AAAA records of class IN owned by the question's name or
 * by a name a CNAME chain from it reaches are written to out (at most max;
 * *n says how many), unless check (optional) refuses a name of the chain.
 * *rcode is the answer's RCODE. Returns 0 or -EINVAL.
 */
int dns_parse_answer(const uint8_t *msg, size_t len, uint16_t id, const struct dns_question *q,
		     struct dns_addr *out, size_t max, size_t *n, unsigned *rcode, struct dns_chain_check *check);

/*
 * Writes the resolver's own answer to query (len bytes, question q) with
 * rcode: the header and, when the question parsed, the question. Returns the
 * length written or -ENOSPC.
 */
int dns_build_error(const uint8_t *query, const struct dns_question *q, unsigned rcode, uint8_t *out,
		    size_t outlen);

/*
 * The resolver's own NOERROR answer to query q with the addresses given (A
 * or AAAA by family, owned by the question's name; none is NODATA). Returns
 * the length written or -ENOSPC.
 */
int dns_build_answer(const uint8_t *query, const struct dns_question *q, const struct dns_addr *addrs, size_t n,
		     uint8_t *out, size_t outlen);

/*
 * The query the resolver sends upstream for question q: rebuilt, never the
 * client's bytes. Header with id, RD and one question; the question's
 * canonical (lower-case) name, type and class; with q->edns an OPT record
 * offering DNS_EDNS_PAYLOAD and nothing else (no client options, no cookie,
 * no DO bit). Returns the length written or -ENOSPC.
 */
int dns_build_query(const struct dns_question *q, uint16_t id, uint8_t *out, size_t outlen);

/* What the resolver's cache needs to know of an upstream answer (dns_answer_scan). */
struct dns_answer_info {
	unsigned rcode;
	bool truncated; /* TC: the upstream had more to say */
	uint16_t an; /* records in the answer section */
	uint32_t min_answer_ttl; /* the smallest TTL in the answer section; UINT32_MAX when it is empty */
	bool soa; /* the authority section holds an SOA record */
	uint32_t negative_ttl; /* RFC 2308 section 5: min(the SOA's TTL, its MINIMUM), when soa */
	size_t question_end; /* offset just past the question */
};

/*
 * Walks every record of an answer (answer, authority and additional
 * sections), each in bounds, an SOA's fields in its RDATA, nothing after the
 * last record. TTLs with the high bit set read as 0 (RFC 2181). Checks the
 * form only, not that the answer is to any question (dns_parse_answer does).
 * Returns 0 or -EINVAL.
 */
int dns_answer_scan(const uint8_t *msg, size_t len, struct dns_answer_info *info);

/*
 * Writes to out (a copy of msg, len bytes; not msg itself) the TTL of every
 * record of msg lowered by age seconds, never below 0; an OPT record's TTL
 * field holds flags and is left alone. The records are found in msg, as
 * dns_answer_scan finds them, so a hostile name pointing into a TTL field
 * cannot change which bytes are written. Returns 0 or -EINVAL (then some
 * TTLs may be written already).
 */
int dns_answer_age(const uint8_t *msg, uint8_t *out, size_t len, uint32_t age);

/* A fuzzing entry point: both parsers on arbitrary bytes. Returns 0. */
int dns_fuzz_one(const uint8_t *data, size_t len);

#endif
