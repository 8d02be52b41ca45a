// SPDX-License-Identifier: MIT
/*
 * The decision model: srt's read precedence (deepest wins, allowRead at a
 * tie), write deny-wins (even above the allow), the mandatory set at any
 * depth, and the network order malformed > denied > allowed > default.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"

static struct policy *load(const char *net, const char *fs, const char *extra)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/w", .home = "/nonexistent-bpfbox/h" };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *json = NULL;

	assert_true(asprintf(&json, "{\"network\": %s, \"filesystem\": %s%s}", net, fs,
			     extra ? extra : "") > 0);
	if (policy_load_buffer("t", json, strlen(json), &o, &p, &d)) {
		for (size_t i = 0; i < d.n; i++)
			print_message("  %s: %s\n", d.items[i].path, d.items[i].message);
		fail_msg("rejected: %s", json);
	}
	free(json);
	diag_list_free(&d);
	return p;
}

#define NO_NET "{\"allowedDomains\": [], \"deniedDomains\": []}"

static void rd(const struct policy *p, const char *path, bool allowed, const char *rule)
{
	struct fs_decision d;

	policy_decide_read(p, path, &d);
	if (d.allowed != allowed || strcmp(d.rule_name, rule))
		fail_msg("read %s: got %s by %s, want %s by %s", path,
			 d.allowed ? "allowed" : "denied", d.rule_name,
			 allowed ? "allowed" : "denied", rule);
}

static void wr(const struct policy *p, const char *path, bool allowed, const char *rule)
{
	struct fs_decision d;

	policy_decide_write(p, path, &d);
	if (d.allowed != allowed || strcmp(d.rule_name, rule))
		fail_msg("write %s: got %s by %s, want %s by %s", path,
			 d.allowed ? "allowed" : "denied", d.rule_name,
			 allowed ? "allowed" : "denied", rule);
}

static void test_read_precedence(void **state)
{
	struct policy *p = load(NO_NET, "{\"denyRead\": [\"/home\", \"~/proj/secrets\", \"/srv/f\","
				"\"/same\", \"/data/file.txt\"],"
				" \"allowRead\": [\"~/proj\", \"/same\", \"/data\", \"/srv/f\"],"
				" \"allowWrite\": [], \"denyWrite\": []}", NULL);

	rd(p, "/etc/passwd", true, "default:read");
	rd(p, "/home/other/.bashrc", false, "denyRead:/home");
	rd(p, "/home", false, "denyRead:/home");
	/* allowRead re-opens inside the denied region... */
	rd(p, "/nonexistent-bpfbox/h/proj/src/main.c", true,
	   "allowRead:/nonexistent-bpfbox/h/proj");
	/* ...except where a more specific denyRead sits inside the allow. */
	rd(p, "/nonexistent-bpfbox/h/proj/secrets/key", false,
	   "denyRead:/nonexistent-bpfbox/h/proj/secrets");
	/* At the same depth allowRead wins (srt: allowRead beats denyRead). */
	rd(p, "/same/x", true, "allowRead:/same");
	rd(p, "/srv/f", true, "allowRead:/srv/f");
	/* A denyRead naming a file is lifted only by an allowRead naming that file. */
	rd(p, "/data/file.txt", false, "denyRead:/data/file.txt");
	rd(p, "/data/other.txt", true, "allowRead:/data");
	/* Prefixes match whole components only. */
	rd(p, "/homework/x", true, "default:read");
	/* Writes do not depend on read rules. */
	wr(p, "/etc/passwd", false, "default:write");
	policy_free(p);
}

static void test_root_rules(void **state)
{
	struct policy *p = load(NO_NET, "{\"denyRead\": [\"/\"], \"allowRead\": [\"/usr\"],"
				" \"allowWrite\": [\"/\"], \"denyWrite\": [\"/etc\"]}", NULL);

	rd(p, "/usr/bin/sh", true, "allowRead:/usr");
	rd(p, "/etc/shadow", false, "denyRead:/");
	rd(p, "/", false, "denyRead:/");
	wr(p, "/tmp/x", true, "allowWrite:/");
	wr(p, "/etc/hosts", false, "denyWrite:/etc");
	policy_free(p);
}

