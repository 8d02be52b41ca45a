// SPDX-License-Identifier: MIT
/*
 * The reference model of what the kernel enforces: read, write and network
 * decisions with the rule that made them. `bpfbox policy explain` prints
 * these, and the tests pin srt's precedence rules down here. Rules meet a
 * path by the identity of what is on disk now, as the kernel's walk meets
 * them (tests/vm/test_48_fs_differential.sh checks the two agree).
 */
#define POLICY_INTERNAL
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "policy.h"

struct mandatory_row {
	struct mandatory_entry e;
	const char *rule;
};

static const struct mandatory_row mandatory_rows[] = {
	{ { ".gitconfig", MANDATORY_FILE }, "mandatory:.gitconfig" },
	{ { ".gitmodules", MANDATORY_FILE }, "mandatory:.gitmodules" },
	{ { ".bashrc", MANDATORY_FILE }, "mandatory:.bashrc" },
	{ { ".bash_profile", MANDATORY_FILE }, "mandatory:.bash_profile" },
	{ { ".zshrc", MANDATORY_FILE }, "mandatory:.zshrc" },
	{ { ".zprofile", MANDATORY_FILE }, "mandatory:.zprofile" },
	{ { ".profile", MANDATORY_FILE }, "mandatory:.profile" },
	{ { ".ripgreprc", MANDATORY_FILE }, "mandatory:.ripgreprc" },
	{ { ".mcp.json", MANDATORY_FILE }, "mandatory:.mcp.json" },
	{ { ".vscode", MANDATORY_DIR }, "mandatory:.vscode" },
	{ { ".idea", MANDATORY_DIR }, "mandatory:.idea" },
	{ { ".claude/commands", MANDATORY_DIR }, "mandatory:.claude/commands" },
	{ { ".claude/agents", MANDATORY_DIR }, "mandatory:.claude/agents" },
	{ { ".git/hooks", MANDATORY_DIR }, "mandatory:.git/hooks" },
	{ { ".git/config", MANDATORY_FILE }, "mandatory:.git/config" },
	{ { ".git/config.worktree", MANDATORY_FILE }, "mandatory:.git/config.worktree" },
	{ { ".git/commondir", MANDATORY_FILE }, "mandatory:.git/commondir" },
	{ { ".git", MANDATORY_GIT_FILE }, "mandatory:.git" },
};

_Static_assert(sizeof(mandatory_rows) / sizeof(mandatory_rows[0]) <= POLICY_MANDATORY_MAX,
	       "every row fits policy_mandatory's output");

static bool row_in_force(const struct policy *p, const struct mandatory_row *r)
{
	return !(p->allow_git_config &&
		 (!strcmp(r->e.name, ".git/config") || !strcmp(r->e.name, ".git/config.worktree")));
}

size_t policy_mandatory(const struct policy *p, struct mandatory_entry out[POLICY_MANDATORY_MAX])
{
	size_t n = 0;

	if (p->fs_disabled)
		return 0;
	for (size_t i = 0; i < sizeof(mandatory_rows) / sizeof(mandatory_rows[0]); i++)
		if (row_in_force(p, &mandatory_rows[i]) && n < POLICY_MANDATORY_MAX)
			out[n++] = mandatory_rows[i].e;
	return n;
}

/* Does component sequence name (one or two components) occur in path? */
static bool has_components(const char *path, const char *name)
{
	size_t nl = strlen(name);

	for (const char *c = path; (c = strchr(c, '/')); ) {
		c++;
		if (!strncmp(c, name, nl) && (c[nl] == '/' || c[nl] == '\0'))
			return true;
	}
	return false;
}

static const char *mandatory_hit(const struct policy *p, const char *path)
{
	const char *last = strrchr(path, '/');
	struct stat st;

	for (size_t i = 0; i < sizeof(mandatory_rows) / sizeof(mandatory_rows[0]); i++) {
		const struct mandatory_row *r = &mandatory_rows[i];

		if (!row_in_force(p, r))
			continue;
		if (r->e.kind == MANDATORY_GIT_FILE) {
			/* A .git file points git elsewhere: rewriting it redirects hooks. */
			if (last && !strcmp(last + 1, ".git") && !lstat(path, &st) &&
			    S_ISREG(st.st_mode))
				return r->rule;
			continue;
		}
		if (has_components(path, r->e.name))
			return r->rule;
	}
	return NULL;
}

