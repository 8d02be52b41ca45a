// SPDX-License-Identifier: MIT
/*
 * The policy loader: JSON -> normalised policy -> `policy show` text, and
 * `bpfbox policy explain` (the CLI's own code) on a target. Input: the
 * policy file, optionally followed by a NUL and the explain target.
 * Loading must either fail with a diagnostic or yield a policy whose every
 * path is absolute, whose shown form is JSON, and whose decisions answer.
 * Every diagnostic's path is located in the text (policy check --json):
 * inside it, its line and column those of its offset; and a path read from
 * the input after the target is located without reading past the text.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sanitizer/common_interface_defs.h>

#include "cli/commands.h"
#include "fuzz.h"
#include "policy/policy.h"
#include "policy/policy_locate.h"

static int policy_fd = -1, null_fd = -1, saved_stderr = -1;
static char policy_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Explain's home and cwd: fixed, so an input means the same each run. */
	setenv("HOME", "/nonexistent/fuzz-home", 1);
	policy_fd = memfd_create("fuzz-policy", 0);
	null_fd = open("/dev/null", O_WRONLY);
	saved_stderr = dup(2);
	if (policy_fd < 0 || null_fd < 0 || saved_stderr < 0)
		abort();
	snprintf(policy_path, sizeof(policy_path), "/proc/self/fd/%d", policy_fd);
	/* The CLI prints; sanitizer reports still reach the real stderr. */
	dup2(null_fd, 1);
	__sanitizer_set_report_fd((void *)(intptr_t)saved_stderr);
	return 0;
}

static void check_policy(const struct policy *p, const char *target)
{
	struct mandatory_entry m[POLICY_MANDATORY_MAX];
	struct fs_decision d;
	const char *rule = NULL, *reason = NULL;
	cJSON *shown;
	char *text;

	for (size_t i = 0; i < p->n_fs_rules; i++) {
		FUZZ_CHECK(p->fs_rules[i].path && p->fs_rules[i].path[0] == '/');
		FUZZ_CHECK(p->fs_rules[i].name && p->fs_rules[i].source);
	}
	for (size_t i = 0; i < p->n_allow_unix_sockets; i++)
		FUZZ_CHECK(p->allow_unix_sockets[i][0] == '/');
	FUZZ_CHECK(strlen(p->digest) == 64);
	FUZZ_CHECK(policy_mandatory(p, m) <= POLICY_MANDATORY_MAX);

	text = policy_to_json(p);
	FUZZ_CHECK(text != NULL);
	shown = cJSON_Parse(text);
	FUZZ_CHECK(shown != NULL);
	cJSON_Delete(shown);
	free(text);

	/* The decision model answers for any path and any host. */
	for (size_t i = 0; i < p->n_fs_rules; i++) {
		policy_decide_read(p, p->fs_rules[i].path, &d);
		FUZZ_CHECK(d.rule_name != NULL);
		policy_decide_write(p, p->fs_rules[i].path, &d);
		FUZZ_CHECK(d.rule_name != NULL);
	}
	for (size_t i = 0; i < p->n_allowed_domains; i++) {
		const struct domain_pattern *dp = &p->allowed_domains[i];
		unsigned port = dp->port ? dp->port : 443;

		if (dp->kind == DOMAIN_NAME || dp->kind == DOMAIN_IPV4 || dp->kind == DOMAIN_IPV6)
			/* An allowed host is allowed unless a denied entry covers it. */
			FUZZ_CHECK(policy_decide_host(p, dp->host, port, &rule, &reason) ==
					   NET_ALLOW ||
				   !strncmp(rule, "deniedDomains:", 14));
	}
	/* Termination: off without tlsTerminate; never for a name it excludes. */
	for (size_t i = 0; i < p->tls.n_exclude; i++) {
		const struct domain_pattern *dp = &p->tls.exclude[i];

		if (dp->kind != DOMAIN_WILDCARD)
			FUZZ_CHECK(!policy_tls_terminates(p, dp->host, dp->port ? dp->port : 443));
	}
	FUZZ_CHECK(p->tls.enabled || !policy_tls_terminates(p, "example.com", 443));
	FUZZ_CHECK(!p->tls.enabled || (p->tls.max_tunnels >= 1 && p->tls.max_tunnels <= 65536));
	FUZZ_CHECK(!p->tls.ca_cert_path == !p->tls.ca_key_path);
	/* Credentials: hosts without a port, pairs of whole-value masks, denies in env_deny. */
	for (size_t i = 0; i < p->cred.n_env; i++) {
		const struct policy_cred_rule *r = &p->cred.env[i];

		FUZZ_CHECK(r->name && r->name[0]);
		FUZZ_CHECK(r->mode == POLICY_CRED_MASK || policy_env_denied(p, r->name));
		FUZZ_CHECK(!r->n_mask_claims || r->decode_jwt);
		for (size_t k = 0; k < r->n_inject_hosts; k++)
			FUZZ_CHECK(r->inject_hosts[k].port == 0);
	}
	FUZZ_CHECK(!policy_cred_masks(p) || p->tls.enabled || p->cred.allow_plaintext_inject);
	for (size_t i = 0; i < p->cred.n_aws_pairs; i++) {
		const struct policy_cred_rule *k = policy_cred_find(p, p->cred.aws_pairs[i].key_id_var);
		const struct policy_cred_rule *s = policy_cred_find(p, p->cred.aws_pairs[i].secret_var);

		FUZZ_CHECK(k && k->mode == POLICY_CRED_MASK && !k->extract && !k->decode_jwt);
		FUZZ_CHECK(s && s->mode == POLICY_CRED_MASK && !s->extract && !s->decode_jwt);
	}
	for (size_t i = 0; i < p->n_strip_response_headers; i++)
		FUZZ_CHECK(p->strip_response_headers[i][0] != '\0');
	if (target) {
		enum net_verdict v = policy_decide_host(p, target, 443, &rule, &reason);

		FUZZ_CHECK(rule != NULL);
		FUZZ_CHECK(v != NET_DENY_MALFORMED || reason != NULL);
		(void)policy_env_denied(p, target);
		(void)policy_env_allowed(p, target);
	}
}

