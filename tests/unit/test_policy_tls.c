// SPDX-License-Identifier: MIT
/*
 * srt's request-level network settings: network.tlsTerminate and its
 * defaults, requireHostMatch, refuseOpaqueTunnels, ambiguousRequestTarget,
 * stripResponseHeaders, allowPlaintextHeaderSet; every error with its JSON
 * path; mitmProxy still refused and exclusive with tlsTerminate; the
 * matcher policy_tls_terminates; `policy show`; and the administrator's
 * ceiling over each of them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "policy/policy.h"
#include "policy/policy_ceiling.h"

#define CWD "/nonexistent-bpfbox-test/proj"
#define HOME "/nonexistent-bpfbox-test/home"
#define ADMIN "/etc/bpfbox/policy.json"
#define CALLER "p.json"
#define FS_MIN "\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"
/* A policy whose network object holds x after the two required lists. */
#define NET_WITH(x) "{\"network\": {\"allowedDomains\": [\"*.example.com\"], " \
	"\"deniedDomains\": [], " x "}, " FS_MIN "}"

static int load(const char *name, const char *json, bool strict, struct policy **p,
		struct diag_list *d)
{
	struct policy_load_opts o = { .cwd = CWD, .home = HOME, .strict = strict };

	diag_list_init(d);
	return policy_load_buffer(name, json, strlen(json), &o, p, d);
}

static void dump(const struct diag_list *d)
{
	for (size_t i = 0; i < d->n; i++)
		print_message("  [%d] %s: %s\n", d->items[i].severity, d->items[i].path,
			      d->items[i].message);
}

static struct policy *load_ok(const char *name, const char *json)
{
	struct diag_list d;
	struct policy *p = NULL;

	if (load(name, json, false, &p, &d)) {
		dump(&d);
		fail_msg("policy rejected: %s", json);
	}
	diag_list_free(&d);
	assert_non_null(p);
	return p;
}

/* The policy is refused with an error at path containing needle. */
static void refused(const char *json, const char *path, const char *needle)
{
	struct policy *p = (void *)1;
	struct diag_list d;

	assert_int_equal(load("test.json", json, false, &p, &d), -EINVAL);
	assert_null(p);
	for (size_t i = 0; i < d.n; i++)
		if (d.items[i].severity == DIAG_ERROR && !strcmp(d.items[i].path, path) &&
		    strstr(d.items[i].message, needle)) {
			diag_list_free(&d);
			return;
		}
	dump(&d);
	fail_msg("no error at \"%s\" containing \"%s\"", path, needle);
}

static void test_defaults(void **state)
{
	struct policy *p = load_ok("test.json", NET_WITH("\"strictAllowlist\": true"));

	assert_false(p->tls.enabled);
	assert_null(p->tls.ca_cert_path);
	assert_int_equal(p->tls.n_exclude, 0);
	assert_false(p->require_host_match);
	assert_false(p->refuse_opaque_tunnels);
	assert_false(p->allow_plaintext_header_set);
	assert_int_equal(p->ambiguous_target, POLICY_AMBIG_REFUSE);
	assert_int_equal(p->n_strip_response_headers, 0);
	assert_false(policy_tls_terminates(p, "a.example.com", 443));
	policy_free(p);

	/* An empty object turns termination on with an ephemeral CA and srt's defaults. */
	p = load_ok("test.json", NET_WITH("\"tlsTerminate\": {}"));
	assert_true(p->tls.enabled);
	assert_null(p->tls.ca_cert_path);
	assert_null(p->tls.ca_key_path);
	assert_int_equal(p->tls.n_exclude, 0);
	assert_int_equal(p->tls.n_extra_ca, 0);
	assert_int_equal(p->tls.max_tunnels, 256);
	assert_int_equal(p->tls.handshake_timeout_ms, 10000);
	assert_false(p->tls.max_tunnels_given);
	assert_true(policy_tls_terminates(p, "a.example.com", 443));
	policy_free(p);

	/* null (or false) asks for nothing. */
	p = load_ok("test.json", NET_WITH("\"tlsTerminate\": null"));
	assert_false(p->tls.enabled);
	policy_free(p);
}

