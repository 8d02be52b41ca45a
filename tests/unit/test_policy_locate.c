// SPDX-License-Identifier: MIT
/*
 * Where a diagnostic's JSON path is in the policy's text (policy_locate.c):
 * members at their key, elements at their first byte, quoted keys with
 * escapes, nested values skipped whole, duplicate keys at the first (as the
 * loader reads them), missing members at their deepest ancestor, malformed
 * paths and truncated text refused; each path the loader reports for a
 * broken file found where the problem is; and `policy check --json`'s
 * document for a broken, a valid, a missing and a malformed file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cJSON.h>

#include "cli/policy_check_json.h"

#include "policy/policy.h"
#include "policy/policy_locate.h"

static const char doc[] =
	"{\n"
	"  \"network\": {\n"
	"    \"allowedDomains\": [\"a.com\", {\"x\": [1, \"]\", {\"}\": 2}]}, \"c.com\"],\n"
	"    \"deniedDomains\": []\n"
	"  },\n"
	"  \"ignoreViolations\": {\"git push\": [\"/x\"], \"q\\\"\\u00e9\": 1},\n"
	"  \"dup\": 1, \"dup\": 2\n"
	"}\n";

static struct policy_location at(const char *text, const char *path, int want_ret)
{
	struct policy_location loc;

	assert_int_equal(policy_locate(text, strlen(text), path, &loc), want_ret);
	return loc;
}

static void expect(const char *path, unsigned line, unsigned column, int exact)
{
	struct policy_location loc = at(doc, path, 0);

	assert_int_equal(loc.line, line);
	assert_int_equal(loc.column, column);
	assert_int_equal(loc.exact, exact);
	assert_true(loc.offset < strlen(doc));
}

static void test_paths(void **state)
{
	expect("", 1, 1, 1);
	expect("network", 2, 3, 1);
	expect("network.allowedDomains", 3, 5, 1);
	expect("network.allowedDomains[0]", 3, 24, 1);
	/* Past an element whose strings hold brackets. */
	expect("network.allowedDomains[2]", 3, 60, 1);
	expect("network.allowedDomains[1].x[2]", 3, 48, 1);
	expect("network.deniedDomains", 4, 5, 1);
	expect("ignoreViolations[\"git push\"]", 6, 24, 1);
	expect("ignoreViolations[\"git push\"][0]", 6, 37, 1);
	/* A quoted key with escapes, compared decoded. */
	expect("ignoreViolations[\"q\\\"\u00e9\"]", 6, 44, 1);
	expect("ignoreViolations[\"q\\\"\\u00e9\"]", 6, 44, 1);
	/* The first of duplicate keys, as the loader reads them. */
	expect("dup", 7, 3, 1);
}

static void test_missing_and_malformed(void **state)
{
	/* Missing: the deepest ancestor there is. */
	expect("network.allowedDomains[3]", 3, 5, 0);
	expect("network.nothing.deeper", 2, 3, 0);
	expect("filesystem", 1, 1, 0);
	expect("network.allowedDomains.notAnObject", 3, 5, 0);
	/* Not paths. */
	at(doc, "network..allowedDomains", -EINVAL);
	at(doc, "network[", -EINVAL);
	at(doc, "network[x]", -EINVAL);
	at(doc, "network[\"unterminated]", -EINVAL);
	at(doc, "[1234567890123]", -EINVAL);
	/* Not a value: empty or blank text. */
	at("", "", -EINVAL);
	at(" \n\t", "network", -EINVAL);
}

static void test_truncated_text(void **state)
{
	/* Every prefix of the document: never past its end, an answer or -EINVAL. */
	for (size_t n = 0; n < sizeof(doc) - 1; n++) {
		struct policy_location loc;
		int ret = policy_locate(doc, n, "ignoreViolations[\"git push\"][0]", &loc);

		assert_true(ret == 0 || ret == -EINVAL);
		if (!ret)
			assert_true(loc.offset < n);
	}
}

