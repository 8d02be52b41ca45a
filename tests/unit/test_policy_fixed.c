// SPDX-License-Identifier: MIT
/*
 * The fields a running sandbox took at start (policy_fixed_change): each
 * named when it differs between two policies, and nothing named for what
 * a live update does change (the network lists, credentials.sigv4, the
 * hosts a masked value defaults to).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "policy/policy_fixed.h"

#define FS "\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"
#define NETD(denied, extra) "\"network\": {\"allowedDomains\": [\"api.example.com\", \"up.example.com\"], " \
	"\"deniedDomains\": [" denied "]" extra "}"
#define NET(extra) NETD("", extra)
#define NET2(extra) "\"network\": {\"allowedDomains\": [\"api.example.com\"], \"deniedDomains\": []" extra "}"
/* Masked values need TLS termination. */
#define TLS ", \"tlsTerminate\": {}"

static struct policy *load(const char *json)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox-test", .home = "/nonexistent-bpfbox-test/home" };
	struct policy *p = NULL;
	struct diag_list d;

	diag_list_init(&d);
	if (policy_load_buffer("test.json", json, strlen(json), &o, &p, &d)) {
		for (size_t i = 0; i < d.n; i++)
			print_message("  %s: %s\n", d.items[i].path, d.items[i].message);
		fail_msg("rejected: %s", json);
	}
	diag_list_free(&d);
	return p;
}

/* What policy_fixed_change says between a and b, both ways round. */
static void expect(const char *a_json, const char *b_json, const char *field)
{
	struct policy *a = load(a_json), *b = load(b_json);
	const char *ab = policy_fixed_change(a, b), *ba = policy_fixed_change(b, a);

	if (!field) {
		if (ab || ba)
			fail_msg("expected no fixed change, got %s", ab ? ab : ba);
	} else {
		assert_non_null(ab);
		assert_non_null(ba);
		assert_string_equal(ab, field);
		assert_string_equal(ba, field);
	}
	policy_free(a);
	policy_free(b);
}

#define BASE "{" NET("") ", " FS "}"
#define BASE_TLS "{" NET(TLS) ", " FS "}"

static void test_same_is_no_change(void **state)
{
	(void)state;
	expect(BASE, BASE, NULL);
}

static void test_what_changes_live_is_not_fixed(void **state)
{
	(void)state;
	/* The network lists. */
	expect(BASE, "{" NET2("") ", " FS "}", NULL);
	expect(BASE, "{" NETD("\"x.example.com\"", "") ", " FS "}", NULL);
	/* credentials.sigv4's modes are asked at each request. */
	expect("{" NET(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"mask\"}]}}",
	       "{" NET(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"mask\"}], "
	       "\"sigv4\": {\"presigned\": \"passthrough\"}}}", NULL);
	/* A masked value's hosts defaulted to allowedDomains: they follow the lists. */
	expect("{" NET(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"mask\"}]}}",
	       "{" NET2(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"mask\"}]}}", NULL);
}

static void test_limits(void **state)
{
	(void)state;
	expect("{" NET("") ", " FS ", \"bpfbox\": {\"limits\": {\"memory\": \"8G\"}}}",
	       "{" NET("") ", " FS ", \"bpfbox\": {\"limits\": {\"memory\": \"1G\"}}}", "bpfbox.limits");
	expect(BASE, "{" NET("") ", " FS ", \"bpfbox\": {\"limits\": {\"pids\": 100}}}", "bpfbox.limits");
	expect(BASE, "{" NET("") ", " FS ", \"bpfbox\": {\"limits\": {\"cpu\": \"50%\"}}}", "bpfbox.limits");
}

static void test_request_rules(void **state)
{
	(void)state;
	expect(BASE, "{" NET(", \"requireHostMatch\": true") ", " FS "}", "network.requireHostMatch");
	expect(BASE, "{" NET(", \"tlsTerminate\": {}, \"refuseOpaqueTunnels\": true") ", " FS "}",
	       "network.refuseOpaqueTunnels");
	expect(BASE, "{" NET(", \"stripResponseHeaders\": [\"x-a\"]") ", " FS "}", "network.stripResponseHeaders");
	/* The same names in another order are the same rule. */
	expect("{" NET(", \"stripResponseHeaders\": [\"x-a\", \"x-b\"]") ", " FS "}",
	       "{" NET(", \"stripResponseHeaders\": [\"x-b\", \"x-a\"]") ", " FS "}", NULL);
}

static void test_parent_proxy(void **state)
{
	(void)state;
	expect(BASE, "{" NET("") ", " FS ", \"bpfbox\": {\"network\": {\"parentProxy\": \"http://10.0.0.1:3128\"}}}",
	       "bpfbox.network.parentProxy");
	expect("{" NET("") ", " FS ", \"bpfbox\": {\"network\": {\"parentProxy\": \"http://u:a@10.0.0.1:3128\"}}}",
	       "{" NET("") ", " FS ", \"bpfbox\": {\"network\": {\"parentProxy\": \"http://u:b@10.0.0.1:3128\"}}}",
	       "bpfbox.network.parentProxy");
}

static void test_environment_and_credentials(void **state)
{
	(void)state;
	expect(BASE, "{" NET("") ", " FS ", \"bpfbox\": {\"env\": {\"allow\": [\"PATH\"]}}}", "bpfbox.env.allow");
	expect(BASE_TLS, "{" NET(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"deny\"}]}}",
	       "credentials");
	expect(BASE_TLS, "{" NET(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"mask\"}]}}",
	       "credentials");
	/* Hosts named for a masked value: a narrowing must take effect, so it is fixed. */
	expect("{" NET(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"mask\", "
	       "\"injectHosts\": [\"api.example.com\", \"up.example.com\"]}]}}",
	       "{" NET(TLS) ", " FS ", \"credentials\": {\"envVars\": [{\"name\": \"K\", \"mode\": \"mask\", "
	       "\"injectHosts\": [\"api.example.com\"]}]}}", "credentials");
	expect(BASE, "{" NET("") ", " FS ", \"git\": {\"safeDirectories\": [\"/srv/repo\"]}}", "git.safeDirectories");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_is_no_change),
		cmocka_unit_test(test_what_changes_live_is_not_fixed),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_request_rules),
		cmocka_unit_test(test_parent_proxy),
		cmocka_unit_test(test_environment_and_credentials),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
