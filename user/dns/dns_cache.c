// SPDX-License-Identifier: MIT
/* The sandbox resolver's answer cache: a hash of questions, a least-recently-used list, two bounds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dns_cache.h"

#define BUCKETS 1024 /* a power of two, twice the default entries */

struct entry {
	struct entry *prev, *next; /* the LRU list: most recent first */
	struct entry *hnext; /* its bucket's chain */
	uint32_t hash;
	char name[DNS_NAME_MAX];
	uint16_t qtype, qclass;
	bool edns;
	long long stored_ms, expires_ms;
	unsigned rcode;
	size_t size; /* the allocation, counted against the byte bound */
	size_t qend; /* just past the question, in msg */
	size_t n_addrs;
	struct dns_addr *addrs; /* in the same allocation, after the entry */
	size_t len;
	uint8_t *msg; /* likewise, after the addresses */
};

struct dns_cache {
	struct entry *bucket[BUCKETS];
	struct entry *head, *tail;
	size_t n, bytes, max_n, max_bytes;
};

static uint32_t key_hash(const char *name, uint16_t qtype, uint16_t qclass, bool edns)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	uint8_t tail[5] = { qtype >> 8, qtype & 0xff, qclass >> 8, qclass & 0xff, edns };

	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (size_t i = 0; i < sizeof(tail); i++)
		h = (h ^ tail[i]) * 16777619u;
	return h;
}

struct dns_cache *dns_cache_new(size_t max_entries, size_t max_bytes)
{
	struct dns_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max_n = max_entries ? max_entries : DNS_CACHE_ENTRIES;
	c->max_bytes = max_bytes ? max_bytes : DNS_CACHE_BYTES;
	return c;
}

