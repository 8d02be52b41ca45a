// SPDX-License-Identifier: MIT
/*
 * The administrator's ceiling: for every field, the effective policy allows
 * only what both policies allow (tables of administrator x caller rows), and
 * every grant of the caller that the ceiling takes away gets exactly one line
 * naming the caller's file, the JSON path and the administrator's file.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "bpfbox.h"
#include "cli/commands.h"
#include "policy/policy.h"
#include "policy/policy_ceiling.h"

#define ADMIN "/etc/bpfbox/policy.json"
#define CALLER "p.json"
#define NO_NET "\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}"
#define NO_FS "\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"
/* Everything the other fields need to be a valid policy. */
#define BASE NO_NET ", " NO_FS

static struct policy *load(const char *name, const char *body)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/w", .home = "/nonexistent-bpfbox/h" };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *json = NULL;

	assert_true(asprintf(&json, "{%s}", body) > 0);
	if (policy_load_buffer(name, json, strlen(json), &o, &p, &d)) {
		for (size_t i = 0; i < d.n; i++)
			print_message("  %s: %s\n", d.items[i].path, d.items[i].message);
		fail_msg("rejected: %s", json);
	}
	free(json);
	diag_list_free(&d);
	return p;
}

struct run {
	struct policy *admin, *caller, *eff;
	struct ceiling_cuts cuts;
};

static void apply(struct run *r, const char *admin, const char *caller)
{
	memset(r, 0, sizeof(*r));
	r->admin = load(ADMIN, admin);
	r->caller = load(CALLER, caller);
	assert_int_equal(policy_ceiling_apply(r->admin, r->caller, false, &r->eff, &r->cuts), 0);
	assert_non_null(r->eff);
	assert_true(r->eff->has_ceiling);
	assert_false(r->cuts.oom);
}

static void done(struct run *r)
{
	policy_free(r->admin);
	policy_free(r->caller);
	policy_free(r->eff);
	ceiling_cuts_free(&r->cuts);
}

static void dump_cuts(const struct run *r)
{
	for (size_t i = 0; i < r->cuts.n; i++)
		print_message("  cut: %s\n", r->cuts.items[i].line);
}

/* The cut at path is exactly line, or (line NULL) there is none. */
static void want_cut(const struct run *r, const char *path, const char *line)
{
	const struct ceiling_cut *c = ceiling_cuts_find(&r->cuts, path);

	if (!line && c)
		fail_msg("unexpected cut: %s", c->line);
	if (!line)
		return;
	if (!c) {
		dump_cuts(r);
		fail_msg("no cut at %s, want: %s", path, line);
	}
	if (strcmp(c->line, line))
		fail_msg("cut at %s:\n   got: %s\n  want: %s", path, c->line, line);
}

/* ---- filesystem: read ---- */

struct fs_row {
	const char *admin_fs, *caller_fs;	/* the "filesystem" objects */
	const char *path;
	bool allowed;
	const char *rule;
};

static void fs_rows(const struct fs_row *rows, size_t n, bool write)
{
	for (size_t i = 0; i < n; i++) {
		const struct fs_row *row = &rows[i];
		char *a = NULL, *c = NULL;
		struct fs_decision d;
		struct run r;

		assert_true(asprintf(&a, NO_NET ", \"filesystem\": %s", row->admin_fs) > 0);
		assert_true(asprintf(&c, NO_NET ", \"filesystem\": %s", row->caller_fs) > 0);
		apply(&r, a, c);
		if (write)
			policy_decide_write(r.eff, row->path, &d);
		else
			policy_decide_read(r.eff, row->path, &d);
		if (d.allowed != row->allowed || strcmp(d.rule_name, row->rule))
			fail_msg("row %zu: %s %s: got %s by %s, want %s by %s", i,
				 write ? "write" : "read", row->path,
				 d.allowed ? "allowed" : "denied", d.rule_name,
				 row->allowed ? "allowed" : "denied", row->rule);
		free(a);
		free(c);
		done(&r);
	}
}

#define FS(dr, ar, aw, dw) "{\"denyRead\": [" dr "], \"allowRead\": [" ar "], " \
	"\"allowWrite\": [" aw "], \"denyWrite\": [" dw "]}"
#define E FS("", "", "", "")

static void test_read_rows(void **state)
{
	static const struct fs_row rows[] = {
		/* Neither denies. */
		{ E, E, "/srv/x", true, "default:read" },
		/* The administrator's denyRead holds... */
		{ FS("\"/srv\"", "", "", ""), E, "/srv/x", false, "ceiling:denyRead:/srv" },
		/* ...and the caller's allowRead cannot reopen it, at any depth. */
		{ FS("\"/srv\"", "", "", ""), FS("\"/srv\"", "\"/srv/x\"", "", ""),
		  "/srv/x/f", false, "ceiling:denyRead:/srv" },
		{ FS("\"/srv\"", "", "", ""), FS("", "\"/srv\"", "", ""), "/srv", false,
		  "ceiling:denyRead:/srv" },
		/* The caller's denyRead holds where the administrator allows. */
		{ E, FS("\"/srv\"", "", "", ""), "/srv/x", false, "denyRead:/srv" },
		{ FS("\"/srv\"", "\"/srv/pub\"", "", ""), FS("\"/srv/pub/a\"", "", "", ""),
		  "/srv/pub/a/f", false, "denyRead:/srv/pub/a" },
		/* The administrator's allowRead reopens only its own denyRead. */
		{ FS("\"/srv\"", "\"/srv/pub\"", "", ""), E, "/srv/pub/f", true,
		  "default:read" },
		{ FS("\"/srv\"", "\"/srv/pub\"", "", ""), FS("\"/srv/pub\"", "", "", ""),
		  "/srv/pub/f", false, "denyRead:/srv/pub" },
		/* Both reopen: allowed, named by the caller's deciding rule. */
		{ FS("\"/srv\"", "\"/srv/pub\"", "", ""), FS("\"/srv\"", "\"/srv/pub\"", "", ""),
		  "/srv/pub/f", true, "allowRead:/srv/pub" },
		/* Both deny: the caller's own refusal is the one named. */
		{ FS("\"/srv\"", "", "", ""), FS("\"/srv/x\"", "", "", ""), "/srv/x/f", false,
		  "denyRead:/srv/x" },
		/* Write rules never affect reads, in either layer. */
		{ FS("", "", "\"/srv\"", "\"/srv\""), FS("", "", "\"/srv\"", ""), "/srv/f", true,
		  "default:read" },
		/* Siblings of a denied path stay readable. */
		{ FS("\"/srv/secret\"", "", "", ""), E, "/srv/secrets", true, "default:read" },
	};

	fs_rows(rows, sizeof(rows) / sizeof(rows[0]), false);
}

static void test_write_rows(void **state)
{
	static const struct fs_row rows[] = {
		/* Both allow. */
		{ FS("", "", "\"/work\"", ""), FS("", "", "\"/work\"", ""), "/work/f", true,
		  "allowWrite:/work" },
		/* Only the caller allows: outside the administrator's allowWrite. */
		{ FS("", "", "\"/work\"", ""), FS("", "", "\"/srv/shared\"", ""),
		  "/srv/shared/f", false, "ceiling:default:write" },
		/* Only the administrator allows: the caller narrowed it. */
		{ FS("", "", "\"/work\"", ""), E, "/work/f", false, "default:write" },
		/* The caller's wider root is cut to the administrator's. */
		{ FS("", "", "\"/srv/a\"", ""), FS("", "", "\"/srv\"", ""), "/srv/a/f", true,
		  "allowWrite:/srv" },
		{ FS("", "", "\"/srv/a\"", ""), FS("", "", "\"/srv\"", ""), "/srv/b/f", false,
		  "ceiling:default:write" },
		/* The administrator's denyWrite wins inside both allows... */
		{ FS("", "", "\"/work\"", "\"/work/locked\""), FS("", "", "\"/work\"", ""),
		  "/work/locked/f", false, "ceiling:denyWrite:/work/locked" },
		/* ...even where the caller allows deeper. */
		{ FS("", "", "\"/work\"", "\"/work/locked\""), FS("", "", "\"/work/locked/x\"", ""),
		  "/work/locked/x/f", false, "ceiling:denyWrite:/work/locked" },
		/* ...and even above the administrator's own allow (deny wins). */
		{ FS("", "", "\"/work\"", "\"/\""), FS("", "", "\"/work\"", ""), "/work/f", false,
		  "ceiling:denyWrite:/" },
		/* The caller's denyWrite wins too, and is named first. */
		{ FS("", "", "\"/work\"", "\"/work/locked\""),
		  FS("", "", "\"/work\"", "\"/work/locked\""), "/work/locked/f", false,
		  "denyWrite:/work/locked" },
		{ FS("", "", "\"/work\"", ""), FS("", "", "\"/work\"", "\"/work/ro\""),
		  "/work/ro/f", false, "denyWrite:/work/ro" },
		/* A caller's deny beats the administrator's missing allow in the naming. */
		{ E, FS("", "", "", "\"/srv\""), "/srv/f", false, "denyWrite:/srv" },
		/* Neither allows: the caller's default is named. */
		{ E, E, "/srv/f", false, "default:write" },
		/* The implicit writable devices are in both layers. */
		{ E, E, "/dev/null", true, "implicit:allowWrite:/dev/null" },
		/* Read rules never affect writes. */
		{ FS("\"/work\"", "", "\"/work\"", ""), FS("", "", "\"/work\"", ""), "/work/f", true,
		  "allowWrite:/work" },
		/* The mandatory set, whatever both allow. */
		{ FS("", "", "\"/work\"", ""), FS("", "", "\"/work\"", ""), "/work/.bashrc", false,
		  "mandatory:.bashrc" },
		{ FS("", "", "\"/work\"", ""), FS("", "", "\"/work\"", ""), "/work/a/.git/hooks/x",
		  false, "mandatory:.git/hooks" },
	};

	fs_rows(rows, sizeof(rows) / sizeof(rows[0]), true);
}

