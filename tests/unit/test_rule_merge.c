// SPDX-License-Identifier: MIT
/*
 * Rules of both layers on one object share one kernel entry: each layer keeps
 * srt's precedence at that node and its own rule ids, marks stay layer-free,
 * and a sandbox without a ceiling gets exactly the entries it got before.
 * Also the loader exec --ceiling uses: both files, the cuts, --strict.
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

#include "bpfbox.h"
#include "policy/policy_ceiling.h"
#include "sandbox/sandbox_maps.h"

static void test_own_layer_as_before(void **state)
{
	struct bb_rule v = { 0 };

	/* denyRead then allowRead on one path: allowRead wins and names the node. */
	rule_merge(&v, BB_R_DENY_READ, 3, RULE_LAYER_OWN);
	rule_merge(&v, BB_R_ALLOW_READ, 5, RULE_LAYER_OWN);
	rule_merge(&v, BB_R_DENY_READ, 7, RULE_LAYER_OWN);
	assert_int_equal(v.flags, BB_R_DENY_READ | BB_R_ALLOW_READ);
	assert_int_equal(v.read_rule[BB_LAYER_OWN], 5);
	/* denyWrite wins over allowWrite whatever the order. */
	rule_merge(&v, BB_R_DENY_WRITE, 8, RULE_LAYER_OWN);
	rule_merge(&v, BB_R_ALLOW_WRITE, 9, RULE_LAYER_OWN);
	assert_int_equal(v.write_rule[BB_LAYER_OWN], 8);
	/* Nothing of the administrator's layer appears without a ceiling. */
	assert_int_equal(v.flags & (BB_R_DECISIONS << BB_R_CEIL_SHIFT), 0);
	assert_int_equal(v.read_rule[BB_LAYER_CEILING], 0);
	assert_int_equal(v.write_rule[BB_LAYER_CEILING], 0);
}

static void test_layers_apart(void **state)
{
	struct bb_rule v = { 0 };

	/* The administrator's denyRead and the caller's allowRead on one directory. */
	rule_merge(&v, BB_R_DENY_READ, 2, RULE_LAYER_CEILING);
	rule_merge(&v, BB_R_ALLOW_READ, 4, RULE_LAYER_OWN);
	assert_int_equal(v.flags, BB_R_ALLOW_READ | BB_R_CEIL_DENY_READ);
	assert_int_equal(v.read_rule[BB_LAYER_OWN], 4);
	assert_int_equal(v.read_rule[BB_LAYER_CEILING], 2);
	/* An allowRead of the caller does not outrank the ceiling's deny: that bit stays off. */
	assert_int_equal(v.flags & BB_R_CEIL_ALLOW_READ, 0);
	/* The caller's denyWrite and the administrator's allowWrite. */
	rule_merge(&v, BB_R_ALLOW_WRITE, 6, RULE_LAYER_CEILING);
	rule_merge(&v, BB_R_DENY_WRITE, 1, RULE_LAYER_OWN);
	assert_true(v.flags & BB_R_CEIL_ALLOW_WRITE);
	assert_true(v.flags & BB_R_DENY_WRITE);
	assert_false(v.flags & BB_R_ALLOW_WRITE);
	assert_false(v.flags & BB_R_CEIL_DENY_WRITE);
	assert_int_equal(v.write_rule[BB_LAYER_OWN], 1);
	assert_int_equal(v.write_rule[BB_LAYER_CEILING], 6);
	/* Precedence within the administrator's layer only. */
	rule_merge(&v, BB_R_DENY_WRITE, 11, RULE_LAYER_CEILING);
	rule_merge(&v, BB_R_ALLOW_WRITE, 12, RULE_LAYER_CEILING);
	assert_int_equal(v.write_rule[BB_LAYER_CEILING], 11);
	assert_int_equal(v.write_rule[BB_LAYER_OWN], 1);
}

