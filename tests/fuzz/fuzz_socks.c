// SPDX-License-Identifier: MIT
/*
 * The SOCKS5 (and SOCKS4a) handshake as the session reads it: the version
 * byte picks the protocol; SOCKS5 is a greeting then a request. A message
 * that parses when complete answers "need more" for every shorter prefix
 * and the same length for every longer one, so arrival in pieces cannot
 * change what is decided. Addresses come out in canonical form.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "policy/domain.h"
#include "proxy/proxy.h"
#include "proxy/proxy_socks.h"

static void check_host(const struct proxy_socks_req *r)
{
	char canon[DOMAIN_HOST_MAX];
	const char *err;

	FUZZ_CHECK(memchr(r->host, 0, sizeof(r->host)) != NULL);
	if (!r->is_name) {
		/* inet_ntop's text is already canonical (mapped IPv6 aside). */
		FUZZ_CHECK(host_canonicalise(r->host, canon, sizeof(canon), &err) == 0);
		FUZZ_CHECK(host_ip_family(canon) != 0);
		return;
	}
	(void)host_canonicalise(r->host, canon, sizeof(canon), &err);
}

static void socks5(const unsigned char *buf, size_t len)
{
	struct proxy_socks_req r;
	unsigned char rep, out[16];
	bool noauth = false;
	ssize_t g, n;

	g = proxy_socks5_greeting(buf, len, &noauth);
	FUZZ_CHECK(g <= (ssize_t)len);
	for (size_t k = 0; g > 0 && k < (size_t)g; k++)
		FUZZ_CHECK(proxy_socks5_greeting(buf, k, &noauth) == 0);
	if (g <= 0)
		return;
	buf += g;
	len -= (size_t)g;

	n = proxy_socks5_request(buf, len, &r, &rep);
	FUZZ_CHECK(n <= (ssize_t)len);
	FUZZ_CHECK(proxy_socks5_reply(out, rep) == 10);
	if (n < 0)
		FUZZ_CHECK(rep != SOCKS5_REP_OK);
	if (n <= 0)
		return;
	FUZZ_CHECK(rep == SOCKS5_REP_OK && r.cmd == 1 && r.port >= 1 && r.port <= 65535);
	check_host(&r);
	for (size_t k = 0; k < (size_t)n; k++)
		FUZZ_CHECK(proxy_socks5_request(buf, k, &r, &rep) == 0);
}

static void socks4(const unsigned char *buf, size_t len)
{
	struct proxy_socks_req r;
	unsigned char out[8];
	ssize_t n;

	n = proxy_socks4_request(buf, len, &r);
	FUZZ_CHECK(n <= (ssize_t)len);
	FUZZ_CHECK(proxy_socks4_reply(out, SOCKS4_REP_REJECT) == 8);
	if (n <= 0)
		return;
	FUZZ_CHECK(r.cmd == 1 && r.port >= 1 && r.port <= 65535);
	check_host(&r);
	for (size_t k = 0; k < (size_t)n; k++)
		FUZZ_CHECK(proxy_socks4_request(buf, k, &r) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	/* The session sniffs the first byte. */
	if (data[0] == 4)
		socks4(data, size);
	else
		socks5(data, size);
	return 0;
}
