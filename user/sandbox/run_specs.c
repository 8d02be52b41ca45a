// SPDX-License-Identifier: MIT
/* A run's policy as the kernel takes it: rule specs, the sandbox's flags, its share of the rule maps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfbox.h"
#include "log/log.h"
#include "policy/policy.h"
#include "quota.h"
#include "run.h"
#include "sandbox_devices.h"
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

/* Rule id id_base + i names specs[i]; the table also gives events their rule names. */
int run_rules_build(const struct sandbox_run *r, const struct policy *p, uint32_t id_base, struct run_rules *out)
{
	size_t cap = p->n_fs_rules + p->n_allow_unix_sockets + 4, n = 0;
	struct rule_spec *specs;
	const char **names;

	memset(out, 0, sizeof(*out));
	out->id_base = id_base;
	out->specs = specs = calloc(cap, sizeof(*out->specs));
	out->paths = calloc(cap, sizeof(*out->paths));
	out->no_links = calloc(cap, sizeof(*out->no_links));
	out->names = names = calloc(cap, sizeof(*out->names));
	out->owned_names = calloc(cap, sizeof(*out->owned_names));
	out->unix_names = calloc(cap, sizeof(*out->unix_names));
	if (!specs || !out->paths || !out->no_links || !names || !out->owned_names || !out->unix_names)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_fs_rules && !p->fs_disabled; i++) {
		/* Under a ceiling each layer stays apart in the kernel (docs/design.md, "Two layers"). */
		enum rule_layer layer = p->fs_rules[i].layer == FS_LAYER_CEILING ? RULE_LAYER_CEILING : RULE_LAYER_OWN;

		/* Resolving it would follow the link to what it would widen to (the loader warned). */
		if (policy_rule_unapplied(&p->fs_rules[i]))
			continue;
		specs[n] = (struct rule_spec){ p->fs_rules[i].path, spec_flags(p->fs_rules[i].kind), id_base + (uint32_t)n,
					       layer, p->fs_rules[i].no_links };
		names[n] = p->fs_rules[i].name;
		n++;
	}
	/* srt's rule: the CA certificate may be read inside, its key may not, whatever the lists say. */
	if (p->tls.enabled && p->tls.ca_key_path && !p->fs_disabled) {
		specs[n] = (struct rule_spec){ p->tls.ca_key_path, spec_flags(FS_DENY_READ), id_base + (uint32_t)n,
					       p->has_ceiling ? RULE_LAYER_BOTH : RULE_LAYER_OWN, false };
		names[n] = "implicit:denyRead:tlsTerminate.caKeyPath";
		n++;
	}
	out->tmpdir_spec = n;
	/* The sandbox's own TMPDIR is writable in both layers. */
	specs[n] = (struct rule_spec){ r->tmpdir, BB_R_ALLOW_WRITE, id_base + (uint32_t)n,
				       p->has_ceiling ? RULE_LAYER_BOTH : RULE_LAYER_OWN, false };
	names[n] = "implicit:allowWrite:TMPDIR";
	n++;
	/* Marks, not rules: /dev/shm's objects are decided by their creator; bpfbox's own state is off limits. */
	specs[n] = (struct rule_spec){ SANDBOX_SHM_DIR, BB_R_SHM, id_base + (uint32_t)n, RULE_LAYER_OWN, false };
	names[n] = "builtin:shm";
	n++;
	specs[n] = (struct rule_spec){ BPFBOX_RUN_DIR, BB_R_BPFBOX_STATE, id_base + (uint32_t)n, RULE_LAYER_OWN, false };
	names[n] = "builtin:bpfbox-state";
	n++;
	for (size_t i = 0; i < p->n_allow_unix_sockets; i++) {
		/* "@name": an abstract socket, matched by name in its own map. */
		if (p->allow_unix_sockets[i][0] == '@') {
			out->unix_names[out->n_unix_names++] = p->allow_unix_sockets[i] + 1;
			continue;
		}
		if (asprintf(&out->owned_names[n], "allowUnixSockets:%s", p->allow_unix_sockets[i]) < 0)
			return -ENOMEM;
		/* A guarded policy's socket paths were checked for the caller's links: none may appear since. */
		specs[n] = (struct rule_spec){ p->allow_unix_sockets[i], BB_R_UNIX_ALLOW, id_base + (uint32_t)n,
					       RULE_LAYER_OWN, p->guarded };
		names[n] = out->owned_names[n];
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		out->paths[i] = specs[i].path;
		out->no_links[i] = specs[i].no_links;
	}
	out->n = n;
	return 0;
}

void run_rules_free(struct run_rules *rr)
{
	for (size_t i = 0; rr->owned_names && i < rr->n; i++)
		free(rr->owned_names[i]);
	free(rr->owned_names);
	free(rr->specs);
	free(rr->paths);
	free(rr->no_links);
	free(rr->unix_names);
	free(rr->names);
	memset(rr, 0, sizeof(*rr));
}

int sandbox_run_build_specs(struct sandbox_run *r)
{
	return run_rules_build(r, r->policy, 0, &r->rules);
}

int run_rules_check_bounds(const struct run_rules *rr, const struct policy *p, struct errmsg *em)
{
	bool names = rr->n_unix_names > QUOTA_SANDBOX_UNIX_NAMES;

	if (!names && p->n_device_allow <= QUOTA_SANDBOX_DEVICES)
		return 0;
	return errmsg_set(em, -EDQUOT, "%s: %zu %s, over the limit of %d per sandbox (the host-wide %s map holds %d "
			  "for every sandbox)", names ? "network.allowUnixSockets" : "bpfbox.devices",
			  names ? rr->n_unix_names : p->n_device_allow, names ? "abstract socket names" : "devices",
			  names ? QUOTA_SANDBOX_UNIX_NAMES : QUOTA_SANDBOX_DEVICES, names ? "unix_names" : "device_allow",
			  names ? BB_MAX_UNIX_NAMES : BB_MAX_DEVICES);
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

	const struct run_rules *rr = r->update_rules ? r->update_rules : &r->rules;

	log_msg(r->log, LOG_WARN, "warning", "rule %s (%s): %s", rr->names[spec->rule - rr->id_base], spec->path, what);
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
	uint32_t need = sandbox_maps_rule_entries(r->rules.specs, r->launch.results, r->rules.n), written = 0;
	int err;

	err = quota_reserve(r->bpf, &r->quota, r->cg.id, r->req.quota_uid, QUOTA_RULES, need, em);
	if (err)
		return err;
	err = sandbox_maps_load_rules(r->bpf, r->cg.id, r->rules.specs, r->launch.results, r->rules.n, rule_note, r,
				      &written, em);
	if (!err) {
		quota_settle(r->bpf, r->cg.id, QUOTA_RULES, written);
		r->rules_held = written;
	}
	return err;
}

int run_rules_load(struct sandbox_run *r, const struct run_rules *rr, const struct policy *p,
		   const struct resolve_result *res, uint64_t key, uint32_t *written, struct errmsg *em)
{
	int err;

	r->update_rules = rr;
	err = sandbox_maps_load_rules(r->bpf, key, rr->specs, res, rr->n, rule_note, r, written, em);
	r->update_rules = NULL;
	if (!err)
		err = sandbox_maps_allow_unix_names(r->bpf, key, (const char *const *)rr->unix_names,
						    rr->n_unix_names, em);
	if (!err)
		err = sandbox_devices_load(r->bpf, key, p->device_allow, p->n_device_allow, sandbox_run_device_note,
					   r, em);
	return err;
}
