// SPDX-License-Identifier: MIT
/*
 * credentials under a ceiling, variable by variable. The administrator
 * decides what is secret and how it is masked; a caller may only hold less:
 *  - the administrator denies it: denied, whatever the caller says (a
 *    caller's mask would hand the command a sentinel the proxy turns back
 *    into the real value, which the administrator keeps out altogether);
 *  - the administrator masks it: a caller's deny stays (stricter); a
 *    caller's mask is masked the administrator's way (its extract, decode,
 *    claims: a caller's own extract could leave part of the secret in
 *    clear), to the hosts both name (injectHosts intersected, since the
 *    real value may go only where both would send it); no rule of the
 *    caller's: the administrator's mask is forced, so a caller cannot get
 *    the real value by saying nothing;
 *  - only the caller names it: the caller's rule.
 * allowPlaintextInject and a sigv4 "passthrough" need both policies: each
 * loosens how a masked secret travels, the first in clear text, the second
 * past the administrator's choice to refuse what cannot be re-signed. An
 * awsPairs entry stays while its members are still masked whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

static const struct policy_cred_rule *find_rule(const struct policy *p, const char *name)
{
	return policy_cred_find(p, name);
}

/* Appends a copy of r, or of r's masking with name kept; returns it (NULL on OOM). */
static struct policy_cred_rule *add_rule(struct ceiling *c, const struct policy_cred_rule *r)
{
	struct policy_credentials *cr = &c->p->cred;
	struct policy_cred_rule *n = realloc(cr->env, (cr->n_env + 1) * sizeof(*n)), *d;

	if (!n) {
		c->oom = true;
		return NULL;
	}
	cr->env = n;
	d = &n[cr->n_env++];
	memset(d, 0, sizeof(*d));
	d->name = ceiling_strdup(c, r->name);
	d->mode = r->mode;
	d->extract = ceiling_strdup(c, r->extract);
	d->on_no_match = r->on_no_match;
	d->decode_jwt = r->decode_jwt;
	for (size_t i = 0; i < r->n_mask_claims; i++)
		ceiling_strv_add(c, &d->mask_claims, &d->n_mask_claims, r->mask_claims[i]);
	d->mask_duplicates = r->mask_duplicates;
	d->inject_defaulted = r->inject_defaulted;
	d->from_ceiling = r->from_ceiling;
	if (r->n_inject_hosts) {
		d->inject_hosts = malloc(r->n_inject_hosts * sizeof(*d->inject_hosts));
		if (!d->inject_hosts) {
			c->oom = true;
			return d;
		}
		memcpy(d->inject_hosts, r->inject_hosts, r->n_inject_hosts * sizeof(*d->inject_hosts));
		d->n_inject_hosts = r->n_inject_hosts;
	}
	return d;
}

static void host_add(struct ceiling *c, struct policy_cred_rule *d, const struct domain_pattern *h)
{
	struct domain_pattern *n;

	for (size_t i = 0; i < d->n_inject_hosts; i++)
		if (domain_pattern_covers(&d->inject_hosts[i], h))
			return;
	n = realloc(d->inject_hosts, (d->n_inject_hosts + 1) * sizeof(*n));
	if (!n) {
		c->oom = true;
		return;
	}
	d->inject_hosts = n;
	n[d->n_inject_hosts++] = *h;
}

