// SPDX-License-Identifier: MIT
/*
 * The administrator's ceiling: the effective policy of a caller is the
 * intersection of the administrator's and the caller's, field by field, and
 * every grant of the caller that the intersection takes away is named.
 *
 * The filesystem stays two layers (the kernel decides each on the real
 * objects); domains keep the caller's allowedDomains and add the
 * administrator's as a second list both must match; every other field is
 * folded into one value here, where the intersection is exact (flags, lists
 * of exact names, limits, environment patterns).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling.h"

/* A cut's list of places ("granted only at A, B") names at most this many. */
#define CUT_LIST_MAX 8

struct ceiling {
	const struct policy *admin, *caller;
	const char *admin_file, *caller_file;
	struct ceiling_cuts *cuts;
	struct policy *p;	/* the effective policy being built */
	bool oom;
};

/* ---- cuts ---- */

void ceiling_cuts_free(struct ceiling_cuts *cuts)
{
	for (size_t i = 0; i < cuts->n; i++) {
		free(cuts->items[i].path);
		free(cuts->items[i].line);
	}
	free(cuts->items);
	memset(cuts, 0, sizeof(*cuts));
}

void ceiling_cuts_print(const struct ceiling_cuts *cuts, FILE *out)
{
	for (size_t i = 0; i < cuts->n; i++)
		fprintf(out, "bpfbox: %s\n", cuts->items[i].line);
	if (cuts->oom)
		fprintf(out, "bpfbox: out of memory while recording what the ceiling takes away\n");
}

const struct ceiling_cut *ceiling_cuts_find(const struct ceiling_cuts *cuts, const char *path)
{
	for (size_t i = 0; i < cuts->n; i++)
		if (!strcmp(cuts->items[i].path, path))
			return &cuts->items[i];
	return NULL;
}

/*
 * One cut: "CALLER: PATH VALUE: WHY (ADMIN); OUTCOME". value is printed as
 * given (callers quote strings), and may be NULL.
 */
static void cut(struct ceiling *c, const char *path, const char *value, const char *why,
		const char *outcome)
{
	struct ceiling_cuts *l = c->cuts;
	struct ceiling_cut k = { 0 };

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct ceiling_cut *items = realloc(l->items, cap * sizeof(*items));

		if (!items)
			goto oom;
		l->items = items;
		l->cap = cap;
	}
	k.path = strdup(path);
	if (!k.path || asprintf(&k.line, "%s: %s%s%s: %s (%s); %s", c->caller_file, path,
				value ? " " : "", value ? value : "", why, c->admin_file,
				outcome) < 0) {
		free(k.path);
		goto oom;
	}
	l->items[l->n++] = k;
	return;
oom:
	l->oom = true;
	c->oom = true;
}

/*
 * An entry as written, in quotes (unescaped, as in the loader's messages),
 * then what it means when that differs.
 */
static char *quoted(struct ceiling *c, const char *s, const char *normalised)
{
	char *q = NULL;
	int ret;

	if (normalised && strcmp(s, normalised))
		ret = asprintf(&q, "\"%s\" (%s)", s, normalised);
	else
		ret = asprintf(&q, "\"%s\"", s);
	if (ret < 0) {
		c->oom = true;
		return NULL;
	}
	return q;
}

static void cut_quoted(struct ceiling *c, const char *path, const char *written,
		       const char *normalised, const char *why, const char *outcome)
{
	char *v = quoted(c, written, normalised);

	if (v)
		cut(c, path, v, why, outcome);
	free(v);
}

/* "PREFIX A, B, C, and N more", built one item at a time. */
struct list {
	char *text;
	size_t n;
};

static void list_add(struct ceiling *c, struct list *l, const char *item)
{
	char *t = NULL;

	if (l->n++ >= CUT_LIST_MAX)
		return;
	if (asprintf(&t, "%s%s%s", l->text ? l->text : "", l->text ? ", " : "", item) < 0) {
		c->oom = true;
		return;
	}
	free(l->text);
	l->text = t;
}

/* "granted only at A, B" from prefix "granted only at"; NULL when empty. */
static char *list_finish(struct ceiling *c, struct list *l, const char *prefix)
{
	char *t = NULL;
	int ret;

	if (!l->n)
		return NULL;
	if (l->n > CUT_LIST_MAX)
		ret = asprintf(&t, "%s %s, and %zu more", prefix, l->text ? l->text : "",
			       l->n - CUT_LIST_MAX);
	else
		ret = asprintf(&t, "%s %s", prefix, l->text ? l->text : "");
	free(l->text);
	l->text = NULL;
	if (ret < 0) {
		c->oom = true;
		return NULL;
	}
	return t;
}

static void cut_list(struct ceiling *c, const char *path, const char *value, const char *why,
		     struct list *l, const char *prefix)
{
	char *outcome = list_finish(c, l, prefix);

