// SPDX-License-Identifier: MIT
/*
 * The filesystem under a ceiling: both policies' rules kept as two layers
 * (the kernel decides each on the objects it sees), and each allowRead and
 * allowWrite of the caller that the administrator's layer takes away, wholly
 * or in part, named with the places it still holds or loses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

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
	r->path = ceiling_strdup(c, "/");
	r->source = ceiling_strdup(c, "(filesystem.disabled)");
	r->name = ceiling_strdup(c, layer == FS_LAYER_CEILING ? "ceiling:filesystem.disabled" :
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
		r->path = ceiling_strdup(c, s->path);
		r->source = ceiling_strdup(c, s->source);
		r->jpath = ceiling_strdup(c, s->jpath);
		/* Events and explain tell the administrator's rules apart by name. */
		if (layer == FS_LAYER_CEILING) {
			if (asprintf(&r->name, "ceiling:%s", s->name) < 0) {
				r->name = NULL;
				c->oom = true;
			}
		} else {
			r->name = ceiling_strdup(c, s->name);
		}
	}
}

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
	struct cut_places l = { 0 };
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
		places_add(c, &l, x->path);
	}
	v = ceiling_quoted(c, r->source, r->path);
	if (!v)
		goto out;
	if (!d.allowed && d.rule) {
		if (asprintf(&why, "inside the administrator's denyWrite \"%s\"",
			     d.rule->path) < 0) {
			why = NULL;
			c->oom = true;
			goto out;
		}
		ceiling_cut(c, r->jpath, v, why, "not granted");
	} else if (d.allowed) {
		ceiling_cut_places(c, r->jpath, v, "partly inside the administrator's denyWrite", &l,
				   "not granted at");
	} else if (l.n) {
		ceiling_cut_places(c, r->jpath, v, "partly outside the administrator's allowWrite", &l,
				   "granted only at");
	} else {
		ceiling_cut(c, r->jpath, v, "outside the administrator's allowWrite", "not granted");
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
	struct cut_places l = { 0 };
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
			places_add(c, &l, x->path);
	}
	v = ceiling_quoted(c, r->source, r->path);
	if (!v)
		goto out;
	if (d.allowed) {
		ceiling_cut_places(c, r->jpath, v, "partly inside the administrator's denyRead", &l,
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
		ceiling_cut_places(c, r->jpath, v, why, &l, "granted only at");
	else
		ceiling_cut(c, r->jpath, v, why, "not granted");
out:
	free(v);
	free(why);
	free(l.text);
}

void ceiling_filesystem(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	copy_layer(c, u, FS_LAYER_OWN);
	copy_layer(c, a, FS_LAYER_CEILING);
	/* The mandatory set is always in force under a ceiling. */
	p->fs_disabled = false;
	p->allow_git_config = a->allow_git_config && u->allow_git_config;

	if (u->fs_disabled)
		ceiling_cut(c, "filesystem.disabled", "true", a->fs_disabled ?
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
	ceiling_cut_flag(c, "filesystem.allowGitConfig", u->allow_git_config, a->allow_git_config,
			 "not granted");
}
