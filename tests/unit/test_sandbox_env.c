// SPDX-License-Identifier: MIT
/*
 * The command's environment: deny entries removed, allow-list mode, bpfbox's
 * own variables, the scrub of bpfbox's initial environment block, and
 * masked variables: the command gets sentinels, never the real values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "log/log.h"
#include "sandbox/sandbox_cred.h"
#include "sandbox/sandbox_env.h"

#define BASE                                                                                                 \
	"\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}, "                                     \
	"\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"

static struct policy *load(const char *json)
{
	struct policy_load_opts o = { .cwd = "/nonexistent-bpfbox-test", .home = "/nonexistent-bpfbox-test" };
	struct policy *p = NULL;
	struct diag_list d;

	diag_list_init(&d);
	assert_int_equal(policy_load_buffer("t.json", json, strlen(json), &o, &p, &d), 0);
	diag_list_free(&d);
	return p;
}


static const struct env_extra extra = { .sandbox_id = "bb-0123456789ab", .tmpdir = "/tmp/bpfbox-0123456789ab",
					.proxy_port = 31337 };

static void deny_removes_and_extras_are_set(void **state)
{
	struct policy *p = load("{" BASE ", \"credentials\": {\"envVars\": "
				"[{\"name\": \"TOKEN\", \"mode\": \"deny\"}]}}");
	char *in[] = { "PATH=/bin", "TOKEN=secret", "TOKEN_X=kept", "TMPDIR=/old", NULL };
	struct env_list e;

	assert_int_equal(env_build(p, in, &extra, &e), 0);
	assert_null(env_get(&e, "TOKEN"));
	assert_string_equal(env_get(&e, "TOKEN_X"), "kept");
	assert_string_equal(env_get(&e, "PATH"), "/bin");
	assert_string_equal(env_get(&e, "TMPDIR"), "/tmp/bpfbox-0123456789ab");
	assert_string_equal(env_get(&e, "BPFBOX_SANDBOX_ID"), "bb-0123456789ab");
	assert_string_equal(env_get(&e, "HTTPS_PROXY"), "http://127.0.0.1:31337");
	assert_string_equal(env_get(&e, "ALL_PROXY"), "socks5h://127.0.0.1:31337");
	for (size_t i = 0; i < e.n; i++)
		assert_null(strstr(e.v[i], "secret"));
	assert_null(e.v[e.n]);
	env_free(&e);
	policy_free(p);
}

/* The target user's passwd entry wins over what sudo left (HOME=/root). */
static void target_user_identity_variables(void **state)
{
	static const struct env_extra x = { .sandbox_id = "bb-0123456789ab", .tmpdir = "/tmp/bpfbox-0123456789ab",
					    .proxy_port = 31337, .user = "alice", .home = "/home/alice",
					    .shell = "/bin/zsh" };
	struct policy *p = load("{" BASE "}");
	char *in[] = { "HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/bash", "SUDO_USER=alice", NULL };
	struct env_list e;

	assert_int_equal(env_build(p, in, &x, &e), 0);
	assert_string_equal(env_get(&e, "HOME"), "/home/alice");
	assert_string_equal(env_get(&e, "USER"), "alice");
	assert_string_equal(env_get(&e, "LOGNAME"), "alice");
	assert_string_equal(env_get(&e, "SHELL"), "/bin/zsh");
	env_free(&e);
	assert_int_equal(env_build(p, in, &extra, &e), 0);
	assert_string_equal(env_get(&e, "HOME"), "/root");
	env_free(&e);
	policy_free(p);
}