/* The caller's injectHosts entry k, within the administrator's list for the same variable. */
static void narrow_host(struct ceiling *c, size_t i, const struct policy_cred_rule *u,
			const struct policy_cred_rule *a, size_t k, struct policy_cred_rule *d)
{
	const struct domain_pattern *want = &u->inject_hosts[k];
	struct cut_places l = { 0 };
	struct domain_pattern x;
	char list[64], *path = NULL, *v = NULL;

	for (size_t j = 0; j < a->n_inject_hosts; j++)
		if (domain_pattern_covers(&a->inject_hosts[j], want)) {
			host_add(c, d, want);
			return;
		}
	for (size_t j = 0; j < a->n_inject_hosts; j++)
		if (domain_pattern_intersect(want, &a->inject_hosts[j], &x)) {
			host_add(c, d, &x);
			places_add(c, &l, x.text);
		}
	/* A default list is allowedDomains: a cut only of what the caller wrote. */
	if (u->inject_defaulted)
		goto out;
	snprintf(list, sizeof(list), "credentials.envVars[%zu].injectHosts", i);
	path = ceiling_jpath_at(c, list, k);
	v = path ? ceiling_quoted(c, want->text, NULL) : NULL;
	if (!v)
		goto out;
	if (l.n)
		ceiling_cut_places(c, path, v, "partly outside the hosts the administrator's "
				   "policy injects this variable at", &l, "injected only at");
	else
		ceiling_cut(c, path, v, "outside the hosts the administrator's policy injects "
			    "this variable at",
			    "not injected");
out:
	free(l.text);
	free(v);
	free(path);
}

static bool same_masking(const struct policy_cred_rule *u, const struct policy_cred_rule *a)
{
	bool claims = u->n_mask_claims == a->n_mask_claims;

	for (size_t i = 0; claims && i < u->n_mask_claims; i++)
		claims = ceiling_strv_has(a->mask_claims, a->n_mask_claims, u->mask_claims[i]);
	return claims && u->decode_jwt == a->decode_jwt && u->on_no_match == a->on_no_match &&
	       (u->extract ? a->extract && !strcmp(u->extract, a->extract) : !a->extract);
}

/* Both mask: the administrator's masking, the hosts both name. */
static void both_mask(struct ceiling *c, size_t i, const struct policy_cred_rule *u,
		      const struct policy_cred_rule *a)
{
	struct policy_cred_rule *d;
	char path[48], *v;

	d = add_rule(c, a);
	if (!d)
		return;
	d->from_ceiling = false;
	d->mask_duplicates = a->mask_duplicates || u->mask_duplicates;
	d->inject_defaulted = a->inject_defaulted && u->inject_defaulted;
	free(d->inject_hosts);
	d->inject_hosts = NULL;
	d->n_inject_hosts = 0;
	for (size_t k = 0; k < u->n_inject_hosts && !c->oom; k++)
		narrow_host(c, i, u, a, k, d);
	if (same_masking(u, a))
		return;
	snprintf(path, sizeof(path), "credentials.envVars[%zu]", i);
	v = ceiling_quoted(c, u->name, NULL);
	if (v)
		ceiling_cut(c, path, v, "the administrator's policy masks this variable its own way",
			    "masked with the administrator's extract, decode and claims");
	free(v);
}

static void caller_rule(struct ceiling *c, size_t i)
{
	const struct policy_cred_rule *u = &c->caller->cred.env[i];
	const struct policy_cred_rule *a = find_rule(c->admin, u->name);
	char path[48], *v;

	if (!a || u->mode == POLICY_CRED_DENY) {
		add_rule(c, u);
		return;
	}
	if (a->mode == POLICY_CRED_MASK) {
		both_mask(c, i, u, a);
		return;
	}
	add_rule(c, a);
	snprintf(path, sizeof(path), "credentials.envVars[%zu].mode", i);
	v = ceiling_quoted(c, "mask", NULL);
	if (v)
		ceiling_cut(c, path, v, "denied by the administrator's credentials.envVars", "denied");
	free(v);
}

/* Does the effective policy still mask name whole (an awsPairs member)? */
static bool whole_masked(const struct policy *p, const char *name)
{
	const struct policy_cred_rule *r = name ? policy_cred_find(p, name) : NULL;

	return r && r->mode == POLICY_CRED_MASK && !r->extract && !r->decode_jwt;
}

static bool pair_overlaps(const struct policy_credentials *cr, const struct policy_aws_pair *x)
{
	const char *names[3] = { x->key_id_var, x->secret_var, x->session_var };

	for (size_t i = 0; i < cr->n_aws_pairs; i++)
		for (int k = 0; k < 3; k++)
			if (names[k] && (!strcmp(cr->aws_pairs[i].key_id_var, names[k]) ||
					 !strcmp(cr->aws_pairs[i].secret_var, names[k]) ||
					 (cr->aws_pairs[i].session_var &&
					  !strcmp(cr->aws_pairs[i].session_var, names[k]))))
				return true;
	return false;
}