static void test_fields(void **state)
{
	struct policy *p = load_ok("test.json", NET_WITH(
		"\"tlsTerminate\": {\"caCertPath\": \"/etc/bpfbox/ca.pem\", \"caKeyPath\": \"~/ca.key\","
		" \"excludeDomains\": [\"*.Pinned.example.com\", \"bank.example.com:443\"],"
		" \"extraCaCertPaths\": [\"/etc/ssl/corp.pem\", \"certs/x.pem\"],"
		" \"maxTunnels\": 65536, \"handshakeTimeoutMs\": 100},"
		" \"requireHostMatch\": true, \"refuseOpaqueTunnels\": true,"
		" \"allowPlaintextHeaderSet\": true, \"ambiguousRequestTarget\": \"normalize\","
		" \"stripResponseHeaders\": [\"Set-Cookie\", \"x-Secret_1\", \"set-cookie\", \"!#$%&'*+-.^_`|~\"]"));

	assert_true(p->tls.enabled);
	assert_string_equal(p->tls.ca_cert_path, "/etc/bpfbox/ca.pem");
	assert_string_equal(p->tls.ca_key_path, HOME "/ca.key");
	assert_int_equal(p->tls.n_exclude, 2);
	assert_string_equal(p->tls.exclude[0].text, "*.pinned.example.com");
	assert_string_equal(p->tls.exclude[1].text, "bank.example.com:443");
	assert_int_equal(p->tls.n_extra_ca, 2);
	assert_string_equal(p->tls.extra_ca_paths[0], "/etc/ssl/corp.pem");
	assert_string_equal(p->tls.extra_ca_paths[1], CWD "/certs/x.pem");
	assert_int_equal(p->tls.max_tunnels, 65536);
	assert_int_equal(p->tls.handshake_timeout_ms, 100);
	assert_true(p->tls.max_tunnels_given);
	assert_true(p->tls.handshake_timeout_given);
	assert_true(p->require_host_match);
	assert_true(p->refuse_opaque_tunnels);
	assert_true(p->allow_plaintext_header_set);
	assert_int_equal(p->ambiguous_target, POLICY_AMBIG_NORMALIZE);
	/* Lower case, each once. */
	assert_int_equal(p->n_strip_response_headers, 3);
	assert_string_equal(p->strip_response_headers[0], "set-cookie");
	assert_string_equal(p->strip_response_headers[1], "x-secret_1");
	assert_string_equal(p->strip_response_headers[2], "!#$%&'*+-.^_`|~");
	policy_free(p);

	p = load_ok("test.json", NET_WITH("\"ambiguousRequestTarget\": \"asSpelled\""));
	assert_int_equal(p->ambiguous_target, POLICY_AMBIG_AS_SPELLED);
	assert_string_equal(policy_ambiguous_target_name(p->ambiguous_target), "asSpelled");
	policy_free(p);
	p = load_ok("test.json", NET_WITH("\"ambiguousRequestTarget\": \"refuse\""));
	assert_int_equal(p->ambiguous_target, POLICY_AMBIG_REFUSE);
	policy_free(p);
}

