// SPDX-License-Identifier: MIT
/*
 * The effective policy as JSON (`bpfbox policy show`): what the kernel and
 * proxy will be given, after normalisation, with every default spelled out,
 * so an administrator can review the policy as bpfbox understood it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy.h"

struct out {
	bool ok;
};

static cJSON *add(struct out *o, cJSON *parent, const char *key, cJSON *item)
{
	if (!item || !(key ? cJSON_AddItemToObject(parent, key, item)
			   : cJSON_AddItemToArray(parent, item))) {
		cJSON_Delete(item);
		o->ok = false;
		return NULL;
	}
	return item;
}

static void add_str(struct out *o, cJSON *parent, const char *key, const char *s)
{
	add(o, parent, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void add_bool(struct out *o, cJSON *parent, const char *key, bool b)
{
	add(o, parent, key, cJSON_CreateBool(b));
}

static void add_num(struct out *o, cJSON *parent, const char *key, long long v)
{
	/* 0 means "none" for every number shown here. */
	add(o, parent, key, v ? cJSON_CreateNumber((double)v) : cJSON_CreateNull());
}

static void add_strv(struct out *o, cJSON *parent, const char *key, char **v, size_t n)
{
	cJSON *a = add(o, parent, key, cJSON_CreateArray());

	for (size_t i = 0; a && i < n; i++)
		add_str(o, a, NULL, v[i]);
}

static void add_socket_protocols(struct out *o, cJSON *parent, uint32_t bits)
{
	cJSON *a = add(o, parent, "allowSocketProtocols", cJSON_CreateArray());

	for (size_t i = 0; a && i < policy_n_socket_kinds; i++)
		if (bits & policy_socket_kinds[i].bit)
			add_str(o, a, NULL, policy_socket_kinds[i].name);
}

static void add_dns_types(struct out *o, cJSON *parent, uint32_t bits)
{
	cJSON *a = add(o, parent, "dnsQueryTypes", cJSON_CreateArray());

	for (size_t i = 0; a && i < policy_n_dns_types; i++)
		if (bits & policy_dns_types[i].bit)
			add_str(o, a, NULL, policy_dns_types[i].name);
}

static void add_joined(struct out *o, cJSON *a, const char *root, const char *name)
{
	char *s = NULL;

	if (asprintf(&s, "%s/%s", strcmp(root, "/") ? root : "", name) < 0) {
		o->ok = false;
		return;
	}
	add_str(o, a, NULL, s);
	free(s);
}

/*
 * The mandatory names under each writable root and the home directory, for
 * review: the kernel matches them at any depth, these are the obvious places.
 */
static void show_mandatory_expanded(struct out *o, const struct policy *p, cJSON *fs,
				    const struct mandatory_entry *m, size_t n)
{
	cJSON *a = add(o, fs, "mandatoryDenyWriteExpanded", cJSON_CreateArray());

	for (size_t r = 0; a && r < p->n_fs_rules; r++) {
		const struct fs_rule *rule = &p->fs_rules[r];

		/* Under a ceiling a writable path is inside a caller's root too. */
		if (rule->kind != FS_ALLOW_WRITE || rule->from_default || rule->layer != FS_LAYER_OWN ||
		    policy_rule_unapplied(rule))
			continue;
		for (size_t i = 0; i < n; i++)
			if (m[i].kind != MANDATORY_GIT_FILE)
				add_joined(o, a, rule->path, m[i].name);
	}
	for (size_t i = 0; a && p->home && i < n; i++)
		if (m[i].kind != MANDATORY_GIT_FILE)
			add_joined(o, a, p->home, m[i].name);
}