static void test_marks_and_both(void **state)
{
	struct bb_rule v = { 0 };

	/* The shifted flags never collide with the layer-free marks. */
	assert_int_equal((BB_R_DECISIONS << BB_R_CEIL_SHIFT) &
			 (BB_R_DECISIONS | BB_R_ANCHOR | BB_R_UNIX_ALLOW | BB_R_PREFIX | BB_R_SHM |
			  BB_R_BPFBOX_STATE), 0);
	rule_merge(&v, BB_R_ANCHOR, 0, RULE_LAYER_OWN);
	rule_merge(&v, BB_R_PREFIX, 0, RULE_LAYER_CEILING);
	assert_int_equal(v.flags, BB_R_ANCHOR | BB_R_PREFIX);
	/* An implicit rule of both layers (the TMPDIR). */
	rule_merge(&v, BB_R_ALLOW_WRITE, 9, RULE_LAYER_BOTH);
	assert_int_equal(v.flags, BB_R_ANCHOR | BB_R_PREFIX | BB_R_ALLOW_WRITE | BB_R_CEIL_ALLOW_WRITE);
	assert_int_equal(v.write_rule[BB_LAYER_OWN], 9);
	assert_int_equal(v.write_rule[BB_LAYER_CEILING], 9);
}

static char dir[] = "/tmp/bb-unit-ceiling-XXXXXX";

static char *write_file(const char *name, const char *json)
{
	char *path = NULL;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(json, f);
	fclose(f);
	return path;
}

static void test_load_under_ceiling(void **state)
{
	struct policy_load_opts lo = { .cwd = "/", .home = "/nonexistent-bpfbox/h" };
	struct policy *p = NULL;
	char *admin, *caller, *msgs = NULL;
	size_t msgs_len = 0;
	FILE *m;

	assert_non_null(mkdtemp(dir));
	admin = write_file("admin.json", "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []},"
			   "\"filesystem\": {\"denyRead\": [\"/srv/x\"], \"allowRead\": [],"
			   "\"allowWrite\": [\"/srv\"], \"denyWrite\": []}}");
	caller = write_file("user.json", "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []},"
			    "\"filesystem\": {\"denyRead\": [], \"allowRead\": [],"
			    "\"allowWrite\": [\"/srv/w\", \"/opt/w\"], \"denyWrite\": []}}");

	/* Both layers, the cut named, both files recorded. */
	m = open_memstream(&msgs, &msgs_len);
	assert_int_equal(policy_load_under_ceiling(admin, caller, &lo, m, &p), 0);
	fclose(m);
	assert_non_null(p);
	assert_true(p->has_ceiling);
	assert_string_equal(p->ceiling_file, admin);
	assert_string_equal(p->file, caller);
	assert_int_equal(strlen(p->ceiling_digest), 64);
	assert_non_null(strstr(msgs, "filesystem.allowWrite[1] \"/opt/w\": outside the administrator's allowWrite"));
	size_t own = 0, ceil = 0;

	for (size_t i = 0; i < p->n_fs_rules; i++) {
		if (p->fs_rules[i].layer != FS_LAYER_CEILING) {
			own++;
			continue;
		}
		assert_int_equal(strncmp(p->fs_rules[i].name, "ceiling:", 8), 0);
		ceil++;
	}
	assert_true(own && ceil);
	policy_free(p);
	free(msgs);

	/* --strict: the cut is an error. */
	lo.strict = true;
	msgs = NULL;
	m = open_memstream(&msgs, &msgs_len);
	assert_int_equal(policy_load_under_ceiling(admin, caller, &lo, m, &p), -EPERM);
	fclose(m);
	assert_null(p);
	assert_non_null(strstr(msgs, "\"/opt/w\": outside the administrator's allowWrite"));
	assert_non_null(strstr(msgs, "takes away 1 grant(s), an error under --strict"));
	free(msgs);

	/* No caller's file: the administrator's policy as it is, one layer. */
	lo.strict = false;
	assert_int_equal(policy_load_under_ceiling(admin, NULL, &lo, stderr, &p), 0);
	assert_false(p->has_ceiling);
	assert_string_equal(p->file, admin);
	policy_free(p);

	unlink(admin);
	unlink(caller);
	rmdir(dir);
	free(admin);
	free(caller);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_layer_as_before),
		cmocka_unit_test(test_layers_apart),
		cmocka_unit_test(test_marks_and_both),
		cmocka_unit_test(test_load_under_ceiling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