static void test_errors(void **state)
{
	refused(NET_WITH("\"tlsTerminate\": true"), "network.tlsTerminate", "expected an object");
	refused(NET_WITH("\"tlsTerminate\": {\"caCert\": \"/x\"}"), "network.tlsTerminate.caCert",
		"unknown key");
	refused(NET_WITH("\"tlsTerminate\": {\"caCertPath\": \"/etc/ca.pem\"}"),
		"network.tlsTerminate.caKeyPath", "caCertPath");
	refused(NET_WITH("\"tlsTerminate\": {\"caKeyPath\": \"/etc/ca.key\"}"),
		"network.tlsTerminate.caCertPath", "caKeyPath");
	refused(NET_WITH("\"tlsTerminate\": {\"caCertPath\": \"\", \"caKeyPath\": \"/k\"}"),
		"network.tlsTerminate.caCertPath", "empty");
	refused(NET_WITH("\"tlsTerminate\": {\"caCertPath\": 1, \"caKeyPath\": \"/k\"}"),
		"network.tlsTerminate.caCertPath", "expected a string");
	refused(NET_WITH("\"tlsTerminate\": {\"excludeDomains\": [\"ok.example.com\", \"*.com\"]}"),
		"network.tlsTerminate.excludeDomains[1]", "invalid domain pattern");
	refused(NET_WITH("\"tlsTerminate\": {\"excludeDomains\": [\"*\"]}"),
		"network.tlsTerminate.excludeDomains[0]", "invalid domain pattern");
	refused(NET_WITH("\"tlsTerminate\": {\"excludeDomains\": \"a.example.com\"}"),
		"network.tlsTerminate.excludeDomains", "expected an array");
	refused(NET_WITH("\"tlsTerminate\": {\"extraCaCertPaths\": [\"/a.pem\", 3]}"),
		"network.tlsTerminate.extraCaCertPaths[1]", "expected a string");
	refused(NET_WITH("\"tlsTerminate\": {\"maxTunnels\": 0}"), "network.tlsTerminate.maxTunnels",
		"from 1 to 65536");
	refused(NET_WITH("\"tlsTerminate\": {\"maxTunnels\": 65537}"),
		"network.tlsTerminate.maxTunnels", "from 1 to 65536");
	refused(NET_WITH("\"tlsTerminate\": {\"maxTunnels\": 1.5}"),
		"network.tlsTerminate.maxTunnels", "integer");
	refused(NET_WITH("\"tlsTerminate\": {\"handshakeTimeoutMs\": 99}"),
		"network.tlsTerminate.handshakeTimeoutMs", "from 100 to 600000");
	refused(NET_WITH("\"tlsTerminate\": {\"handshakeTimeoutMs\": \"10s\"}"),
		"network.tlsTerminate.handshakeTimeoutMs", "expected an integer");
	refused(NET_WITH("\"requireHostMatch\": \"yes\""), "network.requireHostMatch",
		"expected a boolean");
	refused(NET_WITH("\"refuseOpaqueTunnels\": 1"), "network.refuseOpaqueTunnels",
		"expected a boolean");
	refused(NET_WITH("\"allowPlaintextHeaderSet\": [\"x\"]"), "network.allowPlaintextHeaderSet",
		"expected a boolean");
	refused(NET_WITH("\"ambiguousRequestTarget\": \"deny\""), "network.ambiguousRequestTarget",
		"\"refuse\", \"asSpelled\" or \"normalize\"");
	refused(NET_WITH("\"ambiguousRequestTarget\": true"), "network.ambiguousRequestTarget",
		"expected a string");
	refused(NET_WITH("\"stripResponseHeaders\": [\"ok\", \"bad header\"]"),
		"network.stripResponseHeaders[1]", "not a header field name");
	refused(NET_WITH("\"stripResponseHeaders\": [\"x:y\"]"), "network.stripResponseHeaders[0]",
		"not a header field name");
	refused(NET_WITH("\"stripResponseHeaders\": [\"\"]"), "network.stripResponseHeaders[0]",
		"empty");
	refused(NET_WITH("\"stripResponseHeaders\": \"x\""), "network.stripResponseHeaders",
		"expected an array");
}

static void test_still_refused(void **state)
{
	struct policy *p;

	refused(NET_WITH("\"mitmProxy\": {\"socketPath\": \"/s\", \"domains\": [\"a.example.com\"]},"
			 " \"tlsTerminate\": {}"), "network.mitmProxy", "exclusive");
	refused(NET_WITH("\"filterRequest\": \"fn\""), "network.filterRequest", "library");
	/* Off, they ask for nothing. */
	p = load_ok("test.json", NET_WITH("\"mitmProxy\": null, \"tlsTerminate\": {}"));
	assert_true(p->tls.enabled);
	policy_free(p);
}

