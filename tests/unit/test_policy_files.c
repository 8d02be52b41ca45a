// SPDX-License-Identifier: MIT
/*
 * Policy files on disk: every example in policy-examples/ and every srt
 * settings file in tests/policies/srt/ passes `policy check` (also under
 * --strict), every file in tests/policies/invalid/ is rejected with the
 * expected JSON paths, and the `bpfbox policy` command prints and exits as
 * documented. Run from the repository root (as `make unit-test` does), or
 * set BPFBOX_SRCDIR.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "cli/commands.h"
#include "policy/policy.h"

#define CWD "/nonexistent-bpfbox-test/proj"
#define HOME "/nonexistent-bpfbox-test/home"

static const char *srcdir(void)
{
	const char *s = getenv("BPFBOX_SRCDIR");

	return s && *s ? s : ".";
}

static int load_path(const char *path, bool strict, struct policy **p, struct diag_list *d)
{
	struct policy_load_opts o = { .cwd = CWD, .home = HOME, .strict = strict };

	diag_list_init(d);
	return policy_load_file(path, &o, p, d);
}

/* Loads every *.json in dir; returns how many there were. */
static size_t all_pass(const char *sub)
{
	char dir[4096], path[8192];
	struct dirent *e;
	size_t n = 0;
	DIR *dh;

	snprintf(dir, sizeof(dir), "%s/%s", srcdir(), sub);
	dh = opendir(dir);
	assert_non_null(dh);
	while ((e = readdir(dh))) {
		size_t len = strlen(e->d_name);
		struct diag_list d;
		struct policy *p = NULL;

		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		/* --strict: examples must not even warn. */
		if (load_path(path, true, &p, &d)) {
			diag_print(&d, path, stderr, false);
			fail_msg("%s was rejected", path);
		}
		assert_non_null(p);
		assert_int_equal(strlen(p->digest), 64);
		assert_string_equal(p->file, path);
		policy_free(p);
		diag_list_free(&d);
		n++;
	}
	closedir(dh);
	return n;
}

static void test_examples_pass(void **state)
{
	assert_true(all_pass("policy-examples") >= 5);
}

static void test_srt_files_pass(void **state)
{
	assert_true(all_pass("tests/policies/srt") >= 6);
}

static struct policy *load_one(const char *rel)
{
	char path[4096];
	struct diag_list d;
	struct policy *p = NULL;

	snprintf(path, sizeof(path), "%s/%s", srcdir(), rel);
	if (load_path(path, false, &p, &d)) {
		diag_print(&d, path, stderr, false);
		fail_msg("%s rejected", path);
	}
	diag_list_free(&d);
	return p;
}

static void test_example_semantics(void **state)
{
	struct policy *p = load_one("policy-examples/agent-restrictive.json");
	struct fs_decision fd;
	const char *rule, *reason;

	/* Project writable, home secrets unreadable, registries reachable, ssh not. */
	policy_decide_write(p, CWD "/src/main.c", &fd);
	assert_true(fd.allowed);
	policy_decide_write(p, CWD "/.env", &fd);
	assert_false(fd.allowed);
	policy_decide_write(p, CWD "/.git/hooks/pre-commit", &fd);
	assert_false(fd.allowed);
	policy_decide_read(p, HOME "/.ssh/id_ed25519", &fd);
	assert_false(fd.allowed);
	policy_decide_read(p, HOME "/.aws/credentials", &fd);
	assert_false(fd.allowed);
	policy_decide_read(p, HOME "/.bashrc", &fd);
	assert_true(fd.allowed);
	/* What uid 0 reads by DAC alone. */
	policy_decide_read(p, "/etc/shadow", &fd);
	assert_false(fd.allowed);
	policy_decide_read(p, "/root/.bash_history", &fd);
	assert_int_equal(fd.allowed, !strcmp(HOME, "/root"));
	assert_int_equal(policy_decide_host(p, "registry.npmjs.org", 443, NULL, NULL), NET_ALLOW);
	assert_int_equal(policy_decide_host(p, "pypi.org", 443, NULL, NULL), NET_ALLOW);
	assert_int_equal(policy_decide_host(p, "crates.io", 443, NULL, NULL), NET_ALLOW);
	assert_int_equal(policy_decide_host(p, "evil.example", 443, NULL, NULL),
			 NET_DENY_NOT_ALLOWED);
	assert_int_equal(policy_decide_host(p, "github.com", 22, &rule, &reason), NET_DENY_DENIED);
	assert_non_null(reason);
	assert_true(policy_env_denied(p, "GITHUB_TOKEN"));
	assert_int_equal(p->limit_memory_bytes, 4LL << 30);
	assert_int_equal(p->limit_cpu_percent, 200);
	policy_free(p);

	p = load_one("policy-examples/no-network.json");
	assert_int_equal(policy_decide_host(p, "github.com", 443, &rule, NULL), NET_DENY_NOT_ALLOWED);
	policy_free(p);

	p = load_one("policy-examples/codex-workspace-write.json");
	policy_decide_write(p, CWD "/.git/index", &fd);
	assert_false(fd.allowed);
	assert_true(policy_env_allowed(p, "LC_CTYPE"));
	assert_false(policy_env_allowed(p, "AWS_PROFILE"));
	policy_free(p);
}

