// SPDX-License-Identifier: MIT
/* The sandbox resolver's answer cache: what it keeps, for how long, what a hit looks like, its bounds. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "dns/dns_cache.h"
#include "dns/dns_msg.h"

#include "dns_test_query.h"

static size_t rr(uint8_t *b, size_t o, uint16_t type, uint32_t ttl, const uint8_t *rdata, uint16_t rdlen)
{
	b[o++] = 0xc0; /* the question's name */
	b[o++] = 12;
	b[o++] = type >> 8;
	b[o++] = type & 0xff;
	b[o++] = 0;
	b[o++] = 1;
	b[o++] = ttl >> 24;
	b[o++] = ttl >> 16;
	b[o++] = ttl >> 8;
	b[o++] = ttl;
	b[o++] = rdlen >> 8;
	b[o++] = rdlen & 0xff;
	memcpy(b + o, rdata, rdlen);
	return o + rdlen;
}

/* An SOA owned by the question's name: MNAME and RNAME the root, MINIMUM min. */
static size_t soa(uint8_t *b, size_t o, uint32_t ttl, uint32_t min)
{
	uint8_t rd[22] = { 0 };

	rd[18] = min >> 24;
	rd[19] = min >> 16;
	rd[20] = min >> 8;
	rd[21] = min;
	return rr(b, o, DNS_TYPE_SOA, ttl, rd, sizeof(rd));
}

/*
 * The upstream's answer to (lower-case) NAME/type with rcode, an address
 * records of ttl (192.0.2.1, .2, ...), ns SOA records (TTL soa_ttl, MINIMUM
 * soa_min), and the OPT record when edns.
 */
static size_t answer(uint8_t *b, const char *name, uint16_t type, unsigned rcode, unsigned an, uint32_t ttl, unsigned ns,
		     uint32_t soa_ttl, uint32_t soa_min, bool edns)
{
	size_t o = make_query(b, 0xbeef, name, type, false);

	b[2] = 0x81;
	b[3] = 0x80 | rcode;
	b[7] = (uint8_t)an;
	b[9] = (uint8_t)ns;
	b[11] = edns;
	for (unsigned i = 0; i < an; i++)
		o = rr(b, o, DNS_TYPE_A, ttl, (const uint8_t[]){ 192, 0, 2, (uint8_t)(i + 1) }, 4);
	for (unsigned i = 0; i < ns; i++)
		o = soa(b, o, soa_ttl, soa_min);
	if (edns) {
		static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0 }; /* flags: DO */

		memcpy(b + o, opt, sizeof(opt));
		o += sizeof(opt);
	}
	return o;
}

static uint32_t ttl_at(const uint8_t *b, size_t rr_off)
{
	return (uint32_t)b[rr_off + 6] << 24 | (uint32_t)b[rr_off + 7] << 16 | (uint32_t)b[rr_off + 8] << 8 | b[rr_off + 9];
}

struct fixture {
	struct dns_cache *c;
	uint8_t q[512], a[1024], out[DNS_CACHE_MSG_MAX];
	size_t qn, an;
	struct dns_question qq;
	struct dns_addr addrs[4];
	struct dns_cache_hit hit;
};

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	f.c = dns_cache_new(0, 0);
	*state = &f;
	return f.c ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	dns_cache_free(f->c);
	return 0;
}

/* The client's query NAME (as spelt), parsed into f->qq. */
static void ask(struct fixture *f, uint16_t id, const char *name, uint16_t type, bool edns)
{
	f->qn = make_query(f->q, id, name, type, edns);
	assert_int_equal(dns_parse_query(f->q, f->qn, &f->qq), 0);
}

static int get(struct fixture *f, long long now)
{
	return dns_cache_get(f->c, f->q, &f->qq, now, f->out, sizeof(f->out), f->addrs, 4, &f->hit);
}