	if (outcome)
		cut(c, path, value, why, outcome);
	free(outcome);
}

/* ---- building the effective policy ---- */

static char *dup_str(struct ceiling *c, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		c->oom = true;
	return d;
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* Appends a copy of s (the vector stays NULL-terminated). */
static void strv_add(struct ceiling *c, char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof(*nv));

	if (!nv) {
		c->oom = true;
		return;
	}
	*v = nv;
	nv[*n] = dup_str(c, s);
	if (!nv[*n])
		return;
	nv[++*n] = NULL;
}

static void strv_add_unique(struct ceiling *c, char ***v, size_t *n, const char *s)
{
	if (!strv_has(*v, *n, s))
		strv_add(c, v, n, s);
}

static struct fs_rule *push_rule(struct ceiling *c)
{
	struct policy *p = c->p;
	struct fs_rule *nr = realloc(p->fs_rules, (p->n_fs_rules + 1) * sizeof(*nr));

	if (!nr) {
		c->oom = true;
		return NULL;
	}
	p->fs_rules = nr;
	memset(&nr[p->n_fs_rules], 0, sizeof(*nr));
	return &nr[p->n_fs_rules++];
}

/*
 * A layer whose file says filesystem.disabled has no rule of its own and
 * allows everything: one implicit allowWrite on "/" says so, in a form the
 * kernel's rule table already carries. The mandatory set stays (see below).
 */
static void add_open_layer(struct ceiling *c, enum fs_layer layer)
{
	struct fs_rule *r = push_rule(c);

	if (!r)
		return;
	r->kind = FS_ALLOW_WRITE;
	r->layer = layer;
	r->from_default = true;
	r->path = dup_str(c, "/");
	r->source = dup_str(c, "(filesystem.disabled)");
	r->name = dup_str(c, layer == FS_LAYER_CEILING ? "ceiling:filesystem.disabled" :
			  "filesystem.disabled");
}

static void copy_layer(struct ceiling *c, const struct policy *from, enum fs_layer layer)
{
	if (from->fs_disabled) {
		add_open_layer(c, layer);
		return;
	}
	for (size_t i = 0; i < from->n_fs_rules && !c->oom; i++) {
		const struct fs_rule *s = &from->fs_rules[i];
		struct fs_rule *r = push_rule(c);

		if (!r)
			return;
		*r = (struct fs_rule){
			.kind = s->kind,
			.layer = layer,
			.from_default = s->from_default,
			.kept_spelling = s->kept_spelling,
			.from_glob = s->from_glob,
			.no_links = s->no_links,
		};
		r->path = dup_str(c, s->path);
		r->source = dup_str(c, s->source);
		r->jpath = dup_str(c, s->jpath);
		/* Events and explain tell the administrator's rules apart by name. */
		if (layer == FS_LAYER_CEILING) {
			if (asprintf(&r->name, "ceiling:%s", s->name) < 0) {
				r->name = NULL;
				c->oom = true;
			}
		} else {
			r->name = dup_str(c, s->name);
		}
	}
}

/* The caller's allowedDomains, with their sources and rule names. */
static void copy_allowed(struct ceiling *c)
{
	const struct policy *u = c->caller;
	struct policy *p = c->p;
	size_t n = u->n_allowed_domains;

	if (!n)
		return;
	p->allowed_domains = malloc(n * sizeof(*p->allowed_domains));
	p->allowed_sources = calloc(n + 1, sizeof(char *));
	p->allowed_rule_names = calloc(n + 1, sizeof(char *));
	if (!p->allowed_domains || !p->allowed_sources || !p->allowed_rule_names) {
		c->oom = true;
		return;
	}
	memcpy(p->allowed_domains, u->allowed_domains, n * sizeof(*p->allowed_domains));
	p->n_allowed_domains = n;
	for (size_t i = 0; i < n; i++) {
		p->allowed_sources[i] = dup_str(c, u->allowed_sources[i]);
		p->allowed_rule_names[i] = dup_str(c, u->allowed_rule_names[i]);
	}
}

/* The administrator's allowedDomains: the second list every allowed host must match. */
static void copy_ceiling_allowed(struct ceiling *c)
{
	const struct policy *a = c->admin;
	struct policy *p = c->p;

	if (!a->n_allowed_domains)
		return;
	p->ceiling_allowed_domains = malloc(a->n_allowed_domains *
					    sizeof(*p->ceiling_allowed_domains));
	if (!p->ceiling_allowed_domains) {
		c->oom = true;
		return;
	}
	memcpy(p->ceiling_allowed_domains, a->allowed_domains,
	       a->n_allowed_domains * sizeof(*p->ceiling_allowed_domains));
	p->n_ceiling_allowed_domains = a->n_allowed_domains;
}