static void test_srt_file_semantics(void **state)
{
	struct policy *p = load_one("tests/policies/srt/readme-complete.json");
	struct fs_decision fd;

	policy_decide_write(p, CWD "/src/x.c", &fd);
	assert_true(fd.allowed);
	policy_decide_write(p, CWD "/config/production.json", &fd);
	assert_false(fd.allowed);
	assert_string_equal(fd.rule->source, "config/production.json");
	assert_int_equal(p->n_ignore, 3);
	assert_int_equal(policy_decide_host(p, "malicious.com", 443, NULL, NULL), NET_DENY_DENIED);
	assert_int_equal(policy_decide_host(p, "lfs.github.com", 443, NULL, NULL), NET_ALLOW);
	policy_free(p);

	p = load_one("tests/policies/srt/ports-and-reasons.json");
	assert_true(p->allow_git_config);
	assert_true(p->allow_local_binding);
	assert_int_equal(p->n_denied_addrs, 3);
	assert_int_equal(p->n_allow_unix_sockets, 2);
	assert_string_equal(p->allow_unix_sockets[1], HOME "/.colima/default/docker.sock");
	policy_decide_read(p, "/home/someone/x", &fd);
	assert_false(fd.allowed);
	policy_decide_read(p, "/home/shared/doc", &fd);
	assert_true(fd.allowed);
	policy_decide_write(p, HOME "/project/secrets/k", &fd);
	assert_false(fd.allowed);
	policy_free(p);

	p = load_one("tests/policies/srt/srt-tool-options.json");
	assert_int_equal(p->http_proxy_port, 3128);
	assert_int_equal(p->socks_proxy_port, 1080);
	policy_free(p);

	p = load_one("tests/policies/srt/tls-terminate.json");
	assert_true(p->tls.enabled);
	assert_string_equal(p->tls.ca_key_path, "/etc/ca.key");
	assert_int_equal(p->tls.max_tunnels, 64);
	assert_true(policy_tls_terminates(p, "api.example.com", 443));
	assert_false(policy_tls_terminates(p, "bank.example.com", 443));
	assert_true(p->require_host_match);
	assert_string_equal(p->strip_response_headers[0], "set-cookie");
	policy_free(p);

	p = load_one("tests/policies/srt/fs-disabled.json");
	assert_true(p->fs_disabled);
	assert_int_equal(p->n_fs_rules, 0);
	policy_free(p);

	/* credentials.files: read denies of their own name. */
	p = load_one("tests/policies/srt/credentials-files.json");
	policy_decide_read(p, HOME "/.aws/credentials", &fd);
	assert_false(fd.allowed);
	assert_string_equal(fd.rule_name, "credentials.files[1]:denyRead:" HOME "/.aws");
	policy_decide_read(p, HOME "/.netrc", &fd);
	assert_false(fd.allowed);
	policy_decide_read(p, HOME "/.bashrc", &fd);
	assert_true(fd.allowed);
	assert_true(policy_env_denied(p, "GITHUB_TOKEN"));
	policy_free(p);
}

struct bad {
	const char *file;
	const char *paths[8];	/* JSON paths that must carry an error */
};

