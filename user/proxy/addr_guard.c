// SPDX-License-Identifier: MIT
/* Resolved-address guard: which addresses an allowed name may not lead to. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "addr_guard.h"

#define V4(a, b, c, d) { a, b, c, d }

/*
 * Always refused. More specific entries come first so *why names the most
 * useful class (metadata before link-local).
 */
static const struct addr_cidr builtin_deny[] = {
	{ AF_INET, 8, V4(0, 0, 0, 0), "unspecified" },
	{ AF_INET, 8, V4(127, 0, 0, 0), "loopback" },
	{ AF_INET, 32, V4(169, 254, 169, 254), "cloud metadata" },
	{ AF_INET, 32, V4(169, 254, 170, 2), "cloud metadata" },	/* ECS task */
	{ AF_INET, 16, V4(169, 254, 0, 0), "link-local" },
	{ AF_INET, 32, V4(100, 100, 100, 200), "cloud metadata" },	/* Alibaba */
	{ AF_INET, 32, V4(168, 63, 129, 16), "cloud metadata" },	/* Azure */
	{ AF_INET, 32, V4(192, 0, 0, 192), "cloud metadata" },	/* Oracle */
	{ AF_INET, 4, V4(224, 0, 0, 0), "multicast" },
	{ AF_INET, 32, V4(255, 255, 255, 255), "broadcast" },
	{ AF_INET, 4, V4(240, 0, 0, 0), "reserved" },
	{ AF_INET6, 128, { 0 }, "unspecified" },
	{ AF_INET6, 128, { [15] = 1 }, "loopback" },
	{ AF_INET6, 96, { 0 }, "IPv4-compatible (deprecated)" },
	{ AF_INET6, 10, { 0xfe, 0x80 }, "link-local" },
	{ AF_INET6, 10, { 0xfe, 0xc0 }, "site-local (deprecated)" },
	{ AF_INET6, 8, { 0xff }, "multicast" },
	{ AF_INET6, 32, { 0xfd, 0x00, 0x0e, 0xc2 }, "cloud metadata" },	/* AWS IMDS */
	/*
	 * Teredo (RFC 4380) tunnels to the IPv4 address it carries obfuscated,
	 * through a relay it names: no name needs one, so none may lead to one.
	 */
	{ AF_INET6, 32, { 0x20, 0x01, 0x00, 0x00 }, "Teredo" },
};

/* IPv6 prefixes that carry an IPv4 address in their last 4 bytes. */
static const unsigned char v4mapped_prefix[12] = { [10] = 0xff, [11] = 0xff };
static const unsigned char nat64_prefix[12] = { 0x00, 0x64, 0xff, 0x9b };

static bool prefix_eq(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	if (!rest)
		return true;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (a[bytes] & mask) == (b[bytes] & mask);
}

static bool list_match(const struct addr_cidr *l, size_t n, int family,
		       const unsigned char *a, const char **why)
{
	for (size_t i = 0; i < n; i++) {
		if (l[i].family != family || !prefix_eq(a, l[i].addr, l[i].prefix))
			continue;
		if (why)
			*why = l[i].why;
		return true;
	}
	return false;
}

/* Family and raw bytes of sa; 0 when the family is not IP. */
static int sa_bytes(const struct sockaddr *sa, const unsigned char **a)
{
	*a = NULL;
	if (sa->sa_family == AF_INET) {
		*a = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		*a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		return AF_INET6;
	}
	return 0;
}

/* The IPv4 address inside an IPv4-mapped or NAT64 IPv6 address, as a sockaddr. */
static bool embedded_v4(const struct sockaddr *sa, struct sockaddr_in *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family != AF_INET6)
		return false;
	if (memcmp(s6->sin6_addr.s6_addr, v4mapped_prefix, 12) &&
	    memcmp(s6->sin6_addr.s6_addr, nat64_prefix, 12))
		return false;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = s6->sin6_port;
	memcpy(&out->sin_addr, s6->sin6_addr.s6_addr + 12, 4);
	return true;
}

/*
 * The IPv4 address a 6to4 address (2002:AABB:CCDD::/48, RFC 3056) is
 * delivered to by a relay. Only for refusing: the relay, not this host,
 * reaches it, so it is neither loopback nor the policy's literal.
 */
