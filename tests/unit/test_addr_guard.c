// SPDX-License-Identifier: MIT
/* The resolved-address guard: classes refused, literal exceptions, localhost. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proxy/addr_guard.h"

static const struct sockaddr *sa(const char *ip, unsigned short port)
{
	static struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	} else {
		assert_int_equal(inet_pton(AF_INET6, ip, &s6->sin6_addr), 1);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	}
	return (const struct sockaddr *)&ss;
}

static bool refused(const struct addr_guard *g, const char *ip, const char *want_why)
{
	const char *why = NULL;
	bool r = addr_guard_refuses(g, sa(ip, 443), &why);

	if (r && want_why)
		assert_string_equal(why, want_why);
	return r;
}

static void test_builtin_classes(void **state)
{
	struct addr_guard g;

	addr_guard_init_empty(&g);
	assert_true(refused(&g, "127.0.0.1", "loopback"));
	assert_true(refused(&g, "127.255.0.7", "loopback"));
	assert_true(refused(&g, "::1", "loopback"));
	assert_true(refused(&g, "0.0.0.0", "unspecified"));
	assert_true(refused(&g, "::", "unspecified"));
	assert_true(refused(&g, "169.254.1.2", "link-local"));
	assert_true(refused(&g, "fe80::1", "link-local"));
	assert_true(refused(&g, "febf::1", "link-local"));
	assert_true(refused(&g, "224.0.0.1", "multicast"));
	assert_true(refused(&g, "239.255.255.250", "multicast"));
	assert_true(refused(&g, "ff02::1", "multicast"));
	assert_true(refused(&g, "255.255.255.255", "broadcast"));
	assert_true(refused(&g, "169.254.169.254", "cloud metadata"));
	assert_true(refused(&g, "100.100.100.200", "cloud metadata"));
	assert_true(refused(&g, "168.63.129.16", "cloud metadata"));
	assert_true(refused(&g, "192.0.0.192", "cloud metadata"));
	assert_true(refused(&g, "fd00:ec2::254", "cloud metadata"));
	/* IPv4 in IPv6 clothing reaches the same place. */
	assert_true(refused(&g, "::ffff:127.0.0.1", "loopback"));
	assert_true(refused(&g, "::ffff:169.254.169.254", "cloud metadata"));
	assert_true(refused(&g, "64:ff9b::a9fe:a9fe", "cloud metadata"));
	assert_true(refused(&g, "::127.0.0.1", NULL));
	/* 6to4 is decided by the IPv4 address its relay delivers to; Teredo is refused outright. */
	assert_true(refused(&g, "2002:7f00:1::", "loopback"));
	assert_true(refused(&g, "2002:a9fe:a9fe::1", "cloud metadata"));
	assert_true(refused(&g, "2002:a9fe:0101:5::", "link-local"));
	assert_true(refused(&g, "2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"));
	assert_true(refused(&g, "2001::1", "Teredo"));
	assert_false(refused(&g, "2002:5db8:d822::1", NULL));	/* 93.184.216.34 */
	assert_false(refused(&g, "2001:1::1", NULL));		/* outside 2001::/32 */
	assert_false(refused(&g, "2001:2::5", NULL));		/* the parent proxy's synthesized range */

	assert_false(refused(&g, "93.184.216.34", NULL));
	assert_false(refused(&g, "100.100.100.201", NULL));
	assert_false(refused(&g, "10.1.2.3", NULL));	/* private nets: policy's call */
	assert_false(refused(&g, "2606:4700::1111", NULL));
	assert_false(refused(&g, "fe00::1", NULL));
	assert_false(refused(&g, "::ffff:93.184.216.34", NULL));
	addr_guard_free(&g);
}

static void test_extra_cidrs(void **state)
{
	const char *const extra[] = { "10.0.0.0/8", "2001:db8::/32", "192.0.2.7" };
	const char *bad[] = { "10.0.0.0/33" };
	struct addr_guard g;
	const char *err = NULL;

	assert_int_equal(addr_guard_init(&g, extra, 3, &err), 0);
	assert_true(refused(&g, "10.200.0.1", "deniedResolvedAddresses"));
	assert_true(refused(&g, "2001:db8:1::5", "deniedResolvedAddresses"));
	assert_true(refused(&g, "192.0.2.7", "deniedResolvedAddresses"));
	assert_false(refused(&g, "192.0.2.8", NULL));
	addr_guard_free(&g);

	assert_int_equal(addr_guard_init(&g, bad, 1, &err), -EINVAL);
	assert_non_null(err);
	assert_null(g.deny);
}

