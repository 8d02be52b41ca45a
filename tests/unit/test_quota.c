// SPDX-License-Identifier: MIT
/*
 * Shares of the host-wide maps: the limits as the administrator writes them,
 * the decision (per sandbox, per uid, the pool of the uids but root, the
 * map), what a sandbox's rules reserve, and the ledger itself: processes
 * reserving at once from one uid's share never hold more than it, and a
 * released sandbox gives its share back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <cmocka.h>

#include "bpfbox.h"
#include "sandbox/quota.h"
#include "sandbox/sandbox_maps.h"

static void test_defaults_and_parse(void **state)
{
	struct quota_limits q;
	struct errmsg em = { { 0 } };
	char text[160];

	(void)state;
	quota_limits_default(&q, "bpfbox daemon --quota");
	assert_int_equal(q.rules, QUOTA_DEFAULT_RULES);
	assert_int_equal(q.user_rules, QUOTA_DEFAULT_USER_RULES);
	assert_int_equal(q.learned, QUOTA_DEFAULT_LEARNED);
	assert_int_equal(q.user_learned, QUOTA_DEFAULT_USER_LEARNED);
	assert_int_equal(q.learned_min_ttl_s, 300);
	assert_int_equal(quota_limits_parse("rules=100,user-rules=300,learned-min-ttl=0", &q, &em), 0);
	assert_int_equal(q.rules, 100);
	assert_int_equal(q.user_rules, 300);
	assert_int_equal(q.learned, QUOTA_DEFAULT_LEARNED);
	assert_int_equal(q.learned_min_ttl_s, 0);
	quota_limits_format(&q, text, sizeof(text));
	assert_string_equal(text, "rules=100,user-rules=300,learned=1024,user-learned=4096,learned-min-ttl=0");
	/* What the format gives, the parser reads back. */
	assert_int_equal(quota_limits_parse(text, &q, &em), 0);
	assert_int_equal(q.user_rules, 300);
}

static void test_parse_refuses(void **state)
{
	static const struct {
		const char *spec, *says;
	} bad[] = {
		{ "", "empty" },
		{ "rules", "rules: expected rules=N" },
		{ "rules=", "expected a number" },
		{ "rules=0", "expected a number from 1" },
		{ "rules=-1", "expected a number" },
		{ "rules=12x", "expected a number" },
		{ "rules=65537", "to 65536" },
		{ "user-learned=99999999999999999999", "expected a number" },
		{ "learned-min-ttl=86401", "to 86400" },
		{ "rulez=1", "unknown key 'rulez'" },
		{ "rules=1,", "a ',' ends the list" },
		{ "rules=20000", "more than user-rules=16384" },
		{ "user-learned=10", "learned=1024 is more than user-learned=10" },
	};
	struct quota_limits q, before;
	struct errmsg em;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		quota_limits_default(&q, "x");
		before = q;
		memset(&em, 0, sizeof(em));
		assert_int_equal(quota_limits_parse(bad[i].spec, &q, &em), -EINVAL);
		if (!strstr(em.text, bad[i].says))
			fail_msg("'%s': '%s' does not say '%s'", bad[i].spec, em.text, bad[i].says);
		/* A refused list changes nothing. */
		assert_memory_equal(&q, &before, sizeof(q));
	}
}

static void test_decide(void **state)
{
	struct quota_limits q;
	struct quota_usage u = { 0 };
	struct errmsg em = { { 0 } };

	(void)state;
	quota_limits_default(&q, "bpfbox daemon --quota");
	/* The sandbox's own share: the message names the limit, the count and the option. */
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 1000, &u, 8192, &em), 0);
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 1000, &u, 8193, &em), -EDQUOT);
	assert_non_null(strstr(em.text, "needs 8193 rule map entries, over the limit of 8192 per sandbox"));
	assert_non_null(strstr(em.text, "bpfbox daemon --quota rules=N"));
	/* Its uid's: other sandboxes of the uid hold 10000. */
	u = (struct quota_usage){ .sandbox = 0, .uid = 10000, .non_root = 10000, .all = 10000 };
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 1000, &u, 6384, &em), 0);
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 1000, &u, 6385, &em), -EDQUOT);
	assert_non_null(strstr(em.text, "uid 1000's sandboxes would hold 16385 rule map entries"));
	assert_non_null(strstr(em.text, "limit of 16384 per user"));
	assert_non_null(strstr(em.text, "user-rules=N"));
	/* The uids but root leave root one sandbox's share of the map. */
	assert_int_equal(quota_root_reserve(&q, QUOTA_RULES), 8192);
	u = (struct quota_usage){ .non_root = BB_MAX_RULES - 8192 - 10, .all = BB_MAX_RULES - 8192 - 10 };
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 1000, &u, 10, &em), 0);
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 1000, &u, 11, &em), -EDQUOT);
	assert_non_null(strstr(em.text, "8192 are kept for root"));
	/* ... which root may use, up to its own limits. */
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 0, &u, 8192, &em), 0);
	/* The map itself, for root too. */
	u = (struct quota_usage){ .all = BB_MAX_RULES - 5 };
	assert_int_equal(quota_decide(&q, QUOTA_RULES, 0, &u, 6, &em), -EDQUOT);
	assert_non_null(strstr(em.text, "is full"));
	/* Learned addresses have shares of their own. */
	u = (struct quota_usage){ .sandbox = 1000, .uid = 1000, .non_root = 1000, .all = 1000 };
	assert_int_equal(quota_decide(&q, QUOTA_LEARNED, 1000, &u, 24, &em), 0);
	assert_int_equal(quota_decide(&q, QUOTA_LEARNED, 1000, &u, 25, &em), -EDQUOT);
	assert_non_null(strstr(em.text, "learned addresses, over the limit of 1024 per sandbox"));
	assert_non_null(strstr(em.text, "learned=N"));
	/* A share larger than half the map keeps half for root, not all of it. */
	assert_int_equal(quota_limits_parse("rules=60000,user-rules=60000", &q, &em), 0);
	assert_int_equal(quota_root_reserve(&q, QUOTA_RULES), BB_MAX_RULES / 2);
}