/* One layer's four lists and its implicit writable paths, into obj. */
static void show_layer(struct out *o, const struct policy *p, enum fs_layer layer, cJSON *obj)
{
	static const char *const keys[] = { "denyRead", "allowRead", "allowWrite", "denyWrite" };
	cJSON *a, *impl;

	for (int k = FS_DENY_READ; k <= FS_DENY_WRITE; k++) {
		a = add(o, obj, keys[k], cJSON_CreateArray());
		for (size_t i = 0; a && i < p->n_fs_rules; i++)
			if ((int)p->fs_rules[i].kind == k && !p->fs_rules[i].from_default &&
			    p->fs_rules[i].layer == layer && !policy_rule_unapplied(&p->fs_rules[i]))
				add_str(o, a, NULL, p->fs_rules[i].path);
	}
	/* Allows on a link that would widen them: in the file, not in force (docs/policy.md). */
	a = add(o, obj, "allowNotApplied", cJSON_CreateArray());
	for (size_t i = 0; a && i < p->n_fs_rules; i++)
		if (p->fs_rules[i].layer == layer && policy_rule_unapplied(&p->fs_rules[i]))
			add_str(o, a, NULL, p->fs_rules[i].path);
	impl = add(o, obj, "implicitAllowWrite", cJSON_CreateArray());
	for (size_t i = 0; impl && i < p->n_fs_rules; i++)
		if (p->fs_rules[i].from_default && p->fs_rules[i].layer == layer)
			add_str(o, impl, NULL, p->fs_rules[i].path);
}

static void show_fs(struct out *o, const struct policy *p, cJSON *root)
{
	struct mandatory_entry m[POLICY_MANDATORY_MAX];
	cJSON *fs = add(o, root, "filesystem", cJSON_CreateObject()), *a, *layers, *l;
	size_t n;

	if (!fs)
		return;
	add_bool(o, fs, "disabled", p->fs_disabled);
	if (!p->has_ceiling) {
		show_layer(o, p, FS_LAYER_OWN, fs);
	} else {
		/* Each layer decides on its own; a path needs both (docs/policy.md "Ceiling"). */
		layers = add(o, fs, "layers", cJSON_CreateObject());
		l = layers ? add(o, layers, "caller", cJSON_CreateObject()) : NULL;
		if (l)
			show_layer(o, p, FS_LAYER_OWN, l);
		l = layers ? add(o, layers, "administrator", cJSON_CreateObject()) : NULL;
		if (l)
			show_layer(o, p, FS_LAYER_CEILING, l);
	}
	add_bool(o, fs, "allowGitConfig", p->allow_git_config);
	a = add(o, fs, "mandatoryDenyWrite", cJSON_CreateArray());
	n = policy_mandatory(p, m);
	for (size_t i = 0; a && i < n; i++)
		add_str(o, a, NULL, m[i].kind == MANDATORY_GIT_FILE ?
			".git (when it is a file)" : m[i].name);
	show_mandatory_expanded(o, p, fs, m, n);
}

/* tlsTerminate and mitmProxy (null when not given) and srt's other request-level settings. */
static void show_tls(struct out *o, const struct policy *p, cJSON *net)
{
	const struct policy_tls *t = &p->tls;
	cJSON *tls, *a;

	if (!t->enabled) {
		add(o, net, "tlsTerminate", cJSON_CreateNull());
	} else if ((tls = add(o, net, "tlsTerminate", cJSON_CreateObject()))) {
		/* Both null: an ephemeral CA made for the run. */
		add_str(o, tls, "caCertPath", t->ca_cert_path);
		add_str(o, tls, "caKeyPath", t->ca_key_path);
		a = add(o, tls, "excludeDomains", cJSON_CreateArray());
		for (size_t i = 0; a && i < t->n_exclude; i++)
			add_str(o, a, NULL, t->exclude[i].text);
		add_strv(o, tls, "extraCaCertPaths", t->extra_ca_paths, t->n_extra_ca);
		add_num(o, tls, "maxTunnels", t->max_tunnels);
		add_num(o, tls, "handshakeTimeoutMs", t->handshake_timeout_ms);
	}
	if (!p->mitm.enabled) {
		add(o, net, "mitmProxy", cJSON_CreateNull());
	} else if ((tls = add(o, net, "mitmProxy", cJSON_CreateObject()))) {
		add_str(o, tls, "socketPath", p->mitm.socket_path);
		a = add(o, tls, "domains", cJSON_CreateArray());
		for (size_t i = 0; a && i < p->mitm.n_domains; i++)
			add_str(o, a, NULL, p->mitm.domains[i].text);
	}
	add_bool(o, net, "requireHostMatch", p->require_host_match);
	add_bool(o, net, "refuseOpaqueTunnels", p->refuse_opaque_tunnels);
	add_str(o, net, "ambiguousRequestTarget", policy_ambiguous_target_name(p->ambiguous_target));
	add_strv(o, net, "stripResponseHeaders", p->strip_response_headers,
		 p->n_strip_response_headers);
	add_bool(o, net, "allowPlaintextHeaderSet", p->allow_plaintext_header_set);
}