static const struct bad bad_files[] = {
	{ "missing-required.json", { "network.allowedDomains", "filesystem.denyWrite" } },
	{ "bad-domains.json", { "network.allowedDomains[1]", "network.allowedDomains[2]",
				"network.allowedDomains[3]", "network.allowedDomains[4]",
				"network.allowedDomains[5]", "network.allowedDomains[6]",
				"network.deniedDomains[2]" } },
	{ "empty.json", { "" } },
	{ "blank.json", { "" } },
	{ "not-json.json", { "" } },
	{ "trailing-garbage.json", { "" } },
	{ "top-level-array.json", { "" } },
	{ "duplicate-key.json", { "network.allowedDomains" } },
	{ "mask-credential.json", { "credentials", "credentials.envVars[0].injectHosts[0]",
				    "credentials.envVars[1].extract",
				    "credentials.awsPairs[0].accessKeyIdVar" } },
	{ "credential-files.json", { "credentials.files[0].path", "credentials.files[1].maskClaims" } },
	{ "tls-terminate.json", { "network.tlsTerminate.caKeyPath", "network.tlsTerminate.maxTunnels",
				  "network.tlsTerminate.excludeDomains[0]", "network.stripResponseHeaders[0]",
				  "network.ambiguousRequestTarget" } },
	{ "mitm-proxy.json", { "network.mitmProxy.domains" } },
	{ "mitm-and-tls.json", { "network.mitmProxy" } },
	{ "parent-proxy.json", { "network.parentProxy" } },
	{ "write-glob.json", { "filesystem.denyRead[0]", "filesystem.allowWrite[0]",
			       "filesystem.denyWrite[0]" } },
	{ "wrong-types.json", { "network.allowedDomains", "network.deniedDomains[0]",
				"network.allowLocalBinding", "network.httpProxyPort",
				"filesystem.denyRead[0]", "filesystem.allowWrite[0]",
				"filesystem.denyWrite[0].path", "filesystem.allowGitConfig" } },
	{ "wrong-types.json", { "ignoreViolations[\"git push\"]", "mandatoryDenySearchDepth",
				"bpfbox.mode", "bpfbox.limits.memory", "bpfbox.limits.cpu",
				"bpfbox.limits.pids" } },
	{ "credentials-unknown-key.json", { "credentials.injectHosts" } },
	{ "reason-crlf.json", { "network.deniedDomainReasons[\"evil.example.com\"]" } },
};

static void test_invalid_files(void **state)
{
	char path[4096];
	char dir[4096];
	size_t files = 0;
	DIR *dh;
	struct dirent *e;

	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		const struct bad *b = &bad_files[i];
		struct diag_list d;
		struct policy *p = (void *)1;

		snprintf(path, sizeof(path), "%s/tests/policies/invalid/%s", srcdir(), b->file);
		assert_int_equal(load_path(path, false, &p, &d), -EINVAL);
		assert_null(p);
		for (size_t j = 0; j < 8 && b->paths[j]; j++)
			if (!diag_find(&d, DIAG_ERROR, b->paths[j])) {
				diag_print(&d, path, stderr, false);
				fail_msg("%s: no error at \"%s\"", b->file, b->paths[j]);
			}
		diag_list_free(&d);
	}
	/* Every file in the directory is covered by the table above. */
	snprintf(dir, sizeof(dir), "%s/tests/policies/invalid", srcdir());
	dh = opendir(dir);
	assert_non_null(dh);
	while ((e = readdir(dh))) {
		bool listed = false;

		if (e->d_name[0] == '.')
			continue;
		files++;
		for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++)
			listed |= !strcmp(bad_files[i].file, e->d_name);
		if (!listed)
			fail_msg("tests/policies/invalid/%s is not checked", e->d_name);
	}
	closedir(dh);
	assert_true(files >= 15);
}

/* Runs cmd_policy with stdout and stderr captured into files. */
struct run {
	int status;
	char *out, *err;
};

static char *slurp(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	n = ftell(f);
	s = calloc(1, n + 1);
	rewind(f);
	assert_int_equal(fread(s, 1, n, f), (size_t)n);
	return s;
}