/* deniedDomains united: the administrator's first, so its reason is the one shown. */
static void unite_denied(struct ceiling *c)
{
	const struct policy *layer[2] = { c->admin, c->caller };
	struct policy *p = c->p;
	size_t total = c->admin->n_denied_domains + c->caller->n_denied_domains, k = 0;

	p->denied_domains = calloc(total + 1, sizeof(*p->denied_domains));
	p->denied_sources = calloc(total + 1, sizeof(char *));
	p->denied_rule_names = calloc(total + 1, sizeof(char *));
	p->denied_reasons = calloc(total + 1, sizeof(char *));
	if (!p->denied_domains || !p->denied_sources || !p->denied_rule_names ||
	    !p->denied_reasons) {
		c->oom = true;
		return;
	}
	for (int l = 0; l < 2; l++) {
		const struct policy *s = layer[l];

		for (size_t i = 0; i < s->n_denied_domains; i++, k++) {
			p->denied_domains[k] = s->denied_domains[i];
			p->denied_sources[k] = dup_str(c, s->denied_sources[i]);
			p->denied_reasons[k] = dup_str(c, s->denied_reasons ?
						       s->denied_reasons[i] : NULL);
			if (s == c->admin) {
				if (asprintf(&p->denied_rule_names[k], "ceiling:%s",
					     s->denied_rule_names[i]) < 0) {
					p->denied_rule_names[k] = NULL;
					c->oom = true;
				}
			} else {
				p->denied_rule_names[k] = dup_str(c, s->denied_rule_names[i]);
			}
			/* Counted as it goes, so policy_free frees what was copied. */
			p->n_denied_domains = k + 1;
		}
	}
}

static void unite_addrs(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	p->denied_addrs = malloc((a->n_denied_addrs + u->n_denied_addrs + 1) *
				 sizeof(*p->denied_addrs));
	if (!p->denied_addrs) {
		c->oom = true;
		return;
	}
	for (size_t i = 0; i < a->n_denied_addrs; i++)
		p->denied_addrs[p->n_denied_addrs++] = a->denied_addrs[i];
	for (size_t i = 0; i < u->n_denied_addrs; i++) {
		bool dup = false;

		for (size_t j = 0; j < a->n_denied_addrs && !dup; j++)
			dup = !strcmp(a->denied_addrs[j].text, u->denied_addrs[i].text);
		if (!dup)
			p->denied_addrs[p->n_denied_addrs++] = u->denied_addrs[i];
	}
}

/* ---- filesystem ---- */

static bool strictly_inside(const char *outer, const char *inner)
{
	return strcmp(outer, inner) && policy_path_covers(outer, inner);
}

/*
 * What the caller's own rules grant at path: a place the caller itself
 * denies is not taken away by the ceiling, so it is never named in a cut.
 */
static bool caller_grants(struct ceiling *c, const char *path, bool write)
{
	struct fs_decision d;

	if (write)
		policy_decide_layer_write(c->caller, FS_LAYER_OWN, path, &d);
	else
		policy_decide_layer_read(c->caller, FS_LAYER_OWN, path, &d);
	return d.allowed;
}

static void cut_allow_write(struct ceiling *c, const struct fs_rule *r)
{
	const struct policy *a = c->admin;
	struct fs_decision d;
	struct list l = { 0 };
	char *why = NULL, *v;

	if (!caller_grants(c, r->path, true))
		return;
	policy_decide_layer_write(a, FS_LAYER_OWN, r->path, &d);
	/*
	 * Allowed there: name the administrator's denyWrite below it. Refused
	 * for want of an allowWrite: name the administrator's allowWrite below
	 * it that really allows (no denyWrite above it).
	 */
	for (size_t i = 0; !(!d.allowed && d.rule) && i < a->n_fs_rules; i++) {
		const struct fs_rule *x = &a->fs_rules[i];
		struct fs_decision xd;

		if (x->kind != (d.allowed ? FS_DENY_WRITE : FS_ALLOW_WRITE) || x->from_default ||
		    !strictly_inside(r->path, x->path) || !caller_grants(c, x->path, true))
			continue;
		policy_decide_layer_write(a, FS_LAYER_OWN, x->path, &xd);
		if (xd.allowed == d.allowed)
			continue;
		list_add(c, &l, x->path);
	}
	v = quoted(c, r->source, r->path);
	if (!v)
		goto out;
	if (!d.allowed && d.rule) {
		if (asprintf(&why, "inside the administrator's denyWrite \"%s\"",
			     d.rule->path) < 0) {
			why = NULL;
			c->oom = true;
			goto out;
		}
		cut(c, r->jpath, v, why, "not granted");
	} else if (d.allowed) {
		cut_list(c, r->jpath, v, "partly inside the administrator's denyWrite", &l,
			 "not granted at");
	} else if (l.n) {
		cut_list(c, r->jpath, v, "partly outside the administrator's allowWrite", &l,
			 "granted only at");
	} else {
		cut(c, r->jpath, v, "outside the administrator's allowWrite", "not granted");
	}
out:
	free(v);
	free(why);
	free(l.text);
}

