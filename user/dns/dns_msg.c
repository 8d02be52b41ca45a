// SPDX-License-Identifier: MIT
/* DNS messages: strict query parser, answer parser, the resolver's own answers. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "dns_msg.h"

#define FLAG_QR 0x8000u
#define FLAG_RD 0x0100u
#define FLAG_RA 0x0080u
#define FLAG_TC 0x0200u
#define OPCODE(f) (((f) >> 11) & 0xfu)
/* Compression pointers followed while reading one name: more is a loop. */
#define MAX_JUMPS 32
/* CNAMEs followed from the question's name. */
#define MAX_CNAMES 16

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static bool label_byte_ok(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/*
 * Reads a name at *off into out as lower-case text. With compress false a
 * pointer is malformed and every byte must be a label byte (a query). With
 * compress true pointers must point backwards (so they cannot loop) and
 * labels are only length-checked; a byte that is not a label byte makes the
 * name unmatchable (it is written as '?', which no policy name contains).
 * *off moves past the name as it sits in the message.
 */
static int read_name(const uint8_t *msg, size_t len, size_t *off, char out[DNS_NAME_MAX], bool compress)
{
	size_t pos = *off, o = 0, end = 0, wire = 0;
	int jumps = 0;

	for (;;) {
		uint8_t l;

		if (pos >= len)
			return -EINVAL;
		l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			size_t target;

			if (!compress || pos + 1 >= len || ++jumps > MAX_JUMPS)
				return -EINVAL;
			target = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			if (target >= pos)
				return -EINVAL;
			if (!end)
				end = pos + 2;
			pos = target;
			continue;
		}
		if (l & 0xc0)
			return -EINVAL; /* extended label types */
		if (l == 0) {
			if (!end)
				end = pos + 1;
			break;
		}
		wire += 1u + l;
		if (wire > 254 || pos + 1 + l > len)
			return -EINVAL;
		if (o + l + 1 > DNS_NAME_MAX)
			return -EINVAL;
		if (o)
			out[o++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = msg[pos + 1 + i];

			if (!label_byte_ok(c)) {
				if (!compress)
					return -EINVAL;
				c = '?';
			}
			out[o++] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
		}
		pos += 1u + l;
	}
	out[o] = 0;
	*off = end;
	return 0;
}

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *q)
{
	uint16_t flags, qd, an, ns, ar;
	size_t off = DNS_HEADER_LEN;
	int err;

	memset(q, 0, sizeof(*q));
	if (len < DNS_HEADER_LEN)
		return -EINVAL;
	q->id = get16(msg);
	flags = get16(msg + 2);
	q->rd = flags & FLAG_RD;
	qd = get16(msg + 4);
	an = get16(msg + 6);
	ns = get16(msg + 8);
	ar = get16(msg + 10);
	if (flags & FLAG_QR)
		return -EINVAL;
	if (OPCODE(flags) != 0)
		return -EOPNOTSUPP;
	if (qd != 1 || an || ns || ar > 1)
		return -EINVAL;
	err = read_name(msg, len, &off, q->name, false);
	if (err)
		return err;
	if (off + 4 > len)
		return -EINVAL;
	q->qtype = get16(msg + off);
	q->qclass = get16(msg + off + 2);
	off += 4;
	q->end = off;
	q->edns = ar != 0;
	if (ar) {
		/* EDNS: root name, type OPT, class (payload size), TTL (flags), RDLENGTH, RDATA. */
		uint16_t rdlen;

		if (off + 11 > len || msg[off] != 0 || get16(msg + off + 1) != DNS_TYPE_OPT)
			return -EINVAL;
		rdlen = get16(msg + off + 9);
		off += 11;
		if (off + rdlen > len)
			return -EINVAL;
		off += rdlen;
	}
	if (off != len)
		return -EINVAL;
	if (q->qtype == DNS_TYPE_OPT || q->qtype == 0)
		return -EINVAL;
	return 0;
}

struct cname_set {
	char names[MAX_CNAMES + 1][DNS_NAME_MAX];
	size_t n;
};

static bool in_set(const struct cname_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return true;
	return false;
}

/* One record of the answer section, its bounds checked. */
struct rr {
	char owner[DNS_NAME_MAX];
	uint16_t type, class, rdlen;
	uint32_t ttl;
	size_t rdata;
};