static void test_rule_entries(void **state)
{
	struct rule_spec specs[] = {
		{ "/home/u/a", BB_R_DENY_READ, 0, RULE_LAYER_OWN, false }, /* exists: one entry */
		{ "/home/u/new/x", BB_R_DENY_WRITE, 1, RULE_LAYER_OWN, false }, /* two missing: anchor + 2 names */
		{ "/a/b/c/d/e/f", BB_R_DENY_READ, 2, RULE_LAYER_OWN, false }, /* six missing: anchor + 4 */
		{ "/dev/shm", BB_R_SHM, 3, RULE_LAYER_OWN, false }, /* a mark on a missing directory: nothing */
		{ "/run/s.sock", BB_R_UNIX_ALLOW, 4, RULE_LAYER_OWN, false }, /* missing socket: nothing */
		{ "/bad", BB_R_DENY_READ, 5, RULE_LAYER_OWN, false }, /* unresolved: nothing (the load fails) */
	};
	struct resolve_result res[] = {
		{ 0 }, { .missing = 2 }, { .missing = 6 }, { .missing = 1 }, { .missing = 1 }, { .err = -EACCES },
	};

	(void)state;
	assert_int_equal(sandbox_maps_rule_entries(specs, res, 6), 1 + 3 + 5);
	assert_int_equal(sandbox_maps_rule_entries(specs, res, 0), 0);
}

/* The ledger on a real map, as the pinned one: skipped where bpf() or /run/bpfbox is not ours. */
static int ledger_setup(void **state)
{
	static struct bpf_state st;
	int fd;

	if (geteuid() != 0)
		return 0;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "quotas_test", sizeof(uint64_t), sizeof(struct bb_quota),
			    BB_MAX_SANDBOXES, NULL);
	if (fd < 0)
		return 0;
	mkdir(BPFBOX_RUN_DIR, 0755);
	st.maps.quotas = fd;
	*state = &st;
	return 0;
}

static int ledger_teardown(void **state)
{
	struct bpf_state *st = *state;

	if (st)
		close(st->maps.quotas);
	return 0;
}

static uint64_t held(const struct bpf_state *st, uint32_t uid, enum quota_kind kind)
{
	uint64_t key, *prev = NULL, sum = 0;
	struct bb_quota v;

	while (!bpf_map_get_next_key(st->maps.quotas, prev, &key)) {
		prev = &key;
		if (!bpf_map_lookup_elem(st->maps.quotas, &key, &v) && v.uid == uid)
			sum += kind == QUOTA_RULES ? v.rules : v.learned;
	}
	return sum;
}

static void test_ledger_concurrent(void **state)
{
	const struct bpf_state *st = *state;
	struct quota_limits q;
	struct errmsg em = { { 0 } };
	enum { WORKERS = 8, TRIES = 300, STEP = 1 };
	int ok = 0, status, go[2];
	char c;

	if (!st)
		skip();
	quota_limits_default(&q, "test");
	assert_int_equal(quota_limits_parse("rules=200,user-rules=1000", &q, &em), 0);
	assert_int_equal(pipe(go), 0);
	/* Eight processes, each a sandbox of uid 4242, start together and reserve one entry at a time. */
	for (int w = 0; w < WORKERS; w++) {
		if (fork() == 0) {
			int mine = 0;

			close(go[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(255);
			for (int i = 0; i < TRIES; i++)
				if (!quota_reserve(st, &q, 9000 + (uint64_t)w, 4242, QUOTA_RULES, STEP, &em))
					mine++;
			_exit(mine);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int w = 0; w < WORKERS; w++) {
		wait(&status);
		ok += WEXITSTATUS(status);
	}
	/* Exactly what the uid's share allows was granted, and the ledger says so: 1,000 grants of one. */
	assert_int_equal(ok, 1000 / STEP);
	assert_int_equal(held(st, 4242, QUOTA_RULES), (uint64_t)ok * STEP);
	/* Another uid is not affected; a sandbox's settle lowers, never raises. */
	assert_int_equal(quota_reserve(st, &q, 9100, 4343, QUOTA_RULES, 200, &em), 0);
	quota_settle(st, 9100, QUOTA_RULES, 150);
	assert_int_equal(held(st, 4343, QUOTA_RULES), 150);
	quota_settle(st, 9100, QUOTA_RULES, 190);
	assert_int_equal(held(st, 4343, QUOTA_RULES), 150);
	/* A sandbox in the ledger under one uid cannot reserve under another. */
	assert_int_equal(quota_reserve(st, &q, 9100, 4242, QUOTA_RULES, 1, &em), -EINVAL);
	/* Released sandboxes give everything back. */
	for (int w = 0; w < WORKERS; w++)
		quota_release(st, 9000 + (uint64_t)w);
	quota_release(st, 9100);
	assert_int_equal(held(st, 4242, QUOTA_RULES), 0);
	assert_int_equal(held(st, 4343, QUOTA_RULES), 0);
	assert_int_equal(quota_reserve(st, &q, 9000, 4242, QUOTA_RULES, 200, &em), 0);
	quota_release(st, 9000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_parse),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_rule_entries),
		cmocka_unit_test_setup_teardown(test_ledger_concurrent, ledger_setup, ledger_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