static void unlink_lru(struct dns_cache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct dns_cache *c, struct entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void drop(struct dns_cache *c, struct entry *e)
{
	struct entry **pp = &c->bucket[e->hash & (BUCKETS - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	unlink_lru(c, e);
	c->n--;
	c->bytes -= e->size;
	free(e);
}

void dns_cache_flush(struct dns_cache *c)
{
	while (c && c->head)
		drop(c, c->head);
}

void dns_cache_free(struct dns_cache *c)
{
	dns_cache_flush(c);
	free(c);
}

size_t dns_cache_entries(const struct dns_cache *c)
{
	return c ? c->n : 0;
}

size_t dns_cache_bytes(const struct dns_cache *c)
{
	return c ? c->bytes : 0;
}

static struct entry *find(struct dns_cache *c, const struct dns_question *q)
{
	uint32_t h = key_hash(q->name, q->qtype, q->qclass, q->edns);

	for (struct entry *e = c->bucket[h & (BUCKETS - 1)]; e; e = e->hnext)
		if (e->hash == h && e->qtype == q->qtype && e->qclass == q->qclass && e->edns == q->edns &&
		    !strcmp(e->name, q->name))
			return e;
	return NULL;
}

/* Equal bytes but for the letter case of ASCII letters (names on the wire). */
static bool same_nocase(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t x = a[i] >= 'A' && a[i] <= 'Z' ? a[i] + 32 : a[i];
		uint8_t y = b[i] >= 'A' && b[i] <= 'Z' ? b[i] + 32 : b[i];

		if (x != y)
			return false;
	}
	return true;
}

/*
 * How long an answer may be kept, in seconds; 0: not at all. Positive: the
 * smallest TTL of its answer section. Negative (NXDOMAIN, or NOERROR with no
 * answer record): the SOA's (RFC 2308), bounded by any CNAME before it.
 */
static uint32_t lifetime(const struct dns_answer_info *info)
{
	uint32_t t;

	if (info->truncated)
		return 0;
	if (info->rcode == DNS_RCODE_NOERROR && info->an)
		t = info->min_answer_ttl;
	else if (info->rcode == DNS_RCODE_NXDOMAIN || info->rcode == DNS_RCODE_NOERROR)
		t = !info->soa ? 0 : info->negative_ttl < info->min_answer_ttl ? info->negative_ttl : info->min_answer_ttl;
	else
		return 0; /* SERVFAIL above all: an upstream's passing failure is not remembered */
	return t > DNS_CACHE_TTL_MAX ? DNS_CACHE_TTL_MAX : t;
}

/* Room for size more bytes and one more entry: the least recently used go first. */
static void make_room(struct dns_cache *c, size_t size)
{
	while (c->tail && (c->n >= c->max_n || c->bytes + size > c->max_bytes))
		drop(c, c->tail);
}

int dns_cache_put(struct dns_cache *c, const struct dns_question *q, const uint8_t *msg, size_t len,
		  const struct dns_addr *addrs, size_t n, long long now_ms)
{
	uint8_t canon[DNS_HEADER_LEN + DNS_NAME_MAX + 1 + 4 + 11];
	struct dns_answer_info info;
	struct entry *e;
	uint32_t life;
	size_t size;
	int m;

	if (len > DNS_CACHE_MSG_MAX)
		return -EFBIG;
	if (dns_answer_scan(msg, len, &info))
		return -EINVAL;
	life = lifetime(&info);
	if (!life)
		return -EAGAIN;
	/* The answer's question is q's, uncompressed, so a client's own question bytes fit in its place. */
	m = dns_build_query(q, 0, canon, sizeof(canon));
	if (m < 0 || info.question_end != q->end || q->end > (size_t)m ||
	    !same_nocase(msg + DNS_HEADER_LEN, canon + DNS_HEADER_LEN, q->end - DNS_HEADER_LEN))
		return -EINVAL;
	if (n > DNS_CACHE_ADDRS)
		n = DNS_CACHE_ADDRS;
	size = sizeof(*e) + n * sizeof(*addrs) + len;
	if (size > c->max_bytes)
		return -EFBIG;
	e = find(c, q);
	if (e)
		drop(c, e);
	make_room(c, size);
	e = calloc(1, size);
	if (!e)
		return -ENOMEM;
	e->size = size;
	e->hash = key_hash(q->name, q->qtype, q->qclass, q->edns);
	memcpy(e->name, q->name, sizeof(e->name));
	e->qtype = q->qtype;
	e->qclass = q->qclass;
	e->edns = q->edns;
	e->stored_ms = now_ms;
	e->expires_ms = now_ms + (long long)life * 1000;
	e->rcode = info.rcode;
	e->qend = info.question_end;
	e->addrs = (struct dns_addr *)(e + 1);
	e->n_addrs = n;
	if (n)
		memcpy(e->addrs, addrs, n * sizeof(*addrs));
	e->msg = (uint8_t *)(e->addrs + n);
	e->len = len;
	memcpy(e->msg, msg, len);
	e->hnext = c->bucket[e->hash & (BUCKETS - 1)];
	c->bucket[e->hash & (BUCKETS - 1)] = e;
	push_front(c, e);
	c->n++;
	c->bytes += size;
	return 0;
}

int dns_cache_get(struct dns_cache *c, const uint8_t *query, const struct dns_question *q, long long now_ms,
		  uint8_t *out, size_t outlen, struct dns_addr *addrs, size_t max, struct dns_cache_hit *hit)
{
	struct entry *e = c ? find(c, q) : NULL;
	uint32_t age;

	if (!e)
		return 0;
	if (now_ms >= e->expires_ms || now_ms < e->stored_ms) {
		drop(c, e);
		return 0;
	}
	/* The client's question must sit where the kept one does (same name, uncompressed). */
	if (e->len > outlen || q->end != e->qend)
		return 0;
	age = (uint32_t)((now_ms - e->stored_ms) / 1000);
	memcpy(out, e->msg, e->len);
	if (dns_answer_age(e->msg, out, e->len, age)) {
		drop(c, e); /* cannot happen: it was scanned when kept */
		return 0;
	}
	out[0] = q->id >> 8;
	out[1] = q->id & 0xff;
	memcpy(out + DNS_HEADER_LEN, query + DNS_HEADER_LEN, q->end - DNS_HEADER_LEN);
	hit->len = e->len;
	hit->rcode = e->rcode;
	hit->n_addrs = e->n_addrs < max ? e->n_addrs : max;
	for (size_t i = 0; i < hit->n_addrs; i++) {
		addrs[i] = e->addrs[i];
		addrs[i].ttl = addrs[i].ttl > age ? addrs[i].ttl - age : 0;
	}
	unlink_lru(c, e);
	push_front(c, e);
	return 1;
}

int dns_cache_fuzz_one(const uint8_t *data, size_t len)
{
	static struct dns_cache *c;
	static uint8_t out[DNS_CACHE_MSG_MAX];
	static const uint8_t query[] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'E', 'x', 'a', 'm', 'p', 'l',
					 'e', 3, 'C', 'o', 'M', 0, 0, 1, 0, 1 };
	struct dns_addr a[2] = { { .family = AF_INET, .ttl = 5 } }, back[2];
	struct dns_question q;
	struct dns_cache_hit hit;

	if (!c)
		c = dns_cache_new(4, 4 * (sizeof(struct entry) + sizeof(a) + DNS_CACHE_MSG_MAX));
	if (!c || dns_parse_query(query, sizeof(query), &q))
		__builtin_trap();
	/* Whatever the bytes, a kept answer comes back whole, the client's id and question in it. */
	if (!dns_cache_put(c, &q, data, len, a, 1, 1000)) {
		/* Within the first second: nothing has expired, no TTL is lowered yet. */
		if (dns_cache_get(c, query, &q, 1999, out, sizeof(out), back, 2, &hit) != 1 || hit.len != len ||
		    memcmp(out, query, 2) || memcmp(out + DNS_HEADER_LEN, query + DNS_HEADER_LEN, q.end - DNS_HEADER_LEN) ||
		    memcmp(out + 2, data + 2, DNS_HEADER_LEN - 2) || hit.n_addrs != 1 || back[0].ttl != 5)
			__builtin_trap();
	}
	if (dns_cache_entries(c) > 4)
		__builtin_trap();
	return 0;
}
