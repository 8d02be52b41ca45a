// SPDX-License-Identifier: MIT
/*
 * The sandbox proxy's guard wiring: an address allowed as a literal stays
 * reachable for an allowed name only on the port the entry names, and
 * deniedDomains still wins. A policy replaced while the proxy runs (issue 32)
 * decides from then on, and no decision mixes two policies.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sandbox/sandbox_proxy.h"

static struct policy *load(const char *net)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/w", .home = "/nonexistent-bpfbox/h" };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *json = NULL;

	assert_true(asprintf(&json,
			     "{\"network\": %s, \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], "
			     "\"denyWrite\": []}}",
			     net) > 0);
	if (policy_load_buffer("t", json, strlen(json), &o, &p, &d))
		fail_msg("rejected: %s", json);
	free(json);
	diag_list_free(&d);
	return p;
}

static bool refused(const struct sandbox_proxy *sp, const char *name, const char *ip, unsigned short port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	} else {
		assert_int_equal(inet_pton(AF_INET6, ip, &s6->sin6_addr), 1);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	}
	return addr_guard_refuses_name(&sp->guard, name, (struct sockaddr *)&ss, NULL);
}

static void literal_with_port(void **state)
{
	struct policy *p = load("{\"allowedDomains\": [\"loop.test\", \"127.0.0.1:8082\", \"[::1]\"], "
				"\"deniedDomains\": []}");
	struct sandbox_proxy sp;
	struct errmsg em = { { 0 } };

	(void)state;
	assert_int_equal(sandbox_proxy_start(&sp, p, NULL, &em), 0);
	assert_false(refused(&sp, "loop.test", "127.0.0.1", 8082));
	assert_true(refused(&sp, "loop.test", "127.0.0.1", 8083));
	assert_true(refused(&sp, "loop.test", "127.0.0.2", 8082));
	/* IPv4-mapped IPv6 reaches what its IPv4 part reaches. */
	assert_false(refused(&sp, "loop.test", "::ffff:127.0.0.1", 8082));
	assert_true(refused(&sp, "loop.test", "::ffff:127.0.0.1", 22));
	/* A literal without a port allows every port. */
	assert_false(refused(&sp, "loop.test", "::1", 22));
	assert_true(refused(&sp, "loop.test", "169.254.169.254", 80));
	sandbox_proxy_stop(&sp);
	policy_free(p);
}

static void deny_wins(void **state)
{
	struct policy *p = load("{\"allowedDomains\": [\"loop.test\", \"127.0.0.1\"], "
				"\"deniedDomains\": [\"127.0.0.1:22\"]}");
	struct sandbox_proxy sp;
	struct errmsg em = { { 0 } };

	(void)state;
	assert_int_equal(sandbox_proxy_start(&sp, p, NULL, &em), 0);
	assert_false(refused(&sp, "loop.test", "127.0.0.1", 80));
	assert_true(refused(&sp, "loop.test", "127.0.0.1", 22));
	sandbox_proxy_stop(&sp);
	policy_free(p);
}

/* A switch decides at once: A allows .1 and .2, B only .2; back to A, .1 again. */
static void live_switch(void **state)
{
	struct policy *a = load("{\"allowedDomains\": [\"127.0.0.1\", \"127.0.0.2\"], \"deniedDomains\": []}");
	struct policy *b = load("{\"allowedDomains\": [\"127.0.0.2\"], \"deniedDomains\": []}");
	struct sandbox_proxy sp;
	struct errmsg em = { { 0 } };

	(void)state;
	assert_int_equal(sandbox_proxy_start(&sp, a, NULL, &em), 0);
	assert_false(refused(&sp, "x.test", "127.0.0.1", 80));
	assert_false(refused(&sp, "y.test", "127.0.0.2", 80));
	sandbox_proxy_set_policy(&sp, b);
	assert_true(refused(&sp, "x.test", "127.0.0.1", 80));
	assert_false(refused(&sp, "y.test", "127.0.0.2", 80));
	sandbox_proxy_set_policy(&sp, a);
	assert_false(refused(&sp, "x.test", "127.0.0.1", 80));
	sandbox_proxy_stop(&sp);
	policy_free(a);
	policy_free(b);
}

struct switcher {
	struct sandbox_proxy *sp;
	struct policy *p[2];
};

static void *switch_policies(void *arg)
{
	struct switcher *s = arg;

	for (int i = 0; i < 1000; i++)
		sandbox_proxy_set_policy(s->sp, s->p[i & 1]);
	return NULL;
}

/* 1,000 switches while decisions are asked: denied by both is never allowed, allowed by both always is. */
static void live_switch_concurrent(void **state)
{
	struct policy *a = load("{\"allowedDomains\": [\"127.0.0.1\", \"127.0.0.2\"], "
				"\"deniedDomains\": [\"127.0.0.3\"]}");
	struct policy *b = load("{\"allowedDomains\": [\"127.0.0.2\", \"127.0.0.4\"], \"deniedDomains\": []}");
	struct sandbox_proxy sp;
	struct errmsg em = { { 0 } };
	struct switcher s = { &sp, { a, b } };
	pthread_t t;

	(void)state;
	assert_int_equal(sandbox_proxy_start(&sp, a, NULL, &em), 0);
	assert_int_equal(pthread_create(&t, NULL, switch_policies, &s), 0);
	for (int i = 0; i < 20000; i++) {
		assert_true(refused(&sp, "z.test", "127.0.0.3", 80));
		assert_true(refused(&sp, "z.test", "127.0.0.5", 80));
		assert_false(refused(&sp, "y.test", "127.0.0.2", 80));
	}
	pthread_join(t, NULL);
	sandbox_proxy_stop(&sp);
	policy_free(a);
	policy_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(literal_with_port),
		cmocka_unit_test(deny_wins),
		cmocka_unit_test(live_switch),
		cmocka_unit_test(live_switch_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