bool policy_path_covers(const char *rule, const char *path)
{
	size_t rl = strlen(rule);

	if (!strcmp(rule, "/"))
		return true;
	return !strncmp(rule, path, rl) && (path[rl] == '\0' || path[rl] == '/');
}

static int depth(const char *path)
{
	int d = 0;

	if (!strcmp(path, "/"))
		return 0;
	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* Strips path's last component in place ("/a" becomes "/"); false at "/". */
static bool strip_last(char *path)
{
	char *slash = strrchr(path, '/');

	if (!slash || !strcmp(path, "/"))
		return false;
	if (slash == path)
		slash[1] = '\0';
	else
		*slash = '\0';
	return true;
}

/* The part of path below its prefix (no leading '/'); prefix "/" leaves all but the root. */
static const char *below(const char *path, const char *prefix)
{
	const char *rest = path + strlen(prefix);

	return *rest == '/' ? rest + 1 : rest;
}

/*
 * Where rule r meets path, as the kernel matches it (docs/design.md): the
 * launcher resolved the rule to an object, or, for a missing path, to its
 * deepest existing ancestor and the names below it; the walk meets that
 * object going up from path's, whatever it is called there (a bind mount
 * of it, a hard link to it). Returns the depth in path at which the rule
 * covers it, or -1. A path with nothing of it on disk compares as strings.
 * A spelling kept not to widen the rule: an allow is not applied at all (the
 * launcher leaves it out), a deny meets what its link leads to, as the
 * launcher's resolution follows it (a deny only narrows).
 */
static int rule_meets(const struct fs_rule *r, const char *path)
{
	char *anchor, *prefix;
	struct stat ast, pst;
	const char *names;
	int ret = -1;
	size_t nl;

	if (policy_rule_unapplied(r))
		return -1;
	anchor = strdup(r->path);
	prefix = strdup(path);
	if (!anchor || !prefix)
		goto strings;
	while (stat(anchor, &ast))
		if (!strip_last(anchor))
			goto strings;
	names = below(r->path, anchor);
	nl = strlen(names);
	do {
		const char *rest = below(path, prefix);

		if (stat(prefix, &pst) || pst.st_dev != ast.st_dev || pst.st_ino != ast.st_ino)
			continue;
		/* The kernel's name rules: the missing names, right below the anchor. */
		if (!nl || (!strncmp(rest, names, nl) && (rest[nl] == '/' || rest[nl] == '\0'))) {
			ret = depth(prefix) + (nl ? depth(names) + 1 : 0);
			goto out;
		}
	} while (strip_last(prefix));
	goto out;
strings:
	ret = policy_path_covers(r->path, path) ? depth(r->path) : -1;
out:
	free(anchor);
	free(prefix);
	return ret;
}

static void decide(struct fs_decision *out, bool allowed, const struct fs_rule *r,
		   const char *name)
{
	out->allowed = allowed;
	out->rule = r;
	out->rule_name = r ? r->name : name;
}

void policy_decide_layer_read(const struct policy *p, enum fs_layer layer, const char *abs_path,
			      struct fs_decision *out)
{
	const struct fs_rule *best = NULL;
	int best_depth = -1;

	for (size_t i = 0; i < p->n_fs_rules; i++) {
		const struct fs_rule *r = &p->fs_rules[i];
		int d;

		if (r->layer != layer || (r->kind != FS_DENY_READ && r->kind != FS_ALLOW_READ))
			continue;
		d = rule_meets(r, abs_path);
		if (d < 0)
			continue;
		/* Deepest wins; at equal depth allowRead beats denyRead (srt). */
		if (d > best_depth || (d == best_depth && r->kind == FS_ALLOW_READ &&
				       best->kind == FS_DENY_READ)) {
			best = r;
			best_depth = d;
		}
	}
	if (!best) {
		decide(out, true, NULL, layer == FS_LAYER_CEILING ? "ceiling:default:read" :
		       "default:read");
		return;
	}
	decide(out, best->kind == FS_ALLOW_READ, best, NULL);
}

void policy_decide_layer_write(const struct policy *p, enum fs_layer layer, const char *abs_path,
			       struct fs_decision *out)
{
	const struct fs_rule *allow = NULL;
	int allow_depth = -1;

	for (size_t i = 0; i < p->n_fs_rules; i++) {
		const struct fs_rule *r = &p->fs_rules[i];
		int d;

		if (r->layer != layer || (r->kind != FS_DENY_WRITE && r->kind != FS_ALLOW_WRITE))
			continue;
		d = rule_meets(r, abs_path);
		if (d < 0)
			continue;
		/* A denyWrite anywhere on the path wins, even above an allow. */
		if (r->kind == FS_DENY_WRITE) {
			decide(out, false, r, NULL);
			return;
		}
		if (d > allow_depth) {
			allow = r;
			allow_depth = d;
		}
	}
	if (allow) {
		decide(out, true, allow, NULL);
		return;
	}
	decide(out, false, NULL, layer == FS_LAYER_CEILING ? "ceiling:default:write" :
	       "default:write");
}

void policy_decide_read(const struct policy *p, const char *abs_path, struct fs_decision *out)
{
	struct fs_decision ceiling;

	if (p->fs_disabled) {
		decide(out, true, NULL, "filesystem.disabled");
		return;
	}
	policy_decide_layer_read(p, FS_LAYER_OWN, abs_path, out);
	if (!out->allowed || !p->has_ceiling)
		return;
	policy_decide_layer_read(p, FS_LAYER_CEILING, abs_path, &ceiling);
	if (!ceiling.allowed)
		*out = ceiling;
}

void policy_decide_write(const struct policy *p, const char *abs_path, struct fs_decision *out)
{
	struct fs_decision own, ceiling;
	const char *m;

	if (p->fs_disabled) {
		decide(out, true, NULL, "filesystem.disabled");
		return;
	}
	m = mandatory_hit(p, abs_path);
	if (m) {
		decide(out, false, NULL, m);
		return;
	}
	policy_decide_layer_write(p, FS_LAYER_OWN, abs_path, &own);
	*out = own;
	if (!p->has_ceiling)
		return;
	policy_decide_layer_write(p, FS_LAYER_CEILING, abs_path, &ceiling);
	/* The kernel's order: a denyWrite of either layer, then a missing allowWrite. */
	if (!own.allowed && own.rule)
		return;
	if (!ceiling.allowed && (ceiling.rule || own.allowed))
		*out = ceiling;
}

const char *net_verdict_name(enum net_verdict v)
{
	switch (v) {
	case NET_DENY_MALFORMED:
		return "denied (malformed host)";
	case NET_DENY_DENIED:
		return "denied";
	case NET_ALLOW:
		return "allowed";
	case NET_DENY_NOT_ALLOWED:
		return "denied (not in allowedDomains)";
	}
	return "denied";
}

enum net_verdict policy_decide_host(const struct policy *p, const char *host, unsigned port,
				    const char **rule_name, const char **reason)
{
	char canon[DOMAIN_HOST_MAX];
	const char *why, *name = "default:network", *rsn = NULL;
	enum net_verdict v = NET_DENY_NOT_ALLOWED;

	if (port < 1 || port > 65535) {
		name = "malformed";
		rsn = "port must be 1-65535";
		v = NET_DENY_MALFORMED;
		goto out;
	}
	if (host_canonicalise(host, canon, sizeof(canon), &why)) {
		name = "malformed";
		rsn = why;
		v = NET_DENY_MALFORMED;
		goto out;
	}
	for (size_t i = 0; i < p->n_denied_domains; i++)
		if (domain_pattern_match(&p->denied_domains[i], canon, port)) {
			name = p->denied_rule_names[i];
			rsn = p->denied_reasons ? p->denied_reasons[i] : NULL;
			v = NET_DENY_DENIED;
			goto out;
		}
	for (size_t i = 0; i < p->n_allowed_domains; i++)
		if (domain_pattern_match(&p->allowed_domains[i], canon, port)) {
			name = p->allowed_rule_names[i];
			v = NET_ALLOW;
			break;
		}
	if (v != NET_ALLOW || !p->has_ceiling)
		goto out;
	/* Under a ceiling the administrator's allowedDomains must match too. */
	for (size_t i = 0; i < p->n_ceiling_allowed_domains; i++)
		if (domain_pattern_match(&p->ceiling_allowed_domains[i], canon, port))
			goto out;
	name = "ceiling:default:network";
	v = NET_DENY_NOT_ALLOWED;
out:
	if (rule_name)
		*rule_name = name;
	if (reason)
		*reason = rsn;
	return v;
}

enum net_verdict policy_decide_name(const struct policy *p, const char *host, const char **rule_name,
				    const char **reason)
{
	char canon[DOMAIN_HOST_MAX];
	const char *why, *name = "default:network", *rsn = NULL;
	enum net_verdict v = NET_DENY_NOT_ALLOWED;

	if (host_canonicalise(host, canon, sizeof(canon), &why) || host_ip_family(canon)) {
		name = "malformed";
		rsn = why ? why : "an address is not a name";
		v = NET_DENY_MALFORMED;
		goto out;
	}
	for (size_t i = 0; i < p->n_denied_domains; i++)
		if (!p->denied_domains[i].port && domain_pattern_match(&p->denied_domains[i], canon, 1)) {
			name = p->denied_rule_names[i];
			rsn = p->denied_reasons ? p->denied_reasons[i] : NULL;
			v = NET_DENY_DENIED;
			goto out;
		}
	for (size_t i = 0; i < p->n_allowed_domains; i++) {
		const struct domain_pattern *d = &p->allowed_domains[i];

		if (domain_pattern_match(d, canon, d->port ? d->port : 1)) {
			name = p->allowed_rule_names[i];
			v = NET_ALLOW;
			break;
		}
	}
	if (v != NET_ALLOW || !p->has_ceiling)
		goto out;
	/*
	 * Under a ceiling a name the administrator does not allow is never
	 * asked upstream: a caller's own *.zone would otherwise be a tunnel.
	 */
	for (size_t i = 0; i < p->n_ceiling_allowed_domains; i++) {
		const struct domain_pattern *d = &p->ceiling_allowed_domains[i];

		if (domain_pattern_match(d, canon, d->port ? d->port : 1))
			goto out;
	}
	name = "ceiling:default:network";
	v = NET_DENY_NOT_ALLOWED;
out:
	if (rule_name)
		*rule_name = name;
	if (reason)
		*reason = rsn;
	return v;
}

unsigned policy_name_port(const struct policy *p, const char *canon_host)
{
	unsigned port = 0;
	bool seen = false;

	for (size_t i = 0; i < p->n_allowed_domains; i++) {
		const struct domain_pattern *d = &p->allowed_domains[i];

		if (!domain_pattern_match(d, canon_host, d->port ? d->port : 1))
			continue;
		if (!d->port || (seen && d->port != port))
			return 0;
		port = d->port;
		seen = true;
	}
	return port;
}

bool policy_tls_terminates(const struct policy *p, const char *canonical_host, unsigned port)
{
	if (!p->tls.enabled)
		return false;
	for (size_t i = 0; i < p->tls.n_exclude; i++)
		if (domain_pattern_match(&p->tls.exclude[i], canonical_host, port))
			return false;
	return true;
}

bool policy_mitm_routes(const struct policy *p, const char *canonical_host, unsigned port)
{
	if (!p->mitm.enabled)
		return false;
	for (size_t i = 0; i < p->mitm.n_domains; i++)
		if (domain_pattern_match(&p->mitm.domains[i], canonical_host, port))
			return true;
	return false;
}

bool policy_addr_denied(const struct policy *p, int family, const void *addr)
{
	for (size_t i = 0; i < p->n_denied_addrs; i++)
		if (ip_cidr_contains(&p->denied_addrs[i], family, addr))
			return true;
	return false;
}

bool policy_env_denied(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_env_deny; i++)
		if (!strcmp(p->env_deny[i], name))
			return true;
	return false;
}

bool policy_env_allowed(const struct policy *p, const char *name)
{
	if (!p->has_env_allow)
		return true;
	for (size_t i = 0; i < p->n_env_allow; i++) {
		const char *e = p->env_allow[i];
		size_t len = strlen(e);

		if (len && e[len - 1] == '*' ? !strncmp(e, name, len - 1) : !strcmp(e, name))
			return true;
	}
	return false;
}
