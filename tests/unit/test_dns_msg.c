// SPDX-License-Identifier: MIT
/* The DNS message parsers, the resolver's own answers, and a live resolver against a fake upstream. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "dns/dns_msg.h"
#include "dns/dns_server.h"

#include "dns_test_query.h"

static void test_query_ok(void **state)
{
	uint8_t b[512];
	struct dns_question q;
	size_t n = make_query(b, 0x1234, "WWW.Example.com", DNS_TYPE_A, true);

	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_string_equal(q.name, "www.example.com");
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.qtype, DNS_TYPE_A);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_true(q.rd);
	n = make_query(b, 1, "_dmarc.x-y.test", DNS_TYPE_AAAA, false);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_string_equal(q.name, "_dmarc.x-y.test");
}

static void test_query_malformed(void **state)
{
	uint8_t b[512], c[512];
	struct dns_question q;
	size_t n = make_query(b, 1, "a.example.com", DNS_TYPE_A, false);

	assert_int_equal(dns_parse_query(b, 11, &q), -EINVAL);
	for (size_t i = 12; i < n; i++)
		assert_int_equal(dns_parse_query(b, i, &q), -EINVAL); /* every truncation */
	memcpy(c, b, n);
	c[n] = 0;
	assert_int_equal(dns_parse_query(c, n + 1, &q), -EINVAL); /* trailing byte */
	memcpy(c, b, n);
	c[2] |= 0x80; /* an answer, not a query */
	assert_int_equal(dns_parse_query(c, n, &q), -EINVAL);
	memcpy(c, b, n);
	c[2] |= 0x10; /* opcode 2: STATUS */
	assert_int_equal(dns_parse_query(c, n, &q), -EOPNOTSUPP);
	memcpy(c, b, n);
	c[5] = 2; /* two questions */
	assert_int_equal(dns_parse_query(c, n, &q), -EINVAL);
	memcpy(c, b, n);
	c[7] = 1; /* an answer record in a query */
	assert_int_equal(dns_parse_query(c, n, &q), -EINVAL);
	memcpy(c, b, n);
	c[13] = '.'; /* "a" becomes ".": a dot inside a label would fool the name match */
	assert_int_equal(dns_parse_query(c, n, &q), -EINVAL);
	memcpy(c, b, n);
	c[14] = 0xc0; /* a compression pointer in a question */
	assert_int_equal(dns_parse_query(c, n, &q), -EINVAL);
	memcpy(c, b, n);
	c[13] = 0; /* a NUL byte in a label */
	assert_int_equal(dns_parse_query(c, n, &q), -EINVAL);
	n = make_query(b, 1, "a.example.com", DNS_TYPE_A, true);
	b[n - 9] = 0; /* OPT type 41 -> 0x0029 -> 0x0000 */
	b[n - 8] = 1;
	assert_int_equal(dns_parse_query(b, n, &q), -EINVAL);
}