/* socksProxyPort: SOCKS clients go to the external proxy, HTTP clients stay on theirs. */
static void external_socks_port_is_named(void **state)
{
	static const struct env_extra x = { .sandbox_id = "bb-0123456789ab", .tmpdir = "/tmp/bpfbox-0123456789ab",
					    .proxy_port = 31337, .socks_port = 1080 };
	struct policy *p = load("{" BASE "}");
	char *in[] = { "PATH=/bin", NULL };
	struct env_list e;

	assert_int_equal(env_build(p, in, &x, &e), 0);
	assert_string_equal(env_get(&e, "ALL_PROXY"), "socks5h://127.0.0.1:1080");
	assert_string_equal(env_get(&e, "all_proxy"), "socks5h://127.0.0.1:1080");
	assert_string_equal(env_get(&e, "HTTP_PROXY"), "http://127.0.0.1:31337");
	assert_string_equal(env_get(&e, "BPFBOX_PROXY"), "127.0.0.1:31337");
	env_free(&e);
	policy_free(p);
}

/* TLS termination: every variable srt sets names the sandbox's bundle, over the caller's own. */
static void ca_bundle_variables_point_to_the_bundle(void **state)
{
	static const char *const names[] = { "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "CURL_CA_BUNDLE",
					     "REQUESTS_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO", "AWS_CA_BUNDLE",
					     "CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
					     "NIX_SSL_CERT_FILE", "npm_config_cafile" };
	static const struct env_extra x = { .sandbox_id = "bb-0123456789ab", .tmpdir = "/tmp/bpfbox-0123456789ab",
					    .proxy_port = 31337,
					    .ca_bundle = "/tmp/bpfbox-0123456789ab/bpfbox-ca-bundle.pem" };
	struct policy *p = load("{" BASE "}");
	char *in[] = { "PATH=/bin", "SSL_CERT_FILE=/home/me/evil.pem", NULL };
	struct env_list e;

	assert_int_equal(env_build(p, in, &x, &e), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_string_equal(env_get(&e, names[i]), x.ca_bundle);
	env_free(&e);
	/* Without termination none is set, and the caller's stays as it was. */
	assert_int_equal(env_build(p, in, &extra, &e), 0);
	assert_string_equal(env_get(&e, "SSL_CERT_FILE"), "/home/me/evil.pem");
	assert_null(env_get(&e, "NODE_EXTRA_CA_CERTS"));
	env_free(&e);
	policy_free(p);
}

static void allow_list_passes_only_named(void **state)
{
	struct policy *p = load("{" BASE ", \"credentials\": {\"envVars\": "
				"[{\"name\": \"LC_SECRET\", \"mode\": \"deny\"}]}, "
				"\"bpfbox\": {\"env\": {\"allow\": [\"PATH\", \"LC_*\"]}}}");
	char *in[] = { "PATH=/bin", "HOME=/root", "LC_ALL=C", "LC_SECRET=s", NULL };
	struct env_list e;

	assert_int_equal(env_build(p, in, &extra, &e), 0);
	assert_string_equal(env_get(&e, "PATH"), "/bin");
	assert_string_equal(env_get(&e, "LC_ALL"), "C");
	assert_null(env_get(&e, "HOME"));
	assert_null(env_get(&e, "LC_SECRET"));
	assert_non_null(env_get(&e, "TMPDIR"));
	assert_non_null(env_get(&e, "BPFBOX_SANDBOX_ID"));
	env_free(&e);
	policy_free(p);
}

static void scrub_overwrites_denied_values_in_place(void **state)
{
	struct policy *p = load("{" BASE ", \"credentials\": {\"envVars\": "
				"[{\"name\": \"TOKEN\", \"mode\": \"deny\"}]}}");
	char a[] = "TOKEN=secret", b[] = "OTHER=visible";
	char *in[] = { a, b, NULL };

	env_scrub_self(p, in);
	assert_string_equal(a, "TOKEN=xxxxxx");
	assert_string_equal(b, "OTHER=visible");
	policy_free(p);
}

#define MASK_NET "\"network\": {\"allowedDomains\": [\"api.example.com\", \"other.example.com\"], " \
	"\"deniedDomains\": [], \"tlsTerminate\": {}}, " \
	"\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"

static void masked_variables_get_sentinels(void **state)
{
	static const char real[] = "sk-ant-api03-REALREALREALREALREALREALREALREALREALREALREAL";
	struct policy *p = load("{" MASK_NET ", \"credentials\": {\"envVars\": ["
					"{\"name\": \"API_KEY\", \"mode\": \"mask\", \"injectHosts\": [\"api.example.com\"]},"
					"{\"name\": \"DB_URL\", \"mode\": \"mask\", \"extract\": \"://[^:]+:([^@]+)@\"},"
					"{\"name\": \"NOMATCH\", \"mode\": \"mask\", \"extract\": \"pw=(x+)\","
					" \"onExtractNoMatch\": \"deny\"},"
					"{\"name\": \"ABSENT\", \"mode\": \"mask\"}]}}");
	char *in[] = { "PATH=/bin", "API_KEY=sk-ant-api03-REALREALREALREALREALREALREALREALREALREALREAL",
		       "DB_URL=postgres://alice:hunter22@db/x", "NOMATCH=nothing-here", NULL };
	struct log_config lc = { .min_level = LOG_DEBUG, .format = LOG_FORMAT_JSON, .file_path = "/dev/null", .fd = -1 };
	struct sandbox_cred sc;
	struct errmsg em = { { 0 } };
	struct env_extra x = extra;
	struct env_list e;
	struct log *log;
	const char *v;
	bool sel[8];
	char cmd[128] = "echo hunter22 " "sk-ant-api03-REALREALREALREALREALREALREALREALREALREALREAL";

	assert_int_equal(log_open(&lc, &log), 0);
	assert_int_equal(sandbox_cred_setup(&sc, p, in, log, &em), 0);
	x.cred = &sc;
	assert_int_equal(env_build(p, in, &x, &e), 0);
	v = env_get(&e, "API_KEY");
	assert_non_null(v);
	/* srt's sentinel: fake_value_ and a uuid, padded to a longer real value's length. */
	assert_int_equal(strncmp(v, "fake_value_", 11), 0);
	assert_int_equal(strlen(v), strlen(real));
	/* extract: only the password is masked, the rest stays as written. */
	v = env_get(&e, "DB_URL");
	assert_int_equal(strncmp(v, "postgres://alice:fake_value_", 28), 0);
	assert_string_equal(v + strlen(v) - 5, "@db/x");
	assert_null(env_get(&e, "NOMATCH"));	/* onExtractNoMatch "deny" */
	assert_null(env_get(&e, "ABSENT"));
	for (size_t i = 0; i < e.n; i++) {
		assert_null(strstr(e.v[i], "REALREAL"));
		assert_null(strstr(e.v[i], "hunter22"));
	}
	/* Where each real value may go. */
	assert_true(sc.n_pairs == 2);
	sandbox_cred_select(&sc, "api.example.com", sel);
	assert_true(sel[0]);
	assert_true(sel[1]);	/* DB_URL: allowedDomains, ports dropped */
	sandbox_cred_select(&sc, "other.example.com", sel);
	assert_false(sel[0]);
	assert_true(sel[1]);
	/* The log knows both as secrets. */
	log_redact_in_place(log, cmd, sizeof(cmd));
	assert_string_equal(cmd, "echo [masked:DB_URL] [masked:API_KEY]");
	env_free(&e);

	/* Without the table (never built), masked variables are dropped, not passed. */
	assert_int_equal(env_build(p, in, &extra, &e), 0);
	assert_null(env_get(&e, "API_KEY"));
	assert_null(env_get(&e, "DB_URL"));
	env_free(&e);
	sandbox_cred_free(&sc);
	log_close(log);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(masked_variables_get_sentinels),
		cmocka_unit_test(deny_removes_and_extras_are_set),
		cmocka_unit_test(external_socks_port_is_named),
		cmocka_unit_test(target_user_identity_variables),
		cmocka_unit_test(allow_list_passes_only_named),
		cmocka_unit_test(ca_bundle_variables_point_to_the_bundle),
		cmocka_unit_test(scrub_overwrites_denied_values_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
