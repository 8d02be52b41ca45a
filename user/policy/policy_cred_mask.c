// SPDX-License-Identifier: MIT
/*
 * What a credentials.envVars or credentials.files entry says about masking
 * (extract, onExtractNoMatch, decode, maskClaims, maskDuplicates,
 * injectHosts), read and checked with srt's rules and messages: checked
 * whatever the mode (srt's schema does), though only a "mask" entry uses
 * them. An injectHosts entry is a host pattern without a port that
 * allowedDomains (ports dropped) must cover; a masked entry's list may not
 * be explicitly empty, nor name a host tlsTerminate.excludeDomains wholly
 * leaves opaque, since the proxy substitutes only inside terminated TLS.
 * Also what the other credential files look rules up with.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"

bool env_name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

const struct policy_cred_rule *policy_cred_find(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->cred.n_env; i++)
		if (!strcmp(p->cred.env[i].name, name))
			return &p->cred.env[i];
	return NULL;
}

bool policy_cred_masks(const struct policy *p)
{
	for (size_t i = 0; i < p->cred.n_env; i++)
		if (p->cred.env[i].mode == POLICY_CRED_MASK)
			return true;
	return false;
}

void policy_cred_rule_free(struct policy_cred_rule *r)
{
	free(r->name);
	free(r->extract);
	strv_free(r->mask_claims, r->n_mask_claims);
	free(r->inject_hosts);
	memset(r, 0, sizeof(*r));
}

static void parse_extract(struct pctx *c, const cJSON *e, const char *path,
			  struct policy_cred_rule *r)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "extract");
	char *xp;
	const char *why;
	int groups;

	if (!v)
		return;
	xp = jpath_key(c, path, "extract");
	if (!xp || !jelem_string(c, v, xp, false))
		goto out;
	groups = policy_cred_regex_groups(v->valuestring, &why);
	if (groups < 0)
		perr(c, xp, "extract is not a valid regular expression: %s", why);
	else if (groups < 1)
		perr(c, xp, "extract must contain at least one capturing group — group 1 is "
		     "the credential value to mask (e.g. \"token:\\\\s*(\\\\S+)\").");
	else
		r->extract = pcheck(c, strdup(v->valuestring));
out:
	free(xp);
}

/* A string member that must be one of words; its index, -1 absent, -2 invalid (reported). */
static int jget_word(struct pctx *c, const cJSON *obj, const char *key, const char *parent,
		     const char *const *words, const char *expected)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char *kp;
	int found = -2;

	if (!v)
		return -1;
	kp = jpath_key(c, parent, key);
	if (!kp || !jelem_string(c, v, kp, false))
		goto out;
	for (int i = 0; words[i]; i++)
		if (!strcmp(v->valuestring, words[i]))
			found = i;
	if (found < 0)
		perr(c, kp, "expected %s, got \"%s\"", expected, v->valuestring);
out:
	free(kp);
	return found;
}

static void parse_claims(struct pctx *c, const cJSON *e, const char *path,
			 struct policy_cred_rule *r)
{
	const cJSON *arr = jget_array(c, e, "maskClaims", path, false, "claim names");
	char *lp;
	size_t i = 0;

	if (!arr)
		return;
	lp = jpath_key(c, path, "maskClaims");
	if (!lp)
		return;
	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *ip = jpath_index(c, lp, i);

		if (ip && jelem_string(c, it, ip, true))
			strv_push(c, &r->mask_claims, &r->n_mask_claims, it->valuestring);
		free(ip);
	}
	/* maskClaims names fields of a decoded payload: without decode there is none. */
	if (!r->decode_jwt && !cJSON_GetObjectItemCaseSensitive(e, "decode"))
		perr(c, lp, "maskClaims requires decode — it names claims inside the decoded "
		     "payload. Set decode (e.g. \"jwt\"), or remove maskClaims to mask the whole value.");
	if (!cJSON_GetArraySize(arr))
		perr(c, lp, "maskClaims is explicitly empty — no claim would ever be masked. Omit "
		     "maskClaims to mask the whole token, or list the claims to protect.");
	free(lp);
}

static int push_host(struct pctx *c, struct policy_cred_rule *r, const struct domain_pattern *h)
{
	struct domain_pattern *n = realloc(r->inject_hosts, (r->n_inject_hosts + 1) * sizeof(*n));

	if (!pcheck(c, n))
		return -ENOMEM;
	r->inject_hosts = n;
	n[r->n_inject_hosts++] = *h;
	return 0;
}

/* Is host within allowedDomains, each entry taken on any port (injection is per host)? */
static bool host_allowed(const struct policy *p, const struct domain_pattern *h)
{
	for (size_t i = 0; i < p->n_allowed_domains; i++) {
		struct domain_pattern any = p->allowed_domains[i];

		domain_pattern_any_port(&any);
		if (domain_pattern_covers(&any, h))
			return true;
	}
	return false;
}

static bool host_excluded(const struct policy *p, const struct domain_pattern *h)
{
	for (size_t i = 0; i < p->tls.n_exclude; i++)
		if (domain_pattern_covers(&p->tls.exclude[i], h))
			return true;
	return false;
}

