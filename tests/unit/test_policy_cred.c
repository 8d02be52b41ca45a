// SPDX-License-Identifier: MIT
/*
 * credentials with srt's meaning: every validation rule accepted and
 * refused with its JSON path and srt's message, the parsed rules, files as
 * read denies (mask becoming deny with a warning), awsPairs and sigv4, and
 * the ceiling over a caller's rules.
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
#include "policy/policy_json.h"

#define CWD "/nonexistent-bpfbox-test/proj"
#define HOME "/nonexistent-bpfbox-test/home"
#define ADMIN "/etc/bpfbox/policy.json"
#define CALLER "p.json"
#define FS_MIN "\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"
#define NET_TLS "\"network\": {\"allowedDomains\": [\"api.example.com\", \"*.github.com:443\", " \
	"\"bank.example.com\"], \"deniedDomains\": [], \"tlsTerminate\": {\"excludeDomains\": " \
	"[\"bank.example.com\"]}}"
#define NET_PLAIN "\"network\": {\"allowedDomains\": [\"api.example.com\"], \"deniedDomains\": []}"
/* A policy of NET_TLS with this credentials object. */
#define POL(cred) "{" NET_TLS ", " FS_MIN ", \"credentials\": " cred "}"
#define MASK(n) "{\"name\": \"" n "\", \"mode\": \"mask\"}"
#define ENVS(...) "{\"envVars\": [" __VA_ARGS__ "]}"

static int load_opts(const char *json, bool strict, struct policy **p, struct diag_list *d)
{
	struct policy_load_opts o = { .cwd = CWD, .home = HOME, .strict = strict };

	diag_list_init(d);
	return policy_load_buffer("test.json", json, strlen(json), &o, p, d);
}

static void dump(const struct diag_list *d)
{
	for (size_t i = 0; i < d->n; i++)
		print_message("  [%d] %s: %s\n", d->items[i].severity, d->items[i].path,
			      d->items[i].message);
}

/* The index of an entry of severity sev at path containing needle, or fails. */
static size_t expect(const struct diag_list *d, enum diag_severity sev, const char *path,
		     const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].severity == sev && !strcmp(d->items[i].path, path) &&
		    strstr(d->items[i].message, needle))
			return i;
	dump(d);
	fail_msg("no diagnostic %d at \"%s\" containing \"%s\"", sev, path, needle);
	return 0;
}

static struct policy *ok(const char *json, struct diag_list *d)
{
	struct policy *p = NULL;

	if (load_opts(json, false, &p, d)) {
		dump(d);
		fail_msg("rejected: %s", json);
	}
	assert_int_equal(diag_count(d, DIAG_ERROR), 0);
	return p;
}

static void accepted(const char *json)
{
	struct diag_list d;

	policy_free(ok(json, &d));
	diag_list_free(&d);
}

/* Rejected (masking let through), with an error at path containing needle. */
static void refused(const char *json, const char *path, const char *needle)
{
	struct policy *p = (void *)1;
	struct diag_list d;

	assert_int_equal(load_opts(json, false, &p, &d), -EINVAL);
	assert_null(p);
	expect(&d, DIAG_ERROR, path, needle);
	diag_list_free(&d);
}