/* Keeps x when its members are still masked whole; a caller's pair lost is a cut. */
static void add_pair(struct ceiling *c, const struct policy_aws_pair *x, long caller_index)
{
	struct policy_credentials *cr = &c->p->cred;
	struct policy_aws_pair *n;
	char path[48];

	if (pair_overlaps(cr, x))
		return;
	if (!whole_masked(c->p, x->key_id_var) || !whole_masked(c->p, x->secret_var) ||
	    (x->session_var && !whole_masked(c->p, x->session_var))) {
		if (caller_index >= 0 && !x->implicit) {
			snprintf(path, sizeof(path), "credentials.awsPairs[%ld]", caller_index);
			ceiling_cut(c, path, NULL, "a member is not masked whole under the "
				    "administrator's credentials.envVars", "not re-signed");
		}
		return;
	}
	n = realloc(cr->aws_pairs, (cr->n_aws_pairs + 1) * sizeof(*n));
	if (!n) {
		c->oom = true;
		return;
	}
	cr->aws_pairs = n;
	n = &n[cr->n_aws_pairs++];
	n->key_id_var = ceiling_strdup(c, x->key_id_var);
	n->secret_var = ceiling_strdup(c, x->secret_var);
	n->session_var = ceiling_strdup(c, x->session_var);
	n->implicit = x->implicit;
}

static enum policy_sigv4_mode narrow_sigv4(struct ceiling *c, const char *key,
					   enum policy_sigv4_mode u, enum policy_sigv4_mode a)
{
	char path[48];

	snprintf(path, sizeof(path), "credentials.sigv4.%s", key);
	if (u == POLICY_SIGV4_PASSTHROUGH && a != POLICY_SIGV4_PASSTHROUGH)
		ceiling_cut(c, path, "\"passthrough\"", "the administrator's policy denies it",
			    "\"deny\" applies");
	return u == POLICY_SIGV4_PASSTHROUGH && a == POLICY_SIGV4_PASSTHROUGH ?
	       POLICY_SIGV4_PASSTHROUGH : POLICY_SIGV4_DENY;
}

void ceiling_cred(struct ceiling *c)
{
	const struct policy_credentials *a = &c->admin->cred, *u = &c->caller->cred;
	struct policy_credentials *p = &c->p->cred;

	for (size_t i = 0; i < u->n_env && !c->oom; i++)
		if (!policy_cred_find(c->p, u->env[i].name) || u->env[i].mode == POLICY_CRED_DENY)
			caller_rule(c, i);
	/* What the caller does not name: the administrator's rule, forced. */
	for (size_t i = 0; i < a->n_env && !c->oom; i++) {
		struct policy_cred_rule *d;

		if (find_rule(c->caller, a->env[i].name))
			continue;
		d = add_rule(c, &a->env[i]);
		if (d)
			d->from_ceiling = true;
	}
	for (size_t i = 0; i < u->n_aws_pairs && !c->oom; i++)
		add_pair(c, &u->aws_pairs[i], (long)i);
	for (size_t i = 0; i < a->n_aws_pairs && !c->oom; i++)
		add_pair(c, &a->aws_pairs[i], -1);
	p->allow_plaintext_inject = a->allow_plaintext_inject && u->allow_plaintext_inject;
	ceiling_cut_flag(c, "credentials.allowPlaintextInject", u->allow_plaintext_inject,
			 a->allow_plaintext_inject, "not granted");
	p->sigv4_streaming = narrow_sigv4(c, "streaming", u->sigv4_streaming, a->sigv4_streaming);
	p->sigv4_presigned = narrow_sigv4(c, "presigned", u->sigv4_presigned, a->sigv4_presigned);
	p->sigv4a = narrow_sigv4(c, "sigv4a", u->sigv4a, a->sigv4a);
}
