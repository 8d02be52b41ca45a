// SPDX-License-Identifier: MIT
/* Addresses and CIDR blocks of network.deniedResolvedAddresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "domain.h"

static int fail(const char **err, const char *msg)
{
	*err = msg;
	return -EINVAL;
}

static void clear_host_bits(unsigned char *a, size_t bytes, unsigned prefix)
{
	for (size_t i = 0; i < bytes; i++) {
		unsigned bit = i * 8;

		if (bit >= prefix)
			a[i] = 0;
		else if (prefix - bit < 8)
			a[i] &= (unsigned char)(0xff << (8 - (prefix - bit)));
	}
}

int ip_cidr_parse(const char *s, struct ip_cidr *out, const char **err)
{
	char addr[INET6_ADDRSTRLEN + 8];
	const char *slash, *a = s;
	size_t alen;
	unsigned prefix = 0, max;
	bool has_prefix = false;
	char txt[INET6_ADDRSTRLEN];
	int n;

	memset(out, 0, sizeof(*out));
	*err = NULL;
	if (!s || !*s)
		return fail(err, "empty entry");
	slash = strchr(s, '/');
	alen = slash ? (size_t)(slash - s) : strlen(s);
	if (alen >= 2 && s[0] == '[' && s[alen - 1] == ']') {
		a = s + 1;
		alen -= 2;
	}
	if (alen == 0 || alen >= sizeof(addr))
		return fail(err, "not an IP address or CIDR block");
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (slash) {
		const char *p = slash + 1;

		if (!*p || (p[0] == '0' && p[1]) || strlen(p) > 3)
			return fail(err, "invalid prefix length");
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return fail(err, "invalid prefix length");
			prefix = prefix * 10 + (*p - '0');
		}
		has_prefix = true;
	}
	if (inet_pton(AF_INET, addr, out->addr) == 1) {
		out->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, out->addr) == 1) {
		out->family = AF_INET6;
		max = 128;
		if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)out->addr)) {
			/* A mapped block denies the IPv4 addresses it maps. */
			if (has_prefix && prefix < 96)
				return fail(err, "an IPv4-mapped block needs a prefix of at least 96");
			memmove(out->addr, out->addr + 12, 4);
			memset(out->addr + 4, 0, 12);
			out->family = AF_INET;
			prefix = has_prefix ? prefix - 96 : 0;
			max = 32;
		}
	} else {
		return fail(err, "not an IP address or CIDR block (write 192.0.2.1, "
			    "10.0.0.0/8 or fd00:ec2::/32)");
	}
	if (!has_prefix)
		prefix = max;
	if (prefix > max)
		return fail(err, "prefix length is longer than the address");
	out->prefix = prefix;
	clear_host_bits(out->addr, max / 8, prefix);
	inet_ntop(out->family, out->addr, txt, sizeof(txt));
	n = snprintf(out->text, sizeof(out->text), "%s", txt);
	if (prefix != max)
		snprintf(out->text + n, sizeof(out->text) - n, "/%u", prefix);
	return 0;
}

bool ip_cidr_contains(const struct ip_cidr *c, int family, const void *addr)
{
	unsigned char a[16];
	size_t bytes;

	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)addr)) {
		memcpy(a, (const unsigned char *)addr + 12, 4);
		family = AF_INET;
	} else {
		memcpy(a, addr, family == AF_INET ? 4 : 16);
	}
	if (family != c->family)
		return false;
	bytes = family == AF_INET ? 4 : 16;
	clear_host_bits(a, bytes, c->prefix);
	return !memcmp(a, c->addr, bytes);
}
