// SPDX-License-Identifier: MIT
/*
 * Minimal host canonicaliser (the policy module supplies the real one) and
 * address helpers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "proxy.h"
#include "proxy_canon.h"

int proxy_canon_default(const char *host, char *out, size_t outlen, const char **err)
{
	char buf[PROXY_HOST_MAX];
	struct in_addr a4;
	struct in6_addr a6;
	size_t n = strlen(host);

	if (!n || n >= sizeof(buf) || outlen < INET6_ADDRSTRLEN) {
		*err = "empty or too long host";
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		char c = host[i];

		if ((unsigned char)c <= 0x20 || c == 0x7f || c == '%' || c == '/' || c == '@') {
			*err = "forbidden character in host";
			return -EINVAL;
		}
		buf[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	if (n > 1 && buf[n - 1] == '.')
		n--;
	buf[n] = '\0';
	if (buf[0] == '.' || strstr(buf, "..")) {
		*err = "empty label in host";
		return -EINVAL;
	}
	/* inet_aton takes 127.1, 2130706433 and 0x7f.0.0.1: one spelling out. */
	if (!strchr(buf, ':') && inet_aton(buf, &a4)) {
		inet_ntop(AF_INET, &a4, out, (socklen_t)outlen);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &a6) == 1) {
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			inet_ntop(AF_INET, a6.s6_addr + 12, out, (socklen_t)outlen);
		else
			inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen);
		return 0;
	}
	if (strchr(buf, ':')) {
		*err = "malformed IPv6 address";
		return -EINVAL;
	}
	if (n >= outlen) {
		*err = "host too long";
		return -EINVAL;
	}
	memcpy(out, buf, n + 1);
	return 0;
}

bool proxy_host_literal(const char *canon, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, canon, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, canon, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		return true;
	}
	return false;
}

void proxy_format_addr(const struct sockaddr *sa, char *out, size_t cap)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(out, cap, "%s:%u", a, ntohs(s->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(out, cap, "[%s]:%u", a, ntohs(s->sin6_port));
	} else {
		snprintf(out, cap, "?");
	}
}

/*
 * This host's own loopback, by name or literal: the parent's loopback is
 * another place, so an allowed "localhost" keeps meaning this host.
 */
bool proxy_host_is_local(const char *h)
{
	size_t n = strlen(h);
	struct sockaddr_storage ss;

	if (!strcmp(h, "localhost") || (n > 10 && !strcmp(h + n - 10, ".localhost")))
		return true;
	if (!proxy_host_literal(h, &ss))
		return false;
	if (ss.ss_family == AF_INET)
		return ((const unsigned char *)&((const struct sockaddr_in *)&ss)->sin_addr)[0] == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)&ss)->sin6_addr);
}