/* network.mitmProxy: srt's shape, strict, made absolute, checked to fit a socket address. */
static void test_mitm_proxy(void **state)
{
	char longpath[160];
	char *json = NULL;
	struct policy *p = load_ok("test.json", NET_WITH(
		"\"mitmProxy\": {\"socketPath\": \"/run/mitm.sock\", \"domains\": [\"api.example.com\","
		" \"*.corp.example.com\"]}"));

	assert_true(p->mitm.enabled);
	assert_string_equal(p->mitm.socket_path, "/run/mitm.sock");
	assert_int_equal(p->mitm.n_domains, 2);
	assert_true(policy_mitm_routes(p, "api.example.com", 443));
	assert_true(policy_mitm_routes(p, "git.corp.example.com", 80));
	assert_false(policy_mitm_routes(p, "corp.example.com", 443));
	assert_false(policy_mitm_routes(p, "other.example.com", 443));
	assert_false(p->tls.enabled);
	policy_free(p);

	/* Relative to the launch directory, as srt expands it. */
	p = load_ok("test.json", NET_WITH("\"mitmProxy\": {\"socketPath\": \"run/m.sock\", \"domains\":"
					  " [\"api.example.com\"]}"));
	assert_string_equal(p->mitm.socket_path, CWD "/run/m.sock");
	policy_free(p);

	refused(NET_WITH("\"mitmProxy\": {\"domains\": [\"a.example.com\"]}"),
		"network.mitmProxy.socketPath", "Required");
	refused(NET_WITH("\"mitmProxy\": {\"socketPath\": \"\", \"domains\": [\"a.example.com\"]}"),
		"network.mitmProxy.socketPath", "empty");
	refused(NET_WITH("\"mitmProxy\": {\"socketPath\": \"/s\"}"), "network.mitmProxy.domains", "Required");
	refused(NET_WITH("\"mitmProxy\": {\"socketPath\": \"/s\", \"domains\": []}"),
		"network.mitmProxy.domains", "at least one");
	refused(NET_WITH("\"mitmProxy\": {\"socketPath\": \"/s\", \"domains\": [\"*\"]}"),
		"network.mitmProxy.domains[0]", "invalid domain pattern");
	refused(NET_WITH("\"mitmProxy\": {\"socketPath\": \"/s\", \"domains\": [\"a.example.com\"],"
			 " \"socketpath\": \"/t\"}"), "network.mitmProxy.socketpath", "unknown key");
	refused(NET_WITH("\"mitmProxy\": \"/s\""), "network.mitmProxy", "expected an object");
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = 0;
	assert_true(asprintf(&json, NET_WITH("\"mitmProxy\": {\"socketPath\": \"%s\", \"domains\":"
					     " [\"a.example.com\"]}"), longpath) > 0);
	refused(json, "network.mitmProxy.socketPath", "longer than a Unix socket address holds");
	free(json);
}

static void test_terminates(void **state)
{
	struct policy *p = load_ok("test.json", NET_WITH(
		"\"tlsTerminate\": {\"excludeDomains\": [\"*.pinned.example.com\", \"bank.example.com:8443\","
		" \"192.0.2.7\"]}"));

	assert_true(policy_tls_terminates(p, "api.example.com", 443));
	/* A wildcard matches strict subdomains only, as in allowedDomains. */
	assert_false(policy_tls_terminates(p, "a.pinned.example.com", 443));
	assert_false(policy_tls_terminates(p, "a.b.pinned.example.com", 8443));
	assert_true(policy_tls_terminates(p, "pinned.example.com", 443));
	/* A port in the entry limits it to that port. */
	assert_false(policy_tls_terminates(p, "bank.example.com", 8443));
	assert_true(policy_tls_terminates(p, "bank.example.com", 443));
	assert_false(policy_tls_terminates(p, "192.0.2.7", 443));
	assert_true(policy_tls_terminates(p, "192.0.2.8", 443));
	policy_free(p);
}

static void test_show(void **state)
{
	struct policy *p = load_ok("test.json", NET_WITH(
		"\"tlsTerminate\": {\"excludeDomains\": [\"*.pinned.example.com\"], \"maxTunnels\": 8},"
		" \"requireHostMatch\": true, \"stripResponseHeaders\": [\"Set-Cookie\"]"));
	char *text = policy_to_json(p);
	cJSON *root, *net, *tls;

	assert_non_null(text);
	root = cJSON_Parse(text);
	assert_non_null(root);
	net = cJSON_GetObjectItemCaseSensitive(root, "network");
	tls = cJSON_GetObjectItemCaseSensitive(net, "tlsTerminate");
	assert_true(cJSON_IsObject(tls));
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(tls, "caCertPath")));
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(tls, "excludeDomains"),
					       0)->valuestring, "*.pinned.example.com");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(tls, "maxTunnels")->valueint, 8);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(tls, "handshakeTimeoutMs")->valueint, 10000);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(net, "requireHostMatch")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(net, "refuseOpaqueTunnels")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(net, "allowPlaintextHeaderSet")));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(net, "ambiguousRequestTarget")->valuestring,
			    "refuse");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(net,
				"stripResponseHeaders"), 0)->valuestring, "set-cookie");
	cJSON_Delete(root);
	free(text);
	policy_free(p);

	p = load_ok("test.json", NET_WITH("\"requireHostMatch\": false"));
	text = policy_to_json(p);
	root = cJSON_Parse(text);
	net = cJSON_GetObjectItemCaseSensitive(root, "network");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(net, "tlsTerminate")));
	cJSON_Delete(root);
	free(text);
	policy_free(p);
}