static void cut_allow_read(struct ceiling *c, const struct fs_rule *r)
{
	const struct policy *a = c->admin;
	struct fs_decision d;
	struct list l = { 0 };
	char *why = NULL, *v;

	if (!caller_grants(c, r->path, false))
		return;
	policy_decide_layer_read(a, FS_LAYER_OWN, r->path, &d);
	for (size_t i = 0; i < a->n_fs_rules; i++) {
		const struct fs_rule *x = &a->fs_rules[i];
		struct fs_decision xd;

		if ((x->kind != FS_DENY_READ && x->kind != FS_ALLOW_READ) ||
		    !strictly_inside(r->path, x->path) || !caller_grants(c, x->path, false))
			continue;
		/* Below a denied path, what the administrator reopens; below an
		 * allowed one, what it denies (where its own allowRead does not win). */
		policy_decide_layer_read(a, FS_LAYER_OWN, x->path, &xd);
		if (xd.rule == x && xd.allowed != d.allowed)
			list_add(c, &l, x->path);
	}
	v = quoted(c, r->source, r->path);
	if (!v)
		goto out;
	if (d.allowed) {
		cut_list(c, r->jpath, v, "partly inside the administrator's denyRead", &l,
			 "not granted at");
		goto out;
	}
	if (asprintf(&why, "%sinside the administrator's denyRead \"%s\"", l.n ? "partly " : "",
		     d.rule->path) < 0) {
		why = NULL;
		c->oom = true;
		goto out;
	}
	if (l.n)
		cut_list(c, r->jpath, v, why, &l, "granted only at");
	else
		cut(c, r->jpath, v, why, "not granted");
out:
	free(v);
	free(why);
	free(l.text);
}

static void cut_flag(struct ceiling *c, const char *path, bool caller, bool admin,
		     const char *outcome)
{
	if (caller && !admin)
		cut(c, path, "true", "not allowed by the administrator's policy", outcome);
}

static void ceiling_filesystem(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	copy_layer(c, u, FS_LAYER_OWN);
	copy_layer(c, a, FS_LAYER_CEILING);
	/* The mandatory set is always in force under a ceiling. */
	p->fs_disabled = false;
	p->allow_git_config = a->allow_git_config && u->allow_git_config;

	if (u->fs_disabled)
		cut(c, "filesystem.disabled", "true", a->fs_disabled ?
		    "the mandatory deny set stays in force under the administrator's policy" :
		    "the administrator's filesystem rules still apply",
		    a->fs_disabled ? "not granted for the mandatory deny set" : "not granted");
	for (size_t i = 0; !u->fs_disabled && !a->fs_disabled && i < u->n_fs_rules; i++) {
		const struct fs_rule *r = &u->fs_rules[i];

		if (r->from_default || !r->jpath)
			continue;
		if (r->kind == FS_ALLOW_WRITE)
			cut_allow_write(c, r);
		else if (r->kind == FS_ALLOW_READ)
			cut_allow_read(c, r);
	}
	cut_flag(c, "filesystem.allowGitConfig", u->allow_git_config, a->allow_git_config,
		 "not granted");
}

/* ---- network ---- */

static char *jpath_at(struct ceiling *c, const char *list, size_t i)
{
	char *s = NULL;

	if (asprintf(&s, "%s[%zu]", list, i) < 0) {
		c->oom = true;
		return NULL;
	}
	return s;
}

/* Does the caller's own deniedDomains already refuse all of x? */
static bool caller_denies(struct ceiling *c, const struct domain_pattern *x)
{
	for (size_t k = 0; k < c->caller->n_denied_domains; k++)
		if (domain_pattern_covers(&c->caller->denied_domains[k], x))
			return true;
	return false;
}

static void cut_domain(struct ceiling *c, size_t i)
{
	const struct policy *a = c->admin, *u = c->caller;
	const struct domain_pattern *want = &u->allowed_domains[i];
	struct domain_pattern x;
	struct list l = { 0 };
	char *path = NULL, *v = NULL, *why = NULL;
	bool covered = false;

	if (caller_denies(c, want))
		return;
	path = jpath_at(c, "network.allowedDomains", i);
	v = path ? quoted(c, u->allowed_sources[i], want->text) : NULL;
	if (!v)
		goto out;
	for (size_t k = 0; k < a->n_denied_domains; k++)
		if (domain_pattern_covers(&a->denied_domains[k], want)) {
			if (asprintf(&why, "inside the administrator's deniedDomains \"%s\"",
				     a->denied_domains[k].text) < 0) {
				why = NULL;
				c->oom = true;
			} else {
				cut(c, path, v, why, "not granted");
			}
			goto out;
		}
	for (size_t k = 0; k < a->n_allowed_domains && !covered; k++)
		covered = domain_pattern_covers(&a->allowed_domains[k], want);
	if (!covered) {
		for (size_t k = 0; k < a->n_allowed_domains; k++)
			if (domain_pattern_intersect(want, &a->allowed_domains[k], &x) &&
			    !caller_denies(c, &x))
				list_add(c, &l, x.text);
		if (l.n)
			cut_list(c, path, v, "partly outside the administrator's allowedDomains",
				 &l, "granted only for");
		else
			cut(c, path, v, "outside the administrator's allowedDomains", "not granted");
		goto out;
	}
	for (size_t k = 0; k < a->n_denied_domains; k++)
		if (domain_pattern_intersect(want, &a->denied_domains[k], &x) &&
		    !caller_denies(c, &x))
			list_add(c, &l, a->denied_domains[k].text);
	cut_list(c, path, v, "partly inside the administrator's deniedDomains", &l,
		 "not granted for");
out:
	free(l.text);
	free(why);
	free(v);
	free(path);
}

