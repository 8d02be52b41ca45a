// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy suggest` (policy_suggest.c): which refusals become which
 * grants and which are reported as not grantable, with why; audited and
 * enforced lines alike, folded counts summed, other sandboxes filtered out;
 * a directory for more than N refused paths in it; entries covered by
 * another dropped; values a hostile log could carry (globs, cut or non-UTF-8
 * paths, addresses, bad names, wrong types) never proposed; each proposal
 * checked by the loader; the merge into a base document keeping its keys,
 * order and entries; the per-list bound.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cJSON.h>

#include "policy/policy.h"
#include "policy/policy_suggest.h"

#define EV(action, type, rule, rest)                                                     \
	"{\"event\":{\"action\":\"" action "\",\"type\":[\"" type "\"]},\"rule\":{\"name\":\"" \
	rule "\"}" rest "}"

static void feed(struct policy_suggest *s, const char *const *lines)
{
	for (; *lines; lines++)
		assert_int_equal(policy_suggest_line(s, *lines, strlen(*lines)), 0);
	assert_int_equal(policy_suggest_finish(s), 0);
}

static long entry(const struct policy_suggest *s, enum suggest_list l, const char *value)
{
	for (size_t i = 0; i < s->n[l]; i++)
		if (!strcmp(s->list[l][i].value, value))
			return (long)s->list[l][i].count;
	return -1;
}

static long skipped(const struct policy_suggest *s, const char *action, const char *why_part)
{
	long n = 0;

	for (size_t i = 0; i < s->n_skips; i++)
		if (!strcmp(s->skips[i].action, action) && strstr(s->skips[i].why, why_part))
			n += (long)s->skips[i].count;
	return n;
}

