// SPDX-License-Identifier: MIT
/* A live update's event names what one policy grants that the other does not, each once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "policy/policy_grants.h"

#define CWD "/nonexistent-bpfbox-test/proj"
#define HOME "/nonexistent-bpfbox-test/home"

static struct policy *load(const char *json)
{
	struct policy_load_opts o = { .cwd = CWD, .home = HOME };
	struct diag_list d;
	struct policy *p = NULL;

	diag_list_init(&d);
	if (policy_load_buffer("test.json", json, strlen(json), &o, &p, &d))
		for (size_t i = 0; i < d.n; i++)
			print_error("%s: %s\n", d.items[i].path, d.items[i].message);
	assert_non_null(p);
	diag_list_free(&d);
	return p;
}

static bool has(char *const *v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static size_t len(char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

static void test_added_and_removed(void **state)
{
	struct policy *a = load("{\"filesystem\": {\"denyRead\": [\"/srv/secret\"], \"allowWrite\": [\"/srv/out\"], \"denyWrite\": []},"
				" \"network\": {\"allowedDomains\": [\"example.org\", \"a.example\"],"
				" \"deniedDomains\": []}}");
	struct policy *b = load("{\"filesystem\": {\"denyRead\": [\"/srv/secret\", \"/srv/more\"], \"allowWrite\": [], \"denyWrite\": []},"
				" \"network\": {\"allowedDomains\": [\"example.org\", \"b.example\"],"
				" \"deniedDomains\": [\"a.example\"], \"allowUnixSockets\": [\"/run/x.sock\"]}}");
	size_t na, nb;
	char **ga = policy_grants(a, &na), **gb = policy_grants(b, &nb);
	char **added = policy_grants_missing(gb, nb, ga, na), **removed = policy_grants_missing(ga, na, gb, nb);

	assert_non_null(added);
	assert_non_null(removed);
	assert_true(has(added, "denyRead:/srv/more"));
	assert_true(has(added, "allowedDomains:b.example"));
	assert_true(has(added, "deniedDomains:a.example"));
	assert_true(has(added, "allowUnixSockets:/run/x.sock"));
	assert_false(has(added, "denyRead:/srv/secret"));
	assert_true(has(removed, "allowWrite:/srv/out"));
	assert_true(has(removed, "allowedDomains:a.example"));
	assert_false(has(removed, "allowedDomains:example.org"));
	assert_int_equal(len(added), 4);
	assert_int_equal(len(removed), 2);
	free(added);
	free(removed);
	policy_grants_free(ga, na);
	policy_grants_free(gb, nb);
	policy_free(a);
	policy_free(b);
}

/* The same policy: nothing added, nothing removed; entries written twice count once. */
static void test_same_and_repeated(void **state)
{
	const char *json = "{\"filesystem\": {\"denyRead\": [\"/x\", \"/x\"], \"allowWrite\": [], \"denyWrite\": []},"
			   " \"network\": {\"allowedDomains\": [\"example.org\", \"example.org\"], \"deniedDomains\": []}}";
	struct policy *a = load(json), *b = load(json);
	size_t na, nb;
	char **ga = policy_grants(a, &na), **gb = policy_grants(b, &nb);
	char **added = policy_grants_missing(gb, nb, ga, na);

	for (size_t i = 1; i < na; i++)
		assert_true(strcmp(ga[i - 1], ga[i]) < 0);
	assert_int_equal(len(added), 0);
	free(added);
	policy_grants_free(ga, na);
	policy_grants_free(gb, nb);
	policy_free(a);
	policy_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_added_and_removed),
		cmocka_unit_test(test_same_and_repeated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