static void test_parsed(void **state)
{
	static const char json[] = POL("{\"envVars\": ["
		"{\"name\": \"GH_TOKEN\", \"mode\": \"mask\", \"injectHosts\": [\"api.github.com\"]},"
		"{\"name\": \"DB_URL\", \"mode\": \"mask\", \"extract\": \"://[^:]+:([^@]+)@\","
		" \"onExtractNoMatch\": \"deny\", \"maskDuplicates\": true},"
		"{\"name\": \"OIDC\", \"mode\": \"mask\", \"decode\": \"jwt\", \"maskClaims\": [\"sub\"],"
		" \"injectHosts\": [\"api.example.com\"]},"
		"{\"name\": \"OLD\", \"mode\": \"deny\"}, " MASK("AK") ", " MASK("SK") ", " MASK("ST") "],"
		" \"awsPairs\": [{\"accessKeyIdVar\": \"AK\", \"secretAccessKeyVar\": \"SK\","
		" \"sessionTokenVar\": \"ST\"}],"
		" \"sigv4\": {\"streaming\": \"passthrough\", \"presigned\": \"deny\"},"
		" \"allowPlaintextInject\": false}");
	struct diag_list d;
	struct policy *p = ok(json, &d);
	const struct policy_cred_rule *r;

	assert_int_equal(p->cred.n_env, 7);
	assert_true(policy_cred_masks(p));
	r = policy_cred_find(p, "GH_TOKEN");
	assert_int_equal(r->mode, POLICY_CRED_MASK);
	assert_null(r->extract);
	assert_int_equal(r->on_no_match, POLICY_NO_MATCH_WARN);
	assert_false(r->inject_defaulted);
	assert_int_equal(r->n_inject_hosts, 1);
	assert_string_equal(r->inject_hosts[0].text, "api.github.com");
	r = policy_cred_find(p, "DB_URL");
	assert_string_equal(r->extract, "://[^:]+:([^@]+)@");
	assert_int_equal(r->on_no_match, POLICY_NO_MATCH_DENY);
	assert_true(r->mask_duplicates);
	/* No injectHosts: allowedDomains with the ports dropped. */
	assert_true(r->inject_defaulted);
	assert_int_equal(r->n_inject_hosts, 3);
	assert_string_equal(r->inject_hosts[0].text, "api.example.com");
	assert_string_equal(r->inject_hosts[1].text, "*.github.com");
	assert_string_equal(r->inject_hosts[2].text, "bank.example.com");
	r = policy_cred_find(p, "OIDC");
	assert_true(r->decode_jwt);
	assert_int_equal(r->n_mask_claims, 1);
	assert_string_equal(r->mask_claims[0], "sub");
	r = policy_cred_find(p, "OLD");
	assert_int_equal(r->mode, POLICY_CRED_DENY);
	/* Only deny rules leave the environment outright. */
	assert_int_equal(p->n_env_deny, 1);
	assert_true(policy_env_denied(p, "OLD"));
	assert_false(policy_env_denied(p, "GH_TOKEN"));
	assert_null(policy_cred_find(p, "NOPE"));
	assert_int_equal(p->cred.n_aws_pairs, 1);
	assert_string_equal(p->cred.aws_pairs[0].key_id_var, "AK");
	assert_string_equal(p->cred.aws_pairs[0].session_var, "ST");
	assert_false(p->cred.aws_pairs[0].implicit);
	assert_int_equal(p->cred.sigv4_streaming, POLICY_SIGV4_PASSTHROUGH);
	assert_int_equal(p->cred.sigv4_presigned, POLICY_SIGV4_DENY);
	assert_int_equal(p->cred.sigv4a, POLICY_SIGV4_DENY);
	assert_false(p->cred.allow_plaintext_inject);
	policy_free(p);
	diag_list_free(&d);
}

/* A masking policy loads (the proxy substitutes); an invalid entry is reported at its own path. */
static void test_mask_loads(void **state)
{
	static const char good[] = POL(ENVS(MASK("GH_TOKEN")));
	static const char bad[] = POL(ENVS("{\"name\": \"DB\", \"mode\": \"deny\"}, "
		"{\"name\": \"GH_TOKEN\", \"mode\": \"mask\", \"injectHosts\": []}"));
	struct policy *p = NULL;
	struct diag_list d;

	(void)state;
	assert_int_equal(load_opts(good, false, &p, &d), 0);
	assert_non_null(p);
	assert_int_equal(diag_count(&d, DIAG_ERROR), 0);
	assert_true(policy_cred_masks(p));
	policy_free(p);
	diag_list_free(&d);

	p = (void *)1;
	assert_int_equal(load_opts(bad, false, &p, &d), -EINVAL);
	assert_null(p);
	expect(&d, DIAG_ERROR, "credentials.envVars[1]", "injectHosts is explicitly empty");
	assert_int_equal(diag_count(&d, DIAG_ERROR), 1);
	diag_list_free(&d);
}