static void test_kinds(void **state)
{
	static const char *const log[] = {
		EV("open-write", "allowed", "default:write",
		   ",\"bpfbox\":{\"audit\":true},\"file\":{\"path\":\"/p/build/out.o\"}"),
		EV("create", "denied", "default:write",
		   ",\"bpfbox\":{\"count\":3},\"file\":{\"path\":\"/p/build/x.o\"}"),
		EV("open-read", "denied", "denyRead:/h/.aws", ",\"file\":{\"path\":\"/h/.aws/config\"}"),
		EV("open-write", "denied", "mandatory:.git/hooks", ",\"file\":{\"path\":\"/p/.git/hooks/x\"}"),
		EV("open-write", "denied", "ceiling:default:write", ",\"file\":{\"path\":\"/srv/x\"}"),
		EV("open-write", "denied", "denyWrite:/p/secret", ",\"file\":{\"path\":\"/p/secret/k\"}"),
		EV("proxy-connect", "denied", "default:network", ",\"destination\":{\"domain\":\"Registry.NPMJS.org\"}"),
		EV("dns-query", "denied", "default:network", ",\"dns\":{\"question\":{\"name\":\"pypi.org\"}}"),
		EV("proxy-http", "denied", "deniedDomains:evil.test", ",\"destination\":{\"domain\":\"evil.test\"}"),
		EV("connect", "denied", "default:network", ",\"destination\":{\"address\":\"192.0.2.1\"}"),
		EV("proxy-transparent", "denied", "default:network", ",\"destination\":{\"ip\":\"192.0.2.1\"}"),
		EV("bind", "denied", "allowLocalBinding:false", ""),
		EV("unix-connect", "denied", "default:unix-socket", ",\"destination\":{\"address\":\"/run/d.sock\"}"),
		EV("unix-connect", "denied", "default:unix-abstract", ",\"destination\":{\"address\":\"@x\"}"),
		EV("ptrace", "denied", "builtin:ptrace-outside-sandbox", ""),
		/* Audited writes the mandatory set would refuse when enforced: logged as not granted. */
		EV("open-write", "allowed", "default:write",
		   ",\"bpfbox\":{\"audit\":true},\"file\":{\"path\":\"/h/u/.bashrc\"}"),
		EV("create", "allowed", "default:write",
		   ",\"bpfbox\":{\"audit\":true},\"file\":{\"path\":\"/p/.git/hooks/pre-commit\"}"),
		EV("create", "allowed", "default:write",
		   ",\"bpfbox\":{\"audit\":true},\"file\":{\"path\":\"/p/.claude/agents/a.md\"}"),
		EV("open-write", "allowed", "default:write",
		   ",\"bpfbox\":{\"audit\":true},\"file\":{\"path\":\"/p/.vscode/settings.json\"}"),
		/* Names that only look alike: proposed. */
		EV("create", "allowed", "default:write",
		   ",\"bpfbox\":{\"audit\":true},\"file\":{\"path\":\"/p/hooks/config\"}"),
		EV("create", "allowed", "default:write",
		   ",\"bpfbox\":{\"audit\":true},\"file\":{\"path\":\"/p/.bashrc.d/x\"}"),
		/* Not refusals: an allowed connection, a revoked one, the daemon's, the start. */
		EV("proxy-connect", "allowed", "allowedDomains:ok.test", ",\"destination\":{\"domain\":\"ok.test\"}"),
		EV("proxy-connect", "denied", "default:network",
		   ",\"bpfbox\":{\"proxy\":{\"closed\":\"policy-revoked\"}},\"destination\":{\"domain\":\"rev.test\"}"),
		EV("daemon-request-refused", "denied", "x", ""),
		"{\"event\":{\"action\":\"sandbox-start\",\"type\":[\"start\"]},\"bpfbox\":{\"audit\":true}}",
		"not json", "[1,2]", "", NULL,
	};
	struct policy_suggest s;

	(void)state;
	policy_suggest_init(&s, NULL, 0);
	feed(&s, log);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/p/build/out.o"), 1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/p/build/x.o"), 3);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/p/hooks/config"), 1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/p/.bashrc.d/x"), 1);
	assert_int_equal(s.n[SUGGEST_WRITE], 4);
	assert_int_equal(skipped(&s, "open-write", "a protected name in the path"), 2);
	assert_int_equal(skipped(&s, "create", "a protected name in the path"), 2);
	assert_int_equal(entry(&s, SUGGEST_READ, "/h/.aws/config"), 1);
	assert_int_equal(entry(&s, SUGGEST_DOMAIN, "registry.npmjs.org"), 1);
	assert_int_equal(entry(&s, SUGGEST_DOMAIN, "pypi.org"), 1);
	assert_int_equal(s.n[SUGGEST_DOMAIN], 2);
	assert_int_equal(entry(&s, SUGGEST_UNIX, "/run/d.sock"), 1);
	assert_int_equal(s.n[SUGGEST_UNIX], 1);
	assert_true(s.local_binding);
	assert_int_equal(skipped(&s, "open-write", "mandatory deny set, which"), 1);
	assert_int_equal(skipped(&s, "open-write", "ceiling"), 1);
	assert_int_equal(skipped(&s, "open-write", "denyWrite"), 1);
	assert_int_equal(skipped(&s, "proxy-http", "deniedDomains"), 1);
	assert_int_equal(skipped(&s, "connect", "direct egress"), 1);
	assert_int_equal(skipped(&s, "proxy-transparent", "never addresses"), 1);
	assert_int_equal(skipped(&s, "unix-connect", "abstract"), 1);
	assert_int_equal(skipped(&s, "ptrace", "built into bpfbox"), 1);
	assert_int_equal(s.refusals, 3 + 14 + 6);
	assert_int_equal(s.not_json, 2);
	policy_suggest_free(&s);
}

static void test_sandbox_filter(void **state)
{
	static const char *const log[] = {
		EV("open-write", "denied", "default:write",
		   ",\"bpfbox\":{\"sandbox\":{\"id\":\"a\"}},\"file\":{\"path\":\"/a\"}"),
		EV("open-write", "denied", "default:write",
		   ",\"bpfbox\":{\"sandbox\":{\"id\":\"b\"}},\"file\":{\"path\":\"/b\"}"),
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"/none\"}"),
		NULL,
	};
	struct policy_suggest s;

	(void)state;
	policy_suggest_init(&s, "a", 0);
	feed(&s, log);
	assert_int_equal(s.n[SUGGEST_WRITE], 1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/a"), 1);
	assert_int_equal(s.other_sandbox, 2);
	policy_suggest_free(&s);
}

static void add_write(struct policy_suggest *s, const char *path)
{
	char line[512];

	snprintf(line, sizeof(line), EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"%s\"}"),
		 path);
	assert_int_equal(policy_suggest_line(s, line, strlen(line)), 0);
}

