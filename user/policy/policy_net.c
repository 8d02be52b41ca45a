// SPDX-License-Identifier: MIT
/*
 * The "network" section: domain allow/deny lists in canonical form, reasons,
 * resolved-address guards, Unix sockets, local binding, external proxy
 * ports; srt's request-level settings in policy_tls.c, mitmProxy in
 * policy_mitm.c. What bpfbox does not implement (filterRequest) is refused,
 * not dropped: a policy that relies on it would silently get less protection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfbox.h"
#include "policy_json.h"

static const struct key_spec net_keys[] = {
	{ "allowedDomains", KEY_KNOWN, NULL },
	{ "deniedDomains", KEY_KNOWN, NULL },
	{ "deniedDomainReasons", KEY_KNOWN, NULL },
	{ "strictAllowlist", KEY_KNOWN, NULL },
	{ "deniedResolvedAddresses", KEY_KNOWN, NULL },
	{ "allowUnixSockets", KEY_KNOWN, NULL },
	{ "allowAllUnixSockets", KEY_KNOWN, NULL },
	{ "allowLocalBinding", KEY_KNOWN, NULL },
	{ "httpProxyPort", KEY_KNOWN, NULL },
	{ "socksProxyPort", KEY_KNOWN, NULL },
	{ "allowMachLookup", KEY_IGNORED, "macOS XPC/Mach services do not exist on Linux" },
	{ "parentProxy", KEY_REFUSED, "srt's per-scheme upstream proxy object is not bpfbox's; "
	  "bpfbox.network.parentProxy takes one URL for every connection (docs/policy.md)" },
	{ "mitmProxy", KEY_KNOWN, NULL },	/* policy_mitm.c */
	{ "filterRequest", KEY_REFUSED, "a function of srt's library API, which no settings file "
	  "can hold" },
	/* srt's request-level settings: policy_tls.c */
	{ "tlsTerminate", KEY_KNOWN, NULL },
	{ "refuseOpaqueTunnels", KEY_KNOWN, NULL },
	{ "requireHostMatch", KEY_KNOWN, NULL },
	{ "ambiguousRequestTarget", KEY_KNOWN, NULL },
	{ "stripResponseHeaders", KEY_KNOWN, NULL },
	{ "allowPlaintextHeaderSet", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

static void parse_domains(struct pctx *c, const cJSON *arr, bool deny)
{
	const char *key = deny ? "deniedDomains" : "allowedDomains";
	struct policy *p = c->p;
	struct domain_pattern **pats = deny ? &p->denied_domains : &p->allowed_domains;
	size_t *n = deny ? &p->n_denied_domains : &p->n_allowed_domains;
	char ***src = deny ? &p->denied_sources : &p->allowed_sources;
	char ***names = deny ? &p->denied_rule_names : &p->allowed_rule_names;
	char *lp = jpath_key(c, "network", key);
	size_t i = 0;

	for (const cJSON *it = arr->child; lp && it; it = it->next, i++) {
		char *path = jpath_index(c, lp, i), *name = NULL;
		struct domain_pattern pat, *np;
		const char *s, *why;
		size_t ns;

		if (!path)
			break;
		s = jelem_string(c, it, path, true);
		if (!s)
			goto next;
		if (domain_pattern_parse(s, deny, &pat, &why)) {
			perr(c, path, "invalid domain pattern \"%s\": %s", s, why);
			goto next;
		}
		np = realloc(*pats, (*n + 1) * sizeof(*np));
		if (!pcheck(c, np))
			goto next;
		*pats = np;
		np[*n] = pat;
		ns = *n;
		if (strv_push(c, src, &ns, s))
			goto next;
		ns = *n;
		if (asprintf(&name, "%s:%s", key, pat.text) < 0 || strv_push(c, names, &ns, name)) {
			c->oom = true;
			free(name);
			goto next;
		}
		free(name);
		(*n)++;
next:
		free(path);
	}
	free(lp);
}

static bool has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* Reasons go into an HTTP status line and the log: one printable line. */
static void parse_reasons(struct pctx *c, const cJSON *obj)
{
	static const char parent[] = "network.deniedDomainReasons";
	struct policy *p = c->p;

	if (!want_object(c, obj, parent))
		return;
	check_duplicate_keys(c, obj, parent);
	p->denied_reasons = pcheck(c, calloc(p->n_denied_domains + 1, sizeof(char *)));
	if (!p->denied_reasons)
		return;
	for (const cJSON *m = obj->child; m; m = m->next) {
		char *path = jpath_key(c, parent, m->string);
		bool used = false;

		if (!path)
			return;
		if (!jelem_string(c, m, path, true))
			goto next;
		if (has_ctl(m->valuestring) || strlen(m->valuestring) > 1024) {
			perr(c, path, "a reason must be one printable line of at most 1024 bytes");
			goto next;
		}
		for (size_t i = 0; i < p->n_denied_domains; i++) {
			if (strcmp(p->denied_sources[i], m->string))
				continue;
			used = true;
			free(p->denied_reasons[i]);
			p->denied_reasons[i] = pcheck(c, strdup(m->valuestring));
		}
		if (!used)
			pwarn(c, path, "no deniedDomains entry is exactly \"%s\"; this "
			      "reason is never used", m->string);
next:
		free(path);
	}
}

static void parse_addrs(struct pctx *c, const cJSON *arr)
{
	struct policy *p = c->p;
	size_t i = 0;

	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *path = jpath_index(c, "network.deniedResolvedAddresses", i);
		struct ip_cidr cidr, *nc;
		const char *why;

		if (!path)
			return;
		if (!jelem_string(c, it, path, true))
			goto next;
		if (ip_cidr_parse(it->valuestring, &cidr, &why)) {
			perr(c, path, "\"%s\": %s", it->valuestring, why);
			goto next;
		}
		nc = realloc(p->denied_addrs, (p->n_denied_addrs + 1) * sizeof(*nc));
		if (!pcheck(c, nc))
			goto next;
		p->denied_addrs = nc;
		nc[p->n_denied_addrs++] = cidr;
next:
		free(path);
	}
}

