// SPDX-License-Identifier: MIT
/*
 * Loading a policy: required fields and types, every error with its JSON
 * path, several errors at once, unknown keys, --strict, refused and ignored
 * srt fields, bpfbox's own section, defaults, discovery, digest, show.
 */
/* 108 bytes: one more than an abstract socket name can have. */
#define LONG_NAME_108 "0123456789012345678901234567890123456789012345678901234567890123456789" \
		      "01234567890123456789012345678901234567"
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "bpfbox.h"
#include "policy/policy.h"

/* Directories that do not exist, so symlink resolution leaves paths alone. */
#define CWD "/nonexistent-bpfbox-test/proj"
#define HOME "/nonexistent-bpfbox-test/home"

#define FS_MIN "\"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}"
#define NET_MIN "\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}"

static int load(const char *json, bool strict, struct policy **p, struct diag_list *d)
{
	struct policy_load_opts o = { .cwd = CWD, .home = HOME, .strict = strict };

	diag_list_init(d);
	return policy_load_buffer("test.json", json, strlen(json), &o, p, d);
}

/* Asserts an entry of severity sev at path whose message contains needle. */
static void expect(const struct diag_list *d, enum diag_severity sev, const char *path,
		   const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].severity == sev && !strcmp(d->items[i].path, path) &&
		    (!needle || strstr(d->items[i].message, needle)))
			return;
	for (size_t i = 0; i < d->n; i++)
		print_message("  [%d] %s: %s\n", d->items[i].severity, d->items[i].path,
			      d->items[i].message);
	fail_msg("no %s at \"%s\" containing \"%s\"",
		 sev == DIAG_ERROR ? "error" : sev == DIAG_WARNING ? "warning" : "debug",
		 path, needle ? needle : "");
}

static struct policy *load_ok(const char *json, struct diag_list *d)
{
	struct policy *p = NULL;

	if (load(json, false, &p, d)) {
		for (size_t i = 0; i < d->n; i++)
			print_message("  %s: %s\n", d->items[i].path, d->items[i].message);
		fail_msg("policy rejected");
	}
	assert_non_null(p);
	return p;
}

static void test_minimal(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN "}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);
	char digest[65];

	assert_int_equal(diag_count(&d, DIAG_ERROR) + diag_count(&d, DIAG_WARNING), 0);
	assert_string_equal(p->file, "test.json");
	assert_string_equal(p->cwd, CWD);
	assert_string_equal(p->home, HOME);
	assert_false(p->audit);
	assert_false(p->fs_disabled);
	assert_false(p->allow_git_config);
	assert_false(p->allow_nested_userns);
	assert_false(p->has_env_allow);
	assert_int_equal(p->n_allowed_domains, 0);
	assert_int_equal(p->http_proxy_port, 0);
	assert_int_equal(p->limit_pids, 0);
	assert_int_equal(p->limit_memory_bytes, 0);
	assert_int_equal(p->limit_cpu_percent, 0);
	/* Only the implicit devices are writable. */
	assert_int_equal(p->n_fs_rules, 2);
	assert_string_equal(p->fs_rules[0].path, "/dev/null");
	assert_string_equal(p->fs_rules[1].path, "/dev/tty");
	assert_true(p->fs_rules[0].from_default);
	assert_int_equal(p->fs_rules[0].kind, FS_ALLOW_WRITE);
	policy_sha256_hex(json, strlen(json), digest);
	assert_string_equal(p->digest, digest);
	policy_free(p);
	diag_list_free(&d);
}