/* A location is inside the text, and its line and column are those of its offset. */
static void check_location(const char *json, size_t len, const char *path)
{
	struct policy_location loc;
	unsigned line = 1, column = 1;

	if (policy_locate(json, len, path, &loc))
		return;
	FUZZ_CHECK(loc.offset < len);
	for (size_t i = 0; i < loc.offset; i++) {
		if (json[i] == '\n') {
			line++;
			column = 1;
		} else {
			column++;
		}
	}
	FUZZ_CHECK(loc.line == line && loc.column == column);
	FUZZ_CHECK(loc.exact == 0 || loc.exact == 1);
}

/* `bpfbox policy explain [--write] FILE TARGET`, through the CLI. */
static void explain(const uint8_t *json, size_t len, const char *target, bool write)
{
	char *argv[] = { "policy", "explain", write ? "--write" : "--host", "--",
			 policy_path, (char *)target, NULL };
	int ret;

	if (ftruncate(policy_fd, 0) || pwrite(policy_fd, json, len, 0) != (ssize_t)len)
		abort();
	if (!write && (target[0] == '/' || target[0] == '~' || target[0] == '.'))
		argv[2] = "--path";
	dup2(null_fd, 2);
	ret = cmd_policy(6, argv);
	fflush(stdout);
	dup2(saved_stderr, 2);
	FUZZ_CHECK(ret == 0 || ret == 1 || ret == 2 || ret == BPFBOX_EXIT_SETUP);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const targets[] = { "~/.ssh/id_rsa", "/etc/passwd",
					       "example.com:443", "[::1]:80" };
	struct policy_load_opts lo = {
		.cwd = "/nonexistent/fuzz-cwd",
		.home = "/nonexistent/fuzz-home",
		.strict = size & 1,
	};
	struct diag_list diags = DIAG_LIST_INIT;
	const uint8_t *nul = memchr(data, 0, size);
	size_t json_len = nul ? (size_t)(nul - data) : size;
	char *target = NULL;
	struct policy *p = NULL;
	int ret;

	if (nul) {
		target = strndup((const char *)nul + 1, size - json_len - 1);
		if (!target)
			return 0;
	}
	ret = policy_load_buffer("fuzz.json", (const char *)data, json_len, &lo, &p, &diags);
	if (ret) {
		FUZZ_CHECK(p == NULL);
		FUZZ_CHECK(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_CHECK(diag_has_errors(&diags));
	} else {
		FUZZ_CHECK(p != NULL);
		check_policy(p, target);
		policy_free(p);
	}
	for (size_t i = 0; i < diags.n; i++)
		check_location((const char *)data, json_len, diags.items[i].path ? diags.items[i].path : "");
	if (target)
		check_location((const char *)data, json_len, target);
	diag_list_free(&diags);

	explain(data, json_len, target && target[0] ? target : targets[size % 4], size & 2);
	free(target);
	return 0;
}