static void test_build_nxdomain(void **state)
{
	uint8_t b[512], out[512];
	struct dns_question q;
	size_t n = make_query(b, 0xbeef, "denied.test", DNS_TYPE_A, true);
	int len;

	assert_int_equal(dns_parse_query(b, n, &q), 0);
	len = dns_build_error(b, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
	assert_int_equal(len, (int)q.end);
	assert_int_equal(out[0], 0xbe);
	assert_int_equal(out[1], 0xef);
	assert_int_equal(out[2], 0x81); /* QR, RD */
	assert_int_equal(out[3], 0x83); /* RA, NXDOMAIN */
	assert_int_equal(out[5], 1);
	assert_int_equal(out[7] | out[9] | out[11], 0);
	assert_memory_equal(out + 12, b + 12, q.end - 12);
	assert_int_equal(dns_build_error(b, &q, DNS_RCODE_NXDOMAIN, out, 12), -ENOSPC);
}

/* The resolver's own answer (synthesized addresses) is one the answer parser takes, bound to the name. */
static void test_build_answer(void **state)
{
	uint8_t b[512], out[512];
	struct dns_question q;
	struct dns_addr a[2] = { { .family = AF_INET, .addr = { 198, 18, 0, 7 }, .ttl = 60 },
				 { .family = AF_INET6, .addr = { 0x20, 0x01, 0, 2, [15] = 7 }, .ttl = 60 } }, got[4];
	size_t n = make_query(b, 0x1234, "allowed.test", DNS_TYPE_A, true), na;
	unsigned rcode = 9;
	int len;

	assert_int_equal(dns_parse_query(b, n, &q), 0);
	len = dns_build_answer(b, &q, a, 1, out, sizeof(out));
	assert_int_equal(len, (int)q.end + 12 + 4);
	assert_int_equal(out[7], 1); /* ANCOUNT */
	assert_int_equal(dns_parse_answer(out, (size_t)len, 0x1234, &q, got, 4, &na, &rcode, NULL), 0);
	assert_int_equal(rcode, DNS_RCODE_NOERROR);
	assert_int_equal(na, 1);
	assert_memory_equal(got[0].addr, a[0].addr, 4);
	assert_int_equal(got[0].ttl, 60);
	/* No address for the type: NODATA, NOERROR with no record. */
	len = dns_build_answer(b, &q, a, 0, out, sizeof(out));
	assert_int_equal(len, (int)q.end);
	assert_int_equal(dns_parse_answer(out, (size_t)len, 0x1234, &q, got, 4, &na, &rcode, NULL), 0);
	assert_int_equal(na, 0);
	assert_int_equal(rcode, DNS_RCODE_NOERROR);
	n = make_query(b, 0x1235, "allowed.test", DNS_TYPE_AAAA, false);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	len = dns_build_answer(b, &q, a + 1, 1, out, sizeof(out));
	assert_int_equal(dns_parse_answer(out, (size_t)len, 0x1235, &q, got, 4, &na, &rcode, NULL), 0);
	assert_int_equal(na, 1);
	assert_int_equal(got[0].family, AF_INET6);
	assert_memory_equal(got[0].addr, a[1].addr, 16);
	assert_int_equal(dns_build_answer(b, &q, a + 1, 1, out, q.end + 10), -ENOSPC);
}

/* An answer to make_query(..., name, A): header, question, then the records appended by the caller. */
static size_t answer_head(uint8_t *b, uint16_t id, const char *name, uint16_t type, uint16_t ancount)
{
	size_t n = make_query(b, id, name, type, false);

	b[2] = 0x81;
	b[3] = 0x80;
	b[7] = (uint8_t)ancount;
	return n;
}

static size_t rr(uint8_t *b, size_t o, const uint8_t *owner, size_t olen, uint16_t type, uint32_t ttl,
		 const uint8_t *rdata, uint16_t rdlen)
{
	memcpy(b + o, owner, olen);
	o += olen;
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

static bool deny_cdn(void *ctx, const char *name, const char **rule)
{
	*rule = "deniedDomains:cdn.test";
	return !strcmp(name, "cdn.test");
}

static bool deny_other(void *ctx, const char *name, const char **rule)
{
	*rule = "deniedDomains:other.test";
	return !strcmp(name, "other.test") || !strcmp(name, "www.example.com");
}

static void test_answer_cname_chain(void **state)
{
	uint8_t b[1024];
	struct dns_question q = { .name = "www.example.com", .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN };
	struct dns_addr a[8];
	const uint8_t ptr_q[] = { 0xc0, 12 }; /* the question's name */
	const uint8_t cdn[] = { 3, 'c', 'd', 'n', 4, 't', 'e', 's', 't', 0 };
	const uint8_t other[] = { 5, 'o', 't', 'h', 'e', 'r', 4, 't', 'e', 's', 't', 0 };
	const uint8_t ip1[] = { 192, 0, 2, 1 }, ip2[] = { 192, 0, 2, 2 }, ip3[] = { 198, 51, 100, 9 };
	unsigned rcode;
	size_t n, o;

	o = answer_head(b, 7, "www.example.com", DNS_TYPE_A, 4);
	/* The address first, its CNAME after: the chain is found whatever the order. */
	o = rr(b, o, cdn, sizeof(cdn), DNS_TYPE_A, 300, ip1, 4);
	o = rr(b, o, other, sizeof(other), DNS_TYPE_A, 300, ip3, 4); /* not bound to the question */
	o = rr(b, o, ptr_q, sizeof(ptr_q), DNS_TYPE_CNAME, 60, cdn, sizeof(cdn));
	o = rr(b, o, ptr_q, sizeof(ptr_q), DNS_TYPE_A, 0x80000000u, ip2, 4);
	assert_int_equal(dns_parse_answer(b, o, 7, &q, a, 8, &n, &rcode, NULL), 0);
	assert_int_equal(rcode, 0);
	assert_int_equal(n, 2);
	assert_int_equal(a[0].family, AF_INET);
	assert_memory_equal(a[0].addr, ip1, 4);
	assert_int_equal(a[0].ttl, 300);
	assert_memory_equal(a[1].addr, ip2, 4);
	assert_int_equal(a[1].ttl, 0);
	/* A chain check: cdn.test denied outright gives no address and names it; other.test (not in the chain) is never asked. */
	{
		struct dns_chain_check check = { .denied = deny_cdn };

		assert_int_equal(dns_parse_answer(b, o, 7, &q, a, 8, &n, &rcode, &check), 0);
		assert_true(check.hit);
		assert_int_equal(n, 0);
		assert_string_equal(check.via, "cdn.test");
		assert_string_equal(check.rule, "deniedDomains:cdn.test");
		check = (struct dns_chain_check){ .denied = deny_other };
		assert_int_equal(dns_parse_answer(b, o, 7, &q, a, 8, &n, &rcode, &check), 0);
		assert_false(check.hit);
		assert_int_equal(n, 2);
	}
	/* Wrong id, another question, truncation: refused. */
	assert_int_equal(dns_parse_answer(b, o, 8, &q, a, 8, &n, &rcode, NULL), -EINVAL);
	for (size_t i = 0; i < o; i++)
		assert_int_equal(dns_parse_answer(b, i, 7, &q, a, 8, &n, &rcode, NULL), -EINVAL);
	strcpy(q.name, "www.example.org");
	assert_int_equal(dns_parse_answer(b, o, 7, &q, a, 8, &n, &rcode, NULL), -EINVAL);
}

static void test_answer_hostile(void **state)
{
	uint8_t b[1024];
	struct dns_question q = { .name = "a.test", .qtype = DNS_TYPE_AAAA, .qclass = DNS_CLASS_IN };
	struct dns_addr a[8];
	const uint8_t loop[] = { 0xc0, 0 }; /* pointer forward: patched below */
	const uint8_t ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	unsigned rcode;
	size_t n, o, at;

	o = answer_head(b, 9, "a.test", DNS_TYPE_AAAA, 1);
	at = o;
	o = rr(b, o, loop, sizeof(loop), DNS_TYPE_AAAA, 5, ip6, 16);
	b[at + 1] = (uint8_t)at; /* points at itself */
	assert_int_equal(dns_parse_answer(b, o, 9, &q, a, 8, &n, &rcode, NULL), -EINVAL);
	b[at + 1] = 12;
	assert_int_equal(dns_parse_answer(b, o, 9, &q, a, 8, &n, &rcode, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].family, AF_INET6);
	assert_memory_equal(a[0].addr, ip6, 16);
	/* An AAAA with 4 bytes of data is malformed. */
	o = answer_head(b, 9, "a.test", DNS_TYPE_AAAA, 1);
	o = rr(b, o, (const uint8_t[]){ 0xc0, 12 }, 2, DNS_TYPE_AAAA, 5, ip6, 4);
	assert_int_equal(dns_parse_answer(b, o, 9, &q, a, 8, &n, &rcode, NULL), -EINVAL);
	/* NXDOMAIN from upstream: no address, the code passed on. */
	o = answer_head(b, 9, "a.test", DNS_TYPE_AAAA, 0);
	b[3] = 0x83;
	assert_int_equal(dns_parse_answer(b, o, 9, &q, a, 8, &n, &rcode, NULL), 0);
	assert_int_equal(rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(n, 0);
}

static void test_fuzz_smoke(void **state)
{
	uint8_t b[600];
	unsigned seed = 12345;

	/* Random bytes and mutated valid messages: nothing crashes (ASan/UBSan builds see more). */
	for (int i = 0; i < 200000; i++) {
		size_t n = (size_t)(rand_r(&seed) % sizeof(b));

		if (i & 1) {
			n = make_query(b, 1, "www.example.com", DNS_TYPE_A, i & 2);
			b[rand_r(&seed) % n] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
		} else {
			for (size_t k = 0; k < n; k++)
				b[k] = (uint8_t)rand_r(&seed);
		}
		assert_int_equal(dns_fuzz_one(b, n), 0);
	}
}

/* A fake upstream on 127.0.0.1: answers every A query with 192.0.2.7. */
struct upstream {
	int fd;
	unsigned short port;
	int queries;
	uint8_t last[512]; /* the last query it read, as it came */
	size_t last_len;
};

static void *upstream_thread(void *arg)
{
	struct upstream *u = arg;
	uint8_t b[1024];

	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(u->fd, b, sizeof(b), 0, (struct sockaddr *)&from, &fl);
		const uint8_t ip[] = { 192, 0, 2, 7 };
		struct dns_question q;
		size_t o;

		if (n <= 0)
			return NULL;
		if (dns_parse_query(b, (size_t)n, &q))
			continue;
		memcpy(u->last, b, (size_t)n);
		u->last_len = (size_t)n;
		__atomic_add_fetch(&u->queries, 1, __ATOMIC_SEQ_CST);
		o = answer_head(b, q.id, q.name, q.qtype, 1);
		o = rr(b, o, (const uint8_t[]){ 0xc0, 12 }, 2, DNS_TYPE_A, 30, ip, 4);
		sendto(u->fd, b, o, 0, (struct sockaddr *)&from, fl);
	}
}

struct seen {
	int answers, events, denied, cached;
	char last_rule[64];
	struct dns_addr addr;
};

static bool t_decide(void *ctx, const char *name, const char **rule, const char **reason)
{
	*rule = !strcmp(name, "allowed.test") ? "allowedDomains:allowed.test" : "default:network";
	return !strcmp(name, "allowed.test");
}

static void t_answer(void *ctx, const char *name, const struct dns_addr *a, size_t n)
{
	struct seen *s = ctx;

	s->answers++;
	s->addr = a[0];
}

/* The count last: a test that saw it (wait_events) sees what came with it. */
static void t_event(void *ctx, const struct dns_query_event *ev)
{
	struct seen *s = ctx;

	s->denied += !ev->allowed;
	s->cached += ev->cached;
	snprintf(s->last_rule, sizeof(s->last_rule), "%s", ev->rule);
	__atomic_add_fetch(&s->events, 1, __ATOMIC_RELEASE);
}

/*
 * The resolver sends an answer before it writes the answer's event (the log's write is not on
 * the client's path): the n-th event comes just after the n-th answer, within 5 s.
 */
static void wait_events(struct seen *s, int n)
{
	for (int i = 0; i < 5000 && __atomic_load_n(&s->events, __ATOMIC_ACQUIRE) < n; i++)
		usleep(1000);
	assert_int_equal(__atomic_load_n(&s->events, __ATOMIC_ACQUIRE), n);
}

static bool t_answers_type(void *ctx, unsigned qtype)
{
	return qtype == DNS_TYPE_A;
}

static ssize_t ask_udp_raw(unsigned short port, const uint8_t *q, size_t n, uint8_t *ans, size_t len)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 3, 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	ssize_t r;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sendto(fd, q, n, 0, (struct sockaddr *)&to, sizeof(to));
	r = recv(fd, ans, len, 0);
	close(fd);
	return r;
}

static ssize_t ask_udp(unsigned short port, const char *name, uint8_t *ans, size_t len)
{
	uint8_t q[512];
	size_t n = make_query(q, 0x4242, name, DNS_TYPE_A, true);

	return ask_udp_raw(port, q, n, ans, len);
}

static ssize_t ask_tcp(unsigned short port, const char *name, uint8_t *ans, size_t len)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 3, 0 };
	uint8_t q[514];
	size_t n = make_query(q + 2, 0x4343, name, DNS_TYPE_A, false), got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t r;

	q[0] = 0;
	q[1] = (uint8_t)n;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) || send(fd, q, n + 2, 0) != (ssize_t)(n + 2)) {
		close(fd);
		return -1;
	}
	while ((r = recv(fd, ans + got, len - got, 0)) > 0)
		got += (size_t)r;
	close(fd);
	return (ssize_t)got;
}