static void test_sha256_vectors(void **state)
{
	char h[65];
	char *million = malloc(1000000);

	policy_sha256_hex("", 0, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	policy_sha256_hex("abc", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	policy_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_non_null(million);
	memset(million, 'a', 1000000);
	policy_sha256_hex(million, 1000000, h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

static void test_required_sections(void **state)
{
	struct policy *p = (void *)1;
	struct diag_list d;

	assert_int_equal(load("{}", false, &p, &d), -EINVAL);
	assert_null(p);
	expect(&d, DIAG_ERROR, "network", "Required");
	expect(&d, DIAG_ERROR, "filesystem", "Required");
	diag_list_free(&d);
}

static void test_required_fields(void **state)
{
	struct policy *p;
	struct diag_list d;

	assert_int_equal(load("{\"network\": {}, \"filesystem\": {}}", false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "network.allowedDomains", "Required");
	expect(&d, DIAG_ERROR, "network.deniedDomains", "Required");
	expect(&d, DIAG_ERROR, "filesystem.denyRead", "Required");
	expect(&d, DIAG_ERROR, "filesystem.allowWrite", "Required");
	expect(&d, DIAG_ERROR, "filesystem.denyWrite", "Required");
	assert_int_equal(diag_count(&d, DIAG_ERROR), 5);
	diag_list_free(&d);
}

static void test_type_errors_every_path(void **state)
{
	static const char json[] = "{"
		"\"network\": {\"allowedDomains\": \"example.com\", \"deniedDomains\": [42, \"ok.example\"],"
		" \"allowLocalBinding\": \"yes\", \"httpProxyPort\": 70000, \"socksProxyPort\": 1.5,"
		" \"allowAllUnixSockets\": null, \"deniedResolvedAddresses\": [\"10.0.0.0/33\"]},"
		"\"filesystem\": {\"denyRead\": [null], \"allowWrite\": [\"\"],"
		" \"denyWrite\": [{\"literal\": true}, {\"path\": 7}, true], \"allowGitConfig\": 1,"
		" \"allowRead\": {}},"
		"\"network2\": 1,"
		"\"allowNestedUserNamespaces\": \"no\","
		"\"mandatoryDenySearchDepth\": 11"
		"}";
	struct policy *p;
	struct diag_list d;

	assert_int_equal(load(json, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "network.allowedDomains", "expected an array");
	expect(&d, DIAG_ERROR, "network.deniedDomains[0]", "expected a string, got a number");
	expect(&d, DIAG_ERROR, "network.allowLocalBinding", "expected a boolean");
	expect(&d, DIAG_ERROR, "network.httpProxyPort", "1 to 65535");
	expect(&d, DIAG_ERROR, "network.socksProxyPort", "integer");
	expect(&d, DIAG_ERROR, "network.allowAllUnixSockets", "got null");
	expect(&d, DIAG_ERROR, "network.deniedResolvedAddresses[0]", "prefix");
	expect(&d, DIAG_ERROR, "filesystem.denyRead[0]", "got null");
	expect(&d, DIAG_ERROR, "filesystem.allowWrite[0]", "empty");
	expect(&d, DIAG_ERROR, "filesystem.denyWrite[0].path", "Required");
	expect(&d, DIAG_ERROR, "filesystem.denyWrite[1].path", "expected a string");
	expect(&d, DIAG_ERROR, "filesystem.denyWrite[2]", "got a boolean");
	expect(&d, DIAG_ERROR, "filesystem.allowGitConfig", "expected a boolean");
	expect(&d, DIAG_ERROR, "filesystem.allowRead", "expected an array");
	expect(&d, DIAG_ERROR, "allowNestedUserNamespaces", "expected a boolean");
	expect(&d, DIAG_ERROR, "mandatoryDenySearchDepth", "from 1 to 10");
	expect(&d, DIAG_WARNING, "network2", "unknown key");
	/* Everything is reported, not only the first problem. */
	assert_true(diag_count(&d, DIAG_ERROR) >= 16);
	diag_list_free(&d);
}

static void test_bad_domains_all_reported(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": [\"example.com\", \"*.com\","
		" \"http://github.com\", \"ex*ample.com\", \"::1\", \"example.com:0\", \"*\"],"
		" \"deniedDomains\": [\"*\", \"*:22\", \"example\"]}, " FS_MIN "}";
	struct policy *p;
	struct diag_list d;

	assert_int_equal(load(json, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "network.allowedDomains[1]", "\"*.com\"");
	expect(&d, DIAG_ERROR, "network.allowedDomains[2]", "scheme");
	expect(&d, DIAG_ERROR, "network.allowedDomains[3]", "'*'");
	expect(&d, DIAG_ERROR, "network.allowedDomains[4]", "bracketed");
	expect(&d, DIAG_ERROR, "network.allowedDomains[5]", "port");
	expect(&d, DIAG_ERROR, "network.allowedDomains[6]", "only accepted in deniedDomains");
	expect(&d, DIAG_ERROR, "network.deniedDomains[2]", "dot");
	assert_int_equal(diag_count(&d, DIAG_ERROR), 7);
	diag_list_free(&d);
}

static void test_domains_canonical(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": [\"GitHub.com\", "
		"\"*.NPMJS.org:443\", \"[::1]:8080\", \"127.1\"], \"deniedDomains\": [\"*:22\"]}, "
		FS_MIN "}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);

	assert_int_equal(p->n_allowed_domains, 4);
	assert_string_equal(p->allowed_domains[0].text, "github.com");
	assert_string_equal(p->allowed_sources[0], "GitHub.com");
	assert_string_equal(p->allowed_rule_names[0], "allowedDomains:github.com");
	assert_string_equal(p->allowed_domains[1].text, "*.npmjs.org:443");
	assert_string_equal(p->allowed_domains[2].text, "[::1]:8080");
	assert_string_equal(p->allowed_domains[3].text, "127.0.0.1");
	assert_int_equal(p->n_denied_domains, 1);
	assert_int_equal(p->denied_domains[0].kind, DOMAIN_ANY);
	assert_int_equal(p->denied_domains[0].port, 22);
	assert_non_null(p->denied_reasons);
	assert_null(p->denied_reasons[0]);
	policy_free(p);
	diag_list_free(&d);
}

static void test_reasons(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": "
		"[\"github.com:22\", \"evil.example.com\"], \"deniedDomainReasons\": "
		"{\"github.com:22\": \"use https\", \"nothere.example\": \"x\"}}, " FS_MIN "}";
	static const char crlf[] = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": "
		"[\"a.example\"], \"deniedDomainReasons\": {\"a.example\": \"x\\r\\nSet-Cookie: y\","
		" \"a.example\": \"again\"}}, " FS_MIN "}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);

	assert_string_equal(p->denied_reasons[0], "use https");
	assert_null(p->denied_reasons[1]);
	expect(&d, DIAG_WARNING, "network.deniedDomainReasons[\"nothere.example\"]", "never used");
	policy_free(p);
	diag_list_free(&d);

	assert_int_equal(load(crlf, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "network.deniedDomainReasons[\"a.example\"]", "printable line");
	expect(&d, DIAG_ERROR, "network.deniedDomainReasons[\"a.example\"]", "duplicate key");
	diag_list_free(&d);
}

static void test_network_extras(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [],"
		" \"deniedResolvedAddresses\": [\"169.254.169.254\", \"fd00:ec2::/32\"],"
		" \"allowUnixSockets\": [\"/var/run/nonexistent-bpfbox.sock\", \"~/agent.sock\", \"rel.sock\","
		" \"@abstract name\"],"
		" \"allowAllUnixSockets\": true, \"allowLocalBinding\": true,"
		" \"httpProxyPort\": 3128, \"socksProxyPort\": 1080, \"strictAllowlist\": false},"
		FS_MIN "}";
	static const char bad[] = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [],"
		" \"allowUnixSockets\": [\"@\", \"/run/*.sock\", \"@a*\", \"@" LONG_NAME_108 "\"]}, " FS_MIN "}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);
	unsigned char a[16];

	assert_int_equal(p->n_denied_addrs, 2);
	inet_pton(AF_INET, "169.254.169.254", a);
	assert_true(policy_addr_denied(p, AF_INET, a));
	inet_pton(AF_INET6, "fd00:ec2::1", a);
	assert_true(policy_addr_denied(p, AF_INET6, a));
	inet_pton(AF_INET, "8.8.8.8", a);
	assert_false(policy_addr_denied(p, AF_INET, a));
	assert_int_equal(p->n_allow_unix_sockets, 4);
	assert_string_equal(p->allow_unix_sockets[3], "@abstract name");
	assert_string_equal(p->allow_unix_sockets[1], HOME "/agent.sock");
	assert_string_equal(p->allow_unix_sockets[2], CWD "/rel.sock");
	assert_true(p->allow_unix_sockets[0][0] == '/');
	assert_true(p->allow_all_unix_sockets);
	assert_true(p->allow_local_binding);
	assert_int_equal(p->http_proxy_port, 3128);
	assert_int_equal(p->socks_proxy_port, 1080);
	expect(&d, DIAG_DEBUG, "network.strictAllowlist", "never asks");
	policy_free(p);
	diag_list_free(&d);

	assert_int_equal(load(bad, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "network.allowUnixSockets[0]", "1 to 107 bytes");
	expect(&d, DIAG_ERROR, "network.allowUnixSockets[1]", "globs");
	expect(&d, DIAG_ERROR, "network.allowUnixSockets[2]", "globs");
	expect(&d, DIAG_ERROR, "network.allowUnixSockets[3]", "1 to 107 bytes");
	diag_list_free(&d);
}

static void test_unknown_keys_warn_and_strict(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [],"
		" \"allowedDomain\": []}, \"filesystem\": {\"denyRead\": [], \"allowWrite\": [],"
		" \"denyWrite\": [], \"denyWrites\": [\"/x\"]}, \"sandbox\": {},"
		" \"git\": {\"safeDirectory\": []}, \"bpfbox\": {\"limts\": {}}}";
	struct policy *p;
	struct diag_list d;

	p = load_ok(json, &d);
	expect(&d, DIAG_WARNING, "network.allowedDomain", "unknown key");
	expect(&d, DIAG_WARNING, "filesystem.denyWrites", "unknown key");
	expect(&d, DIAG_WARNING, "sandbox", "unknown key");
	expect(&d, DIAG_WARNING, "git.safeDirectory", "unknown key");
	expect(&d, DIAG_WARNING, "bpfbox.limts", "unknown key");
	assert_int_equal(diag_count(&d, DIAG_WARNING), 5);
	assert_int_equal(diag_count(&d, DIAG_ERROR), 0);
	policy_free(p);
	diag_list_free(&d);

	/* --strict: the same findings, as errors, and nothing is returned. */
	assert_int_equal(load(json, true, &p, &d), -EINVAL);
	assert_null(p);
	expect(&d, DIAG_ERROR, "network.allowedDomain", "unknown key");
	expect(&d, DIAG_ERROR, "bpfbox.limts", "unknown key");
	assert_int_equal(diag_count(&d, DIAG_ERROR), 5);
	assert_int_equal(diag_count(&d, DIAG_WARNING), 0);
	diag_list_free(&d);
}

static void refused(const char *json, const char *path, const char *needle)
{
	struct policy *p = (void *)1;
	struct diag_list d;

	assert_int_equal(load(json, false, &p, &d), -EINVAL);
	assert_null(p);
	expect(&d, DIAG_ERROR, path, needle);
	diag_list_free(&d);
}

#define NET_WITH(x) "{\"network\": {\"allowedDomains\": [\"api.example.com\"], " \
	"\"deniedDomains\": [], " x "}, " FS_MIN "}"

static void test_refused_fields(void **state)
{
	/* tlsTerminate and the other request-level settings: test_policy_tls.c */
	refused(NET_WITH("\"parentProxy\": {\"http\": \"http://p.example:3128\"}"),
		"network.parentProxy", "bpfbox.network.parentProxy");
	refused(NET_WITH("\"filterRequest\": \"fn\""), "network.filterRequest", "not supported");
	/* Masking without termination or allowPlaintextInject: nothing could put the value back. */
	refused("{" NET_MIN ", " FS_MIN ", \"credentials\": {\"envVars\": [{\"name\": \"TOKEN\","
		" \"mode\": \"mask\"}]}}", "credentials", "requires network.tlsTerminate");
	/* srt's credentials block is strict: unknown keys are errors even without --strict. */
	refused("{" NET_MIN ", " FS_MIN ", \"credentials\": {\"injectHosts\": []}}",
		"credentials.injectHosts", "unknown key");
}

static void test_refused_but_off_is_fine(void **state)
{
	struct diag_list d;
	struct policy *p = load_ok(NET_WITH("\"mitmProxy\": null, \"tlsTerminate\": null"), &d);

	expect(&d, DIAG_DEBUG, "network.mitmProxy", "off");
	expect(&d, DIAG_DEBUG, "network.tlsTerminate", "off");
	assert_false(p->tls.enabled);
	policy_free(p);
	diag_list_free(&d);

	/* An empty list asks for nothing; an empty tlsTerminate object enables it. */
	p = load_ok("{" NET_MIN ", " FS_MIN ", \"credentials\": {\"files\": []}}", &d);
	assert_int_equal(p->n_fs_rules, 2);
	policy_free(p);
	diag_list_free(&d);
	p = load_ok(NET_WITH("\"tlsTerminate\": {}"), &d);
	assert_true(p->tls.enabled);
	policy_free(p);
	diag_list_free(&d);
}

static void test_diag_print(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	char buf[1024] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	assert_non_null(f);
	diag_add(&d, DIAG_ERROR, "network.allowedDomains[2]", "bad %s", "entry");
	diag_add(&d, DIAG_WARNING, "sandbox", "unknown key (ignored)");
	diag_add(&d, DIAG_DEBUG, "ripgrep", "ignored");
	diag_add(&d, DIAG_ERROR, NULL, "cannot open the policy: %s", "No such file or directory");
	assert_int_equal(diag_count(&d, DIAG_ERROR), 2);
	assert_true(diag_has_errors(&d));
	assert_non_null(diag_find(&d, DIAG_WARNING, "sandbox"));
	assert_null(diag_find(&d, DIAG_ERROR, "sandbox"));
	diag_print(&d, "p.json", f, false);
	fclose(f);
	assert_string_equal(buf,
		"bpfbox: p.json: network.allowedDomains[2]: bad entry\n"
		"bpfbox: warning: p.json: sandbox: unknown key (ignored)\n"
		"bpfbox: p.json: cannot open the policy: No such file or directory\n");
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	diag_print(&d, NULL, f, true);
	fclose(f);
	assert_true(strstr(buf, "bpfbox: debug: ripgrep: ignored\n") != NULL);
	diag_list_free(&d);
	assert_int_equal(d.n, 0);
	assert_false(diag_has_errors(&d));
}

static void test_ignored_srt_fields(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN ", \"ripgrep\": {\"command\": \"rg\"},"
		" \"seccomp\": {}, \"bwrapPath\": \"/usr/bin/bwrap\", \"socatPath\": \"/usr/bin/socat\","
		" \"javaAgentJarPath\": \"/x.jar\", \"windows\": {}, \"allowPty\": true,"
		" \"allowAppleEvents\": true, \"enableWeakerNetworkIsolation\": true,"
		" \"enableWeakerNestedSandbox\": true, \"mandatoryDenySearchDepth\": 3}";
	static const char *const keys[] = { "ripgrep", "seccomp", "bwrapPath", "socatPath",
		"javaAgentJarPath", "windows", "allowPty", "allowAppleEvents",
		"enableWeakerNetworkIsolation", "enableWeakerNestedSandbox",
		"mandatoryDenySearchDepth" };
	struct diag_list d;
	struct policy *p;

	p = NULL;
	assert_int_equal(load(json, true, &p, &d), 0);
	assert_int_equal(diag_count(&d, DIAG_WARNING) + diag_count(&d, DIAG_ERROR), 0);
	/* One debug line each. */
	assert_int_equal(diag_count(&d, DIAG_DEBUG), sizeof(keys) / sizeof(keys[0]));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		expect(&d, DIAG_DEBUG, keys[i], "ignored");
	policy_free(p);
	diag_list_free(&d);
}

static void test_json_problems(void **state)
{
	struct policy *p;
	struct diag_list d;
	static const char nul[] = "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}, "
		"\"filesystem\": {\"denyRead\": [\"/x\\u0000y\"], \"allowWrite\": [], \"denyWrite\": []}}";
	static const char escaped_ok[] = "{" NET_MIN ", \"filesystem\": {\"denyRead\": "
		"[\"/x\\\\u0000y\"], \"allowWrite\": [], \"denyWrite\": []}}";

	refused("", "", "empty");
	refused(" \n\t ", "", "empty");
	refused("{\n\"network\": {\n\"allowedDomains\": [] \"deniedDomains\": []}}", "",
		"line 3, column");
	refused("{" NET_MIN ", " FS_MIN "} trailing", "", "invalid JSON");
	refused("[1, 2]", "", "expected a JSON object at the top level, got an array");
	refused("\"str\"", "", "got a string");
	refused(nul, "", "\\u0000");
	refused("{" NET_MIN ", " FS_MIN ", \"network\": {}}", "network", "duplicate key");

	/* A raw NUL byte in the buffer. */
	diag_list_init(&d);
	assert_int_equal(policy_load_buffer("x", "{}\0{}", 5, NULL, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "", "NUL byte");
	diag_list_free(&d);

	/* A literal backslash followed by u0000 is an ordinary string. */
	p = load_ok(escaped_ok, &d);
	assert_string_equal(p->fs_rules[0].path, "/x\\u0000y");
	policy_free(p);
	diag_list_free(&d);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/bpfbox-policy-XXXXXX", path[64];
	struct policy_load_opts o = { .cwd = CWD, .home = HOME };
	struct policy *p;
	struct diag_list d = DIAG_LIST_INIT;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.json", dir);
	assert_int_equal(policy_load_file(path, &o, &p, &d), -ENOENT);
	assert_null(p);
	expect(&d, DIAG_ERROR, "", "No such file");
	diag_list_free(&d);

	assert_int_equal(policy_load_file(dir, &o, &p, &d), -EISDIR);
	expect(&d, DIAG_ERROR, "", "directory");
	diag_list_free(&d);

	snprintf(path, sizeof(path), "%s/p.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{" NET_MIN ", " FS_MIN "}", f);
	fclose(f);
	assert_int_equal(policy_load_file(path, &o, &p, &d), 0);
	assert_string_equal(p->file, path);
	policy_free(p);

	if (geteuid() != 0) {
		/* Root reads anything; the unreadable case only means something otherwise. */
		chmod(path, 0);
		assert_int_equal(policy_load_file(path, &o, &p, &d), -EACCES);
		expect(&d, DIAG_ERROR, "", "Permission denied");
	}
	diag_list_free(&d);

	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(policy_load_file(path, &o, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "", "empty");
	diag_list_free(&d);
	unlink(path);
	rmdir(dir);
}

static void test_credentials(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN ", \"credentials\": {\"envVars\": ["
		"{\"name\": \"GITHUB_TOKEN\", \"mode\": \"deny\"},"
		"{\"name\": \"AWS_SECRET\", \"mode\": \"deny\", \"injectHosts\": []}],"
		" \"allowPlaintextInject\": false}}";
	static const char bad[] = "{" NET_MIN ", " FS_MIN ", \"credentials\": {\"envVars\": ["
		"{\"name\": \"1BAD\", \"mode\": \"deny\"}, {\"mode\": \"deny\"},"
		" {\"name\": \"X\", \"mode\": \"hide\"}, {\"name\": \"Y\"}, \"Z\","
		" {\"name\": \"W\", \"mode\": \"deny\", \"colour\": 1}]}}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);

	assert_int_equal(p->n_env_deny, 2);
	assert_string_equal(p->env_deny[0], "GITHUB_TOKEN");
	assert_true(policy_env_denied(p, "AWS_SECRET"));
	assert_false(policy_env_denied(p, "AWS"));
	expect(&d, DIAG_DEBUG, "credentials.envVars[1].injectHosts", "mask");
	policy_free(p);
	diag_list_free(&d);

	assert_int_equal(load(bad, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "credentials.envVars[0].name", "environment variable name");
	expect(&d, DIAG_ERROR, "credentials.envVars[1].name", "Required");
	expect(&d, DIAG_ERROR, "credentials.envVars[2].mode", "\"hide\"");
	expect(&d, DIAG_ERROR, "credentials.envVars[3].mode", "Required");
	expect(&d, DIAG_ERROR, "credentials.envVars[4]", "expected an object");
	expect(&d, DIAG_WARNING, "credentials.envVars[5].colour", "unknown key");
	diag_list_free(&d);
}

static void test_ignore_violations_and_git(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN ", \"ignoreViolations\": "
		"{\"*\": [\"/usr/bin\"], \"git push\": [\"/usr/bin/nc\", \"x\"]},"
		" \"git\": {\"safeDirectories\": [\"~/repo\", \"*\", \"sub\"]},"
		" \"allowNestedUserNamespaces\": true}";
	static const char bad[] = "{" NET_MIN ", " FS_MIN ", \"ignoreViolations\": "
		"{\"git push\": \"/usr/bin/nc\", \"npm\": [1]}, \"git\": {\"safeDirectories\": \"x\"}}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);

	assert_int_equal(p->n_ignore, 2);
	assert_string_equal(p->ignore[1].command, "git push");
	assert_int_equal(p->ignore[1].n_lines, 2);
	assert_string_equal(p->ignore[1].lines[0], "/usr/bin/nc");
	assert_int_equal(p->n_git_safe_dirs, 3);
	assert_string_equal(p->git_safe_dirs[0], HOME "/repo");
	assert_string_equal(p->git_safe_dirs[1], "*");
	assert_string_equal(p->git_safe_dirs[2], CWD "/sub");
	assert_true(p->allow_nested_userns);
	policy_free(p);
	diag_list_free(&d);

	assert_int_equal(load(bad, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "ignoreViolations[\"git push\"]", "expected an array");
	expect(&d, DIAG_ERROR, "ignoreViolations.npm[0]", "expected a string");
	expect(&d, DIAG_ERROR, "git.safeDirectories", "expected an array");
	diag_list_free(&d);
}

static void test_bpfbox_section(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"mode\": \"audit\","
		" \"env\": {\"allow\": [\"PATH\", \"LC_*\", \"_X1\"]},"
		" \"limits\": {\"pids\": 512, \"memory\": \"512M\", \"cpu\": \"150%\"},"
		" \"log\": {\"file\": \"logs/ev.ndjson\", \"format\": \"json\"}}}";
	static const char bad[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"mode\": \"permissive\","
		" \"env\": {\"allow\": [\"1X\", \"A-B\", \"*\", 3]},"
		" \"limits\": {\"pids\": 0, \"memory\": \"12Q\", \"cpu\": \"0%\"},"
		" \"log\": {\"format\": \"xml\", \"file\": \"\"}}}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);

	assert_true(p->audit);
	assert_true(p->has_env_allow);
	assert_int_equal(p->n_env_allow, 3);
	assert_true(policy_env_allowed(p, "PATH"));
	assert_true(policy_env_allowed(p, "LC_ALL"));
	assert_true(policy_env_allowed(p, "LC_"));
	assert_false(policy_env_allowed(p, "PATH2"));
	assert_false(policy_env_allowed(p, "HOME"));
	assert_int_equal(p->limit_pids, 512);
	assert_int_equal(p->limit_memory_bytes, 512LL << 20);
	assert_int_equal(p->limit_cpu_percent, 150);
	assert_string_equal(p->log_file, CWD "/logs/ev.ndjson");
	assert_int_equal(p->log_format, POLICY_LOG_JSON);
	policy_free(p);
	diag_list_free(&d);

	assert_int_equal(load(bad, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "bpfbox.mode", "\"enforce\" or \"audit\"");
	expect(&d, DIAG_ERROR, "bpfbox.env.allow[0]", "variable name");
	expect(&d, DIAG_ERROR, "bpfbox.env.allow[1]", "variable name");
	expect(&d, DIAG_ERROR, "bpfbox.env.allow[2]", "variable name");
	expect(&d, DIAG_ERROR, "bpfbox.env.allow[3]", "expected a string");
	expect(&d, DIAG_ERROR, "bpfbox.limits.pids", "from 1");
	expect(&d, DIAG_ERROR, "bpfbox.limits.memory", "512M");
	expect(&d, DIAG_ERROR, "bpfbox.limits.cpu", "50%");
	expect(&d, DIAG_ERROR, "bpfbox.log.format", "\"xml\"");
	expect(&d, DIAG_ERROR, "bpfbox.log.file", "empty");
	diag_list_free(&d);
}

static void test_devices(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"devices\": {\"allow\":"
		" [\"/dev/null\", \"/nonexistent-bpfbox-test/dev/kvm\", \"/\"]}}}";
	static const char bad[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"devices\": {\"allow\":"
		" [\"dev/kvm\", 3], \"deny\": []}}}";
	struct device_decision dd;
	struct diag_list d;
	struct policy *p = load_ok(json, &d);

	assert_int_equal(p->n_device_allow, 3);
	expect(&d, DIAG_WARNING, "bpfbox.devices.allow[1]", "No such file");
	expect(&d, DIAG_WARNING, "bpfbox.devices.allow[2]", "not a device node");
	/* /dev/null is in the built-in set; a plain file is no device. */
	assert_true(policy_decide_device(p, "/dev/null", &dd));
	assert_true(dd.allowed);
	assert_string_equal(dd.rule_name, "builtin:device-set");
	assert_int_equal(dd.major, 1);
	assert_int_equal(dd.minor, 3);
	assert_false(policy_decide_device(p, "/etc/passwd", &dd));
	policy_free(p);
	diag_list_free(&d);

	assert_int_equal(load(bad, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "bpfbox.devices.allow[0]", "absolute path");
	expect(&d, DIAG_ERROR, "bpfbox.devices.allow[1]", "expected a string");
	expect(&d, DIAG_WARNING, "bpfbox.devices.deny", "unknown key");
	diag_list_free(&d);
}

/* bpfbox.network.allowSocketProtocols: known names to BB_SOCK_* bits; anything else is named. */
static void test_socket_protocols(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"network\": "
		"{\"allowSocketProtocols\": [\"sctp\", \"ping\", \"netlink\", \"sctp\"]}}}";
	static const char bad[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"network\": "
		"{\"allowSocketProtocols\": [\"tcp\", \"SCTP\", \"\", 132, \"rxrpc\"]}}}";
	static const char not_list[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"network\": "
		"{\"allowSocketProtocols\": \"sctp\"}}}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);

	assert_int_equal(p->sock_allow, BB_SOCK_SCTP | BB_SOCK_PING | BB_SOCK_NETLINK);
	policy_free(p);
	diag_list_free(&d);
	p = load_ok("{" NET_MIN ", " FS_MIN "}", &d);
	assert_int_equal(p->sock_allow, 0);
	policy_free(p);
	diag_list_free(&d);
	for (size_t i = 0; i < policy_n_socket_kinds; i++)
		assert_int_equal(policy_socket_kinds[i].bit & ~BB_SOCK_ALL, 0);

	assert_int_equal(load(bad, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "bpfbox.network.allowSocketProtocols[0]", "always allowed");
	expect(&d, DIAG_ERROR, "bpfbox.network.allowSocketProtocols[1]", "\"SCTP\": expected one of sctp");
	expect(&d, DIAG_ERROR, "bpfbox.network.allowSocketProtocols[2]", "empty");
	expect(&d, DIAG_ERROR, "bpfbox.network.allowSocketProtocols[3]", "expected a string");
	expect(&d, DIAG_ERROR, "bpfbox.network.allowSocketProtocols[4]", "other families cannot be opened");
	diag_list_free(&d);
	refused(not_list, "bpfbox.network.allowSocketProtocols", "array");
}

/*
 * bpfbox.network.dnsQueryTypes: names (any case) add to A, AAAA, CNAME and
 * HTTPS; the tunnels' favourites and anything unknown are named errors.
 */
static void test_dns_query_types(void **state)
{
	static const char json[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"network\": "
		"{\"dnsQueryTypes\": [\"srv\", \"MX\", \"SRV\"]}}}";
	static const char bad[] = "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"network\": "
		"{\"dnsQueryTypes\": [\"TXT\", \"ANY\", \"NULL\", 16, \"A\"]}}}";
	struct diag_list d;
	struct policy *p = load_ok("{" NET_MIN ", " FS_MIN "}", &d);
	char buf[16];

	/* The default set: what stub resolvers, browsers and git ask. */
	assert_true(policy_dns_type_answered(p, 1));
	assert_true(policy_dns_type_answered(p, 28));
	assert_true(policy_dns_type_answered(p, 5));
	assert_true(policy_dns_type_answered(p, 65));
	for (unsigned t = 0; t < 70000; t++)
		if (t != 1 && t != 5 && t != 28 && t != 65)
			assert_false(policy_dns_type_answered(p, t));
	policy_free(p);
	diag_list_free(&d);
	p = load_ok(json, &d);
	assert_true(policy_dns_type_answered(p, 33));
	assert_true(policy_dns_type_answered(p, 15));
	assert_false(policy_dns_type_answered(p, 16));
	assert_false(policy_dns_type_answered(p, 255));
	assert_false(policy_dns_type_answered(p, 10));
	policy_free(p);
	diag_list_free(&d);
	assert_string_equal(policy_dns_type_name(16, buf, sizeof(buf)), "TXT");
	assert_string_equal(policy_dns_type_name(255, buf, sizeof(buf)), "ANY");
	assert_string_equal(policy_dns_type_name(4242, buf, sizeof(buf)), "TYPE4242");

	assert_int_equal(load(bad, false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "bpfbox.network.dnsQueryTypes[1]", "\"ANY\": expected one of NS");
	expect(&d, DIAG_ERROR, "bpfbox.network.dnsQueryTypes[2]", "NULL, ANY and zone transfers never are");
	expect(&d, DIAG_ERROR, "bpfbox.network.dnsQueryTypes[3]", "expected a string");
	expect(&d, DIAG_ERROR, "bpfbox.network.dnsQueryTypes[4]", "always answered");
	diag_list_free(&d);
}

/* bpfbox.git.newRepositories: strict by default; report and refuse by name; anything else named. */
static void test_git_new_repositories(void **state)
{
#define GIT(v) "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"git\": {\"newRepositories\": " v "}}}"
	static const struct {
		const char *json;
		enum policy_git_new want;
	} ok[] = {
		{ "{" NET_MIN ", " FS_MIN "}", POLICY_GIT_STRICT },
		{ GIT("\"strict\""), POLICY_GIT_STRICT },
		{ GIT("\"report\""), POLICY_GIT_REPORT },
		{ GIT("\"refuse\""), POLICY_GIT_REFUSE },
	};
	struct diag_list d;
	struct policy *p;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		p = load_ok(ok[i].json, &d);
		assert_int_equal(p->git_new, ok[i].want);
		policy_free(p);
		diag_list_free(&d);
	}
	assert_int_equal(load(GIT("\"off\""), false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "bpfbox.git.newRepositories", "expected \"strict\", \"report\" or \"refuse\", got \"off\"");
	diag_list_free(&d);
	assert_int_equal(load(GIT("true"), false, &p, &d), -EINVAL);
	expect(&d, DIAG_ERROR, "bpfbox.git.newRepositories", "string");
	diag_list_free(&d);
	/* An unknown key is an error under --strict, as everywhere. */
	assert_int_equal(load("{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"git\": {\"hooks\": 1}}}", true, &p, &d),
			 -EINVAL);
	expect(&d, DIAG_ERROR, "bpfbox.git.hooks", "unknown key");
	diag_list_free(&d);
#undef GIT
}

static void test_memory_sizes(void **state)
{
	static const struct { const char *in; long long want; } ok[] = {
		{ "\"1G\"", 1LL << 30 }, { "\"2GiB\"", 2LL << 30 }, { "\"1024k\"", 1LL << 20 },
		{ "\"64MB\"", 64LL << 20 }, { "\"1T\"", 1LL << 40 }, { "1048576", 1LL << 20 },
		{ "\"3000000\"", 3000000 },
	};
	static const char *const bad[] = { "\"1K\"", "\"-1G\"", "\"1.5G\"", "\"G\"", "1000",
		"\"1 G\"", "\"99999999999T\"", "true" };
	char json[512];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct diag_list d;
		struct policy *p;

		snprintf(json, sizeof(json), "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"limits\": "
			 "{\"memory\": %s}}}", ok[i].in);
		p = load_ok(json, &d);
		assert_int_equal(p->limit_memory_bytes, ok[i].want);
		policy_free(p);
		diag_list_free(&d);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json), "{" NET_MIN ", " FS_MIN ", \"bpfbox\": {\"limits\": "
			 "{\"memory\": %s}}}", bad[i]);
		refused(json, "bpfbox.limits.memory", NULL);
	}
}

static void test_default_policy(void **state)
{
	struct policy_load_opts o = { .cwd = CWD, .home = HOME };
	struct mandatory_entry m[POLICY_MANDATORY_MAX];
	struct fs_decision fd;
	struct policy *p;
	const char *rule;
	char digest[65];

	assert_int_equal(policy_default(&o, &p), 0);
	assert_null(p->file);
	policy_sha256_hex("default", 7, digest);
	assert_string_equal(p->digest, digest);
	assert_int_equal(p->n_allowed_domains, 0);
	assert_int_equal(policy_decide_host(p, "example.com", 443, &rule, NULL),
			 NET_DENY_NOT_ALLOWED);
	assert_string_equal(rule, "default:network");
	policy_decide_read(p, HOME "/.ssh/id_rsa", &fd);
	assert_true(fd.allowed);
	policy_decide_write(p, CWD "/file", &fd);
	assert_false(fd.allowed);
	assert_string_equal(fd.rule_name, "default:write");
	policy_decide_write(p, "/dev/null", &fd);
	assert_true(fd.allowed);
	assert_true(fd.rule->from_default);
	assert_int_equal(policy_mandatory(p, m), 18);
	policy_free(p);
}

static void test_discover(void **state)
{
	const char *sys;

	setenv("BPFBOX_POLICY", "/from/env.json", 1);
	assert_string_equal(policy_discover("/from/cli.json"), "/from/cli.json");
	assert_string_equal(policy_discover(NULL), "/from/env.json");
	setenv("BPFBOX_POLICY", "", 1);
	sys = policy_discover(NULL);
	if (access(POLICY_SYSTEM_PATH, F_OK))
		assert_null(sys);
	else
		assert_string_equal(sys, POLICY_SYSTEM_PATH);
	unsetenv("BPFBOX_POLICY");
	assert_string_equal(policy_discover("x.json"), "x.json");
}

static void test_show_json(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": [\"GitHub.com\"],"
		" \"deniedDomains\": [\"*:22\"], \"deniedDomainReasons\": {\"*:22\": \"no ssh\"}},"
		" \"filesystem\": {\"denyRead\": [\"~/.ssh\"], \"allowWrite\": [\"src/\"],"
		" \"denyWrite\": [], \"allowGitConfig\": true},"
		" \"bpfbox\": {\"limits\": {\"memory\": \"1G\"}}}";
	struct diag_list d;
	struct policy *p = load_ok(json, &d);
	char *text = policy_to_json(p);
	cJSON *root, *v;

	assert_non_null(text);
	root = cJSON_Parse(text);
	assert_non_null(root);
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "network"), "allowedDomains");
	assert_string_equal(cJSON_GetArrayItem(v, 0)->valuestring, "github.com");
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "network"), "deniedDomainReasons");
	assert_string_equal(cJSON_GetObjectItem(v, "*:22")->valuestring, "no ssh");
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "filesystem"), "denyRead");
	assert_string_equal(cJSON_GetArrayItem(v, 0)->valuestring, HOME "/.ssh");
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "filesystem"), "allowWrite");
	assert_int_equal(cJSON_GetArraySize(v), 1);
	assert_string_equal(cJSON_GetArrayItem(v, 0)->valuestring, CWD "/src");
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "filesystem"), "implicitAllowWrite");
	assert_int_equal(cJSON_GetArraySize(v), 2);
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "filesystem"), "mandatoryDenyWrite");
	/* allowGitConfig drops .git/config and .git/config.worktree from the set, .git/hooks stays. */
	assert_int_equal(cJSON_GetArraySize(v), 16);
	assert_true(strstr(text, "\".git/hooks\"") != NULL);
	/* Expanded under each writable root and home: 15 names (no .git/config(.worktree), no .git file). */
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "filesystem"), "mandatoryDenyWriteExpanded");
	assert_int_equal(cJSON_GetArraySize(v), 2 * 15);
	assert_true(strstr(text, "\"" CWD "/src/.git/hooks\"") != NULL);
	assert_true(strstr(text, "\"" HOME "/.bashrc\"") != NULL);
	assert_null(strstr(text, "\".git/config\""));
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "bpfbox"),
						     "limits"), "memory");
	assert_true(cJSON_IsNumber(v) && v->valuedouble == (double)(1LL << 30));
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "bpfbox"),
						     "limits"), "pids");
	assert_true(cJSON_IsNull(v));
	assert_string_equal(cJSON_GetObjectItem(root, "digest")->valuestring, p->digest);
	cJSON_Delete(root);
	free(text);
	policy_free(p);
	diag_list_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_required_sections),
		cmocka_unit_test(test_required_fields),
		cmocka_unit_test(test_type_errors_every_path),
		cmocka_unit_test(test_bad_domains_all_reported),
		cmocka_unit_test(test_domains_canonical),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_network_extras),
		cmocka_unit_test(test_unknown_keys_warn_and_strict),
		cmocka_unit_test(test_refused_fields),
		cmocka_unit_test(test_refused_but_off_is_fine),
		cmocka_unit_test(test_ignored_srt_fields),
		cmocka_unit_test(test_diag_print),
		cmocka_unit_test(test_json_problems),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_ignore_violations_and_git),
		cmocka_unit_test(test_bpfbox_section),
		cmocka_unit_test(test_socket_protocols),
		cmocka_unit_test(test_dns_query_types),
		cmocka_unit_test(test_git_new_repositories),
		cmocka_unit_test(test_memory_sizes),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_discover),
		cmocka_unit_test(test_show_json),
		cmocka_unit_test(test_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