static void test_write_deny_wins(void **state)
{
	struct policy *p = load(NO_NET, "{\"denyRead\": [], \"allowWrite\": [\"/work\", \"/work/sub\","
				" \"/x/allowed\"], \"denyWrite\": [\"/work/.env\", \"/work/secrets\", \"/x\"]}",
				NULL);

	wr(p, "/work/a.c", true, "allowWrite:/work");
	wr(p, "/work/sub/deep/a.c", true, "allowWrite:/work/sub");
	wr(p, "/work/.env", false, "denyWrite:/work/.env");
	wr(p, "/work/.envrc", true, "allowWrite:/work");
	wr(p, "/work/secrets/k", false, "denyWrite:/work/secrets");
	/* srt: denyWrite above an allowWrite still wins. */
	wr(p, "/x/allowed/file", false, "denyWrite:/x");
	wr(p, "/elsewhere", false, "default:write");
	wr(p, "/dev/null", true, "implicit:allowWrite:/dev/null");
	wr(p, "/dev/tty", true, "implicit:allowWrite:/dev/tty");
	wr(p, "/dev/sda", false, "default:write");
	policy_free(p);

	p = load(NO_NET, "{\"denyRead\": [], \"allowWrite\": [\"/work\"], \"denyWrite\": [\"/\"]}", NULL);
	wr(p, "/work/x", false, "denyWrite:/");
	wr(p, "/dev/null", false, "denyWrite:/");
	policy_free(p);
}

static void test_mandatory_any_depth(void **state)
{
	struct policy *p = load(NO_NET, "{\"denyRead\": [], \"allowWrite\": [\"/w\", \"/h\"],"
				" \"denyWrite\": []}", NULL);
	static const char *const denied[][2] = {
		{ "/w/.git/hooks/pre-commit", "mandatory:.git/hooks" },
		{ "/w/.git/hooks", "mandatory:.git/hooks" },
		{ "/w/vendor/lib/.git/hooks/post-checkout", "mandatory:.git/hooks" },
		{ "/w/.git/config", "mandatory:.git/config" },
		{ "/w/a/b/c/d/e/f/.git/config", "mandatory:.git/config" },
		{ "/h/.gitconfig", "mandatory:.gitconfig" },
		{ "/w/.gitmodules", "mandatory:.gitmodules" },
		{ "/h/.bashrc", "mandatory:.bashrc" },
		{ "/h/.bash_profile", "mandatory:.bash_profile" },
		{ "/h/.zshrc", "mandatory:.zshrc" },
		{ "/h/.zprofile", "mandatory:.zprofile" },
		{ "/h/.profile", "mandatory:.profile" },
		{ "/w/.ripgreprc", "mandatory:.ripgreprc" },
		{ "/w/deep/er/.mcp.json", "mandatory:.mcp.json" },
		{ "/w/.vscode/settings.json", "mandatory:.vscode" },
		{ "/w/.vscode", "mandatory:.vscode" },
		{ "/w/x/.idea/workspace.xml", "mandatory:.idea" },
		{ "/w/.claude/commands/x.md", "mandatory:.claude/commands" },
		{ "/h/.claude/agents/a.md", "mandatory:.claude/agents" },
		/* Outside every writable root the mandatory rule is still the reason. */
		{ "/etc/.bashrc", "mandatory:.bashrc" },
	};
	static const char *const allowed[] = {
		"/w/.git/objects/ab/cdef", "/w/.git/HEAD", "/w/.git/configure",
		"/w/.bashrc.bak", "/w/x.gitconfig", "/w/.claude/settings.json",
		"/w/.claude/commandsx", "/w/hooks/.git", "/w/my.vscode/x",
	};

	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++)
		wr(p, denied[i][0], false, denied[i][1]);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		struct fs_decision d;

		policy_decide_write(p, allowed[i], &d);
		if (!d.allowed)
			fail_msg("write %s denied by %s", allowed[i], d.rule_name);
	}
	/* Still readable. */
	rd(p, "/w/.git/hooks/pre-commit", true, "default:read");
	policy_free(p);
}

static void test_allow_git_config(void **state)
{
	struct policy *p = load(NO_NET, "{\"denyRead\": [], \"allowWrite\": [\"/w\"], \"denyWrite\": [],"
				" \"allowGitConfig\": true}", NULL);
	struct mandatory_entry m[POLICY_MANDATORY_MAX];
	size_t n = policy_mandatory(p, m);

	wr(p, "/w/.git/config", true, "allowWrite:/w");
	wr(p, "/w/.git/hooks/pre-push", false, "mandatory:.git/hooks");
	wr(p, "/w/.git/config.worktree", true, "allowWrite:/w");
	wr(p, "/w/.git/commondir", false, "mandatory:.git/commondir");
	assert_int_equal(n, 16);
	for (size_t i = 0; i < n; i++) {
		assert_string_not_equal(m[i].name, ".git/config");
		assert_string_not_equal(m[i].name, ".git/config.worktree");
	}
	policy_free(p);
}

