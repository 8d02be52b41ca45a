// SPDX-License-Identifier: MIT
/*
 * bpfbox.network.parentProxy: the URL parser (each accepted form, each
 * refusal), the policy's error at its JSON path without the URL, and the
 * redacted form `policy show` prints.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "policy/policy.h"

struct good {
	const char *url;
	enum policy_parent_scheme scheme;
	const char *host;
	unsigned port;
	const char *user, *pass, *shown;
};

static void test_accepted(void **state)
{
	static const struct good rows[] = {
		{ "http://proxy.corp.example:3128", PARENT_HTTP, "proxy.corp.example", 3128, NULL, NULL,
		  "http://proxy.corp.example:3128" },
		{ "http://Proxy.Corp.Example:3128/", PARENT_HTTP, "proxy.corp.example", 3128, NULL, NULL,
		  "http://proxy.corp.example:3128" },
		{ "http://10.0.2.2:8080", PARENT_HTTP, "10.0.2.2", 8080, NULL, NULL, "http://10.0.2.2:8080" },
		{ "http://[::1]:3128", PARENT_HTTP, "::1", 3128, NULL, NULL, "http://[::1]:3128" },
		{ "http://alice:s3cret@127.0.0.1:3128", PARENT_HTTP, "127.0.0.1", 3128, "alice", "s3cret",
		  "http://***@127.0.0.1:3128" },
		{ "http://alice@127.0.0.1:3128", PARENT_HTTP, "127.0.0.1", 3128, "alice", "",
		  "http://***@127.0.0.1:3128" },
		{ "socks5://bob:p%40ss%3Aw@localhost:1080", PARENT_SOCKS5, "localhost", 1080, "bob", "p@ss:w",
		  "socks5://***@localhost:1080" },
		{ "socks5://[fd00::5]:65535", PARENT_SOCKS5, "fd00::5", 65535, NULL, NULL,
		  "socks5://[fd00::5]:65535" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct policy_parent pp;
		const char *why = NULL;

		if (policy_parent_parse(rows[i].url, &pp, &why))
			fail_msg("%s refused: %s", rows[i].url, why);
		assert_int_equal(pp.scheme, rows[i].scheme);
		assert_string_equal(pp.host, rows[i].host);
		assert_int_equal(pp.port, rows[i].port);
		if (rows[i].user) {
			assert_string_equal(pp.user, rows[i].user);
			assert_string_equal(pp.pass, rows[i].pass);
		} else {
			assert_null(pp.user);
			assert_null(pp.pass);
		}
		assert_string_equal(pp.shown, rows[i].shown);
		policy_parent_free(&pp);
	}
}

static void test_refused(void **state)
{
	static const struct {
		const char *url, *needle;
	} rows[] = {
		{ "https://proxy:3128", "http://" },
		{ "socks4://proxy:1080", "http://" },
		{ "proxy:3128", "http://" },
		{ "http://proxy", "port must be given" },
		{ "http://proxy:", "1 to 65535" },
		{ "http://proxy:0", "1 to 65535" },
		{ "http://proxy:65536", "1 to 65535" },
		{ "http://proxy:03128", "1 to 65535" },
		{ "http://proxy:31a8", "1 to 65535" },
		{ "http://proxy:3128/path", "no path" },
		{ "http://proxy:3128?x=1", "no path" },
		{ "http://proxy:3128#f", "no path" },
		{ "http://proxy:3128//", "no path" },
		{ "http://:3128", "host" },
		{ "http://pro_xy:3128", "host" },
		{ "http://-proxy:3128", "host" },
		{ "http://proxy.:3128", "host" },
		{ "http://999.1.1.1:3128", "IPv4" },
		{ "http://1.2.3:3128", "IPv4" },
		{ "http://[::g]:3128", "IPv6" },
		{ "http://[::1]3128", "after the [IPv6]" },
		{ "http://a@b@proxy:3128", "more than one '@'" },
		{ "http://:pw@proxy:3128", "empty user" },
		{ "http://a%4:pw@proxy:3128", "two hex digits" },
		{ "http://a:p%0d%0a@proxy:3128", "control character" },
		{ "http://a%3ab:pw@proxy:3128", "':'" },
		{ "http://a b:pw@proxy:3128", "percent-encoded" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct policy_parent pp;
		const char *why = NULL;

		if (!policy_parent_parse(rows[i].url, &pp, &why))
			fail_msg("%s accepted", rows[i].url);
		assert_non_null(why);
		if (!strstr(why, rows[i].needle))
			fail_msg("%s: \"%s\" lacks \"%s\"", rows[i].url, why, rows[i].needle);
		assert_int_equal(pp.scheme, PARENT_NONE);
		assert_null(pp.host);
	}
}

#define FS_MIN "\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"
#define NET_MIN "\"network\": {\"allowedDomains\": [\"example.com\"], \"deniedDomains\": []}"

static int load(const char *bb, struct policy **p, struct diag_list *d)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/w", .home = "/nonexistent-bpfbox/h" };
	char *json = NULL;
	int ret;

	assert_true(asprintf(&json, "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"network\": %s}}", bb) > 0);
	diag_list_init(d);
	ret = policy_load_buffer("test.json", json, strlen(json), &o, p, d);
	free(json);
	return ret;
}

/* A bad URL is an error at its JSON path that never repeats the URL (it may hold a password). */
static void test_policy_error(void **state)
{
	struct diag_list d;
	struct policy *p = NULL;
	bool found = false;

	assert_int_equal(load("{\"parentProxy\": \"http://u:hunter2@proxy:3128/x\"}", &p, &d), -EINVAL);
	assert_null(p);
	for (size_t i = 0; i < d.n; i++) {
		assert_null(strstr(d.items[i].message, "hunter2"));
		if (d.items[i].severity == DIAG_ERROR && !strcmp(d.items[i].path, "bpfbox.network.parentProxy"))
			found = true;
	}
	assert_true(found);
	diag_list_free(&d);
	assert_int_equal(load("{\"parentProxy\": 3128}", &p, &d), -EINVAL);
	assert_null(p);
	diag_list_free(&d);
}