static void put_a(struct fixture *f, uint32_t ttl, long long now)
{
	struct dns_addr a[2] = { { .family = AF_INET, .addr = { 192, 0, 2, 1 }, .ttl = ttl },
				 { .family = AF_INET, .addr = { 192, 0, 2, 2 }, .ttl = ttl } };

	f->an = answer(f->a, f->qq.name, f->qq.qtype, DNS_RCODE_NOERROR, 2, ttl, 0, 0, 0, f->qq.edns);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, a, 2, now), 0);
}

/* A hit: the answer kept, with the client's id and its question's letter case; the addresses. */
static void test_hit_id_and_case(void **state)
{
	struct fixture *f = *state;

	ask(f, 0x1111, "www.example.com", DNS_TYPE_A, true);
	assert_int_equal(get(f, 1000), 0);
	put_a(f, 300, 1000);
	assert_int_equal(dns_cache_entries(f->c), 1);
	ask(f, 0x2222, "WwW.ExAmple.COM", DNS_TYPE_A, true);
	assert_int_equal(get(f, 1500), 1);
	assert_int_equal(f->hit.len, f->an);
	assert_int_equal(f->hit.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(f->out[0], 0x22); /* the client's id */
	assert_int_equal(f->out[1], 0x22);
	assert_memory_equal(f->out + 2, f->a + 2, 10); /* the upstream's flags and counts */
	assert_memory_equal(f->out + 12, "\3WwW\7ExAmple\3COM", 17); /* the client's case */
	assert_memory_equal(f->out + f->qq.end, f->a + f->qq.end, f->an - f->qq.end);
	assert_int_equal(f->hit.n_addrs, 2);
	assert_memory_equal(f->addrs[1].addr, ((uint8_t[]){ 192, 0, 2, 2 }), 4);
	assert_int_equal(f->addrs[0].ttl, 300);
	/* Another type, or the same question without EDNS, is another key. */
	ask(f, 0x3333, "www.example.com", DNS_TYPE_AAAA, true);
	assert_int_equal(get(f, 1500), 0);
	ask(f, 0x3333, "www.example.com", DNS_TYPE_A, false);
	assert_int_equal(get(f, 1500), 0);
}

/* TTLs lowered by the whole seconds since the answer was kept, OPT's flags untouched; then gone. */
static void test_ttl_decrement_and_expiry(void **state)
{
	struct fixture *f = *state;
	size_t first;

	ask(f, 1, "ttl.test", DNS_TYPE_A, true);
	put_a(f, 10, 5000);
	first = f->qq.end;
	assert_int_equal(get(f, 7999), 1); /* 2.999 s: 2 whole seconds */
	assert_int_equal(ttl_at(f->out, first), 8);
	assert_int_equal(ttl_at(f->out, first + 16), 8);
	assert_int_equal(f->addrs[0].ttl, 8);
	assert_memory_equal(f->out + f->hit.len - 11, f->a + f->an - 11, 11); /* the OPT record as it came */
	assert_int_equal(get(f, 14999), 1);
	assert_int_equal(ttl_at(f->out, first), 1);
	assert_int_equal(get(f, 15000), 0); /* 10 s: the answer's TTL has run out */
	assert_int_equal(dns_cache_entries(f->c), 0);
}

/* The smallest TTL of the answer section decides; other records never go below 0. */
static void test_smallest_ttl(void **state)
{
	struct fixture *f = *state;
	size_t o;

	ask(f, 1, "mixed.test", DNS_TYPE_A, false);
	o = make_query(f->a, 7, "mixed.test", DNS_TYPE_A, false);
	f->a[2] = 0x81;
	f->a[3] = 0x80;
	f->a[7] = 2;
	f->a[9] = 1;
	o = rr(f->a, o, DNS_TYPE_A, 100, (const uint8_t[]){ 192, 0, 2, 1 }, 4);
	o = rr(f->a, o, DNS_TYPE_A, 5, (const uint8_t[]){ 192, 0, 2, 2 }, 4);
	o = soa(f->a, o, 2, 2); /* authority: shorter than the answer, aged to 0, not the entry's life */
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, o, NULL, 0, 0), 0);
	assert_int_equal(get(f, 4000), 1);
	assert_int_equal(ttl_at(f->out, f->qq.end), 96);
	assert_int_equal(ttl_at(f->out, f->qq.end + 16), 1);
	assert_int_equal(ttl_at(f->out, f->qq.end + 32), 0);
	assert_int_equal(f->hit.n_addrs, 0);
	assert_int_equal(get(f, 5000), 0);
}