static void test_mandatory_list(void **state)
{
	struct policy *p = load(NO_NET, "{\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}", NULL);
	struct mandatory_entry m[POLICY_MANDATORY_MAX];
	size_t n = policy_mandatory(p, m);
	bool hooks = false, cfg = false, gitfile = false, bashrc = false, cmds = false;

	assert_int_equal(n, 18);
	for (size_t i = 0; i < n; i++) {
		hooks |= !strcmp(m[i].name, ".git/hooks") && m[i].kind == MANDATORY_DIR;
		cfg |= !strcmp(m[i].name, ".git/config") && m[i].kind == MANDATORY_FILE;
		gitfile |= !strcmp(m[i].name, ".git") && m[i].kind == MANDATORY_GIT_FILE;
		bashrc |= !strcmp(m[i].name, ".bashrc") && m[i].kind == MANDATORY_FILE;
		cmds |= !strcmp(m[i].name, ".claude/commands") && m[i].kind == MANDATORY_DIR;
	}
	assert_true(hooks && cfg && gitfile && bashrc && cmds);
	policy_free(p);
}

static void test_git_worktree_pointer(void **state)
{
	char dir[] = "/tmp/bpfbox-decide-XXXXXX", gitp[64], json[256];
	struct policy *p;

	assert_non_null(mkdtemp(dir));
	snprintf(json, sizeof(json), "{\"denyRead\": [], \"allowWrite\": [\"%s\"], \"denyWrite\": []}",
		 dir);
	p = load(NO_NET, json, NULL);
	snprintf(gitp, sizeof(gitp), "%s/.git", dir);
	/* A .git directory (a repository) may be created... */
	assert_int_equal(mkdir(gitp, 0755), 0);
	{
		struct fs_decision d;

		policy_decide_write(p, gitp, &d);
		assert_true(d.allowed);
	}
	/* ...but a .git file (a worktree pointer) is protected like hooks. */
	assert_int_equal(rmdir(gitp), 0);
	assert_int_equal(close(open(gitp, O_CREAT | O_WRONLY, 0644)), 0);
	wr(p, gitp, false, "mandatory:.git");
	unlink(gitp);
	rmdir(dir);
	policy_free(p);
}

static void host(const struct policy *p, const char *h, unsigned port, enum net_verdict want,
		 const char *rule, const char *reason)
{
	const char *r = NULL, *why = NULL;
	enum net_verdict v = policy_decide_host(p, h, port, &r, &why);

	if (v != want || strcmp(r, rule))
		fail_msg("%s:%u: got %d by %s, want %d by %s", h, port, v, r, want, rule);
	if (reason && (!why || !strstr(why, reason)))
		fail_msg("%s:%u: reason \"%s\" lacks \"%s\"", h, port, why ? why : "(none)", reason);
	if (!reason && v != NET_DENY_MALFORMED)
		assert_null(why);
}

