// SPDX-License-Identifier: MIT
/*
 * A running sandbox's policy replaced (srt's --control-fd, bpfbox update,
 * the daemon's ceiling reload). The new rule set is resolved and written
 * beside the one in force under the next generation's key, the kernel is
 * switched to it in one map update (rule_keys), and only then are the old
 * entries removed: no hook ever sees half of each. The proxy and the
 * resolver then decide by the new policy, and connections to names it no
 * longer allows are closed.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfbox.h"
#include "log/log_event.h"
#include "policy/policy_fixed.h"
#include "policy/policy_grants.h"
#include "quota.h"
#include "rule_resolve.h"
#include "run.h"
#include "sandbox_maps.h"

/* Retired policies are kept until the run ends (events in flight point into them): a bound on updates. */
#define RUN_UPDATE_MAX 100000

/* What the kernel keeps in the sandbox's own entry is fixed at start; a change names its field. */
static const struct {
	uint32_t flag;
	const char *field;
} fixed_flags[] = {
	{ BB_SB_AUDIT | BB_SB_AUDIT_OWN, "bpfbox.mode (audit)" },
	{ BB_SB_ALLOW_GIT_CONFIG, "filesystem.allowGitConfig" },
	{ BB_SB_FS_DISABLED, "filesystem.disabled" },
	{ BB_SB_ALLOW_ALL_UNIX, "network.allowAllUnixSockets" },
	{ BB_SB_ALLOW_LOCAL_BIND, "network.allowLocalBinding" },
	{ BB_SB_ALLOW_USERNS, "enableWeakerNestedSandbox (nested user namespaces)" },
	{ BB_SB_CEILING, "the administrator's ceiling" },
	{ BB_SB_GIT_NO_NEW, "bpfbox.git.newRepositories" },
};

static int check_fixed(struct sandbox_run *r, struct policy *next, struct errmsg *em)
{
	struct policy *cur = r->policy;
	const char *field;
	uint32_t before, after;

	before = sandbox_run_flags(r);
	r->policy = next;
	after = sandbox_run_flags(r);
	r->policy = cur;
	for (size_t i = 0; i < sizeof(fixed_flags) / sizeof(fixed_flags[0]); i++)
		if ((before ^ after) & fixed_flags[i].flag)
			return errmsg_set(em, -EINVAL, "%s cannot change while the sandbox runs; restart it",
					  fixed_flags[i].field);
	if (cur->sock_allow != next->sock_allow)
		return errmsg_set(em, -EINVAL, "bpfbox.network.allowSocketProtocols cannot change while the sandbox "
				  "runs; restart it");
	if (cur->http_proxy_port != next->http_proxy_port || cur->socks_proxy_port != next->socks_proxy_port)
		return errmsg_set(em, -EINVAL, "network.httpProxyPort and socksProxyPort cannot change while the "
				  "sandbox runs; restart it");
	if (cur->transparent_off != next->transparent_off)
		return errmsg_set(em, -EINVAL, "bpfbox.network.transparent cannot change while the sandbox runs; "
				  "restart it");
	if (cur->tls.enabled != next->tls.enabled)
		return errmsg_set(em, -EINVAL, "network.tlsTerminate cannot be turned on or off while the sandbox "
				  "runs; restart it");
	/* Taken at start by the cgroup, the proxy, the command's environment: a change could not take effect. */
	field = policy_fixed_change(cur, next);
	if (field)
		return errmsg_set(em, -EINVAL, "%s cannot change while the sandbox runs; restart it", field);
	/* As at start (run.c): without bpfbox's own proxy nothing can send a name to mitmProxy. */
	if (!r->proxy_started && next->mitm.enabled)
		return errmsg_set(em, -EINVAL, "network.mitmProxy needs bpfbox's own proxy, but httpProxyPort and "
				  "socksProxyPort send every connection to other proxies");
	/* What the proxy needs for next, before anything changes (its mitmProxy's socket). */
	if (r->proxy_started)
		return sandbox_proxy_prepare(&r->proxy, next, em);
	return 0;
}

/* Resolves and writes next's rules under key; on failure nothing of them is left and the share is as it was. */
static int load_next(struct sandbox_run *r, const struct policy *next, uint32_t gen, struct run_rules *rr,
		     uint32_t *written, struct errmsg *em)
{
	uint64_t key = BB_RULES_KEY(r->cg.id, gen);
	struct resolve_result *res = NULL;
	struct bb_sandbox sb;
	uint32_t need;
	int err;

	err = run_rules_build(r, next, (gen & 1) ? BB_RULE_GEN_BIT : 0, rr);
	if (err)
		return errmsg_set(em, err, "building the new rules");
	err = run_rules_check_bounds(rr, next, em);
	if (err)
		return err;
	if (bpf_map_lookup_elem(r->bpf->maps.sandboxes, &r->cg.id, &sb))
		return errmsg_set(em, -errno, "reading the sandbox's entry");
	err = rule_resolve(r->bpf, &r->cg, sb.ring_slot, rr->paths, rr->no_links, rr->n, &res, em);
	if (err)
		return err;
	need = sandbox_maps_rule_entries(rr->specs, res, rr->n);
	/* Both sets are in the maps for a moment: the share must hold both. */
	err = quota_reserve(r->bpf, &r->quota, r->cg.id, r->req.quota_uid, QUOTA_RULES, need, em);
	if (err)
		goto cleanup;
	*written = 0;
	err = run_rules_load(r, rr, next, res, key, written, em);
	if (err) {
		sandbox_maps_remove_rules(r->bpf, key);
		quota_settle(r->bpf, r->cg.id, QUOTA_RULES, r->rules_held);
	}
cleanup:
	rule_resolve_free(res, rr->n);
	return err;
}

