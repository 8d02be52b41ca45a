// SPDX-License-Identifier: MIT
/* Domain grammar (srt's accept/reject lists), host canonicalisation, matching, CIDRs. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "policy/domain.h"

static void accept_pattern(const char *s, bool deny, enum domain_kind kind,
			   const char *host, unsigned port, const char *text)
{
	struct domain_pattern p;
	const char *err = NULL;

	if (domain_pattern_parse(s, deny, &p, &err))
		fail_msg("rejected \"%s\": %s", s, err);
	assert_int_equal(p.kind, kind);
	assert_string_equal(p.host, host);
	assert_int_equal(p.port, port);
	assert_string_equal(p.text, text);
}

static void reject_pattern(const char *s, bool deny, const char *needle)
{
	struct domain_pattern p;
	const char *err = NULL;

	if (!domain_pattern_parse(s, deny, &p, &err))
		fail_msg("accepted \"%s\"", s);
	assert_non_null(err);
	if (needle && !strstr(err, needle))
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", s, err, needle);
}

static void test_pattern_accept(void **state)
{
	accept_pattern("example.com", false, DOMAIN_NAME, "example.com", 0, "example.com");
	accept_pattern("Example.COM", false, DOMAIN_NAME, "example.com", 0, "example.com");
	accept_pattern("*.example.com", false, DOMAIN_WILDCARD, "example.com", 0, "*.example.com");
	accept_pattern("*.npmjs.org:8443", false, DOMAIN_WILDCARD, "npmjs.org", 8443,
		       "*.npmjs.org:8443");
	accept_pattern("localhost", false, DOMAIN_NAME, "localhost", 0, "localhost");
	accept_pattern("LOCALHOST:3000", false, DOMAIN_NAME, "localhost", 3000, "localhost:3000");
	accept_pattern("api.example.com:443", false, DOMAIN_NAME, "api.example.com", 443,
		       "api.example.com:443");
	accept_pattern("10.1.2.3", false, DOMAIN_IPV4, "10.1.2.3", 0, "10.1.2.3");
	accept_pattern("10.1.2.3:8080", false, DOMAIN_IPV4, "10.1.2.3", 8080, "10.1.2.3:8080");
	accept_pattern("[::1]", false, DOMAIN_IPV6, "::1", 0, "[::1]");
	accept_pattern("[2001:db8::1]:443", false, DOMAIN_IPV6, "2001:db8::1", 443,
		       "[2001:db8::1]:443");
	accept_pattern("[2001:DB8:0:0::1]", false, DOMAIN_IPV6, "2001:db8::1", 0, "[2001:db8::1]");
	/* A mapped address is the IPv4 host, so it is stored as one. */
	accept_pattern("[::ffff:10.0.0.1]", false, DOMAIN_IPV4, "10.0.0.1", 0, "10.0.0.1");
	/* 127.1 reaches 127.0.0.1: the entry must match what requests canonicalise to. */
	accept_pattern("127.1", false, DOMAIN_IPV4, "127.0.0.1", 0, "127.0.0.1");
	accept_pattern("a_b.example.com", false, DOMAIN_NAME, "a_b.example.com", 0,
		       "a_b.example.com");
}

static void test_pattern_accept_deny_only(void **state)
{
	accept_pattern("*", true, DOMAIN_ANY, "", 0, "*");
	accept_pattern("*:22", true, DOMAIN_ANY, "", 22, "*:22");
	accept_pattern("github.com:22", true, DOMAIN_NAME, "github.com", 22, "github.com:22");
	reject_pattern("*", false, "only accepted in deniedDomains");
	reject_pattern("*:22", false, "only accepted in deniedDomains");
}

static void test_pattern_reject(void **state)
{
	reject_pattern("", false, "empty");
	reject_pattern("*.com", false, "two labels");
	reject_pattern("*.com", true, "two labels");
	reject_pattern("example", false, "dot");
	reject_pattern(".example.com", false, "dot");
	reject_pattern("example.com.", false, "dot");
	reject_pattern("ex*ample.com", false, "'*'");
	reject_pattern("*example.com", false, "'*'");
	reject_pattern("a.*.example.com", false, "'*'");
	reject_pattern("*.*.example.com", false, "'*'");
	reject_pattern("*.", false, "two labels");
	reject_pattern("*..com", false, "two labels");
	reject_pattern("http://example.com", false, "scheme");
	reject_pattern("https://example.com:443", false, "scheme");
	reject_pattern("example.com/path", false, "path");
	reject_pattern("example.com:0", false, "port");
	reject_pattern("example.com:65536", false, "port");
	reject_pattern("example.com:080", false, "port");
	reject_pattern("example.com:", false, "port");
	reject_pattern("example.com:http", false, "port");
	reject_pattern("::1", false, "bracketed");
	reject_pattern("2001:db8::1:443", false, "bracketed");
	reject_pattern("[::1", false, "unterminated");
	reject_pattern("[::1]x", false, "after ']'");
	reject_pattern("[example.com]", false, "IPv6");
	reject_pattern("[fe80::1%eth0]", false, "zone");
	reject_pattern("exa mple.com", false, "whitespace");
	reject_pattern("example.com\r\n", false, "control");
	reject_pattern("ex..ample.com", false, "label");
	reject_pattern("exämple.com", false, "punycode");
	reject_pattern("*.0.0.1", false, "IP");
	reject_pattern("1.2.3.999", false, "IPv4");
}