/* Each layer decides its own deepest match: no rule of one layer reopens the other's. */
static void test_layers_kept_apart(void **state)
{
	struct fs_decision d;
	struct run r;
	size_t own = 0, ceiling = 0;

	apply(&r, NO_NET ", \"filesystem\": " FS("\"/h\"", "\"/h/pub\"", "\"/w\"", "\"/w/ro\""),
	      NO_NET ", \"filesystem\": " FS("\"/h/pub/x\"", "\"/h\"", "\"/w\"", ""));
	for (size_t i = 0; i < r.eff->n_fs_rules; i++) {
		const struct fs_rule *x = &r.eff->fs_rules[i];

		if (x->layer == FS_LAYER_CEILING) {
			ceiling++;
			assert_true(!strncmp(x->name, "ceiling:", 8));
		} else {
			own++;
			assert_false(!strncmp(x->name, "ceiling:", 8));
		}
	}
	/* 4 + 2 implicit each. */
	assert_int_equal(own, 5);
	assert_int_equal(ceiling, 6);
	policy_decide_layer_read(r.eff, FS_LAYER_OWN, "/h/a", &d);
	assert_true(d.allowed);
	assert_string_equal(d.rule_name, "allowRead:/h");
	policy_decide_layer_read(r.eff, FS_LAYER_CEILING, "/h/a", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "ceiling:denyRead:/h");
	policy_decide_read(r.eff, "/h/a", &d);
	assert_false(d.allowed);
	/* /h/pub/f: the administrator reopens, the caller's deeper denyRead only covers x. */
	policy_decide_read(r.eff, "/h/pub/f", &d);
	assert_true(d.allowed);
	policy_decide_read(r.eff, "/h/pub/x/f", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "denyRead:/h/pub/x");
	policy_decide_layer_write(r.eff, FS_LAYER_CEILING, "/w/ro/f", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "ceiling:denyWrite:/w/ro");
	policy_decide_layer_write(r.eff, FS_LAYER_OWN, "/w/ro/f", &d);
	assert_true(d.allowed);
	assert_false(r.eff->fs_disabled);
	done(&r);
}

static void test_fs_disabled(void **state)
{
	static const char off[] = NO_NET ", \"filesystem\": {\"denyRead\": [\"/srv\"], "
		"\"allowWrite\": [], \"denyWrite\": [], \"disabled\": true}";
	struct fs_decision d;
	struct run r;

	/* The caller's disabled does not lift the administrator's layer. */
	apply(&r, NO_NET ", \"filesystem\": " FS("\"/srv\"", "", "\"/work\"", ""), off);
	policy_decide_read(&*r.eff, "/srv/f", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "ceiling:denyRead:/srv");
	policy_decide_write(r.eff, "/work/f", &d);
	assert_true(d.allowed);
	policy_decide_write(r.eff, "/etc/f", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "ceiling:default:write");
	want_cut(&r, "filesystem.disabled", CALLER ": filesystem.disabled true: the "
		 "administrator's filesystem rules still apply (" ADMIN "); not granted");
	done(&r);

	/* The administrator's disabled leaves the caller's layer deciding alone. */
	apply(&r, off, NO_NET ", \"filesystem\": " FS("\"/home\"", "", "\"/work\"", ""));
	policy_decide_read(r.eff, "/srv/f", &d);
	assert_true(d.allowed);
	policy_decide_read(r.eff, "/home/f", &d);
	assert_false(d.allowed);
	policy_decide_write(r.eff, "/work/f", &d);
	assert_true(d.allowed);
	policy_decide_write(r.eff, "/etc/f", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "default:write");
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* Both disabled: everything open, but the mandatory set always holds. */
	apply(&r, off, off);
	assert_false(r.eff->fs_disabled);
	policy_decide_write(r.eff, "/etc/f", &d);
	assert_true(d.allowed);
	policy_decide_read(r.eff, "/srv/f", &d);
	assert_true(d.allowed);
	policy_decide_write(r.eff, "/etc/.bashrc", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "mandatory:.bashrc");
	want_cut(&r, "filesystem.disabled", CALLER ": filesystem.disabled true: the mandatory "
		 "deny set stays in force under the administrator's policy (" ADMIN "); not "
		 "granted for the mandatory deny set");
	done(&r);
}

/* ---- flags: allowed only if both allow ---- */

struct flag_row {
	const char *key;	/* JSON path */
	const char *admin, *caller;	/* policy bodies */
};

static bool flag_value(const struct policy *p, const char *key)
{
	if (!strcmp(key, "filesystem.allowGitConfig"))
		return p->allow_git_config;
	if (!strcmp(key, "network.allowLocalBinding"))
		return p->allow_local_binding;
	if (!strcmp(key, "network.allowAllUnixSockets"))
		return p->allow_all_unix_sockets;
	if (!strcmp(key, "allowNestedUserNamespaces"))
		return p->allow_nested_userns;
	fail_msg("unknown flag %s", key);
	return false;
}

static void flag_body(char **out, const char *key, bool v)
{
	const char *b = v ? "true" : "false";
	int n;

	if (!strcmp(key, "filesystem.allowGitConfig"))
		n = asprintf(out, NO_NET ", \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], "
			     "\"denyWrite\": [], \"allowGitConfig\": %s}", b);
	else if (!strcmp(key, "network.allowLocalBinding"))
		n = asprintf(out, NO_FS ", \"network\": {\"allowedDomains\": [], \"deniedDomains\": [], "
			     "\"allowLocalBinding\": %s}", b);
	else if (!strcmp(key, "network.allowAllUnixSockets"))
		n = asprintf(out, NO_FS ", \"network\": {\"allowedDomains\": [], \"deniedDomains\": [], "
			     "\"allowAllUnixSockets\": %s}", b);
	else
		n = asprintf(out, BASE ", \"allowNestedUserNamespaces\": %s", b);
	assert_true(n > 0);
}

/* bpfbox.network.transparent: on only if neither turns it off; what is on by default is no cut. */
static void test_transparent(void **state)
{
	static const char *const on = BASE;
	static const char *const off = BASE ", \"bpfbox\": {\"network\": {\"transparent\": false}}";

	for (int a = 0; a < 2; a++) {
		for (int c = 0; c < 2; c++) {
			struct run r;

			apply(&r, a ? on : off, c ? on : off);
			assert_int_equal(!r.eff->transparent_off, a && c);
			assert_int_equal(r.cuts.n, 0);
			done(&r);
		}
	}
}

/* bpfbox.network.allowSocketProtocols: only what both open; each name the caller loses is a cut. */
static void test_socket_protocols(void **state)
{
#define SOCKS(l) BASE ", \"bpfbox\": {\"network\": {\"allowSocketProtocols\": [" l "]}}"
	struct run r;

	apply(&r, SOCKS("\"sctp\", \"ping\""), SOCKS("\"ping\", \"raw\", \"netlink\""));
	assert_int_equal(r.eff->sock_allow, BB_SOCK_PING);
	assert_int_equal(r.cuts.n, 2);
	assert_string_equal(r.cuts.items[0].line, CALLER ": bpfbox.network.allowSocketProtocols \"raw\": not "
			    "allowed by the administrator's policy (" ADMIN "); not granted");
	assert_string_equal(r.cuts.items[1].line, CALLER ": bpfbox.network.allowSocketProtocols \"netlink\": "
			    "not allowed by the administrator's policy (" ADMIN "); not granted");
	done(&r);
	apply(&r, SOCKS("\"sctp\""), BASE);
	assert_int_equal(r.eff->sock_allow, 0);
	assert_int_equal(r.cuts.n, 0);
	done(&r);
	apply(&r, BASE, SOCKS("\"sctp\""));
	assert_int_equal(r.eff->sock_allow, 0);
	want_cut(&r, "bpfbox.network.allowSocketProtocols", CALLER ": bpfbox.network.allowSocketProtocols "
		 "\"sctp\": not allowed by the administrator's policy (" ADMIN "); not granted");
	done(&r);
#undef SOCKS
}

/* bpfbox.network.dnsQueryTypes: only the types both add; each the caller loses is a cut. */
static void test_dns_query_types(void **state)
{
#define TYPES(l) BASE ", \"bpfbox\": {\"network\": {\"dnsQueryTypes\": [" l "]}}"
	struct run r;

	apply(&r, TYPES("\"SRV\", \"MX\""), TYPES("\"MX\", \"TXT\""));
	assert_true(policy_dns_type_answered(r.eff, 15));
	assert_false(policy_dns_type_answered(r.eff, 16));
	assert_false(policy_dns_type_answered(r.eff, 33));
	assert_true(policy_dns_type_answered(r.eff, 1));
	want_cut(&r, "bpfbox.network.dnsQueryTypes", CALLER ": bpfbox.network.dnsQueryTypes \"TXT\": not "
		 "answered under the administrator's policy (" ADMIN "); not granted");
	done(&r);
	apply(&r, TYPES("\"TXT\""), BASE);
	assert_false(policy_dns_type_answered(r.eff, 16));
	assert_int_equal(r.cuts.n, 0);
	done(&r);
#undef TYPES
}

/* bpfbox.git.newRepositories: the stricter applies; a caller's looser value is a cut. */
static void test_git_new_repositories(void **state)
{
#define GIT(v) BASE ", \"bpfbox\": {\"git\": {\"newRepositories\": \"" v "\"}}"
	struct run r;

	apply(&r, BASE, GIT("report"));
	assert_int_equal(r.eff->git_new, POLICY_GIT_STRICT);
	want_cut(&r, "bpfbox.git.newRepositories", CALLER ": bpfbox.git.newRepositories \"report\": looser than "
		 "the administrator's policy (" ADMIN "); \"strict\" applies");
	done(&r);
	apply(&r, GIT("report"), GIT("report"));
	assert_int_equal(r.eff->git_new, POLICY_GIT_REPORT);
	assert_int_equal(r.cuts.n, 0);
	done(&r);
	apply(&r, GIT("report"), GIT("refuse"));
	assert_int_equal(r.eff->git_new, POLICY_GIT_REFUSE);
	assert_int_equal(r.cuts.n, 0);
	done(&r);
	apply(&r, GIT("refuse"), BASE);
	assert_int_equal(r.eff->git_new, POLICY_GIT_REFUSE);
	want_cut(&r, "bpfbox.git.newRepositories", CALLER ": bpfbox.git.newRepositories \"strict\": looser than "
		 "the administrator's policy (" ADMIN "); \"refuse\" applies");
	done(&r);
#undef GIT
}

/*
 * bpfbox.network.parentProxy: the administrator's applies whatever the
 * caller says; a caller naming another, or one where the administrator has
 * none, is one cut showing the redacted URL (never the password).
 */
