// SPDX-License-Identifier: MIT
/*
 * srt's request-level settings under a ceiling. An administrator's
 * tlsTerminate applies to every caller with the administrator's CA and
 * trust: a caller narrows only its excludeDomains (a name is left opaque
 * only if both exclude it) and the limits (the smaller). Without one, a
 * caller may terminate with its own CA or an ephemeral one. The checks
 * (requireHostMatch, refuseOpaqueTunnels, the ambiguous-target handling,
 * stripped headers) take the stricter; allowPlaintextHeaderSet needs both.
 * mitmProxy is the administrator's alone: the daemon's proxy runs as root,
 * and a socket a caller names could be any root-only service speaking HTTP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

static void copy_tls(struct ceiling *c, const struct policy_tls *src)
{
	struct policy_tls *t = &c->p->tls;

	t->enabled = src->enabled;
	t->ca_cert_path = ceiling_strdup(c, src->ca_cert_path);
	t->ca_key_path = ceiling_strdup(c, src->ca_key_path);
	if (src->n_exclude) {
		t->exclude = malloc(src->n_exclude * sizeof(*t->exclude));
		if (!t->exclude) {
			c->oom = true;
			return;
		}
		memcpy(t->exclude, src->exclude, src->n_exclude * sizeof(*t->exclude));
		t->n_exclude = src->n_exclude;
	}
	for (size_t i = 0; i < src->n_extra_ca; i++)
		ceiling_strv_add(c, &t->extra_ca_paths, &t->n_extra_ca, src->extra_ca_paths[i]);
	t->max_tunnels = src->max_tunnels;
	t->handshake_timeout_ms = src->handshake_timeout_ms;
	t->max_tunnels_given = src->max_tunnels_given;
	t->handshake_timeout_given = src->handshake_timeout_given;
}

/* The caller's CA file, where the administrator's policy names the CA (or makes one). */
static void cut_ca(struct ceiling *c, const char *key, const char *caller, const char *admin)
{
	char path[64];

	if (!caller || (admin && !strcmp(caller, admin)))
		return;
	snprintf(path, sizeof(path), "network.tlsTerminate.%s", key);
	ceiling_cut_quoted(c, path, caller, NULL, admin ? "the administrator's policy names the CA" :
			   "the administrator's policy terminates with an ephemeral CA",
			   admin ? "the administrator's CA is used" : "an ephemeral CA is used");
}

/* A trust anchor only the caller names would widen what the proxy trusts for everyone's requests. */
static void cut_extra_ca(struct ceiling *c)
{
	const struct policy_tls *a = &c->admin->tls, *u = &c->caller->tls;

	for (size_t i = 0; i < u->n_extra_ca; i++) {
		char *path;

		if (ceiling_strv_has(a->extra_ca_paths, a->n_extra_ca, u->extra_ca_paths[i]))
			continue;
		path = ceiling_jpath_at(c, "network.tlsTerminate.extraCaCertPaths", i);
		if (path)
			ceiling_cut_quoted(c, path, u->extra_ca_paths[i], NULL,
					   "not among the administrator's extraCaCertPaths", "not trusted");
		free(path);
	}
}

static void exclude_add(struct ceiling *c, const struct domain_pattern *x)
{
	struct policy_tls *t = &c->p->tls;
	struct domain_pattern *n;

	for (size_t i = 0; i < t->n_exclude; i++)
		if (domain_pattern_covers(&t->exclude[i], x))
			return;
	n = realloc(t->exclude, (t->n_exclude + 1) * sizeof(*n));
	if (!n) {
		c->oom = true;
		return;
	}
	t->exclude = n;
	n[t->n_exclude++] = *x;
}

/* A name is left opaque only where both policies exclude it; the rest of a caller's entry is a cut. */
static void narrow_exclude(struct ceiling *c, size_t i)
{
	const struct policy_tls *a = &c->admin->tls;
	const struct domain_pattern *want = &c->caller->tls.exclude[i];
	struct cut_places l = { 0 };
	struct domain_pattern x;
	char *path, *v = NULL;

	for (size_t k = 0; k < a->n_exclude; k++)
		if (domain_pattern_covers(&a->exclude[k], want)) {
			exclude_add(c, want);
			return;
		}
	path = ceiling_jpath_at(c, "network.tlsTerminate.excludeDomains", i);
	v = path ? ceiling_quoted(c, want->text, NULL) : NULL;
	if (!v)
		goto out;
	for (size_t k = 0; k < a->n_exclude; k++)
		if (domain_pattern_intersect(want, &a->exclude[k], &x)) {
			exclude_add(c, &x);
			places_add(c, &l, x.text);
		}
	if (l.n)
		ceiling_cut_places(c, path, v, "partly outside the administrator's "
				   "tlsTerminate.excludeDomains", &l, "excluded only for");
	else
		ceiling_cut(c, path, v, "outside the administrator's tlsTerminate.excludeDomains",
			    "terminated");
out:
	free(l.text);
	free(v);
	free(path);
}

/* The smaller; a caller's value it did not write narrows silently. */
static unsigned narrow_limit(struct ceiling *c, const char *key, unsigned caller, bool given,
			     unsigned admin)
{
	char path[64], v[16], outcome[32];

	if (caller <= admin)
		return caller;
	if (given) {
		snprintf(path, sizeof(path), "network.tlsTerminate.%s", key);
		snprintf(v, sizeof(v), "%u", caller);
		snprintf(outcome, sizeof(outcome), "limited to %u", admin);
		ceiling_cut(c, path, v, "above the administrator's limit", outcome);
	}
	return admin;
}