/* ---- the ceiling ---- */

struct run {
	struct policy *admin, *caller, *eff;
	struct ceiling_cuts cuts;
};

static void apply(struct run *r, const char *admin_net, const char *caller_net)
{
	char *a = NULL, *u = NULL;

	memset(r, 0, sizeof(*r));
	assert_true(asprintf(&a, "{\"network\": {\"allowedDomains\": [\"*.example.com\"], "
			     "\"deniedDomains\": [] %s}, " FS_MIN "}", admin_net) > 0);
	assert_true(asprintf(&u, "{\"network\": {\"allowedDomains\": [\"*.example.com\"], "
			     "\"deniedDomains\": [] %s}, " FS_MIN "}", caller_net) > 0);
	r->admin = load_ok(ADMIN, a);
	r->caller = load_ok(CALLER, u);
	free(a);
	free(u);
	assert_int_equal(policy_ceiling_apply(r->admin, r->caller, false, &r->eff, &r->cuts), 0);
	assert_non_null(r->eff);
	assert_false(r->cuts.oom);
}

static void done(struct run *r)
{
	policy_free(r->admin);
	policy_free(r->caller);
	policy_free(r->eff);
	ceiling_cuts_free(&r->cuts);
}

/* The cut at path is exactly line, or (line NULL) there is none. */
static void want_cut(const struct run *r, const char *path, const char *line)
{
	const struct ceiling_cut *c = ceiling_cuts_find(&r->cuts, path);

	if (!line && c)
		fail_msg("unexpected cut: %s", c->line);
	if (!line)
		return;
	if (!c) {
		for (size_t i = 0; i < r->cuts.n; i++)
			print_message("  cut: %s\n", r->cuts.items[i].line);
		fail_msg("no cut at %s, want: %s", path, line);
	}
	if (strcmp(c->line, line))
		fail_msg("cut at %s:\n   got: %s\n  want: %s", path, c->line, line);
}

#define CUT(path, rest) CALLER ": " path " " rest