static void test_entry_fields(void **state)
{
	refused(POL(ENVS("{\"name\": \"1X\", \"mode\": \"deny\"}")), "credentials.envVars[0].name",
		"environment variable name");
	refused(POL(ENVS("{\"mode\": \"deny\"}")), "credentials.envVars[0].name", "Required");
	refused(POL(ENVS("{\"name\": \"X\"}")), "credentials.envVars[0].mode", "Required");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"hide\"}")), "credentials.envVars[0].mode",
		"expected \"deny\" or \"mask\", got \"hide\"");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"onExtractNoMatch\": \"skip\"}")),
		"credentials.envVars[0].onExtractNoMatch", "expected \"warn\", \"deny\" or \"error\"");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"decode\": \"base64\"}")),
		"credentials.envVars[0].decode", "expected \"jwt\"");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"maskDuplicates\": 1}")),
		"credentials.envVars[0].maskDuplicates", "expected");
	/* One rule per variable once a mask is involved; two denies say the same. */
	refused(POL(ENVS(MASK("X") ", {\"name\": \"X\", \"mode\": \"deny\"}")),
		"credentials.envVars[1].name", "one rule per variable");
	accepted(POL(ENVS("{\"name\": \"X\", \"mode\": \"deny\"}, {\"name\": \"X\", \"mode\": \"deny\"}")));
	/* The block is strict; entries warn on an unknown key, as srt strips it. */
	refused(POL("{\"injectHosts\": []}"), "credentials.injectHosts", "unknown key");
	refused(POL("{\"allowPlaintextInject\": \"yes\"}"), "credentials.allowPlaintextInject",
		"expected");
}

static void test_extract(void **state)
{
	static const char *const good[] = { "(x)", "(?<tok>\\\\S+)", "a{(b)", "[(](x)", "\\\\((x)",
					    "(?=y)?(x)", "x{2,3}?(y)", "[\\\\d-z](x)", "]}(x)" };
	char json[512];
	const char *why;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(json, sizeof(json), POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", "
			 "\"extract\": \"%s\"}")), good[i]);
		accepted(json);
	}
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"extract\": \"token=\\\\S+\"}")),
		"credentials.envVars[0].extract", "extract must contain at least one capturing group");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"extract\": \"(?:a)(?=b)\"}")),
		"credentials.envVars[0].extract", "at least one capturing group");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"extract\": \"(a\"}")),
		"credentials.envVars[0].extract",
		"extract is not a valid regular expression: Unterminated group");
	/* Checked whatever the mode, as srt's schema does. */
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"deny\", \"extract\": \"a)\"}")),
		"credentials.envVars[0].extract", "Unmatched ')'");
	assert_int_equal(policy_cred_regex_groups("(a)(?<n>b)(?:c)(?!d)(?<=e)[(]\\(", &why), 2);
	assert_int_equal(policy_cred_regex_groups("*a", &why), -EINVAL);
	assert_string_equal(why, "Nothing to repeat");
	assert_int_equal(policy_cred_regex_groups("a**", &why), -EINVAL);
	assert_int_equal(policy_cred_regex_groups("(?<=a)+", &why), -EINVAL);
	assert_int_equal(policy_cred_regex_groups("^*", &why), -EINVAL);
	assert_int_equal(policy_cred_regex_groups("[b-a]", &why), -EINVAL);
	assert_string_equal(why, "Range out of order in character class");
	assert_int_equal(policy_cred_regex_groups("[a", &why), -EINVAL);
	assert_string_equal(why, "Unterminated character class");
	assert_int_equal(policy_cred_regex_groups("a\\", &why), -EINVAL);
	assert_string_equal(why, "\\ at end of pattern");
	assert_int_equal(policy_cred_regex_groups("x{3,1}", &why), -EINVAL);
	assert_string_equal(why, "numbers out of order in {} quantifier");
	assert_int_equal(policy_cred_regex_groups("(?x)", &why), -EINVAL);
	assert_string_equal(why, "Invalid group");
	assert_int_equal(policy_cred_regex_groups("(?<1a>x)", &why), -EINVAL);
	assert_string_equal(why, "Invalid capture group name");
}

static void test_claims(void **state)
{
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"maskClaims\": [\"sub\"]}")),
		"credentials.envVars[0].maskClaims", "maskClaims requires decode");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"decode\": \"jwt\", "
			 "\"maskClaims\": []}")),
		"credentials.envVars[0].maskClaims", "maskClaims is explicitly empty");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"decode\": \"jwt\", "
			 "\"maskClaims\": [\"\"]}")),
		"credentials.envVars[0].maskClaims[0]", "");
	refused(POL("{\"files\": [{\"path\": \"~/t\", \"mode\": \"deny\", \"maskClaims\": [\"a\"]}]}"),
		"credentials.files[0].maskClaims", "requires decode");
	accepted(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"decode\": \"jwt\"}")));
}