static int next_rr(const uint8_t *msg, size_t len, size_t *pos, struct rr *r)
{
	int err = read_name(msg, len, pos, r->owner, true);

	if (err)
		return err;
	if (*pos + 10 > len)
		return -EINVAL;
	r->type = get16(msg + *pos);
	r->class = get16(msg + *pos + 2);
	r->ttl = get32(msg + *pos + 4);
	r->rdlen = get16(msg + *pos + 8);
	r->rdata = *pos + 10;
	if (r->rdata + r->rdlen > len)
		return -EINVAL;
	*pos = r->rdata + r->rdlen;
	return 0;
}

/*
 * Hands every record of an answer to fn with its section (0 answer, 1
 * authority, 2 additional), after the question; nothing may follow the last
 * one. *qend is the offset just past the question.
 */
static int walk_records(const uint8_t *msg, size_t len, size_t *qend,
			int (*fn)(void *arg, const uint8_t *msg, const struct rr *r, int section), void *arg)
{
	char name[DNS_NAME_MAX];
	size_t pos = DNS_HEADER_LEN;
	uint16_t count[3];
	struct rr r;
	int err;

	if (len < DNS_HEADER_LEN || get16(msg + 4) != 1)
		return -EINVAL;
	for (int k = 0; k < 3; k++)
		count[k] = get16(msg + 6 + 2 * k);
	err = read_name(msg, len, &pos, name, true);
	if (err)
		return err;
	if (pos + 4 > len)
		return -EINVAL;
	pos += 4;
	*qend = pos;
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < count[k]; i++) {
			err = next_rr(msg, len, &pos, &r);
			if (!err)
				err = fn(arg, msg, &r, k);
			if (err)
				return err;
		}
	}
	return pos == len ? 0 : -EINVAL;
}

static uint32_t rr_ttl(uint32_t ttl)
{
	return ttl > 0x7fffffffu ? 0 : ttl; /* RFC 2181: the high bit set means 0 */
}

static int scan_one(void *arg, const uint8_t *msg, const struct rr *r, int section)
{
	struct dns_answer_info *info = arg;
	char name[DNS_NAME_MAX];
	size_t t = r->rdata, end = r->rdata + r->rdlen;
	uint32_t ttl = rr_ttl(r->ttl), minimum;

	/* An OPT record's TTL field holds flags, never a lifetime. */
	if (section == 0 && r->type != DNS_TYPE_OPT && ttl < info->min_answer_ttl)
		info->min_answer_ttl = ttl;
	if (section != 1 || r->type != DNS_TYPE_SOA)
		return 0;
	/* MNAME, RNAME, then SERIAL, REFRESH, RETRY, EXPIRE and MINIMUM: the RDATA exactly. */
	if (read_name(msg, end, &t, name, true) || read_name(msg, end, &t, name, true) || t + 20 != end)
		return -EINVAL;
	minimum = rr_ttl(get32(msg + end - 4));
	if (!info->soa || (ttl < minimum ? ttl : minimum) < info->negative_ttl)
		info->negative_ttl = ttl < minimum ? ttl : minimum;
	info->soa = true;
	return 0;
}

int dns_answer_scan(const uint8_t *msg, size_t len, struct dns_answer_info *info)
{
	memset(info, 0, sizeof(*info));
	info->min_answer_ttl = UINT32_MAX;
	if (len < DNS_HEADER_LEN)
		return -EINVAL;
	info->rcode = get16(msg + 2) & 0xf;
	info->truncated = get16(msg + 2) & FLAG_TC;
	info->an = get16(msg + 6);
	return walk_records(msg, len, &info->question_end, scan_one, info);
}

struct aging {
	uint32_t age;
	uint8_t *out;
};

static int age_one(void *arg, const uint8_t *msg, const struct rr *r, int section)
{
	const struct aging *a = arg;
	uint32_t age = a->age, ttl = rr_ttl(r->ttl);
	uint8_t *p = a->out + r->rdata - 6;

	if (r->type == DNS_TYPE_OPT)
		return 0;
	ttl = ttl > age ? ttl - age : 0;
	p[0] = ttl >> 24;
	p[1] = (ttl >> 16) & 0xff;
	p[2] = (ttl >> 8) & 0xff;
	p[3] = ttl & 0xff;
	return 0;
}

int dns_answer_age(const uint8_t *msg, uint8_t *out, size_t len, uint32_t age)
{
	struct aging a = { age, out };
	size_t qend;

	return walk_records(msg, len, &qend, age_one, &a);
}