static const cJSON *shown_parent(const char *json, cJSON **root)
{
	const cJSON *v;

	*root = cJSON_Parse(json);
	assert_non_null(*root);
	v = cJSON_GetObjectItemCaseSensitive(*root, "bpfbox");
	v = cJSON_GetObjectItemCaseSensitive(v, "network");
	v = cJSON_GetObjectItemCaseSensitive(v, "parentProxy");
	assert_non_null(v);
	return v;
}

/* policy show prints the redacted URL, never the credentials. */
static void test_show(void **state)
{
	struct diag_list d;
	struct policy *p = NULL;
	const cJSON *v;
	cJSON *root;
	char *json;

	assert_int_equal(load("{\"parentProxy\": \"socks5://u:hunter2@127.0.0.1:1080\"}", &p, &d), 0);
	diag_list_free(&d);
	assert_int_equal(p->parent.scheme, PARENT_SOCKS5);
	assert_string_equal(p->parent.pass, "hunter2");
	json = policy_to_json(p);
	assert_non_null(json);
	v = shown_parent(json, &root);
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "socks5://***@127.0.0.1:1080");
	assert_null(strstr(json, "hunter2"));
	cJSON_Delete(root);
	free(json);
	policy_free(p);
	assert_int_equal(load("{\"transparent\": true}", &p, &d), 0);
	diag_list_free(&d);
	assert_int_equal(p->parent.scheme, PARENT_NONE);
	json = policy_to_json(p);
	assert_true(cJSON_IsNull(shown_parent(json, &root)));
	cJSON_Delete(root);
	free(json);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_policy_error),
		cmocka_unit_test(test_show),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