static void test_cidr_parse(void **state)
{
	struct addr_cidr c;

	assert_int_equal(addr_cidr_parse("10.0.0.0/8", &c), 0);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix, 8);
	assert_int_equal(addr_cidr_parse("[::1]", &c), 0);
	assert_int_equal(c.prefix, 128);
	assert_int_equal(addr_cidr_parse("0.0.0.0/0", &c), 0);
	assert_true(addr_cidr_contains(&c, sa("8.8.8.8", 0)));
	assert_false(addr_cidr_contains(&c, sa("::1", 0)));
	assert_int_equal(addr_cidr_parse("10.0.0.0/08", &c), -EINVAL);
	assert_int_equal(addr_cidr_parse("10.0.0.0/", &c), -EINVAL);
	assert_int_equal(addr_cidr_parse("10.0.0/8", &c), -EINVAL);
	assert_int_equal(addr_cidr_parse("::/129", &c), -EINVAL);
	assert_int_equal(addr_cidr_parse("example.com", &c), -EINVAL);
	assert_int_equal(addr_cidr_parse("", &c), -EINVAL);
}

static void test_host_addresses(void **state)
{
	struct addr_guard g;
	const char *err = NULL;

	/* Listed at the first check, not at init (startup does not pay for it). */
	assert_int_equal(addr_guard_init(&g, NULL, 0, &err), 0);
	assert_non_null(g.host);
	assert_false(g.host->loaded);
	assert_false(addr_guard_refuses(&g, sa("93.184.216.34", 443), NULL));
	assert_true(g.host->loaded);
	/* Loopback is an address of every host; whatever else it has is added too. */
	assert_true(g.host->n >= 1);
	for (size_t i = 0; i < g.host->n; i++) {
		struct sockaddr_storage ss = { .ss_family = g.host->list[i].family };

		if (g.host->list[i].family == AF_INET)
			memcpy(&((struct sockaddr_in *)&ss)->sin_addr, g.host->list[i].addr, 4);
		else
			memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, g.host->list[i].addr, 16);
		assert_true(addr_guard_refuses(&g, (struct sockaddr *)&ss, NULL));
	}
	/* Without the list, nothing resolved is trusted. */
	g.host->err = -EIO;
	assert_true(refused(&g, "93.184.216.34", "this host's addresses cannot be listed"));
	addr_guard_free(&g);
}

static bool allow_8080(void *ctx, const struct sockaddr *s)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)s;

	(*(int *)ctx)++;
	return s->sa_family == AF_INET && ntohs(s4->sin_port) == 8080 &&
	       ntohl(s4->sin_addr.s_addr) == 0x7f000001;
}

static void test_literal_exceptions(void **state)
{
	struct addr_guard g;
	const char *err;
	int calls = 0;

	addr_guard_init_empty(&g);
	assert_int_equal(addr_guard_add_allow(&g, "169.254.169.254", &err), 0);
	assert_int_equal(addr_guard_add_allow(&g, "::1", &err), 0);
	assert_false(refused(&g, "169.254.169.254", NULL));
	assert_false(refused(&g, "::ffff:169.254.169.254", NULL));
	assert_false(refused(&g, "::1", NULL));
	assert_true(refused(&g, "169.254.169.253", "link-local"));
	assert_true(refused(&g, "127.0.0.1", "loopback"));
	/* A 6to4 address is the relay's way there, not the allowed literal itself. */
	assert_true(refused(&g, "2002:a9fe:a9fe::", "cloud metadata"));

	g.allow_literal = allow_8080;
	g.allow_ctx = &calls;
	assert_false(addr_guard_refuses(&g, sa("127.0.0.1", 8080), NULL));
	assert_true(addr_guard_refuses(&g, sa("127.0.0.1", 8081), NULL));
	assert_true(calls >= 2);
	/* The policy's own deny list is also lifted by an allowed literal. */
	assert_int_equal(addr_guard_add_deny(&g, "203.0.113.0/24", "deniedResolvedAddresses", &err),
			 0);
	assert_int_equal(addr_guard_add_allow(&g, "203.0.113.5", &err), 0);
	assert_false(refused(&g, "203.0.113.5", NULL));
	assert_true(refused(&g, "203.0.113.6", NULL));
	assert_int_equal(addr_guard_add_allow(&g, "nope", &err), -EINVAL);
	addr_guard_free(&g);
}

static void test_localhost_name(void **state)
{
	struct addr_guard g;
	const char *why;

	addr_guard_init_empty(&g);
	assert_false(addr_guard_refuses_name(&g, "localhost", sa("127.0.0.1", 80), &why));
	assert_false(addr_guard_refuses_name(&g, "localhost", sa("::1", 80), &why));
	/* localhost pointing anywhere odd is still checked... */
	assert_true(addr_guard_refuses_name(&g, "localhost", sa("169.254.169.254", 80), &why));
	assert_true(addr_guard_refuses_name(&g, "localhost", sa("2002:7f00:1::", 80), &why));
	/* ...and other names get no loopback pass. */
	assert_true(addr_guard_refuses_name(&g, "localhost.evil.example", sa("127.0.0.1", 80),
					    &why));
	assert_true(addr_guard_refuses_name(&g, "evil.example", sa("::1", 80), &why));
	addr_guard_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_classes),
		cmocka_unit_test(test_extra_cidrs),
		cmocka_unit_test(test_cidr_parse),
		cmocka_unit_test(test_host_addresses),
		cmocka_unit_test(test_literal_exceptions),
		cmocka_unit_test(test_localhost_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