int dns_parse_answer(const uint8_t *msg, size_t len, uint16_t id, const struct dns_question *q,
		     struct dns_addr *out, size_t max, size_t *n, unsigned *rcode, struct dns_chain_check *check)
{
	/* Large: kept off small thread stacks. */
	static __thread struct cname_set chain;
	static __thread struct rr r;
	char name[DNS_NAME_MAX], target[DNS_NAME_MAX];
	size_t off = DNS_HEADER_LEN, pos, before;
	uint16_t flags, an;
	int err;

	*n = 0;
	if (len < DNS_HEADER_LEN || get16(msg) != id)
		return -EINVAL;
	flags = get16(msg + 2);
	*rcode = flags & 0xf;
	an = get16(msg + 6);
	if (!(flags & FLAG_QR) || OPCODE(flags) != 0 || get16(msg + 4) != 1)
		return -EINVAL;
	err = read_name(msg, len, &off, name, true);
	if (err)
		return err;
	if (off + 4 > len || strcmp(name, q->name) || get16(msg + off) != q->qtype ||
	    get16(msg + off + 2) != q->qclass)
		return -EINVAL;
	off += 4;
	/* Every record is in bounds, and addresses and CNAME targets are well formed. */
	pos = off;
	for (size_t i = 0; i < an; i++) {
		if (next_rr(msg, len, &pos, &r))
			return -EINVAL;
		if ((r.type == DNS_TYPE_A && r.rdlen != 4) || (r.type == DNS_TYPE_AAAA && r.rdlen != 16))
			return -EINVAL;
		if (r.type == DNS_TYPE_CNAME) {
			size_t t = r.rdata;

			if (read_name(msg, len, &t, target, true) || t != r.rdata + r.rdlen)
				return -EINVAL;
		}
	}
	/* The names the question's name leads to through CNAMEs, in whatever order they come. */
	chain.n = 1;
	strcpy(chain.names[0], q->name);
	do {
		before = chain.n;
		pos = off;
		for (size_t i = 0; i < an && chain.n <= MAX_CNAMES; i++) {
			size_t t;

			next_rr(msg, len, &pos, &r);
			if (r.type != DNS_TYPE_CNAME || r.class != DNS_CLASS_IN || !in_set(&chain, r.owner))
				continue;
			t = r.rdata;
			read_name(msg, len, &t, target, true);
			if (!in_set(&chain, target))
				strcpy(chain.names[chain.n++], target);
		}
	} while (chain.n != before && chain.n <= MAX_CNAMES);
	/* A name the policy denies outright gives no address, whatever allowed name led to it. */
	for (size_t i = 1; check && i < chain.n; i++)
		if (check->denied(check->ctx, chain.names[i], &check->rule)) {
			check->hit = true;
			strcpy(check->via, chain.names[i]);
			return 0;
		}
	pos = off;
	for (size_t i = 0; i < an; i++) {
		next_rr(msg, len, &pos, &r);
		if (r.class != DNS_CLASS_IN || (r.type != DNS_TYPE_A && r.type != DNS_TYPE_AAAA) ||
		    !in_set(&chain, r.owner) || *n >= max)
			continue;
		out[*n].family = r.type == DNS_TYPE_A ? AF_INET : AF_INET6;
		memset(out[*n].addr, 0, 16);
		memcpy(out[*n].addr, msg + r.rdata, r.rdlen);
		out[*n].ttl = r.ttl > 0x7fffffffu ? 0 : r.ttl; /* RFC 2181: the high bit set means 0 */
		(*n)++;
	}
	return 0;
}

int dns_build_error(const uint8_t *query, const struct dns_question *q, unsigned rcode, uint8_t *out,
		    size_t outlen)
{
	size_t qlen = q->end ? q->end - DNS_HEADER_LEN : 0;
	uint16_t flags = FLAG_QR | FLAG_RA | (q->rd ? FLAG_RD : 0) | (rcode & 0xf);

	if (outlen < DNS_HEADER_LEN + qlen)
		return -ENOSPC;
	put16(out, q->id);
	put16(out + 2, flags);
	put16(out + 4, qlen ? 1 : 0);
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	if (qlen)
		memcpy(out + DNS_HEADER_LEN, query + DNS_HEADER_LEN, qlen);
	return (int)(DNS_HEADER_LEN + qlen);
}