static void canon_ok(const char *in, const char *want)
{
	char out[DOMAIN_HOST_MAX];
	const char *err = NULL;

	if (host_canonicalise(in, out, sizeof(out), &err))
		fail_msg("\"%s\" rejected: %s", in, err);
	assert_string_equal(out, want);
}

static void canon_bad(const char *in, const char *needle)
{
	char out[DOMAIN_HOST_MAX];
	const char *err = NULL;

	assert_int_equal(host_canonicalise(in, out, sizeof(out), &err), -EINVAL);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("\"%s\": \"%s\" lacks \"%s\"", in, err, needle);
}

static void test_canonicalise(void **state)
{
	char big[300];
	char small[4];
	const char *err;

	canon_ok("Example.COM", "example.com");
	canon_ok("example.com.", "example.com");
	canon_ok("127.1", "127.0.0.1");
	canon_ok("2130706433", "127.0.0.1");
	canon_ok("0x7f.0.0.1", "127.0.0.1");
	canon_ok("0X7F.1", "127.0.0.1");
	canon_ok("0177.0.0.1", "127.0.0.1");
	canon_ok("127.0.0.1.", "127.0.0.1");
	canon_ok("10.0.258", "10.0.1.2");
	canon_ok("0", "0.0.0.0");
	canon_ok("::ffff:127.0.0.1", "127.0.0.1");
	canon_ok("[::ffff:7f00:1]", "127.0.0.1");
	canon_ok("[::1]", "::1");
	canon_ok("2001:DB8::0:1", "2001:db8::1");
	canon_ok("localhost", "localhost");
	canon_ok("xn--bcher-kva.example", "xn--bcher-kva.example");

	canon_bad("", "empty");
	canon_bad("exa\rmple.com", "CR or LF");
	canon_bad("example.com\n", "CR or LF");
	canon_bad("fe80::1%eth0", "zone");
	canon_bad("[fe80::1%25eth0]", "zone");
	canon_bad("exa mple.com", "space");
	canon_bad("256.0.0.1", "IPv4");
	canon_bad("1.2.3.4.5", "IPv4");
	canon_bad("0x100000000", "IPv4");
	canon_bad("08.0.0.1", "IPv4");
	canon_bad("example.0x1f", "IPv4");
	canon_ok("example.0x1g", "example.0x1g");
	canon_bad("a..b", "empty label");
	canon_bad(".", "empty label");
	canon_bad("example.com..", "empty label");
	canon_bad("[::1", "unterminated");
	canon_bad("::g", "IPv6");
	canon_bad("bücher.example", "punycode");
	canon_bad("a*.example.com", "invalid character");

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	canon_bad(big, "255");
	/* 255 bytes is fine as far as length goes (labels are checked separately). */
	for (int i = 0; i < 255; i++)
		big[i] = (i % 50 == 49) ? '.' : 'a';
	big[255] = '\0';
	canon_ok(big, big);
	assert_int_equal(host_canonicalise("example.com", small, sizeof(small), &err),
			 -ENAMETOOLONG);
}

static bool match(const char *pat, bool deny, const char *host, unsigned port)
{
	struct domain_pattern p;
	char canon[DOMAIN_HOST_MAX];
	const char *err;

	assert_int_equal(domain_pattern_parse(pat, deny, &p, &err), 0);
	assert_int_equal(host_canonicalise(host, canon, sizeof(canon), &err), 0);
	return domain_pattern_match(&p, canon, port);
}