static void test_parent_proxy(void **state)
{
#define PARENT(u) BASE ", \"bpfbox\": {\"network\": {\"parentProxy\": \"" u "\"}}"
	static const struct {
		const char *admin, *caller, *eff, *cut;
	} rows[] = {
		{ BASE, BASE, NULL, NULL },
		{ PARENT("http://10.0.0.1:3128"), BASE, "http://10.0.0.1:3128", NULL },
		{ PARENT("http://10.0.0.1:3128"), PARENT("http://10.0.0.1:3128"), "http://10.0.0.1:3128", NULL },
		{ PARENT("http://a:pw@10.0.0.1:3128"), PARENT("http://a:pw@10.0.0.1:3128"),
		  "http://***@10.0.0.1:3128", NULL },
		{ PARENT("http://10.0.0.1:3128"), PARENT("socks5://u:hunter2@127.0.0.1:1080"),
		  "http://10.0.0.1:3128",
		  CALLER ": bpfbox.network.parentProxy \"socks5://***@127.0.0.1:1080\": the administrator's "
		  "policy names another parent proxy (" ADMIN "); the administrator's parent proxy is used" },
		{ PARENT("http://a:pw@10.0.0.1:3128"), PARENT("http://a:other@10.0.0.1:3128"),
		  "http://***@10.0.0.1:3128",
		  CALLER ": bpfbox.network.parentProxy \"http://***@10.0.0.1:3128\": the administrator's "
		  "policy names another parent proxy (" ADMIN "); the administrator's parent proxy is used" },
		{ BASE, PARENT("http://u:hunter2@127.0.0.1:3128"), NULL,
		  CALLER ": bpfbox.network.parentProxy \"http://***@127.0.0.1:3128\": the administrator's "
		  "policy sends connections directly (" ADMIN "); not granted" },
	};
#undef PARENT

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct run r;

		apply(&r, rows[i].admin, rows[i].caller);
		if (rows[i].eff) {
			assert_int_not_equal(r.eff->parent.scheme, PARENT_NONE);
			assert_string_equal(r.eff->parent.shown, rows[i].eff);
			assert_string_equal(r.eff->parent.host, r.admin->parent.host);
			if (r.admin->parent.pass)
				assert_string_equal(r.eff->parent.pass, r.admin->parent.pass);
		} else {
			assert_int_equal(r.eff->parent.scheme, PARENT_NONE);
		}
		want_cut(&r, "bpfbox.network.parentProxy", rows[i].cut);
		assert_int_equal(r.cuts.n, rows[i].cut ? 1 : 0);
		for (size_t k = 0; k < r.cuts.n; k++)
			assert_null(strstr(r.cuts.items[k].line, "hunter2"));
		done(&r);
	}
}

static void test_flag_rows(void **state)
{
	static const char *const keys[] = { "filesystem.allowGitConfig", "network.allowLocalBinding",
					    "network.allowAllUnixSockets", "allowNestedUserNamespaces" };

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (int a = 0; a < 2; a++) {
			for (int c = 0; c < 2; c++) {
				char *ab = NULL, *cb = NULL, *line = NULL;
				struct run r;

				flag_body(&ab, keys[k], a);
				flag_body(&cb, keys[k], c);
				apply(&r, ab, cb);
				if (flag_value(r.eff, keys[k]) != (a && c))
					fail_msg("%s: admin %d caller %d: got %d", keys[k], a, c,
						 flag_value(r.eff, keys[k]));
				/* Only a grant of the caller the administrator lacks is a cut. */
				if (c && !a)
					assert_true(asprintf(&line, CALLER ": %s true: not allowed by "
							     "the administrator's policy (" ADMIN
							     "); not granted", keys[k]) > 0);
				want_cut(&r, keys[k], line);
				assert_int_equal(r.cuts.n, c && !a);
				free(line);
				free(ab);
				free(cb);
				done(&r);
			}
		}
	}
}

/* allowGitConfig false in either layer keeps .git/config in the mandatory set. */
static void test_git_config_mandatory(void **state)
{
	struct fs_decision d;
	struct run r;

	apply(&r, NO_NET ", \"filesystem\": {\"denyRead\": [], \"allowWrite\": [\"/w\"], "
	      "\"denyWrite\": []}", NO_NET ", \"filesystem\": {\"denyRead\": [], \"allowWrite\": "
	      "[\"/w\"], \"denyWrite\": [], \"allowGitConfig\": true}");
	policy_decide_write(r.eff, "/w/.git/config", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "mandatory:.git/config");
	done(&r);
}

/* ---- network ---- */

struct host_row {
	const char *admin_net, *caller_net;
	const char *host;
	unsigned port;
	enum net_verdict v;
	const char *rule, *reason;
};

#define NET(al, dn) "{\"allowedDomains\": [" al "], \"deniedDomains\": [" dn "]}"