int dns_build_answer(const uint8_t *query, const struct dns_question *q, const struct dns_addr *addrs, size_t n,
		     uint8_t *out, size_t outlen)
{
	int head = dns_build_error(query, q, DNS_RCODE_NOERROR, out, outlen);
	size_t len;

	if (!q->end || head < 0)
		return -ENOSPC;
	len = (size_t)head;
	for (size_t i = 0; i < n; i++) {
		size_t alen = addrs[i].family == AF_INET ? 4 : 16;

		if (len + 12 + alen > outlen)
			return -ENOSPC;
		put16(out + len, 0xc000 | DNS_HEADER_LEN);	/* the question's name */
		put16(out + len + 2, alen == 4 ? DNS_TYPE_A : DNS_TYPE_AAAA);
		put16(out + len + 4, DNS_CLASS_IN);
		put16(out + len + 6, (uint16_t)(addrs[i].ttl >> 16));
		put16(out + len + 8, (uint16_t)addrs[i].ttl);
		put16(out + len + 10, (uint16_t)alen);
		memcpy(out + len + 12, addrs[i].addr, alen);
		len += 12 + alen;
	}
	put16(out + 6, (uint16_t)n);
	return (int)len;
}

int dns_build_query(const struct dns_question *q, uint16_t id, uint8_t *out, size_t outlen)
{
	size_t o = DNS_HEADER_LEN, nlen = strlen(q->name);
	const char *label = q->name;

	/* Labels, the root, type and class; then the OPT record. */
	if (outlen < DNS_HEADER_LEN + nlen + 2 + 4 + (q->edns ? 11 : 0))
		return -ENOSPC;
	put16(out, id);
	put16(out + 2, FLAG_RD);
	put16(out + 4, 1);
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, q->edns ? 1 : 0);
	while (*label) {
		const char *dot = strchr(label, '.');
		size_t l = dot ? (size_t)(dot - label) : strlen(label);

		if (!l || l > 63)
			return -EINVAL;
		out[o++] = (uint8_t)l;
		memcpy(out + o, label, l);
		o += l;
		label += l + (dot ? 1 : 0);
	}
	out[o++] = 0;
	put16(out + o, q->qtype);
	put16(out + o + 2, q->qclass);
	o += 4;
	if (q->edns) {
		out[o] = 0; /* the root */
		put16(out + o + 1, DNS_TYPE_OPT);
		put16(out + o + 3, DNS_EDNS_PAYLOAD);
		put16(out + o + 5, 0); /* extended rcode, version 0 */
		put16(out + o + 7, 0); /* flags: no DO */
		put16(out + o + 9, 0); /* no options */
		o += 11;
	}
	return (int)o;
}

static bool fuzz_denied(void *ctx, const char *name, const char **rule)
{
	*rule = "fuzz";
	return name[0] == 'd';
}

int dns_fuzz_one(const uint8_t *data, size_t len)
{
	struct dns_answer_info info;
	struct dns_question q;
	struct dns_addr addrs[8];
	uint8_t out[DNS_UDP_MAX];
	unsigned rcode;
	size_t n;

	if (!dns_parse_query(data, len, &q)) {
		struct dns_question back;
		int m;

		dns_build_error(data, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
		/* The rebuilt query is a strict query with the same question. */
		m = dns_build_query(&q, 0x4242, out, sizeof(out));
		if (m < 0 || dns_parse_query(out, (size_t)m, &back) || strcmp(back.name, q.name) ||
		    back.qtype != q.qtype || back.qclass != q.qclass || back.edns != q.edns || back.id != 0x4242)
			__builtin_trap();
	}
	/* Treat the same bytes as an answer to a fixed question. */
	memset(&q, 0, sizeof(q));
	strcpy(q.name, "example.com");
	q.qtype = DNS_TYPE_A;
	q.qclass = DNS_CLASS_IN;
	dns_parse_answer(data, len, len >= 2 ? get16(data) : 0, &q, addrs, 8, &n, &rcode, NULL);
	/* And with a chain check that refuses names beginning with "d": a refusal gives no address. */
	{
		struct dns_chain_check check = { .denied = fuzz_denied };

		if (!dns_parse_answer(data, len, len >= 2 ? get16(data) : 0, &q, addrs, 8, &n, &rcode, &check) &&
		    check.hit && (n || check.via[0] != 'd'))
			__builtin_trap();
	}
	/*
	 * The cache's walk: an answer it takes can be aged, and aging changes
	 * TTL fields only, never the header or the question.
	 */
	if (len <= sizeof(out) && !dns_answer_scan(data, len, &info)) {
		memcpy(out, data, len);
		if (dns_answer_age(data, out, len, 7) || memcmp(out, data, info.question_end))
			__builtin_trap();
	}
	return 0;
}