static void test_collapse_and_cover(void **state)
{
	struct policy_suggest s;
	char p[64];

	(void)state;
	/* 9 in /d with collapse 8: the directory; 8 in /e: each; /f covers /f/g and /f/h/i. */
	policy_suggest_init(&s, NULL, 8);
	for (int i = 0; i < 9; i++) {
		snprintf(p, sizeof(p), "/d/f%d", i);
		add_write(&s, p);
	}
	for (int i = 0; i < 8; i++) {
		snprintf(p, sizeof(p), "/e/f%d", i);
		add_write(&s, p);
	}
	add_write(&s, "/f/g");
	add_write(&s, "/f");
	add_write(&s, "/f/h/i");
	add_write(&s, "/f-x");	/* a sibling whose name starts alike: not covered */
	add_write(&s, "/top");	/* at the root: the root itself is never proposed */
	assert_int_equal(policy_suggest_finish(&s), 0);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/d"), 9);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/d/f0"), -1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/e/f7"), 1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/e"), -1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/f"), 3);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/f/g"), -1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/f-x"), 1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/top"), 1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/"), -1);
	assert_int_equal(s.n[SUGGEST_WRITE], 1 + 8 + 1 + 1 + 1);
	policy_suggest_free(&s);

	/* collapse 0: exact paths only. */
	policy_suggest_init(&s, NULL, 0);
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "/d/f%d", i);
		add_write(&s, p);
	}
	assert_int_equal(policy_suggest_finish(&s), 0);
	assert_int_equal(s.n[SUGGEST_WRITE], 20);
	policy_suggest_free(&s);
}

static void test_hostile_values(void **state)
{
	static const char *const log[] = {
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"/p/*\"}"),
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"/p/[ab]\"}"),
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"/p/a\\ufffdb\"}"),
		EV("open-write", "denied", "default:write",
		   ",\"bpfbox\":{\"truncated\":true},\"file\":{\"path\":\"/p/long\"}"),
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"relative/x\"}"),
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":7}"),
		EV("open-write", "denied", "default:write", ",\"file\":\"x\""),
		EV("open-write", "denied", "default:write", ""),
		EV("proxy-connect", "denied", "default:network", ",\"destination\":{\"domain\":\"192.0.2.7\"}"),
		EV("proxy-connect", "denied", "default:network", ",\"destination\":{\"domain\":\"[::1]\"}"),
		EV("proxy-connect", "denied", "default:network", ",\"destination\":{\"domain\":\"a b.test\"}"),
		EV("proxy-connect", "denied", "default:network", ",\"destination\":{\"domain\":\"com\"}"),
		EV("unix-connect", "denied", "default:unix-socket", ",\"destination\":{\"address\":\"/s/*\"}"),
		"{\"event\":{\"action\":7,\"type\":[\"denied\"]}}",
		"{\"event\":{\"action\":\"open-write\",\"type\":\"denied\"},\"file\":{\"path\":\"/t\"}}",
		"{\"event\":{\"action\":\"open-write\",\"type\":[\"denied\"]},\"rule\":{\"name\":[]},"
		"\"file\":{\"path\":\"/u\"}}",
		EV("open-write", "denied", "default:write",
		   ",\"bpfbox\":{\"count\":-5},\"file\":{\"path\":\"/v\"}"),
		NULL,
	};
	struct policy_suggest s;

	(void)state;
	policy_suggest_init(&s, NULL, 8);
	feed(&s, log);
	assert_int_equal(s.n[SUGGEST_WRITE], 1);
	assert_int_equal(entry(&s, SUGGEST_WRITE, "/v"), 1);	/* a count below 1 counts once */
	assert_int_equal(s.n[SUGGEST_DOMAIN], 0);
	assert_int_equal(s.n[SUGGEST_UNIX], 0);
	assert_int_equal(skipped(&s, "open-write", "glob"), 2);
	assert_int_equal(skipped(&s, "open-write", "not UTF-8"), 1);
	assert_int_equal(skipped(&s, "open-write", "cut"), 1);
	assert_int_equal(skipped(&s, "open-write", "not absolute"), 1);
	assert_int_equal(skipped(&s, "open-write", "names no path"), 3);
	assert_int_equal(skipped(&s, "proxy-connect", "never addresses"), 2);
	assert_int_equal(skipped(&s, "proxy-connect", "not a valid host name"), 1);
	/* Checked by the loader alone: "com" is refused there, with the loader's words. */
	assert_int_equal(skipped(&s, "network.allowedDomains", "at least one dot"), 1);
	assert_int_equal(skipped(&s, "unix-connect", "glob"), 1);
	/* No rule name: not proposed (a type that is not a list is no refusal). */
	assert_int_equal(skipped(&s, "open-write", "not a refusal that a grant"), 1);
	policy_suggest_free(&s);
}

/* What a report prints goes through the escape it is given: a refused name's control bytes never reach a terminal raw. */
static char *mark_escape(const char *in)
{
	char *out = malloc(4 * strlen(in) + 1), *o = out;

	for (; out && *in; in++)
		o += (unsigned char)*in < 0x20 ? sprintf(o, "\\x%02x", (unsigned char)*in) : sprintf(o, "%c", *in);
	if (out)
		*o = 0;
	return out;
}