static void test_inject_hosts(void **state)
{
	/* Covered by allowedDomains, their ports dropped; a wildcard covers its names. */
	accepted(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": [\"*.github.com\", "
			  "\"api.github.com\", \"api.example.com\"]}")));
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
			 "[\"api.example.com\", \"evil.example.org\"]}")),
		"credentials.envVars[0].injectHosts[1]", "injectHosts entry \"evil.example.org\" is "
		"not reachable via network.allowedDomains");
	/* Checked for a deny entry too, as srt does. */
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"deny\", \"injectHosts\": [\"github.com\"]}")),
		"credentials.envVars[0].injectHosts[0]", "not reachable");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
			 "[\"api.example.com:443\"]}")),
		"credentials.envVars[0].injectHosts[0]", "without a port");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": [\"*\"]}")),
		"credentials.envVars[0].injectHosts[0]", "invalid domain pattern");
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": []}")),
		"credentials.envVars[0]", "injectHosts is explicitly empty");
	accepted(POL(ENVS("{\"name\": \"X\", \"mode\": \"deny\", \"injectHosts\": []}")));
	refused(POL(ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
			 "[\"bank.example.com\"]}")),
		"credentials.envVars[0].injectHosts[0]", "is entirely covered by "
		"network.tlsTerminate.excludeDomains");
	/* Outside allowedDomains and excluded: both said. */
	refused("{\"network\": {\"allowedDomains\": [\"api.example.com\"], \"deniedDomains\": [], "
		"\"tlsTerminate\": {\"excludeDomains\": [\"*.example.org\"]}}, " FS_MIN
		", \"credentials\": " ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
					  "[\"a.example.org\"]}") "}",
		"credentials.envVars[0].injectHosts[0]", "not reachable");
	refused("{\"network\": {\"allowedDomains\": [\"api.example.com\"], \"deniedDomains\": [], "
		"\"tlsTerminate\": {\"excludeDomains\": [\"*.example.org\"]}}, " FS_MIN
		", \"credentials\": " ENVS("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
					  "[\"a.example.org\"]}") "}",
		"credentials.envVars[0].injectHosts[0]", "entirely covered");
	/* The default list wholly excluded: injected nowhere. */
	refused("{\"network\": {\"allowedDomains\": [\"bank.example.com:443\"], \"deniedDomains\": [], "
		"\"tlsTerminate\": {\"excludeDomains\": [\"bank.example.com\"]}}, " FS_MIN
		", \"credentials\": " ENVS(MASK("X")) "}", "credentials.envVars[0]",
		"excludeDomains covers every allowed domain");
}

static void test_needs_tls(void **state)
{
	static const char *const why = "Credential masking requires network.tlsTerminate";

	refused("{" NET_PLAIN ", " FS_MIN ", \"credentials\": " ENVS(MASK("X")) "}", "credentials", why);
	refused("{" NET_PLAIN ", " FS_MIN ", \"credentials\": {\"files\": [{\"path\": \"~/t\", "
		"\"mode\": \"mask\"}]}}", "credentials", why);
	accepted("{" NET_PLAIN ", " FS_MIN ", \"credentials\": {\"envVars\": [" MASK("X") "], "
		 "\"allowPlaintextInject\": true}}");
	accepted("{" NET_PLAIN ", " FS_MIN ", \"credentials\": "
		 ENVS("{\"name\": \"X\", \"mode\": \"deny\"}") "}");
}