static void test_network_order(void **state)
{
	struct policy *p = load("{\"allowedDomains\": [\"github.com\", \"*.github.com\", \"example.org:443\","
				" \"127.0.0.1:8080\", \"[::1]\", \"localhost\"],"
				" \"deniedDomains\": [\"gist.github.com\", \"github.com:22\", \"*:25\", \"10.0.0.1\"],"
				" \"deniedDomainReasons\": {\"github.com:22\": \"use https\"}}",
				"{\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}", NULL);

	host(p, "github.com", 443, NET_ALLOW, "allowedDomains:github.com", NULL);
	host(p, "GitHub.COM.", 443, NET_ALLOW, "allowedDomains:github.com", NULL);
	host(p, "api.github.com", 443, NET_ALLOW, "allowedDomains:*.github.com", NULL);
	/* Denied beats allowed, with its reason. */
	host(p, "gist.github.com", 443, NET_DENY_DENIED, "deniedDomains:gist.github.com", NULL);
	host(p, "github.com", 22, NET_DENY_DENIED, "deniedDomains:github.com:22", "use https");
	host(p, "api.github.com", 25, NET_DENY_DENIED, "deniedDomains:*:25", NULL);
	/* Port-restricted allow. */
	host(p, "example.org", 443, NET_ALLOW, "allowedDomains:example.org:443", NULL);
	host(p, "example.org", 80, NET_DENY_NOT_ALLOWED, "default:network", NULL);
	host(p, "example.com", 443, NET_DENY_NOT_ALLOWED, "default:network", NULL);
	/* Alternative spellings of an address reach the same rule. */
	host(p, "127.1", 8080, NET_ALLOW, "allowedDomains:127.0.0.1:8080", NULL);
	host(p, "2130706433", 8080, NET_ALLOW, "allowedDomains:127.0.0.1:8080", NULL);
	host(p, "0x7f.0.0.1", 8080, NET_ALLOW, "allowedDomains:127.0.0.1:8080", NULL);
	host(p, "::ffff:127.0.0.1", 8080, NET_ALLOW, "allowedDomains:127.0.0.1:8080", NULL);
	host(p, "127.0.0.1", 8081, NET_DENY_NOT_ALLOWED, "default:network", NULL);
	host(p, "0xa.0.0.1", 443, NET_DENY_DENIED, "deniedDomains:10.0.0.1", NULL);
	host(p, "[::1]", 5432, NET_ALLOW, "allowedDomains:[::1]", NULL);
	host(p, "LOCALHOST", 3000, NET_ALLOW, "allowedDomains:localhost", NULL);
	/* Wildcards never match addresses. */
	host(p, "140.82.112.3", 443, NET_DENY_NOT_ALLOWED, "default:network", NULL);
	/* Malformed first. */
	host(p, "github.com\r\nHost: evil", 443, NET_DENY_MALFORMED, "malformed", "CR or LF");
	host(p, "fe80::1%eth0", 443, NET_DENY_MALFORMED, "malformed", "zone");
	host(p, "github.com", 0, NET_DENY_MALFORMED, "malformed", "port");
	host(p, "github.com", 70000, NET_DENY_MALFORMED, "malformed", "port");
	host(p, "", 443, NET_DENY_MALFORMED, "malformed", "empty");
	assert_string_equal(net_verdict_name(NET_ALLOW), "allowed");
	policy_free(p);
}

static void test_deny_all(void **state)
{
	struct policy *p = load("{\"allowedDomains\": [\"github.com\"], \"deniedDomains\": [\"*\"]}",
				"{\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}", NULL);

	host(p, "github.com", 443, NET_DENY_DENIED, "deniedDomains:*", NULL);
	host(p, "1.1.1.1", 53, NET_DENY_DENIED, "deniedDomains:*", NULL);
	policy_free(p);
}

/* The sandbox's DNS: a name is answered when allowed on some port and not denied on every port. */
static void test_names_for_dns(void **state)
{
	struct policy *p = load("{\"allowedDomains\": [\"github.com\", \"*.example.org\", \"db.test:5432\","
				" \"db.test:5433\", \"ssh.test:22\", \"10.0.0.5\"],"
				" \"deniedDomains\": [\"bad.example.org\", \"github.com:22\"]}",
				"{\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}", NULL);
	const char *rule = NULL;

	assert_int_equal(policy_decide_name(p, "GitHub.com.", &rule, NULL), NET_ALLOW);
	assert_string_equal(rule, "allowedDomains:github.com");
	assert_int_equal(policy_decide_name(p, "a.example.org", &rule, NULL), NET_ALLOW);
	assert_int_equal(policy_decide_name(p, "example.org", &rule, NULL), NET_DENY_NOT_ALLOWED);
	assert_string_equal(rule, "default:network");
	assert_int_equal(policy_decide_name(p, "bad.example.org", &rule, NULL), NET_DENY_DENIED);
	assert_string_equal(rule, "deniedDomains:bad.example.org");
	assert_int_equal(policy_decide_name(p, "db.test", NULL, NULL), NET_ALLOW);
	assert_int_equal(policy_decide_name(p, "10.0.0.5", NULL, NULL), NET_DENY_MALFORMED);
	assert_int_equal(policy_decide_name(p, "a b", NULL, NULL), NET_DENY_MALFORMED);
	/* The kernel's port filter: one port, or any. */
	assert_int_equal(policy_name_port(p, "ssh.test"), 22);
	assert_int_equal(policy_name_port(p, "db.test"), 0);
	assert_int_equal(policy_name_port(p, "github.com"), 0);
	assert_int_equal(policy_name_port(p, "10.0.0.5"), 0);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_precedence),
		cmocka_unit_test(test_root_rules),
		cmocka_unit_test(test_write_deny_wins),
		cmocka_unit_test(test_mandatory_any_depth),
		cmocka_unit_test(test_allow_git_config),
		cmocka_unit_test(test_mandatory_list),
		cmocka_unit_test(test_git_worktree_pointer),
		cmocka_unit_test(test_network_order),
		cmocka_unit_test(test_deny_all),
		cmocka_unit_test(test_names_for_dns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