static void show_net(struct out *o, const struct policy *p, cJSON *root)
{
	cJSON *net = add(o, root, "network", cJSON_CreateObject()), *a, *r;

	if (!net)
		return;
	a = add(o, net, "allowedDomains", cJSON_CreateArray());
	for (size_t i = 0; a && i < p->n_allowed_domains; i++)
		add_str(o, a, NULL, p->allowed_domains[i].text);
	if (p->has_ceiling) {
		/* A host must match both lists. */
		a = add(o, net, "administratorAllowedDomains", cJSON_CreateArray());
		for (size_t i = 0; a && i < p->n_ceiling_allowed_domains; i++)
			add_str(o, a, NULL, p->ceiling_allowed_domains[i].text);
	}
	a = add(o, net, "deniedDomains", cJSON_CreateArray());
	r = add(o, net, "deniedDomainReasons", cJSON_CreateObject());
	for (size_t i = 0; a && r && i < p->n_denied_domains; i++) {
		add_str(o, a, NULL, p->denied_domains[i].text);
		if (p->denied_reasons[i] &&
		    !cJSON_GetObjectItemCaseSensitive(r, p->denied_domains[i].text))
			add_str(o, r, p->denied_domains[i].text, p->denied_reasons[i]);
	}
	a = add(o, net, "deniedResolvedAddresses", cJSON_CreateArray());
	for (size_t i = 0; a && i < p->n_denied_addrs; i++)
		add_str(o, a, NULL, p->denied_addrs[i].text);
	add_strv(o, net, "allowUnixSockets", p->allow_unix_sockets, p->n_allow_unix_sockets);
	add_bool(o, net, "allowAllUnixSockets", p->allow_all_unix_sockets);
	add_bool(o, net, "allowLocalBinding", p->allow_local_binding);
	add_num(o, net, "httpProxyPort", p->http_proxy_port);
	add_num(o, net, "socksProxyPort", p->socks_proxy_port);
	show_tls(o, p, net);
}

static void show_cred_rule(struct out *o, cJSON *ev, const struct policy_cred_rule *r)
{
	static const char *const no_match[] = { "warn", "deny", "error" };
	cJSON *e = add(o, ev, NULL, cJSON_CreateObject()), *h;

	if (!e)
		return;
	add_str(o, e, "name", r->name);
	add_str(o, e, "mode", r->mode == POLICY_CRED_MASK ? "mask" : "deny");
	if (r->mode != POLICY_CRED_MASK)
		return;
	if (r->extract)
		add_str(o, e, "extract", r->extract);
	add_str(o, e, "onExtractNoMatch", no_match[r->on_no_match]);
	if (r->decode_jwt)
		add_str(o, e, "decode", "jwt");
	if (r->n_mask_claims)
		add_strv(o, e, "maskClaims", r->mask_claims, r->n_mask_claims);
	add_bool(o, e, "maskDuplicates", r->mask_duplicates);
	/* The hosts in force, the default list filled in. */
	h = add(o, e, "injectHosts", cJSON_CreateArray());
	for (size_t k = 0; h && k < r->n_inject_hosts; k++)
		add_str(o, h, NULL, r->inject_hosts[k].text);
}

static void show_cred_rest(struct out *o, const struct policy *p, cJSON *cred)
{
	const struct policy_credentials *c = &p->cred;
	cJSON *pairs = add(o, cred, "awsPairs", cJSON_CreateArray()), *sig;

	for (size_t i = 0; pairs && i < c->n_aws_pairs; i++) {
		cJSON *a = add(o, pairs, NULL, cJSON_CreateObject());

		if (!a)
			continue;
		add_str(o, a, "accessKeyIdVar", c->aws_pairs[i].key_id_var);
		add_str(o, a, "secretAccessKeyVar", c->aws_pairs[i].secret_var);
		if (c->aws_pairs[i].session_var)
			add_str(o, a, "sessionTokenVar", c->aws_pairs[i].session_var);
	}
	add_bool(o, cred, "allowPlaintextInject", c->allow_plaintext_inject);
	sig = add(o, cred, "sigv4", cJSON_CreateObject());
	if (!sig)
		return;
	add_str(o, sig, "streaming", c->sigv4_streaming ? "passthrough" : "deny");
	add_str(o, sig, "presigned", c->sigv4_presigned ? "passthrough" : "deny");
	add_str(o, sig, "sigv4a", c->sigv4a ? "passthrough" : "deny");
}