/* NXDOMAIN and NODATA for as long as their SOA says (RFC 2308), not without one. */
static void test_negative(void **state)
{
	struct fixture *f = *state;

	ask(f, 1, "nx.test", DNS_TYPE_A, false);
	f->an = answer(f->a, "nx.test", DNS_TYPE_A, DNS_RCODE_NXDOMAIN, 0, 0, 1, 60, 5, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), 0);
	assert_int_equal(get(f, 4999), 1); /* min(SOA TTL 60, MINIMUM 5) */
	assert_int_equal(f->hit.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(f->hit.n_addrs, 0);
	assert_int_equal(ttl_at(f->out, f->qq.end), 56);
	assert_int_equal(get(f, 5000), 0);

	ask(f, 1, "nodata.test", DNS_TYPE_AAAA, false);
	f->an = answer(f->a, "nodata.test", DNS_TYPE_AAAA, DNS_RCODE_NOERROR, 0, 0, 1, 3, 900, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), 0);
	assert_int_equal(get(f, 2999), 1); /* min(SOA TTL 3, MINIMUM 900) */
	assert_int_equal(f->hit.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(get(f, 3000), 0);

	ask(f, 1, "nosoa.test", DNS_TYPE_A, false);
	f->an = answer(f->a, "nosoa.test", DNS_TYPE_A, DNS_RCODE_NXDOMAIN, 0, 0, 0, 0, 0, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EAGAIN);
	f->an = answer(f->a, "nosoa.test", DNS_TYPE_A, DNS_RCODE_NOERROR, 0, 0, 0, 0, 0, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EAGAIN);
	assert_int_equal(get(f, 0), 0);
	assert_int_equal(dns_cache_entries(f->c), 0);
}

/* SERVFAIL, REFUSED, truncated and zero-TTL answers are never kept; nor are malformed or foreign ones. */
static void test_not_cached(void **state)
{
	struct fixture *f = *state;

	ask(f, 1, "fail.test", DNS_TYPE_A, false);
	f->an = answer(f->a, "fail.test", DNS_TYPE_A, DNS_RCODE_SERVFAIL, 0, 0, 1, 60, 60, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EAGAIN);
	f->an = answer(f->a, "fail.test", DNS_TYPE_A, DNS_RCODE_REFUSED, 0, 0, 0, 0, 0, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EAGAIN);
	f->an = answer(f->a, "fail.test", DNS_TYPE_A, DNS_RCODE_NOERROR, 1, 60, 0, 0, 0, false);
	f->a[2] |= 0x02; /* TC */
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EAGAIN);
	f->an = answer(f->a, "fail.test", DNS_TYPE_A, DNS_RCODE_NOERROR, 1, 0, 0, 0, 0, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EAGAIN);
	f->an = answer(f->a, "fail.test", DNS_TYPE_A, DNS_RCODE_NOERROR, 1, 60, 0, 0, 0, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an - 1, NULL, 0, 0), -EINVAL); /* cut short */
	f->a[f->an] = 0;
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an + 1, NULL, 0, 0), -EINVAL); /* a byte after */
	f->an = answer(f->a, "other.test", DNS_TYPE_A, DNS_RCODE_NOERROR, 1, 60, 0, 0, 0, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EINVAL); /* another question */
	assert_int_equal(get(f, 0), 0);
	assert_int_equal(dns_cache_entries(f->c), 0);
}