static void test_domain_rows(void **state)
{
	static const struct host_row rows[] = {
		/* Both allow. */
		{ NET("\"github.com\"", ""), NET("\"github.com\"", ""), "github.com", 443, NET_ALLOW,
		  "allowedDomains:github.com", NULL },
		/* Only the caller allows. */
		{ NET("\"github.com\"", ""), NET("\"example.com\"", ""), "example.com", 443,
		  NET_DENY_NOT_ALLOWED, "ceiling:default:network", NULL },
		/* Only the administrator allows: the caller narrowed it. */
		{ NET("\"github.com\", \"example.com\"", ""), NET("\"github.com\"", ""), "example.com",
		  443, NET_DENY_NOT_ALLOWED, "default:network", NULL },
		/* Wildcard in one, names in the other: the intersection. */
		{ NET("\"*.github.com\"", ""), NET("\"api.github.com\"", ""), "api.github.com", 443,
		  NET_ALLOW, "allowedDomains:api.github.com", NULL },
		{ NET("\"api.github.com\"", ""), NET("\"*.github.com\"", ""), "api.github.com", 443,
		  NET_ALLOW, "allowedDomains:*.github.com", NULL },
		{ NET("\"api.github.com\"", ""), NET("\"*.github.com\"", ""), "raw.github.com", 443,
		  NET_DENY_NOT_ALLOWED, "ceiling:default:network", NULL },
		/* A wildcard never matches its own suffix, in either layer. */
		{ NET("\"*.github.com\"", ""), NET("\"github.com\"", ""), "github.com", 443,
		  NET_DENY_NOT_ALLOWED, "ceiling:default:network", NULL },
		/* Ports: the tighter one. */
		{ NET("\"github.com:443\"", ""), NET("\"github.com\"", ""), "github.com", 22,
		  NET_DENY_NOT_ALLOWED, "ceiling:default:network", NULL },
		{ NET("\"github.com:443\"", ""), NET("\"github.com\"", ""), "github.com", 443,
		  NET_ALLOW, "allowedDomains:github.com", NULL },
		/* deniedDomains united: the administrator's deny wins, with its reason... */
		{ "{\"allowedDomains\": [\"*.github.com\"], \"deniedDomains\": [\"gist.github.com\"], "
		  "\"deniedDomainReasons\": {\"gist.github.com\": \"no gists\"}}",
		  NET("\"*.github.com\"", ""), "gist.github.com", 443, NET_DENY_DENIED,
		  "ceiling:deniedDomains:gist.github.com", "no gists" },
		/* ...and the caller's own deny holds too. */
		{ NET("\"*.github.com\"", ""), "{\"allowedDomains\": [\"*.github.com\"], "
		  "\"deniedDomains\": [\"raw.github.com\"], \"deniedDomainReasons\": "
		  "{\"raw.github.com\": \"mine\"}}", "raw.github.com", 443, NET_DENY_DENIED,
		  "deniedDomains:raw.github.com", "mine" },
		/* Both deny: the administrator's reason is the one shown. */
		{ "{\"allowedDomains\": [], \"deniedDomains\": [\"*:22\"], \"deniedDomainReasons\": "
		  "{\"*:22\": \"admin says no ssh\"}}", "{\"allowedDomains\": [\"github.com\"], "
		  "\"deniedDomains\": [\"github.com:22\"], \"deniedDomainReasons\": "
		  "{\"github.com:22\": \"caller says no ssh\"}}", "github.com", 22, NET_DENY_DENIED,
		  "ceiling:deniedDomains:*:22", "admin says no ssh" },
		/* Addresses. */
		{ NET("\"127.0.0.1:8080\"", ""), NET("\"127.1:8080\"", ""), "127.0.0.1", 8080,
		  NET_ALLOW, "allowedDomains:127.0.0.1:8080", NULL },
		{ NET("\"*.example.com\"", ""), NET("\"10.0.0.1\"", ""), "10.0.0.1", 443,
		  NET_DENY_NOT_ALLOWED, "ceiling:default:network", NULL },
		/* Malformed first, in any case. */
		{ NET("\"github.com\"", ""), NET("\"github.com\"", ""), "git hub.com", 443,
		  NET_DENY_MALFORMED, "malformed", NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct host_row *row = &rows[i];
		char *a = NULL, *c = NULL;
		const char *rule, *reason;
		enum net_verdict v;
		struct run r;

		assert_true(asprintf(&a, NO_FS ", \"network\": %s", row->admin_net) > 0);
		assert_true(asprintf(&c, NO_FS ", \"network\": %s", row->caller_net) > 0);
		apply(&r, a, c);
		v = policy_decide_host(r.eff, row->host, row->port, &rule, &reason);
		if (v != row->v || strcmp(rule, row->rule))
			fail_msg("row %zu: %s:%u: got %s by %s, want %s by %s", i, row->host,
				 row->port, net_verdict_name(v), rule, net_verdict_name(row->v),
				 row->rule);
		if (row->reason && (!reason || strcmp(reason, row->reason)))
			fail_msg("row %zu: reason %s, want %s", i, reason ? reason : "(none)",
				 row->reason);
		free(a);
		free(c);
		done(&r);
	}
}

/*
 * The resolver and /etc/hosts learning decide names: under a ceiling a name
 * the administrator does not allow is never asked upstream, whatever zone
 * the caller allows (a caller's *.zone would be a tunnel).
 */
static void test_name_rows(void **state)
{
	static const struct {
		const char *admin_net, *caller_net, *name;
		enum net_verdict v;
		const char *rule;
	} rows[] = {
		{ NET("\"github.com\"", ""), NET("\"*.exfil.example\"", ""), "data.exfil.example",
		  NET_DENY_NOT_ALLOWED, "ceiling:default:network" },
		{ NET("", ""), NET("\"github.com\"", ""), "github.com", NET_DENY_NOT_ALLOWED,
		  "ceiling:default:network" },
		{ NET("\"*.github.com\"", ""), NET("\"api.github.com\"", ""), "API.github.com.", NET_ALLOW,
		  "allowedDomains:api.github.com" },
		{ NET("\"github.com:443\"", ""), NET("\"github.com\"", ""), "github.com", NET_ALLOW,
		  "allowedDomains:github.com" },
		{ NET("\"github.com\"", ""), NET("\"github.com:22\"", ""), "github.com", NET_ALLOW,
		  "allowedDomains:github.com:22" },
		{ NET("\"*.github.com\"", "\"gist.github.com\""), NET("\"*.github.com\"", ""),
		  "gist.github.com", NET_DENY_DENIED, "ceiling:deniedDomains:gist.github.com" },
		{ NET("\"github.com\"", ""), NET("\"github.com\"", ""), "10.0.0.1", NET_DENY_MALFORMED,
		  "malformed" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *a = NULL, *c = NULL;
		const char *rule;
		enum net_verdict v;
		struct run r;

		assert_true(asprintf(&a, NO_FS ", \"network\": %s", rows[i].admin_net) > 0);
		assert_true(asprintf(&c, NO_FS ", \"network\": %s", rows[i].caller_net) > 0);
		apply(&r, a, c);
		v = policy_decide_name(r.eff, rows[i].name, &rule, NULL);
		if (v != rows[i].v || strcmp(rule, rows[i].rule))
			fail_msg("row %zu: %s: got %s by %s, want %s by %s", i, rows[i].name, net_verdict_name(v),
				 rule, net_verdict_name(rows[i].v), rows[i].rule);
		free(a);
		free(c);
		done(&r);
	}
}

struct pattern_row {
	const char *a, *b, *both;	/* both NULL: nothing matches both */
	bool a_in_b;
};

static void test_pattern_intersection(void **state)
{
	static const struct pattern_row rows[] = {
		{ "github.com", "github.com", "github.com", true },
		{ "github.com", "example.com", NULL, false },
		{ "api.github.com", "*.github.com", "api.github.com", true },
		{ "*.github.com", "api.github.com", "api.github.com", false },
		{ "github.com", "*.github.com", NULL, false },
		{ "*.a.github.com", "*.github.com", "*.a.github.com", true },
		{ "*.github.com", "*.a.github.com", "*.a.github.com", false },
		{ "*.github.com", "*.github.com", "*.github.com", true },
		{ "*.github.com", "*.gitlab.com", NULL, false },
		{ "github.com", "github.com:443", "github.com:443", false },
		{ "github.com:443", "github.com", "github.com:443", true },
		{ "github.com:443", "github.com:22", NULL, false },
		{ "*.github.com", "*:22", "*.github.com:22", false },
		{ "github.com", "*", "github.com", true },
		{ "10.0.0.1", "*", "10.0.0.1", true },
		{ "10.0.0.1", "10.0.0.1:80", "10.0.0.1:80", false },
		{ "[::1]", "[0::1]", "[::1]", true },
		{ "localhost", "*.localhost.com", NULL, false },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct domain_pattern a, b, x;
		const char *why;
		bool any;

		assert_int_equal(domain_pattern_parse(rows[i].a, true, &a, &why), 0);
		assert_int_equal(domain_pattern_parse(rows[i].b, true, &b, &why), 0);
		any = domain_pattern_intersect(&a, &b, &x);
		if (any != !!rows[i].both || (any && strcmp(x.text, rows[i].both)))
			fail_msg("%s & %s: got %s, want %s", rows[i].a, rows[i].b,
				 any ? x.text : "(none)", rows[i].both ? rows[i].both : "(none)");
		/* Symmetric. */
		any = domain_pattern_intersect(&b, &a, &x);
		assert_int_equal(any, !!rows[i].both);
		if (any)
			assert_string_equal(x.text, rows[i].both);
		if (domain_pattern_covers(&b, &a) != rows[i].a_in_b)
			fail_msg("%s in %s: want %d", rows[i].a, rows[i].b, rows[i].a_in_b);
	}
}

static void test_resolved_addresses_united(void **state)
{
	unsigned char meta[4] = { 169, 254, 169, 254 }, ten[4] = { 10, 1, 2, 3 },
		      other[4] = { 192, 0, 2, 1 };
	struct run r;

	apply(&r, NO_FS ", \"network\": {\"allowedDomains\": [], \"deniedDomains\": [], "
	      "\"deniedResolvedAddresses\": [\"169.254.169.254\", \"10.0.0.0/8\"]}",
	      NO_FS ", \"network\": {\"allowedDomains\": [], \"deniedDomains\": [], "
	      "\"deniedResolvedAddresses\": [\"10.0.0.0/8\", \"fd00:ec2::/32\"]}");
	assert_int_equal(r.eff->n_denied_addrs, 3);
	assert_true(policy_addr_denied(r.eff, AF_INET, meta));
	assert_true(policy_addr_denied(r.eff, AF_INET, ten));
	assert_false(policy_addr_denied(r.eff, AF_INET, other));
	assert_int_equal(r.cuts.n, 0);
	done(&r);
}

struct sock_row {
	const char *admin, *caller;	/* the network objects' socket keys */
	bool all;
	const char *effective;		/* the effective list, joined by ',' */
	const char *cut_path, *cut_line;
};

#define SOCK_NET(x) "{\"allowedDomains\": [], \"deniedDomains\": []" x "}"

static void test_unix_socket_rows(void **state)
{
	static const struct sock_row rows[] = {
		{ "", "", false, "", NULL, NULL },
		{ ", \"allowUnixSockets\": [\"/run/a.sock\", \"@x\"]",
		  ", \"allowUnixSockets\": [\"/run/a.sock\", \"/run/b.sock\", \"@x\"]",
		  false, "/run/a.sock,@x", "network.allowUnixSockets[1]",
		  CALLER ": network.allowUnixSockets[1] \"/run/b.sock\": outside the administrator's "
		  "allowUnixSockets (" ADMIN "); not granted" },
		{ ", \"allowUnixSockets\": [\"/run/a.sock\"]", ", \"allowUnixSockets\": [\"@y\"]", false,
		  "", "network.allowUnixSockets[0]", CALLER ": network.allowUnixSockets[0] \"@y\": "
		  "outside the administrator's allowUnixSockets (" ADMIN "); not granted" },
		/* The administrator allows all: the caller's list. */
		{ ", \"allowAllUnixSockets\": true", ", \"allowUnixSockets\": [\"/run/b.sock\"]",
		  false, "/run/b.sock", NULL, NULL },
		/* The caller asks for all: the administrator's list. */
		{ ", \"allowUnixSockets\": [\"/run/a.sock\"]", ", \"allowAllUnixSockets\": true",
		  false, "/run/a.sock", "network.allowAllUnixSockets",
		  CALLER ": network.allowAllUnixSockets true: not allowed by the administrator's "
		  "policy (" ADMIN "); granted only for the administrator's allowUnixSockets" },
		{ ", \"allowAllUnixSockets\": true", ", \"allowAllUnixSockets\": true", true, "",
		  NULL, NULL },
		/* The caller narrowed it to nothing. */
		{ ", \"allowUnixSockets\": [\"/run/a.sock\"]", "", false, "", NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *a = NULL, *c = NULL, joined[256] = "";
		struct run r;

		assert_true(asprintf(&a, NO_FS ", \"network\": " SOCK_NET("%s"), rows[i].admin) > 0);
		assert_true(asprintf(&c, NO_FS ", \"network\": " SOCK_NET("%s"), rows[i].caller) > 0);
		apply(&r, a, c);
		for (size_t k = 0; k < r.eff->n_allow_unix_sockets; k++) {
			if (k)
				strcat(joined, ",");
			strcat(joined, r.eff->allow_unix_sockets[k]);
		}
		if (strcmp(joined, rows[i].effective) || r.eff->allow_all_unix_sockets != rows[i].all)
			fail_msg("row %zu: got [%s] all %d, want [%s] all %d", i, joined,
				 r.eff->allow_all_unix_sockets, rows[i].effective, rows[i].all);
		if (rows[i].cut_path)
			want_cut(&r, rows[i].cut_path, rows[i].cut_line);
		assert_int_equal(r.cuts.n, rows[i].cut_path ? 1 : 0);
		free(a);
		free(c);
		done(&r);
	}
}

struct port_row {
	int admin, caller, effective;
	const char *line;
};

static void test_proxy_port_rows(void **state)
{
	static const struct port_row rows[] = {
		{ 0, 0, 0, NULL },
		/* The administrator's external proxy stays. */
		{ 3128, 0, 3128, NULL },
		{ 3128, 3128, 3128, NULL },
		/* The caller may not route around bpfbox's proxy... */
		{ 0, 3128, 0, CALLER ": network.httpProxyPort 3128: the administrator's policy "
		  "filters this protocol in bpfbox's proxy (" ADMIN "); not granted" },
		/* ...nor around the administrator's. */
		{ 8080, 3128, 8080, CALLER ": network.httpProxyPort 3128: the administrator's "
		  "policy uses port 8080 (" ADMIN "); not granted" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *a = NULL, *c = NULL, as[64] = "", cs[64] = "";
		struct run r;

		if (rows[i].admin)
			snprintf(as, sizeof(as), ", \"httpProxyPort\": %d, \"socksProxyPort\": %d",
				 rows[i].admin, rows[i].admin);
		if (rows[i].caller)
			snprintf(cs, sizeof(cs), ", \"httpProxyPort\": %d", rows[i].caller);
		assert_true(asprintf(&a, NO_FS ", \"network\": " SOCK_NET("%s"), as) > 0);
		assert_true(asprintf(&c, NO_FS ", \"network\": " SOCK_NET("%s"), cs) > 0);
		apply(&r, a, c);
		assert_int_equal(r.eff->http_proxy_port, rows[i].effective);
		assert_int_equal(r.eff->socks_proxy_port, rows[i].admin);
		want_cut(&r, "network.httpProxyPort", rows[i].line);
		assert_int_equal(r.cuts.n, rows[i].line ? 1 : 0);
		free(a);
		free(c);
		done(&r);
	}
}

/* ---- bpfbox limits, mode, environment ---- */

struct limit_row {
	const char *admin, *caller;	/* bpfbox.limits objects */
	long long pids, memory;
	int cpu;
	const char *path, *line;
};

static void test_limit_rows(void **state)
{
	static const struct limit_row rows[] = {
		{ "{}", "{}", 0, 0, 0, NULL, NULL },
		/* Only one sets a limit: that one. */
		{ "{\"pids\": 100}", "{}", 100, 0, 0, NULL, NULL },
		{ "{}", "{\"memory\": \"1G\"}", 0, 1LL << 30, 0, NULL, NULL },
		/* Both: the smaller; a larger one of the caller's is a cut. */
		{ "{\"pids\": 100}", "{\"pids\": 50}", 50, 0, 0, NULL, NULL },
		{ "{\"pids\": 100}", "{\"pids\": 500}", 100, 0, 0, "bpfbox.limits.pids",
		  CALLER ": bpfbox.limits.pids 500: above the administrator's limit (" ADMIN
		  "); limited to 100" },
		{ "{\"memory\": \"4G\"}", "{\"memory\": \"8G\"}", 0, 4LL << 30, 0,
		  "bpfbox.limits.memory", CALLER ": bpfbox.limits.memory 8G: above the "
		  "administrator's limit (" ADMIN "); limited to 4G" },
		{ "{\"memory\": \"512M\"}", "{\"memory\": 1073741825}", 0, 512LL << 20, 0,
		  "bpfbox.limits.memory", CALLER ": bpfbox.limits.memory 1073741825: above the "
		  "administrator's limit (" ADMIN "); limited to 512M" },
		{ "{\"cpu\": \"100%\"}", "{\"cpu\": \"200%\"}", 0, 0, 100, "bpfbox.limits.cpu",
		  CALLER ": bpfbox.limits.cpu 200%: above the administrator's limit (" ADMIN
		  "); limited to 100%" },
		{ "{\"cpu\": 300}", "{\"cpu\": \"50%\"}", 0, 0, 50, NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *a = NULL, *c = NULL;
		struct run r;

		assert_true(asprintf(&a, BASE ", \"bpfbox\": {\"limits\": %s}", rows[i].admin) > 0);
		assert_true(asprintf(&c, BASE ", \"bpfbox\": {\"limits\": %s}", rows[i].caller) > 0);
		apply(&r, a, c);
		assert_int_equal(r.eff->limit_pids, rows[i].pids);
		assert_int_equal(r.eff->limit_memory_bytes, rows[i].memory);
		assert_int_equal(r.eff->limit_cpu_percent, rows[i].cpu);
		if (rows[i].path)
			want_cut(&r, rows[i].path, rows[i].line);
		assert_int_equal(r.cuts.n, rows[i].path ? 1 : 0);
		free(a);
		free(c);
		done(&r);
	}
}

static void test_mode(void **state)
{
	static const char *const modes[] = { "enforce", "audit" };

	for (int a = 0; a < 2; a++)
		for (int c = 0; c < 2; c++) {
			char *ab = NULL, *cb = NULL;
			struct run r;

			assert_true(asprintf(&ab, BASE ", \"bpfbox\": {\"mode\": \"%s\"}", modes[a]) > 0);
			assert_true(asprintf(&cb, BASE ", \"bpfbox\": {\"mode\": \"%s\"}", modes[c]) > 0);
			apply(&r, ab, cb);
			/* The whole policy audits only when both audit: the caller cannot switch enforcement off. */
			assert_int_equal(r.eff->audit, a && c);
			/* The caller's audit under an enforcing administrator covers its own narrowing only. */
			assert_int_equal(r.eff->audit_own, c && !a);
			assert_int_equal(r.eff->ceiling_audit, a);
			/* Nothing of the caller's is taken away: the mode is never a cut. */
			want_cut(&r, "bpfbox.mode", NULL);
			assert_int_equal(r.cuts.n, 0);
			free(ab);
			free(cb);
			done(&r);
		}
}

/*
 * How --audit and the modes compose into what the kernel audits: for every
 * administrator mode x caller mode x --audit, under the ceiling; the
 * administrator's policy as it is for a caller without a policy of its own;
 * and root's own run.
 */
static void test_audit_scope(void **state)
{
	static const char *const modes[] = { "enforce", "audit" };
	/* [admin][caller][--audit] */
	static const enum audit_scope bound[2][2][2] = {
		{ { AUDIT_NONE, AUDIT_CALLER }, { AUDIT_CALLER, AUDIT_CALLER } },
		{ { AUDIT_NONE, AUDIT_ALL }, { AUDIT_ALL, AUDIT_ALL } },
	};

	for (int a = 0; a < 2; a++) {
		struct policy *admin;
		char *ab = NULL;

		assert_true(asprintf(&ab, BASE ", \"bpfbox\": {\"mode\": \"%s\"}", modes[a]) > 0);
		admin = load(ADMIN, ab);
		for (int c = 0; c < 2; c++) {
			char *cb = NULL;
			struct run r;

			assert_true(asprintf(&cb, BASE ", \"bpfbox\": {\"mode\": \"%s\"}", modes[c]) > 0);
			apply(&r, ab, cb);
			for (int cli = 0; cli < 2; cli++) {
				enum audit_scope s = policy_audit_scope(r.eff, true, cli);

				if (s != bound[a][c][cli])
					fail_msg("administrator %s, caller %s, --audit %d: scope %s, want %s", modes[a],
						 modes[c], cli, audit_scope_name(s), audit_scope_name(bound[a][c][cli]));
			}
			free(cb);
			done(&r);
		}
		/* No policy of the caller's: an enforcing administrator's refusals stay enforced under --audit. */
		assert_int_equal(policy_audit_scope(admin, true, false), a ? AUDIT_ALL : AUDIT_NONE);
		assert_int_equal(policy_audit_scope(admin, true, true), a ? AUDIT_ALL : AUDIT_CALLER);
		/* Root's own run: the policy is its own to audit. */
		assert_int_equal(policy_audit_scope(admin, false, false), a ? AUDIT_ALL : AUDIT_NONE);
		assert_int_equal(policy_audit_scope(admin, false, true), AUDIT_ALL);
		policy_free(admin);
		free(ab);
	}
	assert_string_equal(audit_scope_name(AUDIT_CALLER), "caller");
	assert_string_equal(audit_scope_name(AUDIT_ALL), "all");
}

#define ENV_DENY(n) "\"credentials\": {\"envVars\": [{\"name\": \"" n "\", \"mode\": \"deny\"}]}"

static void test_env(void **state)
{
	struct run r;

	/* Denies united. */
	apply(&r, BASE ", " ENV_DENY("AWS_SECRET"), BASE ", " ENV_DENY("GH_TOKEN"));
	assert_true(policy_env_denied(r.eff, "AWS_SECRET"));
	assert_true(policy_env_denied(r.eff, "GH_TOKEN"));
	assert_false(policy_env_denied(r.eff, "PATH"));
	assert_true(policy_env_allowed(r.eff, "PATH"));
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* Only the administrator lists: its list. */
	apply(&r, BASE ", \"bpfbox\": {\"env\": {\"allow\": [\"PATH\", \"LC_*\"]}}", BASE);
	assert_true(r.eff->has_env_allow);
	assert_true(policy_env_allowed(r.eff, "LC_ALL"));
	assert_false(policy_env_allowed(r.eff, "HOME"));
	done(&r);

	/* Only the caller lists: its list. */
	apply(&r, BASE, BASE ", \"bpfbox\": {\"env\": {\"allow\": [\"PATH\"]}}");
	assert_true(policy_env_allowed(r.eff, "PATH"));
	assert_false(policy_env_allowed(r.eff, "HOME"));
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* Both: a variable only if both lists allow it. */
	apply(&r, BASE ", \"bpfbox\": {\"env\": {\"allow\": [\"PATH\", \"LC_*\", \"AWS_*\"]}}, "
	      ENV_DENY("AWS_SECRET"),
	      BASE ", \"bpfbox\": {\"env\": {\"allow\": [\"LC_ALL\", \"HOME\", \"AWS_*\", "
	      "\"AWS_SECRET\", \"L*\", \"PATH\"]}}");
	assert_true(policy_env_allowed(r.eff, "LC_ALL"));
	/* "L*" of the caller and "LC_*" of the administrator: LC_* both allow. */
	assert_true(policy_env_allowed(r.eff, "LC_CTYPE"));
	assert_false(policy_env_allowed(r.eff, "HOME"));
	assert_true(policy_env_allowed(r.eff, "PATH"));
	assert_true(policy_env_allowed(r.eff, "AWS_REGION"));
	assert_true(policy_env_denied(r.eff, "AWS_SECRET"));
	assert_false(policy_env_allowed(r.eff, "LANG"));
	want_cut(&r, "bpfbox.env.allow[0]", NULL);
	want_cut(&r, "bpfbox.env.allow[1]", CALLER ": bpfbox.env.allow[1] \"HOME\": outside the "
		 "administrator's bpfbox.env.allow (" ADMIN "); not granted");
	want_cut(&r, "bpfbox.env.allow[2]", CALLER ": bpfbox.env.allow[2] \"AWS_*\": partly "
		 "denied by the administrator's credentials.envVars (" ADMIN "); not granted for "
		 "AWS_SECRET");
	want_cut(&r, "bpfbox.env.allow[3]", CALLER ": bpfbox.env.allow[3] \"AWS_SECRET\": denied "
		 "by the administrator's credentials.envVars (" ADMIN "); not granted");
	want_cut(&r, "bpfbox.env.allow[4]", CALLER ": bpfbox.env.allow[4] \"L*\": partly outside "
		 "the administrator's bpfbox.env.allow (" ADMIN "); granted only for LC_*");
	want_cut(&r, "bpfbox.env.allow[5]", NULL);
	assert_int_equal(r.cuts.n, 4);
	done(&r);
}

/* What concerns only the caller is the caller's; names and digests of both are kept. */
static void test_caller_own_fields(void **state)
{
	struct run r;

	apply(&r, BASE ", \"ignoreViolations\": {\"*\": [\"admin\"]}, \"git\": "
	      "{\"safeDirectories\": [\"/a\"]}, \"bpfbox\": {\"log\": {\"format\": \"json\"}}",
	      BASE ", \"ignoreViolations\": {\"git\": [\"x\", \"y\"]}, \"git\": "
	      "{\"safeDirectories\": [\"/c\"]}, \"bpfbox\": {\"log\": {\"file\": \"/tmp/l\"}}");
	assert_int_equal(r.eff->n_ignore, 1);
	assert_string_equal(r.eff->ignore[0].command, "git");
	assert_int_equal(r.eff->ignore[0].n_lines, 2);
	assert_int_equal(r.eff->n_git_safe_dirs, 1);
	assert_string_equal(r.eff->git_safe_dirs[0], "/c");
	assert_string_equal(r.eff->log_file, "/tmp/l");
	assert_int_equal(r.eff->log_format, POLICY_LOG_TEXT);
	assert_string_equal(r.eff->file, CALLER);
	assert_string_equal(r.eff->ceiling_file, ADMIN);
	assert_string_equal(r.eff->digest, r.caller->digest);
	assert_string_equal(r.eff->ceiling_digest, r.admin->digest);
	assert_string_equal(r.eff->home, "/nonexistent-bpfbox/h");
	assert_int_equal(r.cuts.n, 0);
	done(&r);
}

/* ---- the diagnostics, word for word ---- */

struct diag_row {
	const char *admin, *caller;	/* full bodies */
	const char *path, *line;
};

#define FSB(x) NO_NET ", \"filesystem\": " x
#define NETB(x) NO_FS ", \"network\": " x

static void test_diagnostic_rows(void **state)
{
	static const struct diag_row rows[] = {
		/* The issue's own example. */
		{ FSB(FS("", "", "\"/work\"", "")), FSB(FS("", "", "\"/work\", \"/srv/shared\"", "")),
		  "filesystem.allowWrite[1]", CALLER ": filesystem.allowWrite[1] \"/srv/shared\": "
		  "outside the administrator's allowWrite (" ADMIN "); not granted" },
		/* Written differently from what it means: both shown. */
		{ FSB(FS("", "", "\"/work\"", "")), FSB(FS("", "", "\"out/**\"", "")),
		  "filesystem.allowWrite[0]", CALLER ": filesystem.allowWrite[0] \"out/**\" "
		  "(/nonexistent-bpfbox/w/out): outside the administrator's allowWrite (" ADMIN
		  "); not granted" },
		{ FSB(FS("", "", "\"/srv/a\", \"/srv/b\"", "")), FSB(FS("", "", "\"/srv\"", "")),
		  "filesystem.allowWrite[0]", CALLER ": filesystem.allowWrite[0] \"/srv\": partly "
		  "outside the administrator's allowWrite (" ADMIN "); granted only at /srv/a, "
		  "/srv/b" },
		/* An allow below that the administrator itself denies is not offered. */
		{ FSB(FS("", "", "\"/srv/a\", \"/srv/b\"", "\"/srv/b\"")),
		  FSB(FS("", "", "\"/srv\"", "")), "filesystem.allowWrite[0]",
		  CALLER ": filesystem.allowWrite[0] \"/srv\": partly outside the administrator's "
		  "allowWrite (" ADMIN "); granted only at /srv/a" },
		{ FSB(FS("", "", "\"/work\"", "\"/work/locked\"")),
		  FSB(FS("", "", "\"/work/locked/x\"", "")), "filesystem.allowWrite[0]",
		  CALLER ": filesystem.allowWrite[0] \"/work/locked/x\": inside the administrator's "
		  "denyWrite \"/work/locked\" (" ADMIN "); not granted" },
		{ FSB(FS("", "", "\"/work\"", "\"/work/locked\", \"/work/.env\"")),
		  FSB(FS("", "", "\"/work\"", "")), "filesystem.allowWrite[0]",
		  CALLER ": filesystem.allowWrite[0] \"/work\": partly inside the administrator's "
		  "denyWrite (" ADMIN "); not granted at /work/locked, /work/.env" },
		/* What the caller denies itself is not taken away by the ceiling. */
		{ FSB(FS("", "", "\"/work\"", "\"/work/locked\"")),
		  FSB(FS("", "", "\"/work\"", "\"/work/locked\"")), "filesystem.allowWrite[0]",
		  NULL },
		{ FSB(FS("", "", "\"/work\"", "\"/work/a\", \"/work/b\"")),
		  FSB(FS("", "", "\"/work\"", "\"/work/a\"")), "filesystem.allowWrite[0]",
		  CALLER ": filesystem.allowWrite[0] \"/work\": partly inside the administrator's "
		  "denyWrite (" ADMIN "); not granted at /work/b" },
		{ FSB(FS("", "", "\"/srv/a\", \"/srv/b\"", "")),
		  FSB(FS("", "", "\"/srv\"", "\"/srv/b\"")), "filesystem.allowWrite[0]",
		  CALLER ": filesystem.allowWrite[0] \"/srv\": partly outside the administrator's "
		  "allowWrite (" ADMIN "); granted only at /srv/a" },
		/* Inside both: nothing to say. */
		{ FSB(FS("", "", "\"/work\"", "")), FSB(FS("", "", "\"/work/sub\"", "")),
		  "filesystem.allowWrite[0]", NULL },
		/* Reads. */
		{ FSB(FS("\"/home/u/.ssh\"", "", "", "")),
		  FSB(FS("\"/home\"", "\"/home/u/.ssh/config\"", "", "")),
		  "filesystem.allowRead[0]", CALLER ": filesystem.allowRead[0] "
		  "\"/home/u/.ssh/config\": inside the administrator's denyRead \"/home/u/.ssh\" ("
		  ADMIN "); not granted" },
		{ FSB(FS("\"/srv\"", "\"/srv/pub\"", "", "")), FSB(FS("", "\"/srv\"", "", "")),
		  "filesystem.allowRead[0]", CALLER ": filesystem.allowRead[0] \"/srv\": partly "
		  "inside the administrator's denyRead \"/srv\" (" ADMIN "); granted only at "
		  "/srv/pub" },
		{ FSB(FS("\"/srv/data\", \"/srv/keys\"", "", "", "")), FSB(FS("", "\"/srv\"", "", "")),
		  "filesystem.allowRead[0]", CALLER ": filesystem.allowRead[0] \"/srv\": partly "
		  "inside the administrator's denyRead (" ADMIN "); not granted at /srv/data, "
		  "/srv/keys" },
		/* A denyRead the administrator reopens at the same path is no cut. */
		{ FSB(FS("\"/srv/data\"", "\"/srv/data\"", "", "")), FSB(FS("", "\"/srv\"", "", "")),
		  "filesystem.allowRead[0]", NULL },
		/* Domains. */
		{ NETB(NET("\"github.com\"", "")), NETB(NET("\"github.com\", \"example.com\"", "")),
		  "network.allowedDomains[1]", CALLER ": network.allowedDomains[1] \"example.com\": "
		  "outside the administrator's allowedDomains (" ADMIN "); not granted" },
		{ NETB(NET("\"api.github.com:443\", \"raw.github.com\"", "")),
		  NETB(NET("\"*.github.com\"", "")), "network.allowedDomains[0]",
		  CALLER ": network.allowedDomains[0] \"*.github.com\": partly outside the "
		  "administrator's allowedDomains (" ADMIN "); granted only for "
		  "api.github.com:443, raw.github.com" },
		{ NETB(NET("\"*.github.com\"", "\"gist.github.com\"")),
		  NETB(NET("\"gist.github.com\"", "")), "network.allowedDomains[0]",
		  CALLER ": network.allowedDomains[0] \"gist.github.com\": inside the "
		  "administrator's deniedDomains \"gist.github.com\" (" ADMIN "); not granted" },
		{ NETB(NET("\"*.github.com\"", "\"gist.github.com:80\", \"*:22\", \"*:25\"")),
		  NETB(NET("\"*.github.com:443\"", "")), "network.allowedDomains[0]", NULL },
		{ NETB(NET("\"*.github.com\"", "\"gist.github.com\", \"*:22\"")),
		  NETB(NET("\"*.github.com\"", "")), "network.allowedDomains[0]",
		  CALLER ": network.allowedDomains[0] \"*.github.com\": partly inside the "
		  "administrator's deniedDomains (" ADMIN "); not granted for gist.github.com, "
		  "*:22" },
		{ NETB(NET("\"github.com\"", "")), NETB(NET("\"GitHub.com\"", "")),
		  "network.allowedDomains[0]", NULL },
		{ NETB(NET("\"*.github.com\"", "\"gist.github.com\", \"*:22\"")),
		  NETB(NET("\"*.github.com\"", "\"*:22\"")), "network.allowedDomains[0]",
		  CALLER ": network.allowedDomains[0] \"*.github.com\": partly inside the "
		  "administrator's deniedDomains (" ADMIN "); not granted for gist.github.com" },
		{ NETB(NET("\"example.com\"", "")), NETB(NET("\"GitHub.com\"", "")),
		  "network.allowedDomains[0]", CALLER ": network.allowedDomains[0] \"GitHub.com\" "
		  "(github.com): outside the administrator's allowedDomains (" ADMIN "); not "
		  "granted" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct run r;

		apply(&r, rows[i].admin, rows[i].caller);
		want_cut(&r, rows[i].path, rows[i].line);
		if (r.cuts.n != (rows[i].line ? 1u : 0u)) {
			dump_cuts(&r);
			fail_msg("row %zu: %zu cuts", i, r.cuts.n);
		}
		done(&r);
	}
}

/* Long lists of places are cut short, with a count. */
static void test_diagnostic_list_cap(void **state)
{
	struct run r;

	apply(&r, FSB(FS("", "", "\"/s/1\", \"/s/2\", \"/s/3\", \"/s/4\", \"/s/5\", \"/s/6\", "
			 "\"/s/7\", \"/s/8\", \"/s/9\", \"/s/10\"", "")),
	      FSB(FS("", "", "\"/s\"", "")));
	want_cut(&r, "filesystem.allowWrite[0]", CALLER ": filesystem.allowWrite[0] \"/s\": "
		 "partly outside the administrator's allowWrite (" ADMIN "); granted only at "
		 "/s/1, /s/2, /s/3, /s/4, /s/5, /s/6, /s/7, /s/8, and 2 more");
	done(&r);
}

/* Every cut, one line each, in the caller's order, printed with "bpfbox: ". */
static void test_print(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	struct run r;

	apply(&r, FSB(FS("", "", "\"/work\"", "")),
	      NO_NET ", \"filesystem\": {\"denyRead\": [], \"allowWrite\": [\"/a\", \"/work\", "
	      "\"/b\"], \"denyWrite\": [], \"allowGitConfig\": true}");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	ceiling_cuts_print(&r.cuts, f);
	fclose(f);
	assert_string_equal(buf,
		"bpfbox: " CALLER ": filesystem.allowWrite[0] \"/a\": outside the administrator's "
		"allowWrite (" ADMIN "); not granted\n"
		"bpfbox: " CALLER ": filesystem.allowWrite[2] \"/b\": outside the administrator's "
		"allowWrite (" ADMIN "); not granted\n"
		"bpfbox: " CALLER ": filesystem.allowGitConfig true: not allowed by the "
		"administrator's policy (" ADMIN "); not granted\n");
	free(buf);
	done(&r);
}

/* --strict: any cut refuses the caller; no cut, no refusal. */
static void test_strict(void **state)
{
	struct policy *admin = load(ADMIN, FSB(FS("", "", "\"/work\"", "")));
	struct policy *narrow = load(CALLER, FSB(FS("", "", "\"/work/x\"", "")));
	struct policy *wide = load(CALLER, FSB(FS("", "", "\"/srv\"", "")));
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct policy *eff = (struct policy *)1;

	assert_int_equal(policy_ceiling_apply(admin, wide, true, &eff, &cuts), -EPERM);
	assert_null(eff);
	assert_int_equal(cuts.n, 1);
	ceiling_cuts_free(&cuts);
	assert_int_equal(policy_ceiling_apply(admin, narrow, true, &eff, &cuts), 0);
	assert_non_null(eff);
	assert_int_equal(cuts.n, 0);
	policy_free(eff);
	/* Cuts already in the list from another run do not count against this one. */
	assert_int_equal(policy_ceiling_apply(admin, wide, false, &eff, &cuts), 0);
	policy_free(eff);
	assert_int_equal(policy_ceiling_apply(admin, narrow, true, &eff, &cuts), 0);
	assert_int_equal(cuts.n, 1);
	/* An effective policy cannot be a ceiling or a caller again. */
	assert_int_equal(policy_ceiling_apply(eff, narrow, false, &(struct policy *){ NULL }, &cuts),
			 -EINVAL);
	policy_free(eff);
	policy_free(admin);
	policy_free(narrow);
	policy_free(wide);
	ceiling_cuts_free(&cuts);
}

/* The administrator's policy under its own ceiling changes nothing and cuts nothing. */
static void test_self_ceiling(void **state)
{
	static const char body[] =
		"\"network\": {\"allowedDomains\": [\"*.github.com\", \"registry.npmjs.org\"], "
		"\"deniedDomains\": [\"*:22\"], \"allowUnixSockets\": [\"/run/a.sock\"], "
		"\"allowLocalBinding\": true}, "
		"\"filesystem\": {\"denyRead\": [\"~/.ssh\"], \"allowRead\": [\"~/.ssh/config\"], "
		"\"allowWrite\": [\".\"], \"denyWrite\": [\".env\"], \"allowGitConfig\": true}, "
		"\"allowNestedUserNamespaces\": true, "
		"\"bpfbox\": {\"env\": {\"allow\": [\"PATH\", \"LC_*\"]}, \"limits\": {\"pids\": 10}}";
	struct fs_decision d;
	struct run r;

	apply(&r, body, body);
	assert_int_equal(r.cuts.n, 0);
	assert_true(r.eff->allow_git_config && r.eff->allow_local_binding &&
		    r.eff->allow_nested_userns);
	assert_int_equal(r.eff->limit_pids, 10);
	policy_decide_read(r.eff, "/nonexistent-bpfbox/h/.ssh/config", &d);
	assert_true(d.allowed);
	policy_decide_read(r.eff, "/nonexistent-bpfbox/h/.ssh/id_rsa", &d);
	assert_false(d.allowed);
	policy_decide_write(r.eff, "/nonexistent-bpfbox/w/src/a.c", &d);
	assert_true(d.allowed);
	policy_decide_write(r.eff, "/nonexistent-bpfbox/w/.env", &d);
	assert_false(d.allowed);
	assert_int_equal(policy_decide_host(r.eff, "api.github.com", 443, NULL, NULL), NET_ALLOW);
	assert_int_equal(policy_decide_host(r.eff, "api.github.com", 22, NULL, NULL),
			 NET_DENY_DENIED);
	done(&r);
}

/* policy show prints both layers and the administrator's file. */
static void test_show_layers(void **state)
{
	char *text;
	struct run r;

	apply(&r, FSB(FS("\"/srv\"", "", "\"/work\"", "")), FSB(FS("", "", "\"/work\"", "")));
	text = policy_to_json(r.eff);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"layers\""));
	assert_non_null(strstr(text, "\"administrator\""));
	assert_non_null(strstr(text, "\"caller\""));
	assert_non_null(strstr(text, "\"administratorAllowedDomains\""));
	assert_non_null(strstr(text, "\"ceiling\""));
	assert_non_null(strstr(text, ADMIN));
	free(text);
	/* Without a ceiling the output keeps its shape. */
	text = policy_to_json(r.caller);
	assert_null(strstr(text, "\"layers\""));
	assert_null(strstr(text, "\"ceiling\""));
	free(text);
	done(&r);
}

/* docs/policy.md "Worked examples", line for line and row for row. */
static void test_worked_example(void **state)
{
	static const char admin_json[] =
		"{\"network\": {\"allowedDomains\": [\"*.github.com\", \"registry.npmjs.org\"], "
		"\"deniedDomains\": [\"*:22\", \"gist.github.com\"], \"deniedDomainReasons\": "
		"{\"*:22\": \"SSH is blocked on this host\"}}, "
		"\"filesystem\": {\"denyRead\": [\"~/.ssh\", \"~/.aws\", \"/srv/data\"], "
		"\"allowRead\": [\"/srv/data/public\"], \"allowWrite\": [\"~/src\", \"/srv/scratch\"], "
		"\"denyWrite\": [\"~/src/.env\"]}, "
		"\"credentials\": {\"envVars\": [{\"name\": \"AWS_SECRET_ACCESS_KEY\", \"mode\": \"deny\"}]}, "
		"\"bpfbox\": {\"limits\": {\"memory\": \"4G\", \"pids\": 1024}}}";
	static const char caller_json[] =
		"{\"network\": {\"allowedDomains\": [\"api.github.com\", \"pypi.org\"], "
		"\"deniedDomains\": []}, "
		"\"filesystem\": {\"denyRead\": [\"/home/u\"], \"allowRead\": [\"/home/u/src\", "
		"\"/home/u/.ssh/known_hosts\"], \"allowWrite\": [\".\", \"/tmp/cache\"], "
		"\"denyWrite\": []}, \"bpfbox\": {\"limits\": {\"memory\": \"8G\"}}}";
	static const char *const lines[] = {
		"bpfbox: p.json: filesystem.allowRead[1] \"/home/u/.ssh/known_hosts\": inside the "
		"administrator's denyRead \"/home/u/.ssh\" (/etc/bpfbox/policy.json); not granted\n",
		"bpfbox: p.json: filesystem.allowWrite[1] \"/tmp/cache\": outside the administrator's "
		"allowWrite (/etc/bpfbox/policy.json); not granted\n",
		"bpfbox: p.json: network.allowedDomains[0] \"api.github.com\": partly inside the "
		"administrator's deniedDomains (/etc/bpfbox/policy.json); not granted for *:22\n",
		"bpfbox: p.json: network.allowedDomains[1] \"pypi.org\": outside the administrator's "
		"allowedDomains (/etc/bpfbox/policy.json); not granted\n",
		"bpfbox: p.json: bpfbox.limits.memory 8G: above the administrator's limit "
		"(/etc/bpfbox/policy.json); limited to 4G\n",
	};
	static const struct {
		const char *path;
		bool write, allowed;
		const char *rule;
	} fs[] = {
		{ "/home/u/src/app/main.c", false, true, "allowRead:/home/u/src" },
		{ "/home/u/.ssh/known_hosts", false, false, "ceiling:denyRead:/home/u/.ssh" },
		{ "/home/u/notes.txt", false, false, "denyRead:/home/u" },
		{ "/srv/data/public/x", false, true, "default:read" },
		{ "/home/u/src/app/out.o", true, true, "allowWrite:/home/u/src/app" },
		{ "/home/u/src/.env", true, false, "ceiling:denyWrite:/home/u/src/.env" },
		{ "/tmp/cache/x", true, false, "ceiling:default:write" },
		{ "/home/u/src/app/.git/hooks/x", true, false, "mandatory:.git/hooks" },
	};
	struct policy_load_opts o = { .cwd = "/home/u/src/app", .home = "/home/u" };
	struct diag_list d = DIAG_LIST_INIT;
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct policy *admin = NULL, *caller = NULL, *eff = NULL;
	const char *rule, *reason;
	char *buf = NULL, *want = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(policy_load_buffer(ADMIN, admin_json, strlen(admin_json), &o, &admin, &d), 0);
	assert_int_equal(policy_load_buffer(CALLER, caller_json, strlen(caller_json), &o, &caller, &d),
			 0);
	assert_int_equal(policy_ceiling_apply(admin, caller, false, &eff, &cuts), 0);
	f = open_memstream(&buf, &len);
	ceiling_cuts_print(&cuts, f);
	fclose(f);
	assert_true(asprintf(&want, "%s%s%s%s%s", lines[0], lines[1], lines[2], lines[3],
			     lines[4]) > 0);
	assert_string_equal(buf, want);
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		struct fs_decision fd;

		if (fs[i].write)
			policy_decide_write(eff, fs[i].path, &fd);
		else
			policy_decide_read(eff, fs[i].path, &fd);
		if (fd.allowed != fs[i].allowed || strcmp(fd.rule_name, fs[i].rule))
			fail_msg("%s: got %d by %s", fs[i].path, fd.allowed, fd.rule_name);
	}
	assert_int_equal(policy_decide_host(eff, "api.github.com", 443, &rule, NULL), NET_ALLOW);
	assert_int_equal(policy_decide_host(eff, "api.github.com", 22, &rule, &reason),
			 NET_DENY_DENIED);
	assert_string_equal(rule, "ceiling:deniedDomains:*:22");
	assert_string_equal(reason, "SSH is blocked on this host");
	assert_int_equal(policy_decide_host(eff, "pypi.org", 443, &rule, NULL), NET_DENY_NOT_ALLOWED);
	assert_string_equal(rule, "ceiling:default:network");
	assert_true(policy_env_denied(eff, "AWS_SECRET_ACCESS_KEY"));
	assert_int_equal(eff->limit_memory_bytes, 4LL << 30);
	assert_int_equal(eff->limit_pids, 1024);
	free(buf);
	free(want);
	diag_list_free(&d);
	ceiling_cuts_free(&cuts);
	policy_free(eff);
	policy_free(caller);
	policy_free(admin);
}

/* ---- the commands: policy check|show|explain --ceiling ---- */

struct cli {
	int status;
	char *out, *err;
};

static char *slurp(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	n = ftell(f);
	s = calloc(1, n + 1);
	rewind(f);
	assert_int_equal(fread(s, 1, n, f), (size_t)n);
	return s;
}

/* cmd_policy with argv (NULL-terminated after "policy"), stdout and stderr captured. */
static struct cli cli(const char *const *args)
{
	char *argv[16] = { "policy" };
	int argc = 1, so = dup(1), se = dup(2);
	FILE *fo = tmpfile(), *fe = tmpfile();
	struct cli r;

	for (; args[argc - 1] && argc < 15; argc++)
		argv[argc] = (char *)args[argc - 1];
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	r.status = cmd_policy(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	r.out = slurp(fo);
	r.err = slurp(fe);
	fclose(fo);
	fclose(fe);
	return r;
}

static void cli_free(struct cli *r)
{
	free(r->out);
	free(r->err);
}

static void has(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("output lacks \"%s\":\n%s", needle, text);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_cmd_ceiling(void **state)
{
	char admin[64], caller[64], line[512];
	struct cli r;
	cJSON *root, *layers;

	snprintf(admin, sizeof(admin), "/tmp/bpfbox-ceiling-admin-%d.json", (int)getpid());
	snprintf(caller, sizeof(caller), "/tmp/bpfbox-ceiling-p-%d.json", (int)getpid());
	write_file(admin, "{" NO_NET ", \"filesystem\": " FS("\"/nonexistent-bpfbox/s\"", "",
							     "\"/nonexistent-bpfbox/w\"", "") "}");
	write_file(caller, "{\"network\": {\"allowedDomains\": [\"example.com\"], "
		   "\"deniedDomains\": []}, \"filesystem\": " FS("", "",
		   "\"/nonexistent-bpfbox/w\", \"/nonexistent-bpfbox/shared\"", "") "}");

	/* check: each cut on stderr, and still ok without --strict. */
	r = cli((const char *const[]){ "check", "--ceiling", admin, caller, NULL });
	assert_int_equal(r.status, 0);
	snprintf(line, sizeof(line), "bpfbox: %s: filesystem.allowWrite[1] "
		 "\"/nonexistent-bpfbox/shared\": outside the administrator's allowWrite (%s); "
		 "not granted\n", caller, admin);
	has(r.err, line);
	snprintf(line, sizeof(line), "bpfbox: %s: network.allowedDomains[0] \"example.com\": "
		 "outside the administrator's allowedDomains (%s); not granted\n", caller, admin);
	has(r.err, line);
	has(r.out, "policy ok");
	has(r.out, "under the administrator's");
	cli_free(&r);

	/* --strict: the same lines, then a refusal with exit 125. */
	r = cli((const char *const[]){ "check", "--strict", "--ceiling", admin, caller, NULL });
	assert_int_equal(r.status, BPFBOX_EXIT_SETUP);
	has(r.err, "outside the administrator's allowWrite");
	has(r.err, "takes away 2 grant(s), an error under --strict; the command was not run\n");
	assert_string_equal(r.out, "");
	cli_free(&r);

	/* Without FILE: the administrator's policy as it is. */
	r = cli((const char *const[]){ "check", "--ceiling", admin, NULL });
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	cli_free(&r);

	/* show: both layers. */
	r = cli((const char *const[]){ "show", "--ceiling=", NULL });
	assert_int_equal(r.status, 2);
	cli_free(&r);
	r = cli((const char *const[]){ "show", "--ceiling", admin, caller, NULL });
	assert_int_equal(r.status, 0);
	root = cJSON_Parse(r.out);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "ceiling"), "file")->valuestring,
			    admin);
	layers = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "filesystem"), "layers");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(layers, "caller"),
								"allowWrite")), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(layers,
				"administrator"), "denyRead")), 1);
	cJSON_Delete(root);
	cli_free(&r);

	/* explain: the decision and each layer's own. */
	r = cli((const char *const[]){ "explain", "--ceiling", admin, caller,
				       "/nonexistent-bpfbox/s/f", NULL });
	assert_int_equal(r.status, 1);
	has(r.out, "read /nonexistent-bpfbox/s/f: denied by ceiling:denyRead:/nonexistent-bpfbox/s\n");
	has(r.out, "  caller layer");
	has(r.out, "allowed by default:read\n");
	has(r.out, "  administrator layer (");
	cli_free(&r);
	r = cli((const char *const[]){ "explain", "--write", "--ceiling", admin, caller,
				       "/nonexistent-bpfbox/shared/f", NULL });
	assert_int_equal(r.status, 1);
	has(r.out, "denied by ceiling:default:write\n");
	has(r.out, "allowed by allowWrite:/nonexistent-bpfbox/shared\n");
	cli_free(&r);
	r = cli((const char *const[]){ "explain", "--write", "--ceiling", admin, caller,
				       "/nonexistent-bpfbox/w/f", NULL });
	assert_int_equal(r.status, 0);
	cli_free(&r);
	r = cli((const char *const[]){ "explain", "--ceiling", admin, caller, "example.com", NULL });
	assert_int_equal(r.status, 1);
	has(r.out, "denied by ceiling:default:network");
	cli_free(&r);
	unlink(admin);
	unlink(caller);
}