static void parse_one_host(struct pctx *c, const cJSON *it, const char *ip,
			   struct policy_cred_rule *r)
{
	struct domain_pattern h;
	const char *s = jelem_string(c, it, ip, true), *why;
	bool ok = true;

	if (!s)
		return;
	if (domain_pattern_parse(s, false, &h, &why)) {
		perr(c, ip, "invalid domain pattern \"%s\": %s", s, why);
		return;
	}
	if (h.port) {
		perr(c, ip, "\"%s\": injectHosts names hosts, without a port (the real value goes "
		     "to the host on any port its allowedDomains entries allow)", s);
		return;
	}
	/* Both reported, as srt does. */
	if (!host_allowed(c->p, &h)) {
		perr(c, ip, "injectHosts entry \"%s\" is not reachable via network.allowedDomains — "
		     "add \"%s\" (or a covering wildcard) to allowedDomains, or remove it from "
		     "injectHosts.", s, s);
		ok = false;
	}
	if (r->mode == POLICY_CRED_MASK && c->p->tls.enabled && host_excluded(c->p, &h)) {
		ok = false;
		perr(c, ip, "injectHosts entry \"%s\" is entirely covered by "
		     "network.tlsTerminate.excludeDomains. Credential injection only runs on "
		     "TLS-terminated connections, so this host would receive the placeholder instead "
		     "of the credential. Remove it from one of the two lists.", s);
	}
	if (ok)
		push_host(c, r, &h);
}

/* No injectHosts: allowedDomains with their ports dropped, each host once. */
static void default_hosts(struct pctx *c, const char *path, struct policy_cred_rule *r)
{
	bool all_excluded = c->p->n_allowed_domains > 0;

	r->inject_defaulted = true;
	for (size_t i = 0; i < c->p->n_allowed_domains; i++) {
		struct domain_pattern any = c->p->allowed_domains[i];
		bool dup = false;

		domain_pattern_any_port(&any);
		all_excluded = all_excluded && host_excluded(c->p, &any);
		for (size_t k = 0; k < r->n_inject_hosts && !dup; k++)
			dup = domain_pattern_covers(&r->inject_hosts[k], &any);
		if (!dup && push_host(c, r, &any))
			return;
	}
	if (r->mode == POLICY_CRED_MASK && c->p->tls.enabled && all_excluded)
		perr(c, path, "This masked credential has no injectHosts, so it defaults to "
		     "network.allowedDomains — but network.tlsTerminate.excludeDomains covers every "
		     "allowed domain, so it could never be injected anywhere. Credential injection "
		     "only runs on TLS-terminated connections.");
}

static void parse_inject(struct pctx *c, const cJSON *e, const char *path,
			 struct policy_cred_rule *r)
{
	const cJSON *arr = jget_array(c, e, "injectHosts", path, false, "host patterns");
	char *lp;
	size_t i = 0;

	if (!arr) {
		if (r->mode == POLICY_CRED_MASK && !cJSON_GetObjectItemCaseSensitive(e, "injectHosts"))
			default_hosts(c, path, r);
		return;
	}
	lp = jpath_key(c, path, "injectHosts");
	for (const cJSON *it = arr->child; lp && it; it = it->next, i++) {
		char *ip = jpath_index(c, lp, i);

		if (ip)
			parse_one_host(c, it, ip, r);
		free(ip);
	}
	free(lp);
	if (r->mode == POLICY_CRED_MASK && !cJSON_GetArraySize(arr))
		perr(c, path, "injectHosts is explicitly empty — the credential would be masked but "
		     "never injected. Omit injectHosts to default to network.allowedDomains, or list "
		     "the intended hosts.");
}

static const char *const no_match_words[] = { "warn", "deny", "error", NULL };
static const char *const decode_words[] = { "jwt", NULL };
static const char *const mask_keys[] = { "extract", "onExtractNoMatch", "decode", "maskClaims",
					 "maskDuplicates", "injectHosts" };

void policy_parse_cred_mask(struct pctx *c, const cJSON *e, const char *path,
			    struct policy_cred_rule *r)
{
	int w;

	parse_extract(c, e, path, r);
	w = jget_word(c, e, "onExtractNoMatch", path, no_match_words,
		      "\"warn\", \"deny\" or \"error\"");
	if (w >= 0)
		r->on_no_match = (enum policy_cred_no_match)w;
	r->decode_jwt = jget_word(c, e, "decode", path, decode_words, "\"jwt\"") == 0;
	parse_claims(c, e, path, r);
	jget_bool(c, e, "maskDuplicates", path, &r->mask_duplicates);
	parse_inject(c, e, path, r);
	if (r->mode == POLICY_CRED_MASK)
		return;
	/* srt accepts them on a "deny" entry and ignores them. */
	for (size_t i = 0; i < sizeof(mask_keys) / sizeof(mask_keys[0]); i++) {
		char *kp;

		if (!cJSON_GetObjectItemCaseSensitive(e, mask_keys[i]))
			continue;
		kp = jpath_key(c, path, mask_keys[i]);
		if (kp)
			pdebug(c, kp, "ignored: only used with mode \"mask\"");
		free(kp);
	}
}
