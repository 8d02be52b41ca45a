// SPDX-License-Identifier: MIT
/*
 * Canonical form of a requested host. Matching is only as good as this step:
 * every spelling that reaches the same address must come out identical, or
 * a deny rule can be walked around (127.1, 0x7f.0.0.1, ::ffff:127.0.0.1).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "domain.h"

/* One part of a WHATWG/inet_aton IPv4: decimal, 0x hex or leading-0 octal. */
static int ipv4_part(const char *s, size_t len, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		len -= 2;
	} else if (len >= 2 && s[0] == '0') {
		base = 8;
		s++;
		len--;
	}
	if (len == 0 && base != 16)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d;
		char c = s[i];

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		if (d >= base)
			return -EINVAL;
		v = v * base + d;
		if (v > 0xffffffffULL)
			return -ERANGE;
	}
	*out = v;
	return 0;
}

/* Parses 1 to 4 dot-separated parts, the last filling the remaining bytes. */
static int ipv4_parse(const char *s, uint32_t *out)
{
	uint64_t parts[4];
	size_t n = 0;
	const char *p = s;
	uint64_t v = 0;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (n == 4 || ipv4_part(p, len, &parts[n]))
			return -EINVAL;
		n++;
		if (!dot)
			break;
		p = dot + 1;
	}
	for (size_t i = 0; i + 1 < n; i++) {
		if (parts[i] > 255)
			return -EINVAL;
		v = (v << 8) | parts[i];
	}
	if (parts[n - 1] >= (1ULL << (8 * (5 - n))))
		return -EINVAL;
	v = (v << (8 * (5 - n))) | parts[n - 1];
	*out = (uint32_t)v;
	return 0;
}

/* WHATWG: a host whose last label looks numeric is an IPv4 address or invalid. */
static bool last_label_numeric(const char *s)
{
	const char *last = strrchr(s, '.');

	last = last ? last + 1 : s;
	if (!*last)
		return false;
	if (last[0] == '0' && (last[1] == 'x' || last[1] == 'X')) {
		for (const char *c = last + 2; *c; c++)
			if (!strchr("0123456789abcdefABCDEF", *c))
				return false;
		return true;
	}
	for (const char *c = last; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

static int put(char *out, size_t outlen, const char *s)
{
	if (strlen(s) >= outlen)
		return -ENAMETOOLONG;
	strcpy(out, s);
	return 0;
}

static int canon_ipv6(const char *s, size_t len, char *out, size_t outlen,
		      const char **err)
{
	char buf[INET6_ADDRSTRLEN + 1];
	struct in6_addr a6;

	if (len >= sizeof(buf)) {
		*err = "invalid IPv6 address";
		return -EINVAL;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &a6) != 1) {
		*err = "invalid IPv6 address";
		return -EINVAL;
	}
	/* ::ffff:a.b.c.d reaches an IPv4 host: match it as that host. */
	if (IN6_IS_ADDR_V4MAPPED(&a6)) {
		snprintf(buf, sizeof(buf), "%u.%u.%u.%u", a6.s6_addr[12],
			 a6.s6_addr[13], a6.s6_addr[14], a6.s6_addr[15]);
		return put(out, outlen, buf);
	}
	inet_ntop(AF_INET6, &a6, buf, sizeof(buf));
	return put(out, outlen, buf);
}

static int check_name(const char *s, const char **err)
{
	size_t label = 0;

	for (const char *c = s; *c; c++) {
		if (*c == '.') {
			if (label == 0) {
				*err = "empty label (two dots in a row, or a leading dot)";
				return -EINVAL;
			}
			label = 0;
			continue;
		}
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_')) {
			*err = "invalid character in host name (letters, digits, '-', '_' and '.' only)";
			return -EINVAL;
		}
		if (++label > 63) {
			*err = "a label is longer than 63 bytes";
			return -EINVAL;
		}
	}
	if (label == 0) {
		*err = "empty label (two dots in a row, or a leading dot)";
		return -EINVAL;
	}
	return 0;
}

int host_canonicalise(const char *host, char *out, size_t outlen, const char **err)
{
	char buf[DOMAIN_HOST_MAX];
	size_t len;
	uint32_t v4;
	int ret;

	*err = NULL;
	if (!host || !*host) {
		*err = "empty host";
		return -EINVAL;
	}
	len = strlen(host);
	if (len > 255) {
		*err = "host is longer than 255 bytes";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = host[i];

		if (c == '\r' || c == '\n') {
			*err = "host contains CR or LF";
			return -EINVAL;
		}
		if (c < 0x20 || c == 0x7f || c == ' ') {
			*err = "host contains a control character or a space";
			return -EINVAL;
		}
		if (c == '%') {
			*err = "zone identifiers ('%') are not accepted";
			return -EINVAL;
		}
		if (c >= 0x80) {
			*err = "non-ASCII host name; use its punycode (xn--) form";
			return -EINVAL;
		}
	}
	if (host[0] == '[') {
		if (len < 3 || host[len - 1] != ']') {
			*err = "unterminated '[' in IPv6 literal";
			return -EINVAL;
		}
		return canon_ipv6(host + 1, len - 2, out, outlen, err);
	}
	if (strchr(host, ':'))
		return canon_ipv6(host, len, out, outlen, err);

	for (size_t i = 0; i <= len; i++)
		buf[i] = (host[i] >= 'A' && host[i] <= 'Z') ? host[i] + 32 : host[i];
	/* "example.com." names the same host as "example.com". */
	if (len > 1 && buf[len - 1] == '.')
		buf[--len] = '\0';
	if (last_label_numeric(buf)) {
		if (ipv4_parse(buf, &v4)) {
			*err = "invalid IPv4 address";
			return -EINVAL;
		}
		snprintf(buf, sizeof(buf), "%u.%u.%u.%u", v4 >> 24,
			 (v4 >> 16) & 0xff, (v4 >> 8) & 0xff, v4 & 0xff);
		return put(out, outlen, buf);
	}
	ret = check_name(buf, err);
	if (ret)
		return ret;
	return put(out, outlen, buf);
}

int host_ip_family(const char *canon_host)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, canon_host, a) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, canon_host, a) == 1)
		return AF_INET6;
	return 0;
}