static void test_ceiling_ca(void **state)
{
	struct run r;

	/* The administrator's CA replaces the caller's. */
	apply(&r, ", \"tlsTerminate\": {\"caCertPath\": \"/etc/bpfbox/ca.pem\", \"caKeyPath\": "
		  "\"/etc/bpfbox/ca.key\", \"extraCaCertPaths\": [\"/etc/ssl/corp.pem\"]}",
	      ", \"tlsTerminate\": {\"caCertPath\": \"/tmp/my.pem\", \"caKeyPath\": \"/tmp/my.key\","
	      " \"extraCaCertPaths\": [\"/etc/ssl/corp.pem\", \"/tmp/evil.pem\"]}");
	assert_true(r.eff->tls.enabled);
	assert_string_equal(r.eff->tls.ca_cert_path, "/etc/bpfbox/ca.pem");
	assert_string_equal(r.eff->tls.ca_key_path, "/etc/bpfbox/ca.key");
	want_cut(&r, "network.tlsTerminate.caCertPath", CUT("network.tlsTerminate.caCertPath",
		 "\"/tmp/my.pem\": the administrator's policy names the CA (" ADMIN "); the "
		 "administrator's CA is used"));
	want_cut(&r, "network.tlsTerminate.caKeyPath", CUT("network.tlsTerminate.caKeyPath",
		 "\"/tmp/my.key\": the administrator's policy names the CA (" ADMIN "); the "
		 "administrator's CA is used"));
	assert_int_equal(r.eff->tls.n_extra_ca, 1);
	assert_string_equal(r.eff->tls.extra_ca_paths[0], "/etc/ssl/corp.pem");
	want_cut(&r, "network.tlsTerminate.extraCaCertPaths[0]", NULL);
	want_cut(&r, "network.tlsTerminate.extraCaCertPaths[1]",
		 CUT("network.tlsTerminate.extraCaCertPaths[1]", "\"/tmp/evil.pem\": not among the "
		     "administrator's extraCaCertPaths (" ADMIN "); not trusted"));
	done(&r);

	/* An ephemeral CA of the administrator's: the caller's named one is cut too. */
	apply(&r, ", \"tlsTerminate\": {}",
	      ", \"tlsTerminate\": {\"caCertPath\": \"/tmp/my.pem\", \"caKeyPath\": \"/tmp/my.key\"}");
	assert_true(r.eff->tls.enabled);
	assert_null(r.eff->tls.ca_cert_path);
	assert_null(r.eff->tls.ca_key_path);
	want_cut(&r, "network.tlsTerminate.caCertPath", CUT("network.tlsTerminate.caCertPath",
		 "\"/tmp/my.pem\": the administrator's policy terminates with an ephemeral CA (" ADMIN
		 "); an ephemeral CA is used"));
	done(&r);

	/* The administrator's termination applies to a caller that has none. */
	apply(&r, ", \"tlsTerminate\": {\"caCertPath\": \"/etc/bpfbox/ca.pem\", \"caKeyPath\": "
		  "\"/etc/bpfbox/ca.key\", \"excludeDomains\": [\"*.pinned.example.com\"]}", "");
	assert_true(r.eff->tls.enabled);
	assert_string_equal(r.eff->tls.ca_cert_path, "/etc/bpfbox/ca.pem");
	assert_false(policy_tls_terminates(r.eff, "a.pinned.example.com", 443));
	assert_true(policy_tls_terminates(r.eff, "api.example.com", 443));
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* No termination in the ceiling: the caller's own, CA and all, without a cut. */
	apply(&r, "", ", \"tlsTerminate\": {\"caCertPath\": \"/tmp/my.pem\", \"caKeyPath\": "
		      "\"/tmp/my.key\", \"maxTunnels\": 9}");
	assert_true(r.eff->tls.enabled);
	assert_string_equal(r.eff->tls.ca_cert_path, "/tmp/my.pem");
	assert_string_equal(r.eff->tls.ca_key_path, "/tmp/my.key");
	assert_int_equal(r.eff->tls.max_tunnels, 9);
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* Neither. */
	apply(&r, "", "");
	assert_false(r.eff->tls.enabled);
	done(&r);
}

static void test_ceiling_exclude(void **state)
{
	struct run r;

	apply(&r, ", \"tlsTerminate\": {\"excludeDomains\": [\"*.pinned.example.com\", "
		  "\"bank.example.com\"]}",
	      ", \"tlsTerminate\": {\"excludeDomains\": [\"a.pinned.example.com\", \"other.example.com\","
	      " \"*.example.com\"]}");
	/* Kept: inside the administrator's. Cut: outside. Partly: the overlap only. */
	want_cut(&r, "network.tlsTerminate.excludeDomains[0]", NULL);
	want_cut(&r, "network.tlsTerminate.excludeDomains[1]",
		 CUT("network.tlsTerminate.excludeDomains[1]", "\"other.example.com\": outside the "
		     "administrator's tlsTerminate.excludeDomains (" ADMIN "); terminated"));
	want_cut(&r, "network.tlsTerminate.excludeDomains[2]",
		 CUT("network.tlsTerminate.excludeDomains[2]", "\"*.example.com\": partly outside the "
		     "administrator's tlsTerminate.excludeDomains (" ADMIN "); excluded only for "
		     "*.pinned.example.com, bank.example.com"));
	assert_false(policy_tls_terminates(r.eff, "a.pinned.example.com", 443));
	assert_false(policy_tls_terminates(r.eff, "b.pinned.example.com", 443));
	assert_false(policy_tls_terminates(r.eff, "bank.example.com", 443));
	assert_true(policy_tls_terminates(r.eff, "other.example.com", 443));
	assert_true(policy_tls_terminates(r.eff, "api.example.com", 443));
	done(&r);

	/* A caller that excludes nothing terminates everything, the administrator's exclusions too. */
	apply(&r, ", \"tlsTerminate\": {\"excludeDomains\": [\"*.pinned.example.com\"]}",
	      ", \"tlsTerminate\": {}");
	assert_int_equal(r.eff->tls.n_exclude, 0);
	assert_true(policy_tls_terminates(r.eff, "a.pinned.example.com", 443));
	assert_int_equal(r.cuts.n, 0);
	done(&r);
}

