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
 *
 * This file runs the sections in order (policy_ceiling_fs.c, _net.c,
 * _bpfbox.c with _env.c; their shared helpers in policy_ceiling_cut.c),
 * copies what only concerns the caller, and holds the audit scope and the
 * loader `exec --ceiling` uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

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
		ceiling_strv_add(c, &p->grant_cuts, &p->n_grant_cuts, a->grant_cuts[i]);
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
		r->command = ceiling_strdup(c, u->ignore[i].command);
		for (size_t k = 0; k < u->ignore[i].n_lines; k++)
			ceiling_strv_add(c, &r->lines, &r->n_lines, u->ignore[i].lines[k]);
	}
	for (size_t i = 0; i < u->n_git_safe_dirs; i++)
		ceiling_strv_add(c, &p->git_safe_dirs, &p->n_git_safe_dirs, u->git_safe_dirs[i]);
	memcpy(p->digest, u->digest, sizeof(p->digest));
	memcpy(p->ceiling_digest, a->digest, sizeof(p->ceiling_digest));
	p->file = ceiling_strdup(c, u->file);
	p->ceiling_file = ceiling_strdup(c, c->admin_file);
	p->cwd = ceiling_strdup(c, u->cwd);
	p->home = ceiling_strdup(c, u->home);
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
	ceiling_cut_flag(&c, "allowNestedUserNamespaces", caller->allow_nested_userns,
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