static struct run run(const char *a1, const char *a2, const char *a3, const char *a4,
		      const char *a5)
{
	char *argv[8] = { "policy", (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5 };
	int argc = 1, so = dup(1), se = dup(2);
	FILE *fo = tmpfile(), *fe = tmpfile();
	struct run r;

	while (argc < 6 && argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	r.status = cmd_policy(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	r.out = slurp(fo);
	r.err = slurp(fe);
	fclose(fo);
	fclose(fe);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static void has(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("output lacks \"%s\":\n%s", needle, text);
}

static void test_cmd_check(void **state)
{
	char good[4096], bad[4096], strict[4096];
	struct run r;
	FILE *f;

	snprintf(good, sizeof(good), "%s/policy-examples/no-network.json", srcdir());
	snprintf(bad, sizeof(bad), "%s/tests/policies/invalid/bad-domains.json", srcdir());

	r = run("check", good, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	has(r.out, "policy ok");
	run_free(&r);

	r = run("check", bad, NULL, NULL, NULL);
	assert_int_equal(r.status, BPFBOX_EXIT_SETUP);
	/* Every problem, one line each, in the documented shape. */
	for (int i = 1; i <= 6; i++) {
		char line[8192];

		snprintf(line, sizeof(line), "bpfbox: %s: network.allowedDomains[%d]: ", bad, i);
		has(r.err, line);
	}
	has(r.err, "network.deniedDomains[2]: invalid domain pattern \"example\"");
	has(r.err, "bpfbox: policy rejected; the command was not run\n");
	run_free(&r);

	r = run("check", "/nonexistent-bpfbox/p.json", NULL, NULL, NULL);
	assert_int_equal(r.status, BPFBOX_EXIT_SETUP);
	has(r.err, "bpfbox: /nonexistent-bpfbox/p.json: cannot open the policy: No such file");
	has(r.err, "the command was not run");
	run_free(&r);

	/* Unknown keys warn; --strict turns them into a rejection. */
	snprintf(strict, sizeof(strict), "/tmp/bpfbox-strict-%d.json", (int)getpid());
	f = fopen(strict, "w");
	assert_non_null(f);
	fputs("{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [], \"allowedDomian\": []},"
	      " \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []},"
	      " \"ripgrep\": {}}", f);
	fclose(f);
	r = run("check", strict, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	has(r.err, "bpfbox: warning: ");
	has(r.err, ": network.allowedDomian: unknown key");
	assert_null(strstr(r.err, "ripgrep"));
	run_free(&r);
	r = run("check", "--debug", strict, NULL, NULL);
	has(r.err, "bpfbox: debug: ");
	has(r.err, "ripgrep: ignored");
	run_free(&r);
	r = run("check", "--strict", strict, NULL, NULL);
	assert_int_equal(r.status, BPFBOX_EXIT_SETUP);
	has(r.err, ": network.allowedDomian: unknown key");
	assert_null(strstr(r.err, "warning:"));
	run_free(&r);
	unlink(strict);

	r = run("bogus", NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 2);
	run_free(&r);
	r = run("check", "--nope", good, NULL, NULL);
	assert_int_equal(r.status, 2);
	run_free(&r);
	r = run("--help", NULL, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	has(r.out, "explain");
	run_free(&r);
}

static void test_cmd_show(void **state)
{
	char good[4096];
	struct run r;
	cJSON *root;

	snprintf(good, sizeof(good), "%s/tests/policies/srt/readme-complete.json", srcdir());
	r = run("show", good, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	root = cJSON_Parse(r.out);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItem(root, "file")->valuestring, good);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "filesystem"),
					    "mandatoryDenyWrite"));
	cJSON_Delete(root);
	run_free(&r);

	/* No file anywhere: the built-in default is shown, and said to be. */
	setenv("BPFBOX_POLICY", "", 1);
	if (access(POLICY_SYSTEM_PATH, F_OK)) {
		r = run("show", NULL, NULL, NULL, NULL);
		assert_int_equal(r.status, 0);
		has(r.err, "built-in default");
		root = cJSON_Parse(r.out);
		assert_non_null(root);
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "file")));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
			cJSON_GetObjectItem(root, "network"), "allowedDomains")), 0);
		cJSON_Delete(root);
		run_free(&r);
	}
	unsetenv("BPFBOX_POLICY");
}