/* A Unix socket only if both allow it: both "all", or named by the other. */
static void ceiling_sockets(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	p->allow_all_unix_sockets = a->allow_all_unix_sockets && u->allow_all_unix_sockets;
	if (!u->allow_all_unix_sockets) {
		for (size_t i = 0; i < u->n_allow_unix_sockets; i++) {
			const char *s = u->allow_unix_sockets[i];
			char *path;

			if (a->allow_all_unix_sockets ||
			    strv_has(a->allow_unix_sockets, a->n_allow_unix_sockets, s)) {
				strv_add_unique(c, &p->allow_unix_sockets, &p->n_allow_unix_sockets, s);
				continue;
			}
			path = jpath_at(c, "network.allowUnixSockets", i);
			if (path)
				cut_quoted(c, path, s, NULL,
					   "outside the administrator's allowUnixSockets", "not granted");
			free(path);
		}
	} else if (!a->allow_all_unix_sockets) {
		for (size_t i = 0; i < a->n_allow_unix_sockets; i++)
			strv_add_unique(c, &p->allow_unix_sockets, &p->n_allow_unix_sockets,
					a->allow_unix_sockets[i]);
		cut_flag(c, "network.allowAllUnixSockets", true, false,
			 a->n_allow_unix_sockets ? "granted only for the administrator's "
			 "allowUnixSockets" : "not granted");
	}
}

/*
 * An external proxy does its own filtering instead of bpfbox's proxy, so the
 * caller may not route a protocol past the administrator's allowedDomains:
 * only the administrator's port, if any, is used.
 */
static void ceiling_port(struct ceiling *c, const char *path, int caller, int admin, int *out)
{
	char v[16], *why = NULL;

	*out = admin;
	if (!caller || caller == admin)
		return;
	snprintf(v, sizeof(v), "%d", caller);
	if (!admin) {
		cut(c, path, v, "the administrator's policy filters this protocol in bpfbox's "
		    "proxy", "not granted");
		return;
	}
	if (asprintf(&why, "the administrator's policy uses port %d", admin) < 0) {
		c->oom = true;
		return;
	}
	cut(c, path, v, why, "not granted");
	free(why);
}