static struct policy **load_examples(size_t *n)
{
	const char *src = getenv("BPFBOX_SRCDIR");
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/h/w", .home = "/nonexistent-bpfbox/h" };
	struct policy **v = NULL;
	char dir[4096];
	struct dirent *e;
	DIR *dh;

	*n = 0;
	snprintf(dir, sizeof(dir), "%s/policy-examples", src && *src ? src : ".");
	dh = opendir(dir);
	assert_non_null(dh);
	while ((e = readdir(dh))) {
		struct diag_list d = DIAG_LIST_INIT;
		char path[8192];

		if (!strstr(e->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		v = realloc(v, (*n + 1) * sizeof(*v));
		assert_non_null(v);
		assert_int_equal(policy_load_file(path, &o, &v[*n], &d), 0);
		diag_list_free(&d);
		(*n)++;
	}
	closedir(dh);
	assert_true(*n >= 6);
	return v;
}

/* Every shipped example under itself as the ceiling: nothing is cut. */
static void test_examples_under_themselves(void **state)
{
	size_t n;
	struct policy **v = load_examples(&n);

	for (size_t i = 0; i < n; i++) {
		struct ceiling_cuts cuts = CEILING_CUTS_INIT;
		struct policy *eff = NULL;

		if (policy_ceiling_apply(v[i], v[i], true, &eff, &cuts)) {
			for (size_t k = 0; k < cuts.n; k++)
				print_message("  %s\n", cuts.items[k].line);
			fail_msg("%s cuts itself", v[i]->file);
		}
		assert_int_equal(eff->audit, v[i]->audit);
		assert_int_equal(eff->limit_memory_bytes, v[i]->limit_memory_bytes);
		assert_int_equal(eff->n_env_deny, v[i]->n_env_deny);
		policy_free(eff);
	}
	for (size_t i = 0; i < n; i++)
		policy_free(v[i]);
	free(v);
}

/*
 * The intersection as a property: for every pair of shipped examples, as
 * administrator and caller, the effective policy allows exactly what both
 * allow, for reads, writes and hosts.
 */
static void test_examples_pairwise(void **state)
{
	static const char *const paths[] = {
		"/", "/etc/passwd", "/nonexistent-bpfbox/h/.ssh/id_rsa", "/nonexistent-bpfbox/h/.aws/x",
		"/nonexistent-bpfbox/h/w/src/a.c", "/nonexistent-bpfbox/h/w/.env",
		"/nonexistent-bpfbox/h/w/.git/config", "/nonexistent-bpfbox/h/w/.git/hooks/pre-commit",
		"/nonexistent-bpfbox/h/.bashrc", "/nonexistent-bpfbox/h/.cache/x", "/tmp/x",
		"/dev/null", "/usr/bin/env", "/var/lib/x",
	};
	static const struct {
		const char *host;
		unsigned port;
	} hosts[] = {
		{ "registry.npmjs.org", 443 }, { "github.com", 443 }, { "github.com", 22 },
		{ "api.github.com", 443 }, { "pypi.org", 443 }, { "example.com", 80 },
		{ "169.254.169.254", 80 }, { "localhost", 3000 },
	};
	size_t n;
	struct policy **v = load_examples(&n);

	for (size_t a = 0; a < n; a++) {
		for (size_t c = 0; c < n; c++) {
			struct ceiling_cuts cuts = CEILING_CUTS_INIT;
			struct policy *eff = NULL;
			bool had_cuts, refused;

			assert_int_equal(policy_ceiling_apply(v[a], v[c], false, &eff, &cuts), 0);
			for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
				for (int w = 0; w < 2; w++) {
					struct fs_decision da, dc, de;

					if (w) {
						policy_decide_write(v[a], paths[i], &da);
						policy_decide_write(v[c], paths[i], &dc);
						policy_decide_write(eff, paths[i], &de);
					} else {
						policy_decide_read(v[a], paths[i], &da);
						policy_decide_read(v[c], paths[i], &dc);
						policy_decide_read(eff, paths[i], &de);
					}
					if (de.allowed != (da.allowed && dc.allowed))
						fail_msg("%s over %s: %s %s: %d, admin %d, caller %d",
							 v[a]->file, v[c]->file, w ? "write" : "read",
							 paths[i], de.allowed, da.allowed, dc.allowed);
				}
			}
			for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
				bool ha = policy_decide_host(v[a], hosts[i].host, hosts[i].port, NULL,
							     NULL) == NET_ALLOW;
				bool hc = policy_decide_host(v[c], hosts[i].host, hosts[i].port, NULL,
							     NULL) == NET_ALLOW;
				bool he = policy_decide_host(eff, hosts[i].host, hosts[i].port, NULL,
							     NULL) == NET_ALLOW;

				if (he != (ha && hc))
					fail_msg("%s over %s: %s:%u: %d, admin %d, caller %d",
						 v[a]->file, v[c]->file, hosts[i].host, hosts[i].port,
						 he, ha, hc);
			}
			/* Strict refuses exactly when something was cut. */
			policy_free(eff);
			eff = NULL;
			had_cuts = cuts.n > 0;
			ceiling_cuts_free(&cuts);
			refused = policy_ceiling_apply(v[a], v[c], true, &eff, &cuts) == -EPERM;
			assert_int_equal(refused, had_cuts);
			assert_int_equal(cuts.n > 0, had_cuts);
			policy_free(eff);
			ceiling_cuts_free(&cuts);
		}
	}
	for (size_t i = 0; i < n; i++)
		policy_free(v[i]);
	free(v);
}

