// SPDX-License-Identifier: MIT
/*
 * Path entries: ~ and relative expansion, trailing / and slash-star-star,
 * symlink resolution that never widens a rule, literal entries, the glob
 * forms each list accepts, and rule order.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

struct fx {
	char root[PATH_MAX];	/* realpath of a fresh temporary directory */
	char home[PATH_MAX + 64];
	char cwd[PATH_MAX + 64];
};

static void mk(const struct fx *fx, const char *rel, bool dir)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", fx->root, rel);
	if (dir)
		assert_int_equal(mkdir(p, 0755), 0);
	else
		assert_int_equal(close(open(p, O_CREAT | O_WRONLY, 0644)), 0);
}

static void ln(const struct fx *fx, const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", fx->root, rel);
	assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/bpfbox-paths-XXXXXX";

	if (!fx || !mkdtemp(tmpl) || !realpath(tmpl, fx->root))
		return -1;
	snprintf(fx->home, sizeof(fx->home), "%s/home", fx->root);
	snprintf(fx->cwd, sizeof(fx->cwd), "%s/home/proj", fx->root);
	*state = fx;
	mk(fx, "home", true);
	mk(fx, "home/proj", true);
	mk(fx, "home/.ssh", true);
	mk(fx, "home/.ssh/id_rsa", false);
	mk(fx, "home/.aws", true);
	mk(fx, "home/.aws/a.pem", false);
	mk(fx, "home/.aws/b.pem", false);
	mk(fx, "home/.aws/.hidden.pem", false);
	mk(fx, "home/.aws/config", false);
	mk(fx, "real", true);
	mk(fx, "real/sub", true);
	ln(fx, "real", "link");
	ln(fx, "/", "rootlink");
	ln(fx, "..", "home/up");
	ln(fx, "/usr", "usrlink");
	mk(fx, "real/sub/deep", true);
	ln(fx, "..", "real/sub/deep/up");
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[PATH_MAX + 16];

	/* The fixture is ours alone, under a mkdtemp name. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->root);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

static int load(const struct fx *fx, const char *fs_json, struct policy **p,
		struct diag_list *d)
{
	struct policy_load_opts o = { .cwd = fx->cwd, .home = fx->home };
	char *json = NULL;
	int ret;

	assert_true(asprintf(&json, "{\"network\": {\"allowedDomains\": [], "
			     "\"deniedDomains\": []}, \"filesystem\": %s}", fs_json) > 0);
	diag_list_init(d);
	ret = policy_load_buffer("t.json", json, strlen(json), &o, p, d);
	free(json);
	return ret;
}

static struct policy *load_ok(const struct fx *fx, const char *fs_json, struct diag_list *d)
{
	struct policy *p = NULL;

	if (load(fx, fs_json, &p, d)) {
		for (size_t i = 0; i < d->n; i++)
			print_message("  %s: %s\n", d->items[i].path, d->items[i].message);
		fail_msg("rejected: %s", fs_json);
	}
	return p;
}

static void expect(const struct diag_list *d, enum diag_severity sev, const char *path,
		   const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].severity == sev && !strcmp(d->items[i].path, path) &&
		    strstr(d->items[i].message, needle))
			return;
	for (size_t i = 0; i < d->n; i++)
		print_message("  [%d] %s: %s\n", d->items[i].severity, d->items[i].path,
			      d->items[i].message);
	fail_msg("nothing at \"%s\" containing \"%s\"", path, needle);
}

/* The path of the only rule of a one-entry list (implicit rules follow it). */
static void one(const struct fx *fx, const char *list, const char *entry, const char *want)
{
	char json[1024], expect_path[PATH_MAX * 2];
	struct diag_list d;
	struct policy *p;

	static const char *const lists[] = { "denyRead", "allowRead", "allowWrite", "denyWrite" };
	size_t o = snprintf(json, sizeof(json), "{");

	for (size_t i = 0; i < 4; i++)
		o += snprintf(json + o, sizeof(json) - o, "%s\"%s\": [%s]", i ? ", " : "",
			      lists[i], strcmp(lists[i], list) ? "" : entry);
	snprintf(json + o, sizeof(json) - o, "}");
	/* "@" stands for the fixture root. */
	if (want[0] == '@')
		snprintf(expect_path, sizeof(expect_path), "%s%s", fx->root, want + 1);
	else
		snprintf(expect_path, sizeof(expect_path), "%s", want);
	p = load_ok(fx, json, &d);
	assert_true(p->n_fs_rules >= 1);
	assert_false(p->fs_rules[0].from_default);
	assert_string_equal(p->fs_rules[0].path, expect_path);
	policy_free(p);
	diag_list_free(&d);
}

static void test_tilde_and_relative(void **state)
{
	struct fx *fx = *state;

	one(fx, "denyRead", "\"~/.ssh\"", "@/home/.ssh");
	one(fx, "denyRead", "\"~\"", "@/home");
	one(fx, "denyRead", "\"~/\"", "@/home");
	one(fx, "allowWrite", "\".\"", "@/home/proj");
	one(fx, "allowWrite", "\"./\"", "@/home/proj");
	one(fx, "allowWrite", "\"src/\"", "@/home/proj/src");
	one(fx, "allowWrite", "\"src/../lib//x/./y\"", "@/home/proj/lib/x/y");
	one(fx, "allowWrite", "\"..\"", "@/home");
	one(fx, "allowWrite", "\"../../../../../../../../..\"", "/");
	one(fx, "denyWrite", "\".env\"", "@/home/proj/.env");
	one(fx, "allowRead", "\"~/proj/\"", "@/home/proj");
}

static void test_trailing_globstar(void **state)
{
	struct fx *fx = *state;

	one(fx, "allowWrite", "\"~/proj/**\"", "@/home/proj");
	one(fx, "denyWrite", "\"build/**\"", "@/home/proj/build");
	one(fx, "denyRead", "\"/**\"", "/");
	one(fx, "allowRead", "\"~/**\"", "@/home");
	one(fx, "denyWrite", "\"/nonexistent-bpfbox/a/\"", "/nonexistent-bpfbox/a");
}

static void test_tilde_errors(void **state)
{
	struct fx *fx = *state;
	struct policy_load_opts o = { .cwd = fx->cwd, .home = NULL };
	struct diag_list d;
	struct policy *p;

	assert_int_equal(load(fx, "{\"denyRead\": [\"~bob/.ssh\"], \"allowWrite\": [],"
			      " \"denyWrite\": []}", &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "filesystem.denyRead[0]", "~user is not supported");
	diag_list_free(&d);

	/* No home given and $HOME unset: the passwd entry is used, never "~" itself. */
	{
		char *saved = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
		static const char ok[] = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []},"
			" \"filesystem\": {\"denyRead\": [\"~/.ssh\"], \"allowWrite\": [], \"denyWrite\": []}}";

		unsetenv("HOME");
		diag_list_init(&d);
		assert_int_equal(policy_load_buffer("t", ok, strlen(ok), &o, &p, &d), 0);
		assert_true(p->home && p->home[0] == '/');
		assert_true(p->fs_rules[0].path[0] == '/');
		assert_true(strstr(p->fs_rules[0].path, "/.ssh") != NULL);
		assert_null(strchr(p->fs_rules[0].path, '~'));
		policy_free(p);
		diag_list_free(&d);
		if (saved)
			setenv("HOME", saved, 1);
		free(saved);
	}
}

static void subst(char *out, size_t n, const char *fmt, const struct fx *fx)
{
	/* Replaces each "@" in fmt with the fixture root. */
	size_t o = 0;

	for (const char *c = fmt; *c && o + 1 < n; c++) {
		if (*c == '@') {
			o += snprintf(out + o, n - o, "%s", fx->root);
			continue;
		}
		out[o++] = *c;
	}
	out[o < n ? o : n - 1] = '\0';
}

static const char *rule_path(const struct fx *fx, const char *list_json, struct diag_list *d,
			     struct policy **pp)
{
	char json[4096];

	subst(json, sizeof(json), list_json, fx);
	*pp = load_ok(fx, json, d);
	return (*pp)->fs_rules[0].path;
}

static void test_symlink_resolution(void **state)
{
	struct fx *fx = *state;
	char want[PATH_MAX * 2];
	struct diag_list d;
	struct policy *p;

	/* A link to a sibling directory is followed: the kernel sees real paths. */
	snprintf(want, sizeof(want), "%s/real/sub", fx->root);
	assert_string_equal(rule_path(fx, "{\"denyRead\": [], \"allowWrite\": [\"@/link/sub\"],"
				      " \"denyWrite\": []}", &d, &p), want);
	assert_false(p->fs_rules[0].kept_spelling);
	assert_int_equal(diag_count(&d, DIAG_WARNING), 0);
	policy_free(p);
	diag_list_free(&d);

	/* Not-yet-existing paths below a link resolve through the existing part. */
	snprintf(want, sizeof(want), "%s/real/new/deeper", fx->root);
	assert_string_equal(rule_path(fx, "{\"denyRead\": [], \"allowWrite\": [\"@/link/new/deeper\"],"
				      " \"denyWrite\": []}", &d, &p), want);
	policy_free(p);
	diag_list_free(&d);
}

static void test_symlink_never_widens(void **state)
{
	struct fx *fx = *state;
	char want[PATH_MAX * 2];
	struct diag_list d;
	struct policy *p;

	/* A link to / keeps its spelling, or allowWrite would open everything. */
	snprintf(want, sizeof(want), "%s/rootlink", fx->root);
	assert_string_equal(rule_path(fx, "{\"denyRead\": [], \"allowWrite\": [\"@/rootlink\"],"
				      " \"denyWrite\": []}", &d, &p), want);
	assert_true(p->fs_rules[0].kept_spelling);
	expect(&d, DIAG_WARNING, "filesystem.allowWrite[0]", "widen");
	policy_free(p);
	diag_list_free(&d);

	/* A link to an ancestor of itself. */
	snprintf(want, sizeof(want), "%s/home/up", fx->root);
	assert_string_equal(rule_path(fx, "{\"denyRead\": [], \"allowWrite\": [\"~/up\"],"
				      " \"denyWrite\": []}", &d, &p), want);
	assert_true(p->fs_rules[0].kept_spelling);
	policy_free(p);
	diag_list_free(&d);

	/* A link to a single top-level directory. */
	snprintf(want, sizeof(want), "%s/usrlink", fx->root);
	assert_string_equal(rule_path(fx, "{\"denyRead\": [], \"allowWrite\": [\"@/usrlink\"],"
				      " \"denyWrite\": []}", &d, &p), want);
	assert_true(p->fs_rules[0].kept_spelling);
	assert_true(policy_rule_unapplied(&p->fs_rules[0]));
	policy_free(p);
	diag_list_free(&d);

	/*
	 * A link to its ancestor, spelled through a linked parent (link -> real): no string
	 * prefix shows it, the ancestor's identity does.
	 */
	snprintf(want, sizeof(want), "%s/link/sub/deep/up", fx->root);
	assert_string_equal(rule_path(fx, "{\"denyRead\": [], \"allowWrite\": [\"@/link/sub/deep/up\"],"
				      " \"denyWrite\": []}", &d, &p), want);
	assert_true(p->fs_rules[0].kept_spelling);
	expect(&d, DIAG_WARNING, "filesystem.allowWrite[0]", "not applied");
	policy_free(p);
	diag_list_free(&d);

	/* A deny kept on such a link is applied (it follows the link, which only narrows). */
	assert_non_null(rule_path(fx, "{\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": [\"@/link/sub/deep/up\"]}",
				  &d, &p));
	assert_true(p->fs_rules[0].kept_spelling);
	assert_false(policy_rule_unapplied(&p->fs_rules[0]));
	assert_false(p->fs_rules[0].no_links);
	policy_free(p);
	diag_list_free(&d);
}

static void test_literal_entries_ok(void **state)
{
	struct fx *fx = *state;
	char want[PATH_MAX * 2];
	struct diag_list d;
	struct policy *p;

	p = load_ok(fx, "{\"denyRead\": [{\"path\": \"/nonexistent-bpfbox/a*b?[c]\", \"literal\": true}],"
		    " \"allowWrite\": [{\"path\": \"/nonexistent-bpfbox/w/**\", \"literal\": true},"
		    " {\"path\": \"out\"}], \"denyWrite\": []}", &d);
	assert_string_equal(p->fs_rules[0].path, "/nonexistent-bpfbox/a*b?[c]");
	assert_int_equal(p->fs_rules[0].kind, FS_DENY_READ);
	/* Literal means literal: the slash-star-star is part of the name. */
	assert_string_equal(p->fs_rules[1].path, "/nonexistent-bpfbox/w/**");
	snprintf(want, sizeof(want), "%s/home/proj/out", fx->root);
	assert_string_equal(p->fs_rules[2].path, want);
	assert_string_equal(p->fs_rules[2].source, "out");
	policy_free(p);
	diag_list_free(&d);
}

static void test_literal_object_errors(void **state)
{
	struct fx *fx = *state;
	struct diag_list d;
	struct policy *p;

	assert_int_equal(load(fx, "{\"denyRead\": [{\"path\": \"x*\", \"literal\": false}],"
			      " \"allowWrite\": [{\"literal\": true}, {\"path\": \"\"},"
			      " {\"path\": \"/a\", \"literal\": \"yes\"}],"
			      " \"denyWrite\": [{\"path\": \"/b\", \"mode\": 1}]}", &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "filesystem.allowWrite[0].path", "Required");
	expect(&d, DIAG_ERROR, "filesystem.allowWrite[1].path", "empty");
	expect(&d, DIAG_ERROR, "filesystem.allowWrite[2].literal", "boolean");
	expect(&d, DIAG_WARNING, "filesystem.denyWrite[0].mode", "unknown key");
	diag_list_free(&d);
}

static void test_glob_rejections(void **state)
{
	struct fx *fx = *state;
	struct diag_list d;
	struct policy *p;

	assert_int_equal(load(fx, "{\"denyRead\": [\"**/.env\", \"/home/*/secrets\", \"~/.aws/**.pem\"],"
			      " \"allowRead\": [\"~/pro?\"],"
			      " \"allowWrite\": [\"src/*.c\", \"/tmp/[ab]\"],"
			      " \"denyWrite\": [\"**/.env\", \"/etc/*/passwd\"]}", &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "filesystem.denyRead[0]", "last component only");
	expect(&d, DIAG_ERROR, "filesystem.denyRead[1]", "last component only");
	expect(&d, DIAG_ERROR, "filesystem.denyRead[2]", "last component only");
	expect(&d, DIAG_ERROR, "filesystem.allowRead[0]", "globs are not supported in allowRead");
	expect(&d, DIAG_ERROR, "filesystem.allowWrite[0]", "globs are not supported in allowWrite");
	expect(&d, DIAG_ERROR, "filesystem.allowWrite[1]", "literal");
	expect(&d, DIAG_ERROR, "filesystem.denyWrite[0]", "globs are not supported in denyWrite");
	expect(&d, DIAG_ERROR, "filesystem.denyWrite[1]", "trailing /**");
	assert_int_equal(diag_count(&d, DIAG_ERROR), 8);
	diag_list_free(&d);
}

static void test_deny_read_glob_expanded(void **state)
{
	struct fx *fx = *state;
	char want[PATH_MAX * 2];
	struct diag_list d;
	struct policy *p;
	size_t pems = 0;

	p = load_ok(fx, "{\"denyRead\": [\"~/.aws/*.pem\", \"~/.nothing/*\", \"~/.ssh/*\"],"
		    " \"allowWrite\": [], \"denyWrite\": []}", &d);
	for (size_t i = 0; i < p->n_fs_rules; i++) {
		const struct fs_rule *r = &p->fs_rules[i];

		if (r->kind != FS_DENY_READ || strcmp(r->source, "~/.aws/*.pem"))
			continue;
		assert_true(r->from_glob);
		assert_true(strstr(r->path, ".pem") != NULL);
		pems++;
	}
	/* a.pem, b.pem and the dot file: a deny glob covers hidden files too. */
	assert_int_equal(pems, 3);
	snprintf(want, sizeof(want), "%s/home/.ssh/id_rsa", fx->root);
	assert_string_equal(p->fs_rules[3].path, want);
	assert_string_equal(p->fs_rules[3].source, "~/.ssh/*");
	/* "." and ".." never become rules; the empty match adds nothing. */
	assert_int_equal(p->n_fs_rules, 3 + 1 + 2);
	expect(&d, DIAG_DEBUG, "filesystem.denyRead[0]", "3 path(s)");
	expect(&d, DIAG_DEBUG, "filesystem.denyRead[1]", "0 path(s)");
	policy_free(p);
	diag_list_free(&d);
}

static void test_file_order_and_names(void **state)
{
	struct fx *fx = *state;
	struct diag_list d;
	struct policy *p;

	p = load_ok(fx, "{\"denyWrite\": [\"/nonexistent-bpfbox/w/.env\"],"
		    " \"allowWrite\": [\"/nonexistent-bpfbox/w\"],"
		    " \"denyRead\": [\"/nonexistent-bpfbox/s\"],"
		    " \"allowRead\": [\"/nonexistent-bpfbox/s/ok\"]}", &d);
	assert_int_equal(p->n_fs_rules, 6);
	assert_int_equal(p->fs_rules[0].kind, FS_DENY_WRITE);
	assert_int_equal(p->fs_rules[1].kind, FS_ALLOW_WRITE);
	assert_int_equal(p->fs_rules[2].kind, FS_DENY_READ);
	assert_int_equal(p->fs_rules[3].kind, FS_ALLOW_READ);
	assert_string_equal(p->fs_rules[0].name, "denyWrite:/nonexistent-bpfbox/w/.env");
	assert_string_equal(p->fs_rules[3].name, "allowRead:/nonexistent-bpfbox/s/ok");
	assert_string_equal(p->fs_rules[4].name, "implicit:allowWrite:/dev/null");
	assert_string_equal(p->fs_rules[5].path, "/dev/tty");
	policy_free(p);
	diag_list_free(&d);
}

static void test_disabled_drops_rules(void **state)
{
	struct fx *fx = *state;
	struct mandatory_entry m[POLICY_MANDATORY_MAX];
	struct fs_decision fd;
	struct diag_list d;
	struct policy *p;

	p = load_ok(fx, "{\"disabled\": true, \"denyRead\": [\"~/.ssh\"], \"allowWrite\": [],"
		    " \"denyWrite\": [\"/\"]}", &d);
	assert_true(p->fs_disabled);
	assert_int_equal(p->n_fs_rules, 0);
	assert_int_equal(policy_mandatory(p, m), 0);
	policy_decide_write(p, "/etc/.git/hooks/x", &fd);
	assert_true(fd.allowed);
	assert_string_equal(fd.rule_name, "filesystem.disabled");
	expect(&d, DIAG_DEBUG, "filesystem.disabled", "mandatory");
	policy_free(p);
	diag_list_free(&d);

	/* Lists are still validated when disabled. */
	assert_int_equal(load(fx, "{\"disabled\": true, \"denyRead\": [3], \"allowWrite\": [],"
			      " \"denyWrite\": []}", &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "filesystem.denyRead[0]", "expected a path");
	diag_list_free(&d);
}

static void test_normalise_api(void **state)
{
	struct fx *fx = *state;
	char *out, want[PATH_MAX * 2];
	const char *err;
	bool kept;

	assert_int_equal(policy_path_normalise("a/./b/../c/", "/w", "/h", false, &out, &kept, &err), 0);
	assert_string_equal(out, "/w/a/c");
	free(out);
	assert_int_equal(policy_path_normalise("~", "/w", "/h/", false, &out, &kept, &err), 0);
	assert_string_equal(out, "/h");
	free(out);
	assert_int_equal(policy_path_normalise("", "/w", "/h", false, &out, &kept, &err), -EINVAL);
	assert_non_null(err);
	assert_int_equal(policy_path_normalise("rel", NULL, "/h", false, &out, &kept, &err), -EINVAL);
	assert_true(strstr(err, "launch directory") != NULL);
	/* explain's resolution follows every link: that is what the kernel sees. */
	snprintf(want, sizeof(want), "%s/rootlink/etc", fx->root);
	assert_int_equal(policy_path_resolve_target(want, "/", "/", &out, &err), 0);
	assert_string_equal(out, "/etc");
	free(out);
}

/*
 * The administrator's policy for a caller: the fixture is the caller's own
 * (owned by this uid, under /tmp), so every link in it is one the caller
 * could have placed.
 */
static void test_guarded_caller_links(void **state)
{
	struct fx *fx = *state;
	char lex[PATH_MAX * 2], *out;
	const char *err;
	bool kept, link;

	/* A grant through the caller's link to "/": cut, named lexically. */
	snprintf(lex, sizeof(lex), "%s/rootlink", fx->root);
	assert_int_equal(policy_path_guarded(lex, "/", "/", getuid(), true, &out, &kept, &link, &err), 0);
	assert_true(link);
	assert_false(kept);
	assert_string_equal(out, lex);
	free(out);
	/* Also when the link is an ancestor, and with what lies beyond it. */
	snprintf(lex, sizeof(lex), "%s/link/sub/new", fx->root);
	assert_int_equal(policy_path_guarded(lex, "/", "/", getuid(), true, &out, &kept, &link, &err), 0);
	assert_true(link);
	assert_string_equal(out, lex);
	free(out);
	/* A deny through it keeps the caller's spelling (the kernel follows: only narrower). */
	snprintf(lex, sizeof(lex), "%s/link/sub", fx->root);
	assert_int_equal(policy_path_guarded(lex, "/", "/", getuid(), false, &out, &kept, &link, &err), 0);
	assert_true(link);
	assert_true(kept);
	assert_string_equal(out, lex);
	free(out);
	/* No link: the real path, for grants and denies alike; missing parts appended. */
	snprintf(lex, sizeof(lex), "%s/real/sub/./x/../new", fx->root);
	assert_int_equal(policy_path_guarded(lex, "/", "/", getuid(), true, &out, &kept, &link, &err), 0);
	assert_false(link);
	snprintf(lex, sizeof(lex), "%s/real/sub/new", fx->root);
	assert_string_equal(out, lex);
	free(out);
	assert_int_equal(policy_path_guarded("~/.ssh", "/", fx->home, getuid(), false, &out, &kept, &link, &err),
			 0);
	assert_false(link);
	assert_false(kept);
	snprintf(lex, sizeof(lex), "%s/.ssh", fx->home);
	assert_string_equal(out, lex);
	free(out);
	assert_int_equal(policy_path_guarded("~x", "/", fx->home, getuid(), true, &out, &kept, &link, &err),
			 -EINVAL);
}

/* A link in directories only root may change is the administrator's: followed. */
static void test_guarded_root_links(void **state)
{
	char real[PATH_MAX], *out;
	const char *err;
	struct stat st;
	bool kept, link;

	/* Debian's merged /usr: /bin is root's link to usr/bin. */
	if (lstat("/bin", &st) || !S_ISLNK(st.st_mode) || !realpath("/bin", real))
		skip();
	assert_int_equal(policy_path_guarded("/bin", "/", "/", 65534, true, &out, &kept, &link, &err), 0);
	assert_false(link);
	assert_string_equal(out, real);
	free(out);
	/* Root's own links are untrusted for root itself: a root caller is never guarded. */
	assert_int_equal(policy_path_guarded("/bin", "/", "/", 0, true, &out, &kept, &link, &err), 0);
	assert_true(link);
	free(out);
}

/* Loading with guard: the cut grant is left out and named as written; denies stay. */
static void test_guarded_load(void **state)
{
	struct fx *fx = *state;
	struct policy_load_opts o = { .cwd = fx->cwd, .home = fx->home, .guard = true, .guard_uid = getuid() };
	const char *json = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}, \"filesystem\": {\"allowWrite\": [\"../../rootlink\", \"~/proj\"], "
			   "\"denyRead\": [\"../../link/sub\"], \"allowRead\": [\"../../link\"], \"denyWrite\": []}}";
	char want[PATH_MAX * 2];
	struct diag_list d;
	struct policy *p = NULL;
	bool proj = false, deny = false;

	diag_list_init(&d);
	if (policy_load_buffer("admin.json", json, strlen(json), &o, &p, &d)) {
		for (size_t i = 0; i < d.n; i++)
			print_message("  %s: %s\n", d.items[i].path, d.items[i].message);
		fail_msg("rejected");
	}
	assert_int_equal(p->n_grant_cuts, 2);
	assert_null(p->grant_cuts[2]);
	snprintf(want, sizeof(want), "filesystem.allowWrite[0] \"../../rootlink\" (%s/rootlink)", fx->root);
	assert_string_equal(p->grant_cuts[0], want);
	snprintf(want, sizeof(want), "filesystem.allowRead[0] \"../../link\" (%s/link)", fx->root);
	assert_string_equal(p->grant_cuts[1], want);
	for (size_t i = 0; i < p->n_fs_rules; i++) {
		const struct fs_rule *r = &p->fs_rules[i];

		assert_string_not_equal(r->path, "/");
		if (r->kind == FS_ALLOW_WRITE && !strcmp(r->path, fx->cwd)) {
			proj = true;
			assert_true(r->no_links);
		}
		if (r->kind == FS_DENY_READ) {
			snprintf(want, sizeof(want), "%s/link/sub", fx->root);
			assert_string_equal(r->path, want);
			assert_false(r->no_links);
			deny = true;
		}
		if (r->kind == FS_ALLOW_READ && r->jpath)
			fail_msg("the cut allowRead is still a rule: %s", r->path);
	}
	assert_true(proj);
	assert_true(deny);
	policy_free(p);
	diag_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tilde_and_relative),
		cmocka_unit_test(test_trailing_globstar),
		cmocka_unit_test(test_tilde_errors),
		cmocka_unit_test(test_symlink_resolution),
		cmocka_unit_test(test_symlink_never_widens),
		cmocka_unit_test(test_literal_entries_ok),
		cmocka_unit_test(test_literal_object_errors),
		cmocka_unit_test(test_glob_rejections),
		cmocka_unit_test(test_deny_read_glob_expanded),
		cmocka_unit_test(test_file_order_and_names),
		cmocka_unit_test(test_disabled_drops_rules),
		cmocka_unit_test(test_normalise_api),
		cmocka_unit_test(test_guarded_caller_links),
		cmocka_unit_test(test_guarded_root_links),
		cmocka_unit_test(test_guarded_load),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