static bool same_str(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

/*
 * The parent proxy is where every allowed connection leaves through, and
 * its address is exempt from the guard: the administrator's applies as it
 * is, and a caller naming another (or one where there is none) is cut. The
 * cut shows the redacted URL: a password never reaches a message.
 */
static void ceiling_parent(struct ceiling *c)
{
	const struct policy_parent *a = &c->admin->parent, *u = &c->caller->parent;
	char *v = NULL;

	if (policy_parent_copy(&c->p->parent, a)) {
		c->oom = true;
		return;
	}
	if (!u->scheme)
		return;
	if (a->scheme == u->scheme && a->port == u->port && same_str(a->host, u->host) &&
	    same_str(a->user, u->user) && same_str(a->pass, u->pass))
		return;
	v = quoted(c, u->shown, NULL);
	if (!v)
		return;
	cut(c, "bpfbox.network.parentProxy", v, a->scheme ? "the administrator's policy names another "
	    "parent proxy" : "the administrator's policy sends connections directly",
	    a->scheme ? "the administrator's parent proxy is used" : "not granted");
	free(v);
}

/* Socket protocols beyond the default allow-list: only those both policies open. */
static void ceiling_socket_protocols(struct ceiling *c)
{
	uint32_t a = c->admin->sock_allow, u = c->caller->sock_allow;
	char value[32];

	c->p->sock_allow = a & u;
	for (size_t i = 0; i < policy_n_socket_kinds; i++) {
		if (!(u & policy_socket_kinds[i].bit) || (a & policy_socket_kinds[i].bit))
			continue;
		snprintf(value, sizeof(value), "\"%s\"", policy_socket_kinds[i].name);
		cut(c, "bpfbox.network.allowSocketProtocols", value, "not allowed by the administrator's policy", "not granted");
	}
}

/* DNS query types beyond the default ones: only those both policies add. */
static void ceiling_dns_types(struct ceiling *c)
{
	uint32_t a = c->admin->dns_types, u = c->caller->dns_types;
	char value[32];

	c->p->dns_types = a & u;
	for (size_t i = 0; i < policy_n_dns_types; i++) {
		if (!(u & policy_dns_types[i].bit) || (a & policy_dns_types[i].bit))
			continue;
		snprintf(value, sizeof(value), "\"%s\"", policy_dns_types[i].name);
		cut(c, "bpfbox.network.dnsQueryTypes", value, "not answered under the administrator's policy",
		    "not granted");
	}
}

static void ceiling_network(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	copy_allowed(c);
	copy_ceiling_allowed(c);
	unite_denied(c);
	unite_addrs(c);
	for (size_t i = 0; i < u->n_allowed_domains && !c->oom; i++)
		cut_domain(c, i);
	ceiling_sockets(c);
	p->allow_local_binding = a->allow_local_binding && u->allow_local_binding;
	cut_flag(c, "network.allowLocalBinding", u->allow_local_binding, a->allow_local_binding,
		 "not granted");
	ceiling_port(c, "network.httpProxyPort", u->http_proxy_port, a->http_proxy_port,
		     &p->http_proxy_port);
	ceiling_port(c, "network.socksProxyPort", u->socks_proxy_port, a->socks_proxy_port,
		     &p->socks_proxy_port);
	/* The transparent path reaches allowed names without the proxy variables: only if both keep it. */
	p->transparent_off = a->transparent_off || u->transparent_off;
	ceiling_parent(c);
	ceiling_socket_protocols(c);
	ceiling_dns_types(c);
}

/* ---- environment ---- */

static bool env_prefix(const char *e, size_t *len)
{
	*len = strlen(e);
	if (*len && e[*len - 1] == '*') {
		(*len)--;
		return true;
	}
	return false;
}

/* Does env.allow entry e allow name? */
static bool env_match(const char *e, const char *name)
{
	size_t len;

	return env_prefix(e, &len) ? !strncmp(e, name, len) : !strcmp(e, name);
}

/* The entry allowing exactly what both allow (a name or the longer prefix), or NULL. */
static const char *env_intersect(const char *x, const char *y)
{
	size_t lx, ly;
	bool px = env_prefix(x, &lx), py = env_prefix(y, &ly);

	if (!px && !py)
		return strcmp(x, y) ? NULL : x;
	if (!px)
		return env_match(y, x) ? x : NULL;
	if (!py)
		return env_match(x, y) ? y : NULL;
	if (lx >= ly)
		return strncmp(x, y, ly) ? NULL : x;
	return strncmp(x, y, lx) ? NULL : y;
}

static void cut_env_allow(struct ceiling *c, size_t i)
{
	const struct policy *a = c->admin, *u = c->caller;
	const char *e = u->env_allow[i];
	char *path = jpath_at(c, "bpfbox.env.allow", i), *v = NULL;
	struct list l = { 0 };
	bool covered = !a->has_env_allow;

	if (!path)
		return;
	v = quoted(c, e, NULL);
	if (!v)
		goto out;
	/* A name the caller denies itself is not taken away by the ceiling. */
	if (strv_has(u->env_deny, u->n_env_deny, e))
		goto out;
	if (strv_has(a->env_deny, a->n_env_deny, e)) {
		cut(c, path, v, "denied by the administrator's credentials.envVars", "not granted");
		goto out;
	}
	for (size_t k = 0; !covered && k < a->n_env_allow; k++)
		covered = env_intersect(e, a->env_allow[k]) == e;
	if (!covered) {
		for (size_t k = 0; k < a->n_env_allow; k++) {
			const char *x = env_intersect(e, a->env_allow[k]);

			if (x)
				list_add(c, &l, x);
		}
		if (l.n)
			cut_list(c, path, v, "partly outside the administrator's bpfbox.env.allow",
				 &l, "granted only for");
		else
			cut(c, path, v, "outside the administrator's bpfbox.env.allow",
			    "not granted");
		goto out;
	}
	for (size_t k = 0; k < a->n_env_deny; k++)
		if (env_match(e, a->env_deny[k]) && !strv_has(u->env_deny, u->n_env_deny,
							     a->env_deny[k]))
			list_add(c, &l, a->env_deny[k]);
	cut_list(c, path, v, "partly denied by the administrator's credentials.envVars", &l,
		 "not granted for");
out:
	free(l.text);
	free(v);
	free(path);
}

/* Denies united; an allow-list of both is the pairwise intersection of their entries. */
static void ceiling_env(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	for (size_t i = 0; i < a->n_env_deny; i++)
		strv_add_unique(c, &p->env_deny, &p->n_env_deny, a->env_deny[i]);
	for (size_t i = 0; i < u->n_env_deny; i++)
		strv_add_unique(c, &p->env_deny, &p->n_env_deny, u->env_deny[i]);
	p->has_env_allow = a->has_env_allow || u->has_env_allow;
	if (a->has_env_allow && u->has_env_allow) {
		for (size_t i = 0; i < u->n_env_allow; i++)
			for (size_t k = 0; k < a->n_env_allow; k++) {
				const char *x = env_intersect(u->env_allow[i], a->env_allow[k]);

				if (x)
					strv_add_unique(c, &p->env_allow, &p->n_env_allow, x);
			}
	} else {
		const struct policy *s = a->has_env_allow ? a : u;

		for (size_t i = 0; i < s->n_env_allow; i++)
			strv_add_unique(c, &p->env_allow, &p->n_env_allow, s->env_allow[i]);
	}
	for (size_t i = 0; u->has_env_allow && i < u->n_env_allow; i++)
		cut_env_allow(c, i);
}

/* ---- bpfbox limits, mode and the rest ---- */

static void fmt_bytes(char *buf, size_t len, long long v)
{
	static const char unit[] = "TGMK";

	for (int i = 0; i < 4; i++) {
		long long m = 1LL << (10 * (4 - i));

		if (v % m == 0) {
			snprintf(buf, len, "%lld%c", v / m, unit[i]);
			return;
		}
	}
	snprintf(buf, len, "%lld", v);
}

static void fmt_limit(char *buf, size_t len, const char *kind, long long v)
{
	if (!strcmp(kind, "memory"))
		fmt_bytes(buf, len, v);
	else if (!strcmp(kind, "cpu"))
		snprintf(buf, len, "%lld%%", v);
	else
		snprintf(buf, len, "%lld", v);
}

/* The smaller limit; 0 is "none", so any limit is smaller. */
static long long ceiling_limit(struct ceiling *c, const char *kind, long long caller,
			       long long admin)
{
	char path[32], v[32], lim[32], *outcome = NULL;

	if (!admin || (caller && caller <= admin))
		return caller;
	if (!caller)
		return admin;
	snprintf(path, sizeof(path), "bpfbox.limits.%s", kind);
	fmt_limit(v, sizeof(v), kind, caller);
	fmt_limit(lim, sizeof(lim), kind, admin);
	if (asprintf(&outcome, "limited to %s", lim) < 0) {
		c->oom = true;
		return admin;
	}
	cut(c, path, v, "above the administrator's limit", outcome);
	free(outcome);
	return admin;
}

/* The stricter of the two; reporting without removing only when both ask for it. */
static void ceiling_git_new(struct ceiling *c)
{
	static const int rank[] = { [POLICY_GIT_REPORT] = 0, [POLICY_GIT_STRICT] = 1, [POLICY_GIT_REFUSE] = 2 };
	enum policy_git_new a = c->admin->git_new, u = c->caller->git_new;
	char value[32], outcome[32];

	c->p->git_new = rank[a] > rank[u] ? a : u;
	if (rank[u] < rank[a]) {
		snprintf(value, sizeof(value), "\"%s\"", policy_git_new_name(u));
		snprintf(outcome, sizeof(outcome), "\"%s\" applies", policy_git_new_name(a));
		cut(c, "bpfbox.git.newRepositories", value, "looser than the administrator's policy", outcome);
	}
}

static void ceiling_bpfbox(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	/* The caller may audit its own narrowing, never the administrator's refusals: nothing is cut. */
	p->audit = a->audit && u->audit;
	p->ceiling_audit = a->audit;
	p->audit_own = u->audit && !a->audit;
	ceiling_git_new(c);
	ceiling_env(c);
	p->limit_pids = ceiling_limit(c, "pids", u->limit_pids, a->limit_pids);
	p->limit_memory_bytes = ceiling_limit(c, "memory", u->limit_memory_bytes,
					      a->limit_memory_bytes);
	p->limit_cpu_percent = (int)ceiling_limit(c, "cpu", u->limit_cpu_percent,
						  a->limit_cpu_percent);
	/* Where the caller's own events go, and what it does not want to see, is its own. */
	p->log_file = dup_str(c, u->log_file);
	p->log_format = u->log_format;
}

/*
 * The administrator's grants left out for this caller (policy_load_opts.guard)
 * stay named in the effective policy. Its socket paths are the caller's
 * entries equal to the administrator's, which follow no symlink, unless the
 * administrator allows every socket.
 */
static void copy_guard(struct ceiling *c)
{
	const struct policy *a = c->admin;
	struct policy *p = c->p;

	p->guarded = a->guarded && !a->allow_all_unix_sockets;
	p->guard_uid = a->guard_uid;
	for (size_t i = 0; i < a->n_grant_cuts; i++)
		strv_add(c, &p->grant_cuts, &p->n_grant_cuts, a->grant_cuts[i]);
}

/* What only concerns the caller: ignoreViolations, git.safeDirectories, names. */
static void copy_caller_own(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	if (u->n_ignore) {
		p->ignore = calloc(u->n_ignore, sizeof(*p->ignore));
		if (!p->ignore) {
			c->oom = true;
			return;
		}
	}
	for (size_t i = 0; i < u->n_ignore; i++) {
		struct ignore_rule *r = &p->ignore[i];

		p->n_ignore = i + 1;
		r->command = dup_str(c, u->ignore[i].command);
		for (size_t k = 0; k < u->ignore[i].n_lines; k++)
			strv_add(c, &r->lines, &r->n_lines, u->ignore[i].lines[k]);
	}
	for (size_t i = 0; i < u->n_git_safe_dirs; i++)
		strv_add(c, &p->git_safe_dirs, &p->n_git_safe_dirs, u->git_safe_dirs[i]);
	memcpy(p->digest, u->digest, sizeof(p->digest));
	memcpy(p->ceiling_digest, a->digest, sizeof(p->ceiling_digest));
	p->file = dup_str(c, u->file);
	p->ceiling_file = dup_str(c, c->admin_file);
	p->cwd = dup_str(c, u->cwd);
	p->home = dup_str(c, u->home);
	p->has_ceiling = true;
}

int policy_ceiling_apply(const struct policy *admin, const struct policy *caller, bool strict,
			 struct policy **out, struct ceiling_cuts *cuts)
{
	struct ceiling c = {
		.admin = admin,
		.caller = caller,
		.admin_file = admin->file ? admin->file : "built-in default",
		.caller_file = caller->file ? caller->file : "built-in default",
		.cuts = cuts,
	};
	size_t before = cuts->n;

	*out = NULL;
	if (admin->has_ceiling || caller->has_ceiling)
		return -EINVAL;
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p)
		return -ENOMEM;
	ceiling_filesystem(&c);
	ceiling_network(&c);
	c.p->allow_nested_userns = admin->allow_nested_userns && caller->allow_nested_userns;
	cut_flag(&c, "allowNestedUserNamespaces", caller->allow_nested_userns,
		 admin->allow_nested_userns, "not granted");
	ceiling_bpfbox(&c);
	copy_caller_own(&c);
	copy_guard(&c);
	if (c.oom) {
		cuts->oom = true;
		policy_free(c.p);
		return -ENOMEM;
	}
	if (strict && cuts->n > before) {
		policy_free(c.p);
		return -EPERM;
	}
	*out = c.p;
	return 0;
}