static void test_ceiling_limits(void **state)
{
	struct run r;

	apply(&r, ", \"tlsTerminate\": {\"maxTunnels\": 32, \"handshakeTimeoutMs\": 5000}",
	      ", \"tlsTerminate\": {\"maxTunnels\": 64, \"handshakeTimeoutMs\": 1000}");
	assert_int_equal(r.eff->tls.max_tunnels, 32);
	assert_int_equal(r.eff->tls.handshake_timeout_ms, 1000);
	want_cut(&r, "network.tlsTerminate.maxTunnels", CUT("network.tlsTerminate.maxTunnels",
		 "64: above the administrator's limit (" ADMIN "); limited to 32"));
	want_cut(&r, "network.tlsTerminate.handshakeTimeoutMs", NULL);
	done(&r);

	/* A default the caller did not write narrows silently. */
	apply(&r, ", \"tlsTerminate\": {\"maxTunnels\": 32, \"handshakeTimeoutMs\": 5000}",
	      ", \"tlsTerminate\": {}");
	assert_int_equal(r.eff->tls.max_tunnels, 32);
	assert_int_equal(r.eff->tls.handshake_timeout_ms, 5000);
	assert_int_equal(r.cuts.n, 0);
	done(&r);
}

#define MITM_A ", \"mitmProxy\": {\"socketPath\": \"/run/admin-mitm.sock\", \"domains\": [\"api.example.com\"]}"

/* mitmProxy is the administrator's alone: root's proxy connects to the socket. */
static void test_ceiling_mitm(void **state)
{
	struct run r;

	/* The administrator's applies to every caller. */
	apply(&r, MITM_A, "");
	assert_true(r.eff->mitm.enabled);
	assert_string_equal(r.eff->mitm.socket_path, "/run/admin-mitm.sock");
	assert_true(policy_mitm_routes(r.eff, "api.example.com", 443));
	assert_false(policy_mitm_routes(r.eff, "www.example.com", 443));
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* The same, written again by the caller: no cut. */
	apply(&r, MITM_A, MITM_A);
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* A caller's own socket is never dialled by root. */
	apply(&r, "", ", \"mitmProxy\": {\"socketPath\": \"/run/docker.sock\", \"domains\": [\"api.example.com\"]}");
	assert_false(r.eff->mitm.enabled);
	assert_false(policy_mitm_routes(r.eff, "api.example.com", 443));
	want_cut(&r, "network.mitmProxy.socketPath", CUT("network.mitmProxy.socketPath",
		 "\"/run/docker.sock\": only the administrator's policy names a MITM proxy (the daemon's "
		 "proxy, root, would connect to it) (" ADMIN "); names are not sent to it"));
	done(&r);

	/* Another socket, or more names, under the administrator's: the administrator's holds. */
	apply(&r, MITM_A, ", \"mitmProxy\": {\"socketPath\": \"/run/admin-mitm.sock\", \"domains\":"
		  " [\"api.example.com\", \"www.example.com\"]}");
	assert_true(r.eff->mitm.enabled);
	assert_int_equal(r.eff->mitm.n_domains, 1);
	assert_false(policy_mitm_routes(r.eff, "www.example.com", 443));
	want_cut(&r, "network.mitmProxy.socketPath", CUT("network.mitmProxy.socketPath",
		 "\"/run/admin-mitm.sock\": only the administrator's policy names a MITM proxy (the daemon's "
		 "proxy, root, would connect to it) (" ADMIN "); the administrator's mitmProxy applies"));
	done(&r);

	/* Exclusive: a caller's termination would take those names away from the administrator's MITM proxy. */
	apply(&r, MITM_A, ", \"tlsTerminate\": {}");
	assert_false(r.eff->tls.enabled);
	assert_true(r.eff->mitm.enabled);
	want_cut(&r, "network.tlsTerminate", CUT("network.tlsTerminate:", "the administrator's policy sends "
		 "names to its mitmProxy, which excludes tlsTerminate (" ADMIN "); TLS is not terminated"));
	done(&r);

	/* The administrator's termination and a caller's MITM proxy: termination, no MITM proxy. */
	apply(&r, ", \"tlsTerminate\": {}", ", \"mitmProxy\": {\"socketPath\": \"/run/m.sock\", \"domains\":"
		  " [\"api.example.com\"]}");
	assert_true(r.eff->tls.enabled);
	assert_false(r.eff->mitm.enabled);
	done(&r);
}