static bool sixtofour_v4(const struct sockaddr *sa, struct sockaddr_in *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family != AF_INET6 || s6->sin6_addr.s6_addr[0] != 0x20 || s6->sin6_addr.s6_addr[1] != 0x02)
		return false;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = s6->sin6_port;
	memcpy(&out->sin_addr, s6->sin6_addr.s6_addr + 2, 4);
	return true;
}

static bool allowed_literal(const struct addr_guard *g, const struct sockaddr *sa)
{
	const unsigned char *a;
	int fam = sa_bytes(sa, &a);

	if (list_match(g->allow, g->n_allow, fam, a, NULL))
		return true;
	return g->allow_literal && g->allow_literal(g->allow_ctx, sa);
}

static int load_host_addresses(struct addr_host_list *h);

static bool host_address(const struct addr_guard *g, int fam, const unsigned char *a, const char **why)
{
	struct addr_host_list *h = g->host;

	if (!h)
		return false;
	if (!h->loaded)
		load_host_addresses(h);
	if (h->err) {
		/* Fail closed: without the list, any address might be the host's. */
		*why = "this host's addresses cannot be listed";
		return true;
	}
	return list_match(h->list, h->n, fam, a, why);
}

static bool denied(const struct addr_guard *g, const struct sockaddr *sa, const char **why)
{
	const unsigned char *a;
	int fam = sa_bytes(sa, &a);

	return list_match(builtin_deny, sizeof(builtin_deny) / sizeof(builtin_deny[0]),
			  fam, a, why) ||
	       list_match(g->deny, g->n_deny, fam, a, why) || host_address(g, fam, a, why);
}

bool addr_guard_refuses(const struct addr_guard *g, const struct sockaddr *sa, const char **why)
{
	struct sockaddr_in v4;
	bool has_v4 = embedded_v4(sa, &v4);
	const unsigned char *a;
	const char *dummy;

	if (!why)
		why = &dummy;
	if (!sa_bytes(sa, &a)) {
		*why = "not an IP address";
		return true;
	}
	if (allowed_literal(g, sa) || (has_v4 && allowed_literal(g, (struct sockaddr *)&v4)))
		return false;
	if (denied(g, sa, why))
		return true;
	/* ::ffff:127.0.0.1, 64:ff9b::a9fe:a9fe and 2002:a9fe:a9fe:: reach what their IPv4 part reaches. */
	if (!has_v4)
		has_v4 = sixtofour_v4(sa, &v4);
	return has_v4 && denied(g, (struct sockaddr *)&v4, why);
}

static bool is_loopback(const struct sockaddr *sa)
{
	static const struct addr_cidr lo[] = {
		{ AF_INET, 8, V4(127, 0, 0, 0), "loopback" },
		{ AF_INET6, 128, { [15] = 1 }, "loopback" },
	};
	struct sockaddr_in v4;
	const unsigned char *a;
	int fam;

	if (embedded_v4(sa, &v4))
		sa = (struct sockaddr *)&v4;
	fam = sa_bytes(sa, &a);
	return fam && list_match(lo, 2, fam, a, NULL);
}

bool addr_guard_refuses_name(const struct addr_guard *g, const char *name,
			     const struct sockaddr *sa, const char **why)
{
	/* The name was allowed by policy; "localhost" meaning loopback is its whole point. */
	if (name && !strcasecmp(name, "localhost") && is_loopback(sa))
		return false;
	return addr_guard_refuses(g, sa, why);
}

int addr_cidr_parse(const char *s, struct addr_cidr *out)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned max, prefix;

	if (alen >= 2 && s[0] == '[' && s[alen - 1] == ']') {
		s++;	/* "[::1]" as policies write IPv6 literals */
		alen -= 2;
	}
	if (!alen || alen >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, out->addr) == 1) {
		out->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, out->addr) == 1) {
		out->family = AF_INET6;
		max = 128;
	} else {
		return -EINVAL;
	}
	prefix = max;
	if (slash) {
		const char *p = slash + 1;

		/* Decimal, no sign, no leading zeros: one spelling per value. */
		if (!*p || (p[0] == '0' && p[1]) || strlen(p) > 3)
			return -EINVAL;
		prefix = 0;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -EINVAL;
			prefix = prefix * 10 + (unsigned)(*p - '0');
		}
		if (prefix > max)
			return -EINVAL;
	}
	out->prefix = (unsigned char)prefix;
	return 0;
}