static void test_match(void **state)
{
	assert_true(match("example.com", false, "EXAMPLE.com.", 443));
	assert_false(match("example.com", false, "a.example.com", 443));
	assert_true(match("*.example.com", false, "a.example.com", 443));
	assert_true(match("*.example.com", false, "a.b.example.com", 80));
	assert_false(match("*.example.com", false, "example.com", 443));
	assert_false(match("*.example.com", false, "badexample.com", 443));
	assert_false(match("*.example.com", false, "example.com.evil.org", 443));
	assert_true(match("example.com:443", false, "example.com", 443));
	assert_false(match("example.com:443", false, "example.com", 80));
	assert_true(match("127.0.0.1", false, "2130706433", 80));
	assert_true(match("127.0.0.1", false, "::ffff:127.0.0.1", 80));
	assert_true(match("[::1]:8080", false, "[0:0::1]", 8080));
	assert_false(match("[::1]:8080", false, "::1", 8081));
	assert_true(match("*", true, "anything.example", 1));
	assert_true(match("*", true, "10.0.0.1", 1));
	assert_true(match("*:22", true, "github.com", 22));
	assert_false(match("*:22", true, "github.com", 443));
	assert_true(match("localhost", false, "LocalHost.", 5432));
}

static void test_wildcard_never_matches_ip(void **state)
{
	struct domain_pattern p;
	const char *err;

	/* Hand-build a wildcard whose suffix looks like the tail of an address. */
	assert_int_equal(domain_pattern_parse("*.example.com", false, &p, &err), 0);
	strcpy(p.host, "0.0.1");
	assert_false(domain_pattern_match(&p, "127.0.0.1", 80));
	assert_int_equal(host_ip_family("127.0.0.1"), AF_INET);
	assert_int_equal(host_ip_family("::1"), AF_INET6);
	assert_int_equal(host_ip_family("example.com"), 0);
}

static void test_cidr(void **state)
{
	struct ip_cidr c;
	unsigned char a4[4], a6[16];
	const char *err;

	assert_int_equal(ip_cidr_parse("10.0.0.0/8", &c, &err), 0);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix, 8);
	assert_string_equal(c.text, "10.0.0.0/8");
	inet_pton(AF_INET, "10.200.3.4", a4);
	assert_true(ip_cidr_contains(&c, AF_INET, a4));
	inet_pton(AF_INET, "11.0.0.1", a4);
	assert_false(ip_cidr_contains(&c, AF_INET, a4));
	inet_pton(AF_INET6, "::ffff:10.1.1.1", a6);
	assert_true(ip_cidr_contains(&c, AF_INET6, a6));

	assert_int_equal(ip_cidr_parse("169.254.169.254", &c, &err), 0);
	assert_int_equal(c.prefix, 32);
	assert_string_equal(c.text, "169.254.169.254");

	assert_int_equal(ip_cidr_parse("192.168.1.77/24", &c, &err), 0);
	assert_string_equal(c.text, "192.168.1.0/24");

	assert_int_equal(ip_cidr_parse("fd00:ec2::/32", &c, &err), 0);
	assert_int_equal(c.family, AF_INET6);
	assert_string_equal(c.text, "fd00:ec2::/32");
	inet_pton(AF_INET6, "fd00:ec2::254", a6);
	assert_true(ip_cidr_contains(&c, AF_INET6, a6));
	inet_pton(AF_INET6, "fd00:ec3::254", a6);
	assert_false(ip_cidr_contains(&c, AF_INET6, a6));

	assert_int_equal(ip_cidr_parse("[::1]", &c, &err), 0);
	assert_string_equal(c.text, "::1");
	assert_int_equal(ip_cidr_parse("::ffff:10.0.0.0/104", &c, &err), 0);
	assert_int_equal(c.family, AF_INET);
	assert_string_equal(c.text, "10.0.0.0/8");

	assert_int_equal(ip_cidr_parse("10.0.0.0/33", &c, &err), -EINVAL);
	assert_int_equal(ip_cidr_parse("10.0.0.0/08", &c, &err), -EINVAL);
	assert_int_equal(ip_cidr_parse("10.0.0.0/", &c, &err), -EINVAL);
	assert_int_equal(ip_cidr_parse("127.1", &c, &err), -EINVAL);
	assert_int_equal(ip_cidr_parse("example.com", &c, &err), -EINVAL);
	assert_int_equal(ip_cidr_parse("::/129", &c, &err), -EINVAL);
	assert_int_equal(ip_cidr_parse("", &c, &err), -EINVAL);
	assert_non_null(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pattern_accept),
		cmocka_unit_test(test_pattern_accept_deny_only),
		cmocka_unit_test(test_pattern_reject),
		cmocka_unit_test(test_canonicalise),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_wildcard_never_matches_ip),
		cmocka_unit_test(test_cidr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