static void test_report_escapes(void **state)
{
	static const char *const log[] = {
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"/p/a\\u001bMb\"}"),
		EV("open-write", "denied", "default:\\rwrite", ",\"file\":{\"path\":\"/p/c\\rd*\"}"),
		NULL,
	};
	struct policy_suggest s;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	policy_suggest_init(&s, NULL, 8);
	feed(&s, log);
	policy_suggest_report(&s, f, mark_escape);
	fclose(f);
	assert_null(strchr(text, '\x1b'));
	assert_null(strchr(text, '\r'));
	assert_non_null(strstr(text, "\"/p/a\\x1bMb\""));	/* proposed, escaped */
	assert_non_null(strstr(text, "[default:\\x0dwrite]"));	/* not proposed: its rule escaped */
	free(text);
	policy_suggest_free(&s);
}

static void test_merge(void **state)
{
	static const char *const log[] = {
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"/w/new\"}"),
		EV("open-write", "denied", "default:write", ",\"file\":{\"path\":\"/w/old\"}"),
		EV("proxy-connect", "denied", "default:network", ",\"destination\":{\"domain\":\"b.test\"}"),
		EV("bind", "denied", "allowLocalBinding:false", ""),
		NULL,
	};
	static const char base[] =
		"{\"zzz\":{\"unknown\":[1,{\"k\":true}]},"
		"\"network\":{\"allowedDomains\":[\"a.test\"],\"deniedDomains\":[],\"allowLocalBinding\":false},"
		"\"filesystem\":{\"denyRead\":[],\"allowWrite\":[\"/w/old\"],\"denyWrite\":[]}}";
	struct policy_load_opts lo = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy_suggest s;
	struct policy *p = NULL;
	cJSON *doc = cJSON_Parse(base), *bad;
	char *text;

	(void)state;
	policy_suggest_init(&s, NULL, 8);
	feed(&s, log);
	/* /w/new and b.test added, /w/old kept once, allowLocalBinding turned true. */
	assert_int_equal(policy_suggest_merge(&s, doc), 3);
	text = cJSON_PrintUnformatted(doc);
	assert_string_equal(text,
		"{\"zzz\":{\"unknown\":[1,{\"k\":true}]},"
		"\"network\":{\"allowedDomains\":[\"a.test\",\"b.test\"],\"deniedDomains\":[],\"allowLocalBinding\":true},"
		"\"filesystem\":{\"denyRead\":[],\"allowWrite\":[\"/w/old\",\"/w/new\"],\"denyWrite\":[]}}");
	/* Merging again adds nothing. */
	assert_int_equal(policy_suggest_merge(&s, doc), 0);
	free(text);
	cJSON_Delete(doc);

	/* The empty policy loads, and so does a proposal merged into it. */
	doc = policy_suggest_skeleton();
	assert_non_null(doc);
	assert_int_equal(policy_suggest_merge(&s, doc), 4);
	text = cJSON_Print(doc);
	assert_int_equal(policy_load_buffer(NULL, text, strlen(text), &lo, &p, &d), 0);
	assert_int_equal(p->allow_local_binding, true);
	policy_free(p);
	diag_list_free(&d);
	free(text);
	cJSON_Delete(doc);

	/* A section or list of another type: refused, not overwritten. */
	bad = cJSON_Parse("{\"filesystem\":[]}");
	assert_int_equal(policy_suggest_merge(&s, bad), -EINVAL);
	cJSON_Delete(bad);
	bad = cJSON_Parse("{\"filesystem\":{\"allowWrite\":\"/x\"}}");
	assert_int_equal(policy_suggest_merge(&s, bad), -EINVAL);
	cJSON_Delete(bad);
	policy_suggest_free(&s);
}

static void test_bound(void **state)
{
	struct policy_suggest s;
	char p[64];

	(void)state;
	policy_suggest_init(&s, NULL, 0);
	for (int i = 0; i < SUGGEST_ENTRIES_MAX + 10; i++) {
		snprintf(p, sizeof(p), "/d%d/f", i);
		add_write(&s, p);
	}
	assert_int_equal(s.n[SUGGEST_WRITE], SUGGEST_ENTRIES_MAX);
	assert_int_equal(s.dropped, 10);
	policy_suggest_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_sandbox_filter),
		cmocka_unit_test(test_collapse_and_cover),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_report_escapes),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