static void test_files(void **state)
{
	struct policy *p = NULL;
	struct diag_list d;

	p = ok(POL("{\"files\": [{\"path\": \"~/.netrc\", \"mode\": \"mask\", \"extract\": "
		   "\"password (\\\\S+)\"}, {\"path\": \"~/.aws/\", \"mode\": \"deny\"}]}"), &d);
	/* mask becomes deny, said once, naming the file. */
	expect(&d, DIAG_WARNING, "credentials.files[0]", "\"~/.netrc\": mode \"mask\" becomes \"deny\"");
	assert_int_equal(diag_count(&d, DIAG_WARNING), 1);
	assert_int_equal(p->n_fs_rules, 4);
	assert_int_equal(p->fs_rules[2].kind, FS_DENY_READ);
	assert_string_equal(p->fs_rules[2].path, HOME "/.netrc");
	assert_string_equal(p->fs_rules[2].name, "credentials.files[0]:denyRead:" HOME "/.netrc");
	assert_string_equal(p->fs_rules[2].jpath, "credentials.files[0].path");
	assert_string_equal(p->fs_rules[3].name, "credentials.files[1]:denyRead:" HOME "/.aws");
	assert_int_equal(p->cred.n_env, 0);
	policy_free(p);
	diag_list_free(&d);

	/* --strict: the warning is an error. */
	assert_int_equal(load_opts(POL("{\"files\": [{\"path\": \"~/.netrc\", \"mode\": \"mask\"}]}"),
				   true, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "credentials.files[0]", "becomes \"deny\"");
	diag_list_free(&d);

	refused(POL("{\"files\": [{\"path\": \"~/.aws/\", \"mode\": \"mask\"}]}"),
		"credentials.files[0].path", "Credential mode \"mask\" applies to a single file");
	refused(POL("{\"files\": [{\"mode\": \"deny\"}]}"), "credentials.files[0].path", "Required");
	refused(POL("{\"files\": [{\"path\": \"\", \"mode\": \"deny\"}]}"), "credentials.files[0].path",
		"");
	refused(POL("{\"files\": [{\"path\": \"~/t\", \"mode\": \"mask\", \"injectHosts\": []}]}"),
		"credentials.files[0]", "injectHosts is explicitly empty");

	/* filesystem.disabled drops these denies with every other rule. */
	p = ok("{" NET_TLS ", \"filesystem\": {\"disabled\": true, \"denyRead\": [], \"allowWrite\": [], "
	       "\"denyWrite\": []}, \"credentials\": {\"files\": [{\"path\": \"~/.netrc\", "
	       "\"mode\": \"deny\"}]}}", &d);
	assert_int_equal(p->n_fs_rules, 0);
	expect(&d, DIAG_DEBUG, "credentials.files[0].path", "filesystem.disabled");
	policy_free(p);
	diag_list_free(&d);
}

#define PAIR(a, s) "\"awsPairs\": [{\"accessKeyIdVar\": \"" a "\", \"secretAccessKeyVar\": \"" s "\"}]"

static void test_aws(void **state)
{
	struct policy *p;
	struct diag_list d;

	refused(POL("{\"envVars\": [" MASK("AK") "], " PAIR("AK", "SK") "}"),
		"credentials.awsPairs[0].secretAccessKeyVar", "\"SK\" does not reference a "
		"credentials.envVars entry with mode \"mask\"");
	refused(POL("{\"envVars\": [" MASK("AK") ", {\"name\": \"SK\", \"mode\": \"deny\"}], "
		    PAIR("AK", "SK") "}"),
		"credentials.awsPairs[0].secretAccessKeyVar", "with mode \"mask\"");
	refused(POL("{\"envVars\": [" MASK("AK") ", {\"name\": \"SK\", \"mode\": \"mask\", "
		    "\"extract\": \"s=(.*)\"}], " PAIR("AK", "SK") "}"),
		"credentials.awsPairs[0].secretAccessKeyVar", "uses extract/decode");
	refused(POL("{\"envVars\": [" MASK("AK") "], " PAIR("AK", "AK") "}"),
		"credentials.awsPairs[0].secretAccessKeyVar", "appears in more than one awsPairs slot");
	refused(POL("{\"envVars\": [" MASK("AK") ", " MASK("SK") ", " MASK("S2") "], "
		    "\"awsPairs\": [{\"accessKeyIdVar\": \"AK\", \"secretAccessKeyVar\": \"SK\"}, "
		    "{\"accessKeyIdVar\": \"AK\", \"secretAccessKeyVar\": \"S2\"}]}"),
		"credentials.awsPairs[1].accessKeyIdVar", "more than one awsPairs slot");
	refused(POL("{\"envVars\": [" MASK("AK") "], \"awsPairs\": [{\"accessKeyIdVar\": \"AK\"}]}"),
		"credentials.awsPairs[0].secretAccessKeyVar", "Required");
	refused(POL("{\"awsPairs\": [{\"accessKeyIdVar\": \"1A\", \"secretAccessKeyVar\": \"S\"}]}"),
		"credentials.awsPairs[0].accessKeyIdVar", "Environment variable name must start");
	refused(POL("{\"awsPairs\": [{\"accessKeyIdVar\": \"A\", \"secretAccessKeyVar\": \"S\", "
		    "\"region\": \"x\"}]}"), "credentials.awsPairs[0].region", "unknown key");
	refused(POL("{\"sigv4\": {\"streaming\": \"allow\"}}"), "credentials.sigv4.streaming",
		"expected \"deny\" or \"passthrough\"");
	refused(POL("{\"sigv4\": {\"chunked\": \"deny\"}}"), "credentials.sigv4.chunked", "unknown key");

	/* srt pairs the conventional trio by itself, unless a pair names one of them. */
	p = ok(POL(ENVS(MASK("AWS_ACCESS_KEY_ID") ", " MASK("AWS_SECRET_ACCESS_KEY") ", "
			MASK("AWS_SESSION_TOKEN"))), &d);
	assert_int_equal(p->cred.n_aws_pairs, 1);
	assert_true(p->cred.aws_pairs[0].implicit);
	assert_string_equal(p->cred.aws_pairs[0].session_var, "AWS_SESSION_TOKEN");
	policy_free(p);
	diag_list_free(&d);
	p = ok(POL("{\"envVars\": [" MASK("AWS_ACCESS_KEY_ID") ", " MASK("AWS_SECRET_ACCESS_KEY") ", "
		   MASK("SK") "], " PAIR("AWS_ACCESS_KEY_ID", "SK") "}"), &d);
	assert_int_equal(p->cred.n_aws_pairs, 1);
	assert_false(p->cred.aws_pairs[0].implicit);
	policy_free(p);
	diag_list_free(&d);
	p = ok(POL(ENVS(MASK("AWS_ACCESS_KEY_ID") ", {\"name\": \"AWS_SECRET_ACCESS_KEY\", "
			"\"mode\": \"deny\"}")), &d);
	assert_int_equal(p->cred.n_aws_pairs, 0);
	policy_free(p);
	diag_list_free(&d);
}

static void test_show(void **state)
{
	struct diag_list d;
	struct policy *p = ok(POL("{\"envVars\": [{\"name\": \"GH\", \"mode\": \"mask\", "
				  "\"decode\": \"jwt\", \"maskClaims\": [\"sub\"]}, "
				  "{\"name\": \"OLD\", \"mode\": \"deny\"}], "
				  "\"sigv4\": {\"sigv4a\": \"passthrough\"}}"), &d);
	char *text = policy_to_json(p);
	cJSON *root = cJSON_Parse(text), *cred, *ev, *gh;

	assert_non_null(root);
	cred = cJSON_GetObjectItem(root, "credentials");
	ev = cJSON_GetObjectItem(cred, "envVars");
	assert_int_equal(cJSON_GetArraySize(ev), 2);
	gh = cJSON_GetArrayItem(ev, 0);
	assert_string_equal(cJSON_GetObjectItem(gh, "mode")->valuestring, "mask");
	assert_string_equal(cJSON_GetObjectItem(gh, "decode")->valuestring, "jwt");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(gh, "maskClaims"), 0)->valuestring,
			    "sub");
	/* The default hosts, filled in. */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(gh, "injectHosts")), 3);
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 1), "injectHosts"));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cred, "sigv4"), "sigv4a")->valuestring,
			    "passthrough");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cred, "allowPlaintextInject")));
	cJSON_Delete(root);
	free(text);
	policy_free(p);
	diag_list_free(&d);
}

