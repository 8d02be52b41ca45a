// SPDX-License-Identifier: MIT
/* A run's policy as the kernel takes it: rule specs, the sandbox's flags, its share of the rule maps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpfbox.h"
#include "log/log.h"
#include "policy/policy.h"
#include "quota.h"
#include "run.h"
#include "sandbox_maps.h"
#include "sandbox_private.h"

static uint32_t spec_flags(enum fs_rule_kind kind)
{
	switch (kind) {
	case FS_DENY_READ:
		return BB_R_DENY_READ;
	case FS_ALLOW_READ:
		return BB_R_ALLOW_READ;
	case FS_ALLOW_WRITE:
		return BB_R_ALLOW_WRITE;
	default:
		return BB_R_DENY_WRITE;
	}
}

/* Rule id i names specs[i]; the table also gives events their rule names. */
int sandbox_run_build_specs(struct sandbox_run *r)
{
	const struct policy *p = r->policy;
	size_t cap = p->n_fs_rules + p->n_allow_unix_sockets + 4, n = 0;

	r->specs = calloc(cap, sizeof(*r->specs));
	r->spec_paths = calloc(cap, sizeof(*r->spec_paths));
	r->spec_no_links = calloc(cap, sizeof(*r->spec_no_links));
	r->rule_names = calloc(cap, sizeof(*r->rule_names));
	r->owned_names = calloc(cap, sizeof(*r->owned_names));
	r->unix_names = calloc(cap, sizeof(*r->unix_names));
	if (!r->specs || !r->spec_paths || !r->spec_no_links || !r->rule_names || !r->owned_names || !r->unix_names)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_fs_rules && !p->fs_disabled; i++) {
		/* Under a ceiling each layer stays apart in the kernel (docs/design.md, "Two layers"). */
		enum rule_layer layer = p->fs_rules[i].layer == FS_LAYER_CEILING ? RULE_LAYER_CEILING : RULE_LAYER_OWN;

		/* Resolving it would follow the link to what it would widen to (the loader warned). */
		if (policy_rule_unapplied(&p->fs_rules[i]))
			continue;
		r->specs[n] = (struct rule_spec){ p->fs_rules[i].path, spec_flags(p->fs_rules[i].kind), (uint32_t)n,
						  layer, p->fs_rules[i].no_links };
		r->rule_names[n] = p->fs_rules[i].name;
		n++;
	}
	/* srt's rule: the CA certificate may be read inside, its key may not, whatever the lists say. */
	if (p->tls.enabled && p->tls.ca_key_path && !p->fs_disabled) {
		r->specs[n] = (struct rule_spec){ p->tls.ca_key_path, spec_flags(FS_DENY_READ), (uint32_t)n,
						  p->has_ceiling ? RULE_LAYER_BOTH : RULE_LAYER_OWN, false };
		r->rule_names[n] = "implicit:denyRead:tlsTerminate.caKeyPath";
		n++;
	}
	r->tmpdir_spec = n;
	/* The sandbox's own TMPDIR is writable in both layers. */
	r->specs[n] = (struct rule_spec){ r->tmpdir, BB_R_ALLOW_WRITE, (uint32_t)n,
					  p->has_ceiling ? RULE_LAYER_BOTH : RULE_LAYER_OWN, false };
	r->rule_names[n] = "implicit:allowWrite:TMPDIR";
	n++;
	/* Marks, not rules: /dev/shm's objects are decided by their creator; bpfbox's own state is off limits. */
	r->specs[n] = (struct rule_spec){ SANDBOX_SHM_DIR, BB_R_SHM, (uint32_t)n, RULE_LAYER_OWN, false };
	r->rule_names[n] = "builtin:shm";
	n++;
	r->specs[n] = (struct rule_spec){ BPFBOX_RUN_DIR, BB_R_BPFBOX_STATE, (uint32_t)n, RULE_LAYER_OWN, false };
	r->rule_names[n] = "builtin:bpfbox-state";
	n++;
	for (size_t i = 0; i < p->n_allow_unix_sockets; i++) {
		/* "@name": an abstract socket, matched by name in its own map. */
		if (p->allow_unix_sockets[i][0] == '@') {
			r->unix_names[r->n_unix_names++] = p->allow_unix_sockets[i] + 1;
			continue;
		}
		if (asprintf(&r->owned_names[n], "allowUnixSockets:%s", p->allow_unix_sockets[i]) < 0)
			return -ENOMEM;
		/* A guarded policy's socket paths were checked for the caller's links: none may appear since. */
		r->specs[n] = (struct rule_spec){ p->allow_unix_sockets[i], BB_R_UNIX_ALLOW, (uint32_t)n,
						  RULE_LAYER_OWN, p->guarded };
		r->rule_names[n] = r->owned_names[n];
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		r->spec_paths[i] = r->specs[i].path;
		r->spec_no_links[i] = r->specs[i].no_links;
	}
	r->n_specs = n;
	r->n_rule_names = n;
	return 0;
}

/* A caller (the daemon's, or exec --ceiling) audits only its own narrowing. */
enum audit_scope sandbox_run_audit_scope(const struct sandbox_run *r)
{
	return policy_audit_scope(r->policy, r->req.caller_bound, r->req.audit);
}

uint32_t sandbox_run_flags(const struct sandbox_run *r)
{
	const struct policy *p = r->policy;
	enum audit_scope audit = sandbox_run_audit_scope(r);
	uint32_t f = 0;

	if (audit == AUDIT_ALL)
		f |= BB_SB_AUDIT;
	else if (audit == AUDIT_CALLER)
		f |= BB_SB_AUDIT_OWN;
	if (p->allow_git_config)
		f |= BB_SB_ALLOW_GIT_CONFIG;
	if (p->fs_disabled)
		f |= BB_SB_FS_DISABLED;
	if (p->allow_all_unix_sockets)
		f |= BB_SB_ALLOW_ALL_UNIX;
	if (p->allow_local_binding)
		f |= BB_SB_ALLOW_LOCAL_BIND;
	if (p->allow_nested_userns)
		f |= BB_SB_ALLOW_USERNS;
	if (p->has_ceiling)
		f |= BB_SB_CEILING;
	if (p->git_new == POLICY_GIT_REFUSE)
		f |= BB_SB_GIT_NO_NEW;
	return f;
}

static void rule_note(void *ctx, const struct rule_spec *spec, const char *what)
{
	struct sandbox_run *r = ctx;

	log_msg(r->log, LOG_WARN, "warning", "rule %s (%s): %s", r->rule_names[spec->rule], spec->path, what);
}

void sandbox_run_device_note(void *ctx, const char *path, const char *what)
{
	struct sandbox_run *r = ctx;

	log_msg(r->log, LOG_WARN, "warning", "bpfbox.devices.allow %s: %s; the sandbox cannot open it", path, what);
}

/*
 * The sandbox's share of the rule maps is reserved for what its resolved
 * rules write at most, before any is written; then it is lowered to what
 * they did write (rules on one object share an entry).
 */
int sandbox_run_load_rules(struct sandbox_run *r, struct errmsg *em)
{
	uint32_t need = sandbox_maps_rule_entries(r->specs, r->launch.results, r->n_specs), written = 0;
	int err;

	err = quota_reserve(r->bpf, &r->quota, r->cg.id, r->req.quota_uid, QUOTA_RULES, need, em);
	if (err)
		return err;
	err = sandbox_maps_load_rules(r->bpf, r->cg.id, r->specs, r->launch.results, r->n_specs, rule_note, r,
				      &written, em);
	if (!err)
		quota_settle(r->bpf, r->cg.id, QUOTA_RULES, written);
	return err;
}