static void ceiling_tls_terminate(struct ceiling *c)
{
	const struct policy_tls *a = &c->admin->tls, *u = &c->caller->tls;
	struct policy_tls *t = &c->p->tls;

	if (!a->enabled && u->enabled && c->admin->mitm.enabled) {
		/* Exclusive: terminated here, those names would no longer reach the administrator's MITM proxy. */
		ceiling_cut(c, "network.tlsTerminate", NULL, "the administrator's policy sends names to its "
			    "mitmProxy, which excludes tlsTerminate", "TLS is not terminated");
		return;
	}
	if (!a->enabled || !u->enabled) {
		/* One policy's own, or none: the caller's may use its own CA or an ephemeral one. */
		copy_tls(c, a->enabled ? a : u);
		t->from_ceiling = a->enabled;
		return;
	}
	t->enabled = true;
	t->from_ceiling = true;
	t->ca_cert_path = ceiling_strdup(c, a->ca_cert_path);
	t->ca_key_path = ceiling_strdup(c, a->ca_key_path);
	cut_ca(c, "caCertPath", u->ca_cert_path, a->ca_cert_path);
	cut_ca(c, "caKeyPath", u->ca_key_path, a->ca_key_path);
	for (size_t i = 0; i < u->n_exclude && !c->oom; i++)
		narrow_exclude(c, i);
	for (size_t i = 0; i < a->n_extra_ca; i++)
		ceiling_strv_add(c, &t->extra_ca_paths, &t->n_extra_ca, a->extra_ca_paths[i]);
	cut_extra_ca(c);
	t->max_tunnels = narrow_limit(c, "maxTunnels", u->max_tunnels, u->max_tunnels_given,
				      a->max_tunnels);
	t->max_tunnels_given = u->max_tunnels_given || a->max_tunnels_given;
	t->handshake_timeout_ms = narrow_limit(c, "handshakeTimeoutMs", u->handshake_timeout_ms,
					       u->handshake_timeout_given, a->handshake_timeout_ms);
	t->handshake_timeout_given = u->handshake_timeout_given || a->handshake_timeout_given;
}

static bool same_domains(const struct policy_mitm *a, const struct policy_mitm *u)
{
	if (a->n_domains != u->n_domains)
		return false;
	for (size_t i = 0; i < a->n_domains; i++)
		if (strcmp(a->domains[i].text, u->domains[i].text))
			return false;
	return true;
}

static void ceiling_mitm(struct ceiling *c)
{
	const struct policy_mitm *a = &c->admin->mitm, *u = &c->caller->mitm;
	struct policy_mitm *m = &c->p->mitm;

	if (a->enabled) {
		m->enabled = true;
		m->socket_path = ceiling_strdup(c, a->socket_path);
		if (a->n_domains) {
			m->domains = malloc(a->n_domains * sizeof(*m->domains));
			if (!m->domains) {
				c->oom = true;
				return;
			}
			memcpy(m->domains, a->domains, a->n_domains * sizeof(*m->domains));
			m->n_domains = a->n_domains;
		}
	}
	if (!u->enabled || (a->enabled && !strcmp(a->socket_path, u->socket_path) && same_domains(a, u)))
		return;
	ceiling_cut_quoted(c, "network.mitmProxy.socketPath", u->socket_path, NULL,
			   "only the administrator's policy names a MITM proxy (the daemon's proxy, root, "
			   "would connect to it)", a->enabled ? "the administrator's mitmProxy applies" :
			   "names are not sent to it");
}

/* refuse, then normalize, then asSpelled; a caller's looser value is a cut. */
static void ceiling_ambiguous(struct ceiling *c)
{
	static const int rank[] = { [POLICY_AMBIG_AS_SPELLED] = 0, [POLICY_AMBIG_NORMALIZE] = 1,
				    [POLICY_AMBIG_REFUSE] = 2 };
	enum policy_ambiguous_target a = c->admin->ambiguous_target, u = c->caller->ambiguous_target;
	char value[32], outcome[32];

	c->p->ambiguous_target = rank[a] > rank[u] ? a : u;
	if (rank[u] >= rank[a])
		return;
	snprintf(value, sizeof(value), "\"%s\"", policy_ambiguous_target_name(u));
	snprintf(outcome, sizeof(outcome), "\"%s\" applies", policy_ambiguous_target_name(a));
	ceiling_cut(c, "network.ambiguousRequestTarget", value, "looser than the administrator's policy",
		    outcome);
}

void ceiling_tls(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	ceiling_tls_terminate(c);
	ceiling_mitm(c);
	/* Checks either policy asks for stay; a caller's false is its default, narrowed silently. */
	p->require_host_match = a->require_host_match || u->require_host_match;
	p->refuse_opaque_tunnels = a->refuse_opaque_tunnels || u->refuse_opaque_tunnels;
	ceiling_ambiguous(c);
	for (size_t i = 0; i < a->n_strip_response_headers; i++)
		ceiling_strv_add_unique(c, &p->strip_response_headers, &p->n_strip_response_headers,
					a->strip_response_headers[i]);
	for (size_t i = 0; i < u->n_strip_response_headers; i++)
		ceiling_strv_add_unique(c, &p->strip_response_headers, &p->n_strip_response_headers,
					u->strip_response_headers[i]);
	p->allow_plaintext_header_set = a->allow_plaintext_header_set && u->allow_plaintext_header_set;
	ceiling_cut_flag(c, "network.allowPlaintextHeaderSet", u->allow_plaintext_header_set,
			 a->allow_plaintext_header_set, "not granted");
}
