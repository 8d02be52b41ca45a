// SPDX-License-Identifier: MIT
/*
 * srt's request-level network settings, read with srt's meaning:
 * network.tlsTerminate (the proxy terminates TLS for allowed names outside
 * excludeDomains), requireHostMatch, refuseOpaqueTunnels,
 * ambiguousRequestTarget, stripResponseHeaders and allowPlaintextHeaderSet.
 * mitmProxy (policy_mitm.c) with tlsTerminate is an error, since srt holds
 * the two exclusive.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"

static const char TLS_PATH[] = "network.tlsTerminate";

/* tlsTerminate is strict: a misspelt option would change what is inspected. */
static const struct key_spec tls_keys[] = {
	{ "caCertPath", KEY_KNOWN, NULL },
	{ "caKeyPath", KEY_KNOWN, NULL },
	{ "excludeDomains", KEY_KNOWN, NULL },
	{ "extraCaCertPaths", KEY_KNOWN, NULL },
	{ "maxTunnels", KEY_KNOWN, NULL },
	{ "handshakeTimeoutMs", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

const char *policy_ambiguous_target_name(enum policy_ambiguous_target t)
{
	switch (t) {
	case POLICY_AMBIG_AS_SPELLED:
		return "asSpelled";
	case POLICY_AMBIG_NORMALIZE:
		return "normalize";
	case POLICY_AMBIG_REFUSE:
		break;
	}
	return "refuse";
}

void policy_tls_free(struct policy_tls *t)
{
	free(t->ca_cert_path);
	free(t->ca_key_path);
	free(t->exclude);
	strv_free(t->extra_ca_paths, t->n_extra_ca);
	memset(t, 0, sizeof(*t));
}

/* A file the proxy reads: made absolute as other entries are (~, the launch directory), links kept. */
static char *tls_file(struct pctx *c, const cJSON *v, const char *path)
{
	const char *s = jelem_string(c, v, path, true), *why;
	char *abs = NULL;
	bool kept;
	int ret;

	if (!s)
		return NULL;
	ret = policy_path_normalise(s, c->p->cwd, c->p->home, false, &abs, &kept, &why);
	if (ret == -ENOMEM)
		c->oom = true;
	else if (ret)
		perr(c, path, "\"%s\": %s", s, why);
	return ret ? NULL : abs;
}

static void parse_ca(struct pctx *c, const cJSON *tls)
{
	static const char *const keys[2] = { "caCertPath", "caKeyPath" };
	struct policy_tls *t = &c->p->tls;
	char **out[2] = { &t->ca_cert_path, &t->ca_key_path };
	const cJSON *v[2];

	for (int i = 0; i < 2; i++) {
		char *path = jpath_key(c, TLS_PATH, keys[i]);

		if (!path)
			return;
		v[i] = cJSON_GetObjectItemCaseSensitive(tls, keys[i]);
		if (v[i])
			*out[i] = tls_file(c, v[i], path);
		free(path);
	}
	/* Both or neither: a certificate without its key (or the reverse) signs nothing. */
	for (int i = 0; i < 2; i++) {
		char *path;

		if (v[i] || !v[!i])
			continue;
		path = jpath_key(c, TLS_PATH, keys[i]);
		perr(c, path ? path : TLS_PATH, "Required when %s is given: the CA needs both its "
		     "certificate and its key (neither: an ephemeral CA)", keys[!i]);
		free(path);
	}
}

static void parse_exclude(struct pctx *c, const cJSON *arr, const char *lp)
{
	struct policy_tls *t = &c->p->tls;
	size_t i = 0;

	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *path = jpath_index(c, lp, i);
		struct domain_pattern pat, *np;
		const char *s, *why;

		if (!path)
			return;
		s = jelem_string(c, it, path, true);
		if (s && domain_pattern_parse(s, false, &pat, &why)) {
			perr(c, path, "invalid domain pattern \"%s\": %s", s, why);
		} else if (s) {
			np = realloc(t->exclude, (t->n_exclude + 1) * sizeof(*np));
			if (pcheck(c, np)) {
				t->exclude = np;
				np[t->n_exclude++] = pat;
			}
		}
		free(path);
	}
}

static void parse_extra_ca(struct pctx *c, const cJSON *arr, const char *lp)
{
	struct policy_tls *t = &c->p->tls;
	size_t i = 0;

	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *path = jpath_index(c, lp, i), *abs;

		if (!path)
			return;
		abs = tls_file(c, it, path);
		if (abs)
			strv_push(c, &t->extra_ca_paths, &t->n_extra_ca, abs);
		free(abs);
		free(path);
	}
}

static void parse_tls_lists(struct pctx *c, const cJSON *tls)
{
	static const char *const keys[2] = { "excludeDomains", "extraCaCertPaths" };
	static const char *const what[2] = { "domain patterns", "certificate paths" };

	for (int i = 0; i < 2; i++) {
		const cJSON *v = jget_array(c, tls, keys[i], TLS_PATH, false, what[i]);
		char *lp;

		if (!v)
			continue;
		lp = jpath_key(c, TLS_PATH, keys[i]);
		if (!lp)
			return;
		if (i == 0)
			parse_exclude(c, v, lp);
		else
			parse_extra_ca(c, v, lp);
		free(lp);
	}
}