enum audit_scope policy_audit_scope(const struct policy *p, bool bound, bool asked)
{
	if (p->audit)
		return AUDIT_ALL;
	if (!asked && !p->audit_own)
		return AUDIT_NONE;
	/* Root's own run, or a caller's --audit where the administrator's policy audits too. */
	if (!bound || (p->has_ceiling && p->ceiling_audit))
		return AUDIT_ALL;
	return AUDIT_CALLER;
}

const char *audit_scope_name(enum audit_scope s)
{
	return s == AUDIT_ALL ? "all" : s == AUDIT_CALLER ? "caller" : "none";
}

/* One file's problems go to msgs whatever the outcome; NULL file = built-in default. */
static int load_one(const char *file, const struct policy_load_opts *lo, FILE *msgs, struct policy **p)
{
	struct diag_list d = DIAG_LIST_INIT;
	int ret;

	ret = file ? policy_load_file(file, lo, p, &d) : policy_default(lo, p);
	diag_print(&d, file, msgs, false);
	diag_list_free(&d);
	return ret;
}

int policy_load_under_ceiling(const char *admin_file, const char *caller_file, const struct policy_load_opts *lo,
			      FILE *msgs, struct policy **out)
{
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct policy *admin = NULL, *caller = NULL;
	struct policy_load_opts alo = *lo;
	int ret;

	*out = NULL;
	/* strict is about the caller's own file and the cuts; the administrator's warnings never stop a run. */
	alo.strict = caller_file ? false : lo->strict;
	ret = load_one(admin_file, &alo, msgs, &admin);
	if (ret || !caller_file) {
		*out = admin;
		return ret;
	}
	ret = load_one(caller_file, lo, msgs, &caller);
	if (ret)
		goto out;
	ret = policy_ceiling_apply(admin, caller, lo->strict, out, &cuts);
	ceiling_cuts_print(&cuts, msgs);
	if (ret == -EPERM)
		fprintf(msgs, "bpfbox: %s: the administrator's policy (%s) takes away %zu grant(s), an error "
			"under --strict\n", caller_file, admin_file ? admin_file : "built-in default", cuts.n);
	else if (ret == -ENOMEM)
		fprintf(msgs, "bpfbox: out of memory applying the administrator's policy\n");
out:
	ceiling_cuts_free(&cuts);
	policy_free(caller);
	policy_free(admin);
	return ret;
}