/* At the cap, the least recently used entry goes; a hit makes an entry recent. */
static void test_lru_eviction(void **state)
{
	struct fixture *f = *state;
	struct dns_cache *big = f->c;
	char name[32];
	size_t per;

	f->c = dns_cache_new(3, 0);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		ask(f, 1, name, DNS_TYPE_A, false);
		put_a(f, 60, i);
	}
	ask(f, 1, "n0.test", DNS_TYPE_A, false);
	assert_int_equal(get(f, 10), 1); /* n0 recent; n1 is now the oldest */
	ask(f, 1, "n3.test", DNS_TYPE_A, false);
	put_a(f, 60, 20);
	assert_int_equal(dns_cache_entries(f->c), 3);
	ask(f, 1, "n1.test", DNS_TYPE_A, false);
	assert_int_equal(get(f, 30), 0);
	for (int i = 0; i < 4; i++) {
		if (i == 1)
			continue;
		snprintf(name, sizeof(name), "n%d.test", i);
		ask(f, 1, name, DNS_TYPE_A, false);
		assert_int_equal(get(f, 30), 1);
	}
	/* The same question again replaces its entry, it does not add one. */
	put_a(f, 60, 40);
	assert_int_equal(dns_cache_entries(f->c), 3);
	dns_cache_free(f->c);

	/* The byte bound: room for two and a half answers, so the third evicts the first. */
	f->c = dns_cache_new(100, 0);
	ask(f, 1, "b0.test", DNS_TYPE_A, false);
	put_a(f, 60, 0);
	per = dns_cache_bytes(f->c); /* one entry: the answer, its addresses and the entry's own size */
	assert_true(per > f->an);
	dns_cache_free(f->c);
	f->c = dns_cache_new(100, per * 5 / 2);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "b%d.test", i);
		ask(f, 1, name, DNS_TYPE_A, false);
		put_a(f, 60, i);
	}
	assert_true(dns_cache_bytes(f->c) <= per * 5 / 2);
	assert_int_equal(dns_cache_entries(f->c), 2);
	ask(f, 1, "b0.test", DNS_TYPE_A, false);
	assert_int_equal(get(f, 10), 0);
	ask(f, 1, "b2.test", DNS_TYPE_A, false);
	assert_int_equal(get(f, 10), 1);
	dns_cache_free(f->c);
	f->c = big;
}

static void test_flush(void **state)
{
	struct fixture *f = *state;

	ask(f, 1, "a.test", DNS_TYPE_A, false);
	put_a(f, 60, 0);
	ask(f, 1, "b.test", DNS_TYPE_A, false);
	put_a(f, 60, 0);
	assert_int_equal(dns_cache_entries(f->c), 2);
	dns_cache_flush(f->c);
	assert_int_equal(dns_cache_entries(f->c), 0);
	assert_int_equal(dns_cache_bytes(f->c), 0);
	assert_int_equal(get(f, 1), 0);
	put_a(f, 60, 2); /* still usable */
	assert_int_equal(get(f, 3), 1);
}

/* A TTL over a day is kept a day at most; the high bit set reads as 0 (RFC 2181). */
static void test_ttl_bounds(void **state)
{
	struct fixture *f = *state;

	ask(f, 1, "long.test", DNS_TYPE_A, false);
	put_a(f, 7 * 86400, 0);
	assert_int_equal(get(f, 86400LL * 1000 - 1), 1);
	assert_int_equal(get(f, 86400LL * 1000), 0);
	f->an = answer(f->a, "long.test", DNS_TYPE_A, DNS_RCODE_NOERROR, 1, 0x80000005u, 0, 0, 0, false);
	assert_int_equal(dns_cache_put(f->c, &f->qq, f->a, f->an, NULL, 0, 0), -EAGAIN);
}

static void test_fuzz_smoke(void **state)
{
	struct fixture *f = *state;

	ask(f, 1, "example.com", DNS_TYPE_A, false);
	f->an = answer(f->a, "example.com", DNS_TYPE_A, DNS_RCODE_NOERROR, 2, 5, 1, 5, 5, false);
	for (size_t n = 0; n <= f->an; n++)
		dns_cache_fuzz_one(f->a, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hit_id_and_case, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ttl_decrement_and_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smallest_ttl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_negative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lru_eviction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ttl_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzz_smoke, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
