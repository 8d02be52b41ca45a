// SPDX-License-Identifier: MIT
/* Fields fixed at a sandbox's start, compared (policy_fixed.h). */
#include <stdbool.h>
#include <string.h>

#include "policy_fixed.h"

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The same strings, in any order (each list has no repeats). */
static bool set_eq(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		bool found = false;

		for (size_t j = 0; j < nb && !found; j++)
			found = str_eq(a[i], b[j]);
		if (!found)
			return false;
	}
	return true;
}

static bool hosts_eq(const struct domain_pattern *a, size_t na, const struct domain_pattern *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i].text, b[i].text))
			return false;
	return true;
}

static bool parent_eq(const struct policy_parent *a, const struct policy_parent *b)
{
	return a->scheme == b->scheme && str_eq(a->host, b->host) && a->port == b->port &&
	       str_eq(a->user, b->user) && str_eq(a->pass, b->pass);
}

static bool cred_rule_eq(const struct policy_cred_rule *a, const struct policy_cred_rule *b)
{
	return str_eq(a->name, b->name) && a->mode == b->mode && str_eq(a->extract, b->extract) &&
	       a->on_no_match == b->on_no_match && a->decode_jwt == b->decode_jwt &&
	       set_eq(a->mask_claims, a->n_mask_claims, b->mask_claims, b->n_mask_claims) &&
	       a->mask_duplicates == b->mask_duplicates && a->inject_defaulted == b->inject_defaulted &&
	       /*
		* Defaulted, the hosts are allowedDomains', which change live: the
		* proxy's decision already keeps a request from a host no longer
		* allowed, and a newly allowed one gets no value put in.
		*/
	       (a->inject_defaulted ||
		hosts_eq(a->inject_hosts, a->n_inject_hosts, b->inject_hosts, b->n_inject_hosts));
}

/* credentials.sigv4's modes are asked at each request: not compared. */
static bool cred_eq(const struct policy_credentials *a, const struct policy_credentials *b)
{
	if (a->n_env != b->n_env || a->n_aws_pairs != b->n_aws_pairs ||
	    a->allow_plaintext_inject != b->allow_plaintext_inject)
		return false;
	for (size_t i = 0; i < a->n_env; i++)
		if (!cred_rule_eq(&a->env[i], &b->env[i]))
			return false;
	for (size_t i = 0; i < a->n_aws_pairs; i++)
		if (!str_eq(a->aws_pairs[i].key_id_var, b->aws_pairs[i].key_id_var) ||
		    !str_eq(a->aws_pairs[i].secret_var, b->aws_pairs[i].secret_var) ||
		    !str_eq(a->aws_pairs[i].session_var, b->aws_pairs[i].session_var))
			return false;
	return true;
}

const char *policy_fixed_change(const struct policy *a, const struct policy *b)
{
	if (a->limit_pids != b->limit_pids || a->limit_memory_bytes != b->limit_memory_bytes ||
	    a->limit_cpu_percent != b->limit_cpu_percent)
		return "bpfbox.limits";
	if (a->require_host_match != b->require_host_match)
		return "network.requireHostMatch";
	if (a->refuse_opaque_tunnels != b->refuse_opaque_tunnels)
		return "network.refuseOpaqueTunnels";
	if (!set_eq(a->strip_response_headers, a->n_strip_response_headers, b->strip_response_headers,
		    b->n_strip_response_headers))
		return "network.stripResponseHeaders";
	if (!parent_eq(&a->parent, &b->parent))
		return "bpfbox.network.parentProxy";
	if (a->has_env_allow != b->has_env_allow || !set_eq(a->env_allow, a->n_env_allow, b->env_allow, b->n_env_allow))
		return "bpfbox.env.allow";
	if (!set_eq(a->env_deny, a->n_env_deny, b->env_deny, b->n_env_deny) || !cred_eq(&a->cred, &b->cred))
		return "credentials";
	if (!set_eq(a->git_safe_dirs, a->n_git_safe_dirs, b->git_safe_dirs, b->n_git_safe_dirs))
		return "git.safeDirectories";
	if (!str_eq(a->tls.ca_cert_path, b->tls.ca_cert_path) || !str_eq(a->tls.ca_key_path, b->tls.ca_key_path) ||
	    !set_eq(a->tls.extra_ca_paths, a->tls.n_extra_ca, b->tls.extra_ca_paths, b->tls.n_extra_ca))
		return "network.tlsTerminate (caCertPath, caKeyPath, extraCaCertPaths)";
	return NULL;
}