static void show_rest(struct out *o, const struct policy *p, cJSON *root)
{
	cJSON *cred, *ev, *iv, *git, *bb, *env, *lim, *log, *dev, *net;

	cred = add(o, root, "credentials", cJSON_CreateObject());
	ev = cred ? add(o, cred, "envVars", cJSON_CreateArray()) : NULL;
	for (size_t i = 0; ev && i < p->cred.n_env; i++)
		show_cred_rule(o, ev, &p->cred.env[i]);
	if (cred)
		show_cred_rest(o, p, cred);
	iv = add(o, root, "ignoreViolations", cJSON_CreateObject());
	for (size_t i = 0; iv && i < p->n_ignore; i++)
		add_strv(o, iv, p->ignore[i].command, p->ignore[i].lines, p->ignore[i].n_lines);
	add_bool(o, root, "allowNestedUserNamespaces", p->allow_nested_userns);
	git = add(o, root, "git", cJSON_CreateObject());
	if (git)
		add_strv(o, git, "safeDirectories", p->git_safe_dirs, p->n_git_safe_dirs);

	bb = add(o, root, "bpfbox", cJSON_CreateObject());
	if (!bb)
		return;
	add_str(o, bb, "mode", p->audit ? "audit" : "enforce");
	env = add(o, bb, "env", cJSON_CreateObject());
	if (env && p->has_env_allow)
		add_strv(o, env, "allow", p->env_allow, p->n_env_allow);
	else if (env)
		add(o, env, "allow", cJSON_CreateNull());
	lim = add(o, bb, "limits", cJSON_CreateObject());
	if (lim) {
		add_num(o, lim, "pids", p->limit_pids);
		add_num(o, lim, "memory", p->limit_memory_bytes);
		add_num(o, lim, "cpu", p->limit_cpu_percent);
	}
	log = add(o, bb, "log", cJSON_CreateObject());
	if (log) {
		add_str(o, log, "file", p->log_file);
		add_str(o, log, "format", p->log_format == POLICY_LOG_JSON ? "json" : "text");
	}
	dev = add(o, bb, "devices", cJSON_CreateObject());
	if (dev)
		add_strv(o, dev, "allow", p->device_allow, p->n_device_allow);
	net = add(o, bb, "network", cJSON_CreateObject());
	if (net)
		add_bool(o, net, "transparent", !p->transparent_off);
	/* The redacted form: a password never leaves the policy. */
	if (net)
		add_str(o, net, "parentProxy", p->parent.scheme ? p->parent.shown : NULL);
	if (net)
		add_socket_protocols(o, net, p->sock_allow);
	if (net)
		add_dns_types(o, net, p->dns_types);
	git = add(o, bb, "git", cJSON_CreateObject());
	if (git)
		add_str(o, git, "newRepositories", policy_git_new_name(p->git_new));
}

char *policy_to_json(const struct policy *p)
{
	struct out o = { .ok = true };
	cJSON *root = cJSON_CreateObject();
	char *text = NULL;

	if (!root)
		return NULL;
	add_str(&o, root, "file", p->file);
	add_str(&o, root, "digest", p->digest);
	if (p->has_ceiling) {
		cJSON *c = add(&o, root, "ceiling", cJSON_CreateObject());

		if (c) {
			add_str(&o, c, "file", p->ceiling_file);
			add_str(&o, c, "digest", p->ceiling_digest);
			/* bpfbox.mode below is "audit" only when both audit; the caller's audit of its own rules: */
			add_str(&o, c, "mode", p->ceiling_audit ? "audit" : "enforce");
			add_str(&o, c, "callerMode", p->audit || p->audit_own ? "audit" : "enforce");
		}
	}
	add_str(&o, root, "launchDirectory", p->cwd);
	add_str(&o, root, "home", p->home);
	show_net(&o, p, root);
	show_fs(&o, p, root);
	show_rest(&o, p, root);
	if (o.ok)
		text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}