/* ---- the ceiling ---- */

struct run {
	struct policy *admin, *caller, *eff;
	struct ceiling_cuts cuts;
};

static struct policy *load_named(const char *name, const char *cred)
{
	struct policy_load_opts o = { .cwd = CWD, .home = HOME };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *json = NULL;

	assert_true(asprintf(&json, "{" NET_TLS ", " FS_MIN ", \"credentials\": %s}", cred) > 0);
	if (policy_load_buffer(name, json, strlen(json), &o, &p, &d)) {
		dump(&d);
		fail_msg("rejected: %s", json);
	}
	free(json);
	diag_list_free(&d);
	return p;
}

static void apply(struct run *r, const char *admin_cred, const char *caller_cred)
{
	memset(r, 0, sizeof(*r));
	r->admin = load_named(ADMIN, admin_cred);
	r->caller = load_named(CALLER, caller_cred);
	assert_int_equal(policy_ceiling_apply(r->admin, r->caller, false, &r->eff, &r->cuts), 0);
	assert_false(r->cuts.oom);
}

static void done(struct run *r)
{
	policy_free(r->admin);
	policy_free(r->caller);
	policy_free(r->eff);
	ceiling_cuts_free(&r->cuts);
}

static void want_cut(const struct run *r, const char *path, const char *line)
{
	const struct ceiling_cut *c = ceiling_cuts_find(&r->cuts, path);

	if (!c) {
		for (size_t i = 0; i < r->cuts.n; i++)
			print_message("  cut: %s\n", r->cuts.items[i].line);
		fail_msg("no cut at %s, want: %s", path, line);
	}
	if (strcmp(c->line, line))
		fail_msg("cut at %s:\n   got: %s\n  want: %s", path, c->line, line);
}