static void test_ceiling_checks(void **state)
{
	static const struct {
		const char *admin, *caller;
		enum policy_ambiguous_target want;
		bool cut;
	} rows[] = {
		{ "refuse", "asSpelled", POLICY_AMBIG_REFUSE, true },
		{ "refuse", "normalize", POLICY_AMBIG_REFUSE, true },
		{ "normalize", "asSpelled", POLICY_AMBIG_NORMALIZE, true },
		{ "normalize", "refuse", POLICY_AMBIG_REFUSE, false },
		{ "asSpelled", "normalize", POLICY_AMBIG_NORMALIZE, false },
		{ "asSpelled", "asSpelled", POLICY_AMBIG_AS_SPELLED, false },
	};
	struct run r;
	char a[128], u[128];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(a, sizeof(a), ", \"ambiguousRequestTarget\": \"%s\"", rows[i].admin);
		snprintf(u, sizeof(u), ", \"ambiguousRequestTarget\": \"%s\"", rows[i].caller);
		apply(&r, a, u);
		assert_int_equal(r.eff->ambiguous_target, rows[i].want);
		assert_int_equal(ceiling_cuts_find(&r.cuts, "network.ambiguousRequestTarget") != NULL,
				 rows[i].cut);
		done(&r);
	}
	apply(&r, ", \"ambiguousRequestTarget\": \"normalize\"",
	      ", \"ambiguousRequestTarget\": \"asSpelled\"");
	want_cut(&r, "network.ambiguousRequestTarget", CUT("network.ambiguousRequestTarget",
		 "\"asSpelled\": looser than the administrator's policy (" ADMIN "); \"normalize\" applies"));
	done(&r);

	/* Checks either asks for stay on; a header set on plain HTTP needs both. */
	apply(&r, ", \"requireHostMatch\": true, \"refuseOpaqueTunnels\": true, "
		  "\"stripResponseHeaders\": [\"set-cookie\", \"x-a\"]",
	      ", \"requireHostMatch\": false, \"stripResponseHeaders\": [\"X-A\", \"x-b\"], "
	      "\"allowPlaintextHeaderSet\": true");
	assert_true(r.eff->require_host_match);
	assert_true(r.eff->refuse_opaque_tunnels);
	assert_int_equal(r.eff->n_strip_response_headers, 3);
	assert_string_equal(r.eff->strip_response_headers[0], "set-cookie");
	assert_string_equal(r.eff->strip_response_headers[1], "x-a");
	assert_string_equal(r.eff->strip_response_headers[2], "x-b");
	assert_false(r.eff->allow_plaintext_header_set);
	want_cut(&r, "network.allowPlaintextHeaderSet", CUT("network.allowPlaintextHeaderSet",
		 "true: not allowed by the administrator's policy (" ADMIN "); not granted"));
	done(&r);

	apply(&r, ", \"allowPlaintextHeaderSet\": true", ", \"requireHostMatch\": true, "
		  "\"allowPlaintextHeaderSet\": true");
	assert_true(r.eff->require_host_match);
	assert_false(r.eff->refuse_opaque_tunnels);
	assert_true(r.eff->allow_plaintext_header_set);
	assert_int_equal(r.cuts.n, 0);
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_still_refused),
		cmocka_unit_test(test_mitm_proxy),
		cmocka_unit_test(test_terminates),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_ceiling_ca),
		cmocka_unit_test(test_ceiling_exclude),
		cmocka_unit_test(test_ceiling_limits),
		cmocka_unit_test(test_ceiling_checks),
		cmocka_unit_test(test_ceiling_mitm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