static void parse_tls(struct pctx *c, const cJSON *tls)
{
	struct policy_tls *t = &c->p->tls;
	long long v;

	/* null or false asks for nothing (as srt's other switches that are off). */
	if (cJSON_IsNull(tls) || cJSON_IsFalse(tls)) {
		pdebug(c, TLS_PATH, "accepted: tlsTerminate is off");
		return;
	}
	if (!want_object(c, tls, TLS_PATH))
		return;
	check_keys_ex(c, tls, TLS_PATH, tls_keys, "network.tlsTerminate is strict: a misspelt "
		      "option would change what is inspected");
	t->enabled = true;
	t->max_tunnels = POLICY_TLS_MAX_TUNNELS_DEFAULT;
	t->handshake_timeout_ms = POLICY_TLS_HANDSHAKE_MS_DEFAULT;
	parse_ca(c, tls);
	parse_tls_lists(c, tls);
	if (jget_int(c, tls, "maxTunnels", TLS_PATH, 1, 65536, &v) == 1) {
		t->max_tunnels = (unsigned)v;
		t->max_tunnels_given = true;
	}
	if (jget_int(c, tls, "handshakeTimeoutMs", TLS_PATH, 100, 600000, &v) == 1) {
		t->handshake_timeout_ms = (unsigned)v;
		t->handshake_timeout_given = true;
	}
}

/* RFC 9110 5.1: a field name is a token. */
static bool header_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s)))
			return false;
	return true;
}

static void parse_strip(struct pctx *c, const cJSON *arr)
{
	static const char lp[] = "network.stripResponseHeaders";
	struct policy *p = c->p;
	size_t i = 0;

	for (const cJSON *it = arr->child; it; it = it->next, i++) {
		char *path = jpath_index(c, lp, i), *low;
		const char *s;
		bool dup = false;

		if (!path)
			return;
		s = jelem_string(c, it, path, true);
		if (s && !header_name_ok(s))
			perr(c, path, "\"%s\" is not a header field name (RFC 9110 token characters "
			     "only)", s);
		else if (s && (low = pcheck(c, strdup(s)))) {
			/* Field names are case-insensitive: kept lower case, each once. */
			for (char *q = low; *q; q++)
				if (*q >= 'A' && *q <= 'Z')
					*q += 'a' - 'A';
			for (size_t k = 0; k < p->n_strip_response_headers && !dup; k++)
				dup = !strcmp(p->strip_response_headers[k], low);
			if (!dup)
				strv_push(c, &p->strip_response_headers, &p->n_strip_response_headers, low);
			free(low);
		}
		free(path);
	}
}

static void parse_ambiguous(struct pctx *c, const cJSON *v)
{
	static const char path[] = "network.ambiguousRequestTarget";

	if (!jelem_string(c, v, path, true))
		return;
	if (!strcmp(v->valuestring, "asSpelled"))
		c->p->ambiguous_target = POLICY_AMBIG_AS_SPELLED;
	else if (!strcmp(v->valuestring, "normalize"))
		c->p->ambiguous_target = POLICY_AMBIG_NORMALIZE;
	else if (strcmp(v->valuestring, "refuse"))
		perr(c, path, "expected \"refuse\", \"asSpelled\" or \"normalize\", got \"%s\"",
		     v->valuestring);
}

static bool given_on(const cJSON *v)
{
	return v && !cJSON_IsNull(v) && !cJSON_IsFalse(v);
}

void policy_parse_tls(struct pctx *c, const cJSON *net)
{
	static const char parent[] = "network";
	const cJSON *tls = cJSON_GetObjectItemCaseSensitive(net, "tlsTerminate");
	const cJSON *v;
	struct policy *p = c->p;

	if (tls)
		parse_tls(c, tls);
	/* Naming both is srt's error too. */
	if (given_on(tls) && given_on(cJSON_GetObjectItemCaseSensitive(net, "mitmProxy")))
		perr(c, "network.mitmProxy", "mitmProxy and tlsTerminate are exclusive (as in srt): "
		     "a name is either sent to an upstream MITM proxy or terminated by bpfbox's proxy");
	jget_bool(c, net, "requireHostMatch", parent, &p->require_host_match);
	jget_bool(c, net, "refuseOpaqueTunnels", parent, &p->refuse_opaque_tunnels);
	jget_bool(c, net, "allowPlaintextHeaderSet", parent, &p->allow_plaintext_header_set);
	v = cJSON_GetObjectItemCaseSensitive(net, "ambiguousRequestTarget");
	if (v)
		parse_ambiguous(c, v);
	v = jget_array(c, net, "stripResponseHeaders", parent, false, "header field names");
	if (v)
		parse_strip(c, v);
}