#define GH_MASK(hosts) "{\"name\": \"GH\", \"mode\": \"mask\", \"injectHosts\": [" hosts "]}"
#define CUT(path, rest) CALLER ": " path " " rest

static void test_ceiling_admin_masks(void **state)
{
	const struct policy_cred_rule *e;
	struct run r;

	/* No rule of the caller's: the administrator's mask is forced. */
	apply(&r, ENVS(GH_MASK("\"api.github.com\"")), "{}");
	e = policy_cred_find(r.eff, "GH");
	assert_non_null(e);
	assert_int_equal(e->mode, POLICY_CRED_MASK);
	assert_true(e->from_ceiling);
	assert_int_equal(e->n_inject_hosts, 1);
	assert_string_equal(e->inject_hosts[0].text, "api.github.com");
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* The caller's deny is stricter and stays. */
	apply(&r, ENVS(GH_MASK("\"api.github.com\"")), ENVS("{\"name\": \"GH\", \"mode\": \"deny\"}"));
	assert_int_equal(policy_cred_find(r.eff, "GH")->mode, POLICY_CRED_DENY);
	assert_true(policy_env_denied(r.eff, "GH"));
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* Both mask: the hosts both name. */
	apply(&r, ENVS(GH_MASK("\"api.github.com\"")),
	      ENVS(GH_MASK("\"api.github.com\", \"uploads.github.com\", \"*.github.com\"")));
	e = policy_cred_find(r.eff, "GH");
	assert_int_equal(e->mode, POLICY_CRED_MASK);
	assert_false(e->from_ceiling);
	assert_int_equal(e->n_inject_hosts, 1);
	assert_string_equal(e->inject_hosts[0].text, "api.github.com");
	assert_null(ceiling_cuts_find(&r.cuts, "credentials.envVars[0].injectHosts[0]"));
	want_cut(&r, "credentials.envVars[0].injectHosts[1]",
		 CUT("credentials.envVars[0].injectHosts[1]", "\"uploads.github.com\": outside the "
		     "hosts the administrator's policy injects this variable at (" ADMIN "); not "
		     "injected"));
	want_cut(&r, "credentials.envVars[0].injectHosts[2]",
		 CUT("credentials.envVars[0].injectHosts[2]", "\"*.github.com\": partly outside the "
		     "hosts the administrator's policy injects this variable at (" ADMIN "); injected "
		     "only at api.github.com"));
	assert_int_equal(r.cuts.n, 2);
	done(&r);

	/* The caller's default list (allowedDomains) meets the administrator's hosts: no cut. */
	apply(&r, ENVS(GH_MASK("\"api.github.com\"")), ENVS(MASK("GH")));
	e = policy_cred_find(r.eff, "GH");
	assert_int_equal(e->n_inject_hosts, 1);
	assert_string_equal(e->inject_hosts[0].text, "api.github.com");
	assert_false(e->inject_defaulted);
	assert_int_equal(r.cuts.n, 0);
	done(&r);

	/* The administrator's masking applies, not a caller's extract. */
	apply(&r, ENVS(MASK("GH")), ENVS("{\"name\": \"GH\", \"mode\": \"mask\", "
					 "\"extract\": \"ghp_(\\\\w{4})\"}"));
	e = policy_cred_find(r.eff, "GH");
	assert_null(e->extract);
	assert_true(e->inject_defaulted);
	want_cut(&r, "credentials.envVars[0]", CUT("credentials.envVars[0]", "\"GH\": the "
		 "administrator's policy masks this variable its own way (" ADMIN "); masked with "
		 "the administrator's extract, decode and claims"));
	done(&r);
}