/*
 * Waits until no hook still walks with the old rules key. A hook reads the
 * key once and then looks its entries up level by level, all inside one RCU
 * read-side section (a non-sleepable BPF program); removing the old entries
 * before that section ends would let such a walk find none and fall to the
 * default: a read both policies deny let through (test_76 caught it). The
 * membarrier command waits for a grace period (synchronize_rcu).
 */
static int wait_for_old_walks(struct errmsg *em)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return 0;
	return errmsg_set(em, -errno, "waiting for the kernel's hooks to leave the old rules (membarrier; a "
			  "nohz_full kernel refuses it): the old rules are kept, the new ones in force");
}

static size_t strv_len(char **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

static void log_update(struct sandbox_run *r, const struct policy *prev, const char *source)
{
	size_t na = 0, nb = 0;
	char **before = policy_grants(prev, &nb), **after = policy_grants(r->policy, &na);
	char **added = NULL, **removed = NULL, digest[80], was[80];
	struct log_event *ev;

	if (before && after) {
		added = policy_grants_missing(after, na, before, nb);
		removed = policy_grants_missing(before, nb, after, na);
	}
	ev = log_event_new(LOG_INFO, "event", "configuration", "change", "policy-updated", "success");
	snprintf(digest, sizeof(digest), "sha256:%s", r->policy->digest);
	snprintf(was, sizeof(was), "sha256:%s", prev->digest);
	log_event_set_str(ev, "bpfbox.policy.digest", digest);
	log_event_set_str(ev, "bpfbox.policy.previous_digest", was);
	log_event_set_str(ev, "bpfbox.policy.update.source", source);
	log_event_set_int(ev, "bpfbox.policy.update.generation", r->gen);
	if (added)
		log_event_set_strv(ev, "bpfbox.policy.update.added", added);
	if (removed)
		log_event_set_strv(ev, "bpfbox.policy.update.removed", removed);
	log_event_message(ev, "policy updated (%s): %s -> %s, %zu grant(s) added, %zu removed", source, was, digest,
			  strv_len(added), strv_len(removed));
	log_emit(r->log, ev);
	free(added);
	free(removed);
	policy_grants_free(before, nb);
	policy_grants_free(after, na);
}

/*
 * The network side follows: the resolver (its answer cache emptied), the
 * learned addresses (a revoked name's addresses leave the kernel's map),
 * then the proxy decide by next.
 */
static void switch_network(struct sandbox_run *r, const struct policy *next)
{
	if (r->dns_started)
		sandbox_dns_set_policy(&r->dns, next);
	/* The table exists when the transparent path does, which cannot change live. */
	if (!next->transparent_off)
		sandbox_learned_set_policy(&r->learned, next);
	if (r->proxy_started)
		sandbox_proxy_set_policy(&r->proxy, next);
}

int sandbox_run_update(struct sandbox_run *r, struct policy *next, const char *source, struct errmsg *em)
{
	uint32_t gen = r->gen + 1 > BB_GEN_MAX ? 0 : r->gen + 1, written = 0;
	struct run_rules rr = { 0 };
	struct policy **retired;
	struct policy *prev;
	int err;

	if (!r->maps_added || !r->launched)
		return errmsg_set(em, -EAGAIN, "the sandbox is not running yet");
	if (r->n_retired >= RUN_UPDATE_MAX)
		return errmsg_set(em, -ENOSPC, "%d updates already: restart the sandbox to change it again",
				  RUN_UPDATE_MAX);
	err = check_fixed(r, next, em);
	if (err)
		return err;
	retired = realloc(r->retired, (r->n_retired + 1) * sizeof(*retired));
	if (!retired)
		return errmsg_set(em, -ENOMEM, "keeping the previous policy");
	r->retired = retired;
	err = load_next(r, next, gen, &rr, &written, em);
	if (err) {
		run_rules_free(&rr);
		return err;
	}
	err = sandbox_maps_switch_rules(r->bpf, r->cg.id, BB_RULES_KEY(r->cg.id, gen), em);
	if (err) {
		sandbox_maps_remove_rules(r->bpf, BB_RULES_KEY(r->cg.id, gen));
		quota_settle(r->bpf, r->cg.id, QUOTA_RULES, r->rules_held);
		run_rules_free(&rr);
		return err;
	}
	/*
	 * The kernel decides by the new set from here: once no hook still walks
	 * the old one, it goes, and its share with it. When that wait cannot be
	 * had, the old entries stay (and count) until the run ends: never a
	 * walk that finds neither set.
	 */
	if (!wait_for_old_walks(em)) {
		sandbox_maps_remove_rules(r->bpf, BB_RULES_KEY(r->cg.id, r->gen));
		quota_settle(r->bpf, r->cg.id, QUOTA_RULES, written);
		r->rules_held = written;
	} else {
		log_msg(r->log, LOG_WARN, "warning", "%s", em->text);
		r->rules_held += written;
	}
	r->gen = gen;
	run_rules_free(&r->prev_rules);
	r->prev_rules = r->rules;
	r->rules = rr;
	r->kctx.rule_names[gen & 1] = r->rules.names;
	r->kctx.n_rules[gen & 1] = r->rules.n;
	prev = r->policy;
	r->retired[r->n_retired++] = prev;
	r->policy = next;
	switch_network(r, next);
	log_update(r, prev, source);
	return 0;
}