static void parse_sockets(struct pctx *c, const cJSON *arr)
{
	struct policy *p = c->p;
	size_t i = 0;

	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *path = jpath_index(c, "network.allowUnixSockets", i), *abs = NULL;
		const char *s, *why;
		bool kept, caller_link = false;
		int ret;

		if (!path)
			return;
		s = jelem_string(c, it, path, true);
		if (!s)
			goto next;
		if (s[0] == '@') {
			/* An abstract name: kept with its '@', matched byte for byte. */
			size_t len = strlen(s + 1);

			if (!len || len > BB_UNIX_NAME_MAX)
				perr(c, path, "\"%s\": an abstract socket name has 1 to %d bytes after '@'", s,
				     BB_UNIX_NAME_MAX);
			else if (strpbrk(s, "*?[]"))
				perr(c, path, "\"%s\": globs are not supported in allowUnixSockets; "
				     "name each socket", s);
			else
				strv_push(c, &p->allow_unix_sockets, &p->n_allow_unix_sockets, s);
			goto next;
		}
		if (strpbrk(s, "*?[]")) {
			perr(c, path, "\"%s\": globs are not supported in allowUnixSockets; "
			     "name each socket file", s);
			goto next;
		}
		if (p->guarded)
			ret = policy_path_guarded(s, p->cwd, p->home, p->guard_uid, true, &abs, &kept,
						  &caller_link, &why);
		else
			ret = policy_path_normalise(s, p->cwd, p->home, true, &abs, &kept, &why);
		if (ret) {
			if (ret == -ENOMEM)
				c->oom = true;
			else
				perr(c, path, "\"%s\": %s", s, why);
			goto next;
		}
		if (caller_link) {
			grant_cut(c, path, s, abs);
			free(abs);
			goto next;
		}
		if (kept)
			pwarn(c, path, "\"%s\" is a symlink that would widen the rule if "
			      "followed; kept as written", abs);
		strv_push(c, &p->allow_unix_sockets, &p->n_allow_unix_sockets, abs);
		free(abs);
next:
		free(path);
	}
}

static void parse_port(struct pctx *c, const cJSON *net, const char *key, int *out)
{
	long long v;

	if (jget_int(c, net, key, "network", 1, 65535, &v) == 1)
		*out = (int)v;
}

void policy_parse_network(struct pctx *c, const cJSON *net)
{
	static const char parent[] = "network";
	struct policy *p = c->p;
	const cJSON *v;
	bool strict_allow = false;

	if (!want_object(c, net, parent))
		return;
	check_keys(c, net, parent, net_keys);
	v = jget_array(c, net, "allowedDomains", parent, true, "domain patterns");
	if (v)
		parse_domains(c, v, false);
	v = jget_array(c, net, "deniedDomains", parent, true, "domain patterns");
	if (v)
		parse_domains(c, v, true);
	v = cJSON_GetObjectItemCaseSensitive(net, "deniedDomainReasons");
	if (v)
		parse_reasons(c, v);
	if (jget_bool(c, net, "strictAllowlist", parent, &strict_allow) == 1 && !strict_allow)
		pdebug(c, "network.strictAllowlist", "bpfbox never asks: hosts not in "
		       "allowedDomains are always denied");
	v = jget_array(c, net, "deniedResolvedAddresses", parent, false, "addresses");
	if (v)
		parse_addrs(c, v);
	v = jget_array(c, net, "allowUnixSockets", parent, false, "socket paths");
	if (v)
		parse_sockets(c, v);
	jget_bool(c, net, "allowAllUnixSockets", parent, &p->allow_all_unix_sockets);
	jget_bool(c, net, "allowLocalBinding", parent, &p->allow_local_binding);
	parse_port(c, net, "httpProxyPort", &p->http_proxy_port);
	parse_port(c, net, "socksProxyPort", &p->socks_proxy_port);
	policy_parse_tls(c, net);
	policy_parse_mitm(c, net);
}