static void test_cmd_explain(void **state)
{
	char f[4096];
	struct run r;

	snprintf(f, sizeof(f), "%s/tests/policies/srt/ports-and-reasons.json", srcdir());
	r = run("explain", f, "github.com:22", NULL, NULL);
	assert_int_equal(r.status, 1);
	has(r.out, "connect github.com port 22: denied by deniedDomains:github.com:22");
	has(r.out, "reason: SSH pushes to GitHub are blocked");
	run_free(&r);

	r = run("explain", f, "GitHub.com", NULL, NULL);
	assert_int_equal(r.status, 0);
	has(r.out, "connect GitHub.com port 443: allowed by allowedDomains:github.com");
	has(r.out, "sandbox DNS: github.com is answered (allowedDomains:github.com)");
	has(r.out, "requires TLS server_name or HTTP Host github.com");
	run_free(&r);

	r = run("explain", f, "[::1]:8080", NULL, NULL);
	assert_int_equal(r.status, 0);
	has(r.out, "allowed by allowedDomains:[::1]:8080");
	run_free(&r);

	r = run("explain", f, "/home/x/file", NULL, NULL);
	assert_int_equal(r.status, 1);
	has(r.out, "read /home/x/file: denied by denyRead:/home");
	run_free(&r);

	r = run("explain", "--write", f, "/etc/passwd", NULL);
	assert_int_equal(r.status, 1);
	has(r.out, "write /etc/passwd: denied by default:write");
	run_free(&r);

	r = run("explain", "--write", f, "/tmp/build/.git/hooks/pre-commit", NULL);
	assert_int_equal(r.status, 1);
	has(r.out, "denied by mandatory:.git/hooks (always write-protected, at any depth)");
	run_free(&r);

	r = run("explain", "--write", f, "/tmp/build/out.o", NULL);
	assert_int_equal(r.status, 0);
	has(r.out, "allowed by allowWrite:");
	run_free(&r);

	r = run("explain", "--host", f, "bad host", NULL);
	assert_int_equal(r.status, 1);
	has(r.out, "denied by malformed");
	run_free(&r);

	r = run("explain", f, NULL, NULL, NULL);
	assert_int_equal(r.status, 2);
	run_free(&r);
}

/* With a parent proxy, explain says how a name is reached, never showing the credentials. */
static void test_cmd_explain_parent(void **state)
{
	char f[] = "/tmp/bpfbox-test-parent-XXXXXX";
	static const char body[] = "{\"network\": {\"allowedDomains\": [\"allowed.test\"], \"deniedDomains\": []},"
				   " \"filesystem\": {\"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []},"
				   " \"bpfbox\": {\"network\": {\"parentProxy\": \"http://u:hunter2@10.0.0.1:3128\"}}}";
	int fd = mkstemp(f);
	struct run r;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, body, sizeof(body) - 1), (ssize_t)(sizeof(body) - 1));
	close(fd);
	r = run("explain", f, "allowed.test", NULL, NULL);
	assert_int_equal(r.status, 0);
	has(r.out, "with a synthesized address of its own (198.18.0.0/15, 2001:2::/48)");
	has(r.out, "upstream is not asked");
	has(r.out, "parent proxy: reached through http://***@10.0.0.1:3128 by name (HTTP CONNECT");
	assert_null(strstr(r.out, "hunter2"));
	run_free(&r);
	r = run("explain", f, "denied.test", NULL, NULL);
	assert_int_equal(r.status, 1);
	assert_null(strstr(r.out, "parent proxy"));
	run_free(&r);
	r = run("show", f, NULL, NULL, NULL);
	assert_int_equal(r.status, 0);
	has(r.out, "http://***@10.0.0.1:3128");
	assert_null(strstr(r.out, "hunter2"));
	run_free(&r);
	unlink(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_pass),
		cmocka_unit_test(test_srt_files_pass),
		cmocka_unit_test(test_example_semantics),
		cmocka_unit_test(test_srt_file_semantics),
		cmocka_unit_test(test_invalid_files),
		cmocka_unit_test(test_cmd_check),
		cmocka_unit_test(test_cmd_show),
		cmocka_unit_test(test_cmd_explain),
		cmocka_unit_test(test_cmd_explain_parent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