static void test_live_resolver(void **state)
{
	struct upstream u = { 0 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct dns_server_config cfg = { 0 };
	struct dns_server *srv;
	struct seen seen = { 0 };
	unsigned short p4, p6;
	pthread_t th;
	uint8_t ans[2048];
	ssize_t n;

	u.fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(bind(u.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(u.fd, (struct sockaddr *)&a, &al);
	pthread_create(&th, NULL, upstream_thread, &u);
	cfg.decide = t_decide;
	cfg.answers_type = t_answers_type;
	cfg.on_answer = t_answer;
	cfg.on_event = t_event;
	cfg.ctx = &seen;
	memcpy(&cfg.upstreams[0], &a, sizeof(a));
	cfg.n_upstreams = 1;
	assert_int_equal(dns_server_start(&cfg, &srv, &p4, &p6), 0);
	assert_true(p4 > 0);

	/*
	 * Upstream gets a query rebuilt from the question: lower case, only RD,
	 * an OPT record without the client's options (here an 8-byte cookie,
	 * a DO bit and a payload of 4096). The client gets its own case back.
	 */
	{
		static const uint8_t opt[] = { 0, 0, 41, 0x10, 0, 0, 0, 0x80, 0, 0, 12, 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8 };
		uint8_t q[512], want[512];
		size_t qn = make_query(q, 0x5151, "Allowed.TEST", DNS_TYPE_A, false), wn;

		q[3] |= 0x30; /* AD and CD: flags the client chose */
		q[11] = 1;
		memcpy(q + qn, opt, sizeof(opt));
		qn += sizeof(opt);
		n = ask_udp_raw(p4, q, qn, ans, sizeof(ans));
		assert_true(n > 12 + 14);
		assert_int_equal(ans[3] & 0xf, 0);
		assert_memory_equal(ans + 12, "\7Allowed\4TEST", 14);
		wn = make_query(want, 0, "allowed.test", DNS_TYPE_A, true);
		want[8 + 4 + 14 + 4 + 3] = 1232 >> 8; /* OPT class: the payload offered */
		want[8 + 4 + 14 + 4 + 4] = 1232 & 0xff;
		assert_int_equal(u.last_len, wn);
		assert_memory_equal(u.last + 2, want + 2, wn - 2); /* all but the random id */
		assert_int_equal(__atomic_load_n(&u.queries, __ATOMIC_SEQ_CST), 1);
		assert_int_equal(seen.answers, 1);
		assert_memory_equal(seen.addr.addr, ((uint8_t[]){ 192, 0, 2, 7 }), 4);
	}
	/* The same question again (EDNS too) is answered from the cache with this client's id. */
	n = ask_udp(p4, "allowed.test", ans, sizeof(ans));
	assert_true(n > 12);
	assert_int_equal(ans[0], 0x42); /* the client's id, not the upstream's */
	assert_int_equal(ans[1], 0x42);
	assert_int_equal(ans[3] & 0xf, 0);
	assert_int_equal(ans[7], 1);
	assert_memory_equal(ans + 12, "\7allowed\4test", 14);
	assert_int_equal(seen.answers, 2); /* its addresses handed over again */
	wait_events(&seen, 2);
	assert_int_equal(seen.cached, 1); /* and its event says where it came from */
	assert_int_equal(__atomic_load_n(&u.queries, __ATOMIC_SEQ_CST), 1);

	n = ask_udp(p4, "denied.test", ans, sizeof(ans));
	assert_true(n > 12);
	assert_int_equal(ans[3] & 0xf, DNS_RCODE_NXDOMAIN);
	assert_int_equal(__atomic_load_n(&u.queries, __ATOMIC_SEQ_CST), 1); /* never asked upstream */
	wait_events(&seen, 3);
	assert_string_equal(seen.last_rule, "default:network");

	/* A type the policy does not answer for an allowed name: REFUSED, never asked upstream. */
	{
		uint8_t q[512];
		size_t qn = make_query(q, 0x6161, "allowed.test", 16 /* TXT */, false);

		n = ask_udp_raw(p4, q, qn, ans, sizeof(ans));
		assert_true(n >= 12);
		assert_int_equal(ans[3] & 0xf, DNS_RCODE_REFUSED);
		assert_int_equal(__atomic_load_n(&u.queries, __ATOMIC_SEQ_CST), 1);
		wait_events(&seen, 4);
		assert_string_equal(seen.last_rule, "default:dnsQueryTypes");
	}

	n = ask_tcp(p4, "allowed.test", ans, sizeof(ans));
	assert_true(n > 14);
	assert_int_equal((ans[0] << 8 | ans[1]), n - 2);
	assert_int_equal(ans[2], 0x43);
	assert_int_equal(ans[5] & 0xf, 0);
	assert_int_equal(seen.answers, 3);
	n = ask_tcp(p4, "denied.test", ans, sizeof(ans));
	assert_true(n > 14);
	assert_int_equal(ans[5] & 0xf, DNS_RCODE_NXDOMAIN);
	wait_events(&seen, 6);
	assert_int_equal(seen.denied, 3);
	assert_int_equal(__atomic_load_n(&u.queries, __ATOMIC_SEQ_CST), 2); /* no EDNS: another key */

	/* A flush (a live policy update) empties the cache: the next answer is the upstream's, then kept. */
	dns_server_flush_cache(srv);
	n = ask_udp(p4, "allowed.test", ans, sizeof(ans));
	assert_true(n > 12);
	assert_int_equal(__atomic_load_n(&u.queries, __ATOMIC_SEQ_CST), 3);
	n = ask_udp(p4, "allowed.test", ans, sizeof(ans));
	assert_true(n > 12);
	assert_int_equal(__atomic_load_n(&u.queries, __ATOMIC_SEQ_CST), 3);
	wait_events(&seen, 8);
	assert_int_equal(seen.cached, 2);

	dns_server_stop(srv);
	/* Wakes the upstream's recvfrom with 0, even on an unconnected UDP socket. */
	shutdown(u.fd, SHUT_RDWR);
	pthread_join(th, NULL);
	close(u.fd);
}

static void test_resolv_conf(void **state)
{
	char path[] = "/tmp/bb-resolv-XXXXXX";
	struct sockaddr_storage ss[3];
	int fd = mkstemp(path);
	const char text[] = "# comment\nsearch example\nnameserver 10.0.0.1\nnameserver  fd00::53\n"
			    "nameserver bogus\nnameserver 10.0.0.2\nnameserver 10.0.0.3\n";

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(dns_read_resolv_conf(path, ss, 3), 3);
	assert_int_equal(ss[0].ss_family, AF_INET);
	assert_int_equal(ss[1].ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss[2])->sin_port), 53);
	unlink(path);
	assert_int_equal(dns_read_resolv_conf(path, ss, 3), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_ok),	   cmocka_unit_test(test_query_malformed),
		cmocka_unit_test(test_build_nxdomain),	   cmocka_unit_test(test_build_answer),
		cmocka_unit_test(test_answer_cname_chain),
		cmocka_unit_test(test_answer_hostile),	   cmocka_unit_test(test_fuzz_smoke),
		cmocka_unit_test(test_live_resolver),	   cmocka_unit_test(test_resolv_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