/* The built-in default as either side: "built-in default" names it; nothing is lost. */
static void test_default_policy(void **state)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox/w", .home = "/nonexistent-bpfbox/h" };
	struct policy *def = NULL, *p = load(CALLER, FSB(FS("", "", "\"/srv\"", ""))), *eff = NULL;
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct fs_decision d;

	assert_int_equal(policy_default(&o, &def), 0);
	assert_int_equal(policy_ceiling_apply(def, p, false, &eff, &cuts), 0);
	want_cut(&(struct run){ .cuts = cuts }, "filesystem.allowWrite[0]",
		 CALLER ": filesystem.allowWrite[0] \"/srv\": outside the administrator's allowWrite "
		 "(built-in default); not granted");
	assert_string_equal(eff->ceiling_file, "built-in default");
	policy_decide_write(eff, "/dev/null", &d);
	assert_true(d.allowed);
	policy_free(eff);
	ceiling_cuts_free(&cuts);
	assert_int_equal(policy_ceiling_apply(p, def, false, &eff, &cuts), 0);
	assert_int_equal(cuts.n, 0);
	assert_null(eff->file);
	policy_decide_write(eff, "/srv/x", &d);
	assert_false(d.allowed);
	assert_string_equal(d.rule_name, "default:write");
	policy_free(eff);
	policy_free(def);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_rows),
		cmocka_unit_test(test_write_rows),
		cmocka_unit_test(test_layers_kept_apart),
		cmocka_unit_test(test_fs_disabled),
		cmocka_unit_test(test_flag_rows),
		cmocka_unit_test(test_transparent),
		cmocka_unit_test(test_socket_protocols),
		cmocka_unit_test(test_dns_query_types),
		cmocka_unit_test(test_git_new_repositories),
		cmocka_unit_test(test_parent_proxy),
		cmocka_unit_test(test_git_config_mandatory),
		cmocka_unit_test(test_domain_rows),
		cmocka_unit_test(test_name_rows),
		cmocka_unit_test(test_pattern_intersection),
		cmocka_unit_test(test_resolved_addresses_united),
		cmocka_unit_test(test_unix_socket_rows),
		cmocka_unit_test(test_proxy_port_rows),
		cmocka_unit_test(test_limit_rows),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_audit_scope),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_caller_own_fields),
		cmocka_unit_test(test_diagnostic_rows),
		cmocka_unit_test(test_diagnostic_list_cap),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_self_ceiling),
		cmocka_unit_test(test_show_layers),
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_cmd_ceiling),
		cmocka_unit_test(test_examples_under_themselves),
		cmocka_unit_test(test_examples_pairwise),
		cmocka_unit_test(test_default_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
