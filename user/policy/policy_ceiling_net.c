// SPDX-License-Identifier: MIT
/*
 * The network under a ceiling: the caller's allowedDomains kept with the
 * administrator's as a second list both must match, deniedDomains and
 * deniedResolvedAddresses united, and the socket, proxy-port, parent-proxy,
 * socket-protocol and DNS-type grants intersected, each cut named; the
 * request-level settings last (policy_ceiling_tls.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

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
		p->allowed_sources[i] = ceiling_strdup(c, u->allowed_sources[i]);
		p->allowed_rule_names[i] = ceiling_strdup(c, u->allowed_rule_names[i]);
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
			p->denied_sources[k] = ceiling_strdup(c, s->denied_sources[i]);
			p->denied_reasons[k] = ceiling_strdup(c, s->denied_reasons ?
							      s->denied_reasons[i] : NULL);
			if (s == c->admin) {
				if (asprintf(&p->denied_rule_names[k], "ceiling:%s",
					     s->denied_rule_names[i]) < 0) {
					p->denied_rule_names[k] = NULL;
					c->oom = true;
				}
			} else {
				p->denied_rule_names[k] = ceiling_strdup(c, s->denied_rule_names[i]);
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
	struct cut_places l = { 0 };
	char *path = NULL, *v = NULL, *why = NULL;
	bool covered = false;

	if (caller_denies(c, want))
		return;
	path = ceiling_jpath_at(c, "network.allowedDomains", i);
	v = path ? ceiling_quoted(c, u->allowed_sources[i], want->text) : NULL;
	if (!v)
		goto out;
	for (size_t k = 0; k < a->n_denied_domains; k++)
		if (domain_pattern_covers(&a->denied_domains[k], want)) {
			if (asprintf(&why, "inside the administrator's deniedDomains \"%s\"",
				     a->denied_domains[k].text) < 0) {
				why = NULL;
				c->oom = true;
			} else {
				ceiling_cut(c, path, v, why, "not granted");
			}
			goto out;
		}
	for (size_t k = 0; k < a->n_allowed_domains && !covered; k++)
		covered = domain_pattern_covers(&a->allowed_domains[k], want);
	if (!covered) {
		for (size_t k = 0; k < a->n_allowed_domains; k++)
			if (domain_pattern_intersect(want, &a->allowed_domains[k], &x) &&
			    !caller_denies(c, &x))
				places_add(c, &l, x.text);
		if (l.n)
			ceiling_cut_places(c, path, v, "partly outside the administrator's allowedDomains",
					   &l, "granted only for");
		else
			ceiling_cut(c, path, v, "outside the administrator's allowedDomains", "not granted");
		goto out;
	}
	for (size_t k = 0; k < a->n_denied_domains; k++)
		if (domain_pattern_intersect(want, &a->denied_domains[k], &x) &&
		    !caller_denies(c, &x))
			places_add(c, &l, a->denied_domains[k].text);
	ceiling_cut_places(c, path, v, "partly inside the administrator's deniedDomains", &l,
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
			    ceiling_strv_has(a->allow_unix_sockets, a->n_allow_unix_sockets, s)) {
				ceiling_strv_add_unique(c, &p->allow_unix_sockets, &p->n_allow_unix_sockets, s);
				continue;
			}
			path = ceiling_jpath_at(c, "network.allowUnixSockets", i);
			if (path)
				ceiling_cut_quoted(c, path, s, NULL,
						   "outside the administrator's allowUnixSockets", "not granted");
			free(path);
		}
	} else if (!a->allow_all_unix_sockets) {
		for (size_t i = 0; i < a->n_allow_unix_sockets; i++)
			ceiling_strv_add_unique(c, &p->allow_unix_sockets, &p->n_allow_unix_sockets,
						a->allow_unix_sockets[i]);
		ceiling_cut_flag(c, "network.allowAllUnixSockets", true, false,
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
		ceiling_cut(c, path, v, "the administrator's policy filters this protocol in bpfbox's "
			    "proxy", "not granted");
		return;
	}
	if (asprintf(&why, "the administrator's policy uses port %d", admin) < 0) {
		c->oom = true;
		return;
	}
	ceiling_cut(c, path, v, why, "not granted");
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
	v = ceiling_quoted(c, u->shown, NULL);
	if (!v)
		return;
	ceiling_cut(c, "bpfbox.network.parentProxy", v, a->scheme ? "the administrator's policy names another "
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
		ceiling_cut(c, "bpfbox.network.allowSocketProtocols", value, "not allowed by the administrator's policy", "not granted");
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
		ceiling_cut(c, "bpfbox.network.dnsQueryTypes", value, "not answered under the administrator's policy",
			    "not granted");
	}
}

void ceiling_network(struct ceiling *c)
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
	ceiling_cut_flag(c, "network.allowLocalBinding", u->allow_local_binding, a->allow_local_binding,
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
	ceiling_tls(c);
}
