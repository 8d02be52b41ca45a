/* SPDX-License-Identifier: MIT */
/*
 * The administrator's policy as a ceiling over a caller's: the caller may
 * narrow it, never widen it. policy_ceiling_apply builds the caller's
 * effective policy (the intersection, field by field; docs/policy.md
 * "Ceiling") and names every grant of the caller that the ceiling takes away.
 * The filesystem part stays two rule layers (struct fs_rule.layer) so that
 * the kernel can decide each layer on the objects it sees, rather than trust
 * paths rewritten here.
 */
#ifndef BPFBOX_POLICY_CEILING_H
#define BPFBOX_POLICY_CEILING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy.h"

/* One grant of the caller that the ceiling takes away, wholly or in part. */
struct ceiling_cut {
	char *path;	/* JSON path in the caller's file: "filesystem.allowWrite[1]" */
	/*
	 * The whole line after "bpfbox: ", e.g. p.json: filesystem.allowWrite[1]
	 * "/srv/shared": outside the administrator's allowWrite
	 * (/etc/bpfbox/policy.json); not granted
	 */
	char *line;
};

struct ceiling_cuts {
	struct ceiling_cut *items;
	size_t n, cap;
	bool oom;	/* a cut could not be recorded: treat the run as refused */
};

#define CEILING_CUTS_INIT { 0 }

/*
 * The effective policy of a caller bound by admin. Every cut is appended to
 * cuts (in the caller's file order, section by section). Returns 0 and
 * *out; -EPERM when strict and anything was cut (*out NULL, cuts filled);
 * -EINVAL when either policy is already an effective one; -ENOMEM.
 * Both policies must have been loaded for the same caller (home, launch
 * directory), since ~ and relative entries of both were resolved for it.
 */
int policy_ceiling_apply(const struct policy *admin, const struct policy *caller, bool strict,
			 struct policy **out, struct ceiling_cuts *cuts);

/*
 * What `bpfbox exec --ceiling ADMIN [--policy FILE]` runs under, for any
 * launcher: both files loaded with the same options (the caller's home and
 * launch directory), each one's problems printed to msgs, then
 * policy_ceiling_apply with every cut printed there too (ceiling_cuts_print).
 * Without caller_file the administrator's policy applies as it is (no
 * ceiling of its own); a NULL admin_file is the built-in default. lo->strict
 * makes a cut, or a warning of the caller's file, an error (the
 * administrator's warnings are its own to fix and never stop a caller's run,
 * as in the daemon). Returns 0 and *out, or a negative errno with *out
 * NULL: a rejected file's, -EPERM for a cut under strict, -ENOMEM.
 */
int policy_load_under_ceiling(const char *admin_file, const char *caller_file, const struct policy_load_opts *lo,
			      FILE *msgs, struct policy **out);

/*
 * How a run's would-be refusals are audited (docs/deployment.md, "The
 * ceiling"): the administrator's refusals are never the caller's to audit.
 */
enum audit_scope {
	AUDIT_NONE,	/* every refusal enforced */
	AUDIT_ALL,	/* every refusal audited: root's own run, or the administrator's mode audits too */
	/*
	 * Only a file refusal of the caller's own layer that the administrator's
	 * layer allows; everything else enforced. With no policy of the caller's
	 * (the administrator's as it is) nothing is the caller's: all enforced.
	 */
	AUDIT_CALLER,
};

/*
 * The scope for policy p (an effective one under a ceiling, or the
 * administrator's as it is for a caller without a policy of its own, or
 * root's own): bound when the run is a caller's under an administrator's
 * policy (the daemon's worker, exec --ceiling), asked for --audit.
 */
enum audit_scope policy_audit_scope(const struct policy *p, bool bound, bool asked);
/* "none", "all" or "caller": bpfbox.audit_scope of the start event. */
const char *audit_scope_name(enum audit_scope s);

/* "bpfbox: LINE" per cut, and one line when a cut was lost to OOM. */
void ceiling_cuts_print(const struct ceiling_cuts *cuts, FILE *out);
/* The first cut of the caller's JSON path, or NULL. */
const struct ceiling_cut *ceiling_cuts_find(const struct ceiling_cuts *cuts, const char *path);
void ceiling_cuts_free(struct ceiling_cuts *cuts);

#endif
