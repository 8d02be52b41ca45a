// SPDX-License-Identifier: MIT
/*
 * Domain patterns, host canonicalisation and CIDRs: what the proxy decides
 * on must be what it dials. Input: PATTERN, optionally "\n" HOST.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "policy/domain.h"
#include "proxy/proxy.h"
#include "proxy/proxy_canon.h"

static void check_canonical(const char *h)
{
	char again[DOMAIN_HOST_MAX];
	const char *err = NULL;
	struct sockaddr_storage ss;
	struct in_addr a4;
	int fam = host_ip_family(h);

	FUZZ_CHECK(strlen(h) < DOMAIN_HOST_MAX);
	for (const char *p = h; *p; p++)
		FUZZ_CHECK(*p > 0x20 && *p < 0x7f && !(*p >= 'A' && *p <= 'Z') && *p != '%');
	/* Canonical means a fixed point. */
	FUZZ_CHECK(host_canonicalise(h, again, sizeof(again), &err) == 0);
	FUZZ_CHECK(!strcmp(h, again));
	/*
	 * A name is never read as an address by the dialler or the resolver
	 * (getaddrinfo takes inet_aton spellings), and an address is one.
	 */
	FUZZ_CHECK(proxy_host_literal(h, &ss) == (fam != 0));
	if (fam)
		FUZZ_CHECK(ss.ss_family == fam);
	else
		FUZZ_CHECK(!inet_aton(h, &a4));
}

static void check_pattern(const char *s, bool deny, const char *canon_host)
{
	struct domain_pattern p, q;
	const char *err = NULL;

	if (domain_pattern_parse(s, deny, &p, &err)) {
		FUZZ_CHECK(err != NULL);
		return;
	}
	FUZZ_CHECK(strlen(p.text) < sizeof(p.text));
	FUZZ_CHECK(p.port <= 65535);
	FUZZ_CHECK(p.kind == DOMAIN_ANY ? deny && !p.host[0] : p.host[0] != '\0');
	/* The canonical entry text reads back as the same pattern. */
	FUZZ_CHECK(domain_pattern_parse(p.text, deny, &q, &err) == 0);
	FUZZ_CHECK(q.kind == p.kind && q.port == p.port);
	FUZZ_CHECK(!strcmp(q.host, p.host) && !strcmp(q.text, p.text));
	if (p.kind != DOMAIN_ANY)
		check_canonical(p.host);

	/* A pattern's own host: a name or address matches, a wildcard never does. */
	if (p.kind != DOMAIN_ANY) {
		bool m = domain_pattern_match(&p, p.host, p.port ? p.port : 443);

		FUZZ_CHECK(p.kind == DOMAIN_WILDCARD ? !m : m);
	}
	if (p.kind == DOMAIN_ANY)
		FUZZ_CHECK(domain_pattern_match(&p, "example.com", p.port ? p.port : 1));
	if (p.port)
		FUZZ_CHECK(!domain_pattern_match(&p, p.host, p.port == 65535 ? 1 : p.port + 1));
	if (canon_host) {
		for (unsigned port = 1; port <= 65535; port += 32767)
			(void)domain_pattern_match(&p, canon_host, port);
		(void)domain_pattern_match(&p, canon_host, p.port);
	}
}

static void check_cidr(const char *s)
{
	struct ip_cidr c, d;
	const char *err = NULL;

	if (ip_cidr_parse(s, &c, &err)) {
		FUZZ_CHECK(err != NULL);
		return;
	}
	FUZZ_CHECK(c.family == AF_INET || c.family == AF_INET6);
	FUZZ_CHECK(c.prefix <= (c.family == AF_INET ? 32u : 128u));
	FUZZ_CHECK(memchr(c.text, 0, sizeof(c.text)) != NULL);
	FUZZ_CHECK(ip_cidr_parse(c.text, &d, &err) == 0);
	FUZZ_CHECK(d.family == c.family && d.prefix == c.prefix);
	FUZZ_CHECK(!memcmp(d.addr, c.addr, sizeof(c.addr)) && !strcmp(d.text, c.text));
	/* A block holds its own network address. */
	FUZZ_CHECK(ip_cidr_contains(&c, c.family, c.addr));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *host = NULL, *nl;
	char canon[DOMAIN_HOST_MAX], dflt[PROXY_HOST_MAX];
	const char *err = NULL, *canon_host = NULL;
	int ret;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	nl = strchr(buf, '\n');
	if (nl) {
		*nl = '\0';
		host = nl + 1;
	}

	ret = host_canonicalise(buf, canon, sizeof(canon), &err);
	FUZZ_CHECK(ret == 0 || ret == -EINVAL || ret == -ENAMETOOLONG);
	if (!ret)
		check_canonical(canon);
	/* Too small an output is refused, never overrun. */
	(void)host_canonicalise(buf, canon, 8, &err);
	if (proxy_canon_default(buf, dflt, sizeof(dflt), &err) == 0)
		FUZZ_CHECK(strlen(dflt) < sizeof(dflt));

	if (host && !host_canonicalise(host, canon, sizeof(canon), &err)) {
		check_canonical(canon);
		canon_host = canon;
	}
	check_pattern(buf, false, canon_host);
	check_pattern(buf, true, canon_host);
	check_cidr(buf);
	free(buf);
	return 0;
}