bool addr_cidr_contains(const struct addr_cidr *c, const struct sockaddr *sa)
{
	const unsigned char *a;
	int fam = sa_bytes(sa, &a);

	return fam && fam == c->family && prefix_eq(a, c->addr, c->prefix);
}

static int list_add(struct addr_cidr **l, size_t *n, const struct addr_cidr *c)
{
	struct addr_cidr *nl = realloc(*l, (*n + 1) * sizeof(**l));

	if (!nl)
		return -ENOMEM;
	nl[*n] = *c;
	*l = nl;
	(*n)++;
	return 0;
}

int addr_guard_init_empty(struct addr_guard *g)
{
	memset(g, 0, sizeof(*g));
	return 0;
}

int addr_guard_add_deny(struct addr_guard *g, const char *cidr, const char *why,
			const char **err)
{
	struct addr_cidr c;

	if (addr_cidr_parse(cidr, &c)) {
		if (err)
			*err = "not an IP address or CIDR";
		return -EINVAL;
	}
	c.why = why;
	return list_add(&g->deny, &g->n_deny, &c);
}

int addr_guard_add_allow(struct addr_guard *g, const char *cidr, const char **err)
{
	struct addr_cidr c;

	if (addr_cidr_parse(cidr, &c)) {
		if (err)
			*err = "not an IP address or CIDR";
		return -EINVAL;
	}
	c.why = "allowed literal";
	return list_add(&g->allow, &g->n_allow, &c);
}

static int add_sockaddr(struct addr_host_list *h, const struct sockaddr *sa, const char *why)
{
	struct addr_cidr c = { .why = why };
	const unsigned char *a;
	int fam = sa_bytes(sa, &a);

	if (!fam)
		return 0;
	c.family = (sa_family_t)fam;
	c.prefix = fam == AF_INET ? 32 : 128;
	memcpy(c.addr, a, fam == AF_INET ? 4 : 16);
	return list_add(&h->list, &h->n, &c);
}

static int load_host_addresses(struct addr_host_list *h)
{
	struct ifaddrs *ifa, *i;
	int ret = 0;

	free(h->list);
	h->list = NULL;
	h->n = 0;
	h->loaded = true;
	if (getifaddrs(&ifa))
		return h->err = -errno;
	for (i = ifa; i && !ret; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		/* Reaching the host's own address reaches its local services. */
		ret = add_sockaddr(h, i->ifa_addr, "address of this host");
		if (!ret && (i->ifa_flags & IFF_BROADCAST) && i->ifa_broadaddr &&
		    i->ifa_addr->sa_family == AF_INET)
			ret = add_sockaddr(h, i->ifa_broadaddr, "broadcast");
	}
	freeifaddrs(ifa);
	return h->err = ret;
}

int addr_guard_add_host_addresses(struct addr_guard *g)
{
	if (!g->host) {
		g->host = calloc(1, sizeof(*g->host));
		if (!g->host)
			return -ENOMEM;
	}
	return load_host_addresses(g->host);
}

int addr_guard_init(struct addr_guard *g, const char *const *extra_cidrs, size_t n,
		    const char **err)
{
	int ret;

	addr_guard_init_empty(g);
	for (size_t i = 0; i < n; i++) {
		ret = addr_guard_add_deny(g, extra_cidrs[i], "deniedResolvedAddresses", err);
		if (ret)
			goto fail;
	}
	g->host = calloc(1, sizeof(*g->host));
	if (!g->host) {
		ret = -ENOMEM;
		if (err)
			*err = "out of memory";
		goto fail;
	}
	return 0;
fail:
	addr_guard_free(g);
	return ret;
}

void addr_guard_free(struct addr_guard *g)
{
	if (!g)
		return;
	free(g->deny);
	free(g->allow);
	if (g->host)
		free(g->host->list);
	free(g->host);
	memset(g, 0, sizeof(*g));
}