static void test_ceiling_admin_denies(void **state)
{
	struct run r;

	apply(&r, ENVS("{\"name\": \"GH\", \"mode\": \"deny\"}"), ENVS(MASK("GH") ", " MASK("OWN")));
	assert_int_equal(policy_cred_find(r.eff, "GH")->mode, POLICY_CRED_DENY);
	assert_true(policy_env_denied(r.eff, "GH"));
	/* What only the caller names stays the caller's. */
	assert_int_equal(policy_cred_find(r.eff, "OWN")->mode, POLICY_CRED_MASK);
	want_cut(&r, "credentials.envVars[0].mode", CUT("credentials.envVars[0].mode", "\"mask\": "
		 "denied by the administrator's credentials.envVars (" ADMIN "); denied"));
	assert_int_equal(r.cuts.n, 1);
	done(&r);
}

static void test_ceiling_flags(void **state)
{
	struct run r;

	apply(&r, "{\"allowPlaintextInject\": false, \"sigv4\": {\"presigned\": \"passthrough\"}}",
	      "{\"allowPlaintextInject\": true, \"sigv4\": {\"streaming\": \"passthrough\", "
	      "\"presigned\": \"passthrough\"}}");
	assert_false(r.eff->cred.allow_plaintext_inject);
	assert_int_equal(r.eff->cred.sigv4_streaming, POLICY_SIGV4_DENY);
	assert_int_equal(r.eff->cred.sigv4_presigned, POLICY_SIGV4_PASSTHROUGH);
	want_cut(&r, "credentials.allowPlaintextInject", CALLER ": credentials.allowPlaintextInject "
		 "true: not allowed by the administrator's policy (" ADMIN "); not granted");
	want_cut(&r, "credentials.sigv4.streaming", CUT("credentials.sigv4.streaming", "\"passthrough\": "
		 "the administrator's policy denies it (" ADMIN "); \"deny\" applies"));
	assert_int_equal(r.cuts.n, 2);
	done(&r);

	apply(&r, "{\"allowPlaintextInject\": true}", "{\"allowPlaintextInject\": true}");
	assert_true(r.eff->cred.allow_plaintext_inject);
	assert_int_equal(r.cuts.n, 0);
	done(&r);
}

static void test_ceiling_aws(void **state)
{
	struct run r;

	/* A pair whose member the administrator denies is no pair. */
	apply(&r, ENVS("{\"name\": \"SK\", \"mode\": \"deny\"}"),
	      "{\"envVars\": [" MASK("AK") ", " MASK("SK") "], " PAIR("AK", "SK") "}");
	assert_int_equal(r.eff->cred.n_aws_pairs, 0);
	want_cut(&r, "credentials.awsPairs[0]", CALLER ": credentials.awsPairs[0]: a member is not "
		 "masked whole under the administrator's credentials.envVars (" ADMIN "); not re-signed");
	done(&r);

	/* The administrator's pair of its forced masks. */
	apply(&r, "{\"envVars\": [" MASK("AK") ", " MASK("SK") "], " PAIR("AK", "SK") "}", "{}");
	assert_int_equal(r.eff->cred.n_aws_pairs, 1);
	assert_string_equal(r.eff->cred.aws_pairs[0].secret_var, "SK");
	assert_int_equal(r.cuts.n, 0);
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parsed),
		cmocka_unit_test(test_mask_loads),
		cmocka_unit_test(test_entry_fields),
		cmocka_unit_test(test_extract),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_inject_hosts),
		cmocka_unit_test(test_needs_tls),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_aws),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_ceiling_admin_masks),
		cmocka_unit_test(test_ceiling_admin_denies),
		cmocka_unit_test(test_ceiling_flags),
		cmocka_unit_test(test_ceiling_aws),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