/* The loader's own paths, located in the broken file they came from. */
static void test_loader_paths(void **state)
{
	static const char broken[] =
		"{\n"
		"  \"network\": {\n"
		"    \"allowedDomains\": [\"ok.com\",\n"
		"                       \"bad domain\"],\n"
		"    \"deniedDomains\": [], \"surprise\": true\n"
		"  },\n"
		"  \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": 7}\n"
		"}\n";
	struct policy_load_opts lo = { .cwd = "/", .home = "/nonexistent" };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	const struct diag *bad, *unknown, *type;
	struct policy_location loc;

	assert_int_equal(policy_load_buffer("b.json", broken, strlen(broken), &lo, &p, &d), -EINVAL);
	bad = diag_find(&d, DIAG_ERROR, "network.allowedDomains[1]");
	unknown = diag_find(&d, DIAG_WARNING, "network.surprise");
	type = diag_find(&d, DIAG_ERROR, "filesystem.denyWrite");
	assert_non_null(bad);
	assert_non_null(unknown);
	assert_non_null(type);
	assert_int_equal(policy_locate(broken, strlen(broken), bad->path, &loc), 0);
	assert_int_equal(loc.line, 4);
	assert_int_equal(loc.column, 24);
	assert_int_equal(policy_locate(broken, strlen(broken), unknown->path, &loc), 0);
	assert_int_equal(loc.line, 5);
	assert_int_equal(loc.column, 26);
	assert_int_equal(policy_locate(broken, strlen(broken), type->path, &loc), 0);
	assert_int_equal(loc.line, 7);
	assert_int_equal(loc.column, 52);
	assert_int_equal(loc.exact, 1);
	diag_list_free(&d);
}

/* policy check --json on text (written to a file) or on path; the parsed document. */
static cJSON *check_json(const char *text, const char *path, int want_ret)
{
	char file[] = "/tmp/bpfbox-test-locate-XXXXXX", *out = NULL;
	size_t out_len = 0;
	FILE *f = open_memstream(&out, &out_len);
	cJSON *doc;
	int fd = -1;

	assert_non_null(f);
	if (text) {
		fd = mkstemp(file);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
		path = file;
	}
	assert_int_equal(policy_check_json(path, false, false, f), want_ret);
	fclose(f);
	if (fd >= 0) {
		close(fd);
		unlink(file);
	}
	doc = cJSON_Parse(out);
	assert_non_null(doc);
	assert_non_null(strchr(out, '\n'));
	free(out);
	return doc;
}

static int num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	assert_true(cJSON_IsNumber(v));
	return v->valueint;
}

static void test_check_json(void **state)
{
	static const char broken[] =
		"{\"network\": {\"allowedDomains\": [\"bad domain\"], \"deniedDomains\": [], \"x\": 1},\n"
		" \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}}\n";
	static const char valid[] =
		"{\"network\": {\"allowedDomains\": [\"example.com\"], \"deniedDomains\": []},\n"
		" \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}}\n";
	char digest[65];
	cJSON *doc, *problems, *p;

	doc = check_json(broken, NULL, -EINVAL);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(doc, "valid")));
	assert_int_equal(num(doc, "errors"), 1);
	assert_int_equal(num(doc, "warnings"), 1);
	policy_sha256_hex(broken, strlen(broken), digest);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "sha256")->valuestring, digest);
	problems = cJSON_GetObjectItemCaseSensitive(doc, "problems");
	assert_int_equal(cJSON_GetArraySize(problems), 2);
	cJSON_ArrayForEach(p, problems) {
		const char *path = cJSON_GetObjectItemCaseSensitive(p, "path")->valuestring;

		assert_int_equal(num(p, "line"), 1);
		if (!strcmp(path, "network.x")) {
			assert_string_equal(cJSON_GetObjectItemCaseSensitive(p, "severity")->valuestring,
					    "warning");
			assert_int_equal(num(p, "column"), 69);
		} else {
			assert_string_equal(path, "network.allowedDomains[0]");
			assert_string_equal(cJSON_GetObjectItemCaseSensitive(p, "severity")->valuestring,
					    "error");
			assert_int_equal(num(p, "column"), 33);
			assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(p, "message")->valuestring,
					       "bad domain"));
		}
	}
	cJSON_Delete(doc);

	doc = check_json(valid, NULL, 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "valid")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "problems")), 0);
	cJSON_Delete(doc);

	/* Invalid JSON: where the syntax error is. */
	doc = check_json("{\n  \"network\": [1,}\n", NULL, -EINVAL);
	p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "problems"), 0);
	assert_int_equal(num(p, "line"), 2);
	assert_int_equal(num(p, "column"), 17);
	cJSON_Delete(doc);

	/* No file: a problem without a place, no digest. */
	doc = check_json(NULL, "/nonexistent/bpfbox-policy.json", -ENOENT);
	assert_null(cJSON_GetObjectItemCaseSensitive(doc, "sha256"));
	p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "problems"), 0);
	assert_null(cJSON_GetObjectItemCaseSensitive(p, "line"));
	assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(p, "message")->valuestring, "cannot open"));
	cJSON_Delete(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_missing_and_malformed),
		cmocka_unit_test(test_truncated_text),
		cmocka_unit_test(test_loader_paths),
		cmocka_unit_test(test_check_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
