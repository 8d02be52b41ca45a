// SPDX-License-Identifier: MIT
/*
 * Loading a policy: read the file, parse the JSON, hand each section to its
 * parser, and keep the result only if no error was found. Every problem is
 * recorded in the caller's diag list; nothing here prints or exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy_json.h"

static const char SRT_TOOL[] = "configures srt's own helper tools";
static const char OTHER_OS[] = "applies to macOS or Windows only";

static const struct key_spec top_keys[] = {
	{ "network", KEY_KNOWN, NULL },
	{ "filesystem", KEY_KNOWN, NULL },
	{ "credentials", KEY_KNOWN, NULL },
	{ "ignoreViolations", KEY_KNOWN, NULL },
	{ "allowNestedUserNamespaces", KEY_KNOWN, NULL },
	{ "enableWeakerNestedSandbox", KEY_KNOWN, NULL },
	{ "mandatoryDenySearchDepth", KEY_KNOWN, NULL },
	{ "git", KEY_KNOWN, NULL },
	{ "bpfbox", KEY_KNOWN, NULL },
	{ "ripgrep", KEY_IGNORED, SRT_TOOL },
	{ "seccomp", KEY_IGNORED, SRT_TOOL },
	{ "bwrapPath", KEY_IGNORED, SRT_TOOL },
	{ "socatPath", KEY_IGNORED, SRT_TOOL },
	{ "javaAgentJarPath", KEY_IGNORED, SRT_TOOL },
	{ "windows", KEY_IGNORED, OTHER_OS },
	{ "allowPty", KEY_IGNORED, OTHER_OS },
	{ "allowAppleEvents", KEY_IGNORED, OTHER_OS },
	{ "enableWeakerNetworkIsolation", KEY_IGNORED, OTHER_OS },
	{ "$schema", KEY_IGNORED, "a JSON Schema reference for editors" },
	{ NULL, KEY_KNOWN, NULL },
};

static char *dup_home(void)
{
	const char *h = getenv("HOME");
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (h && h[0] == '/')
		return strdup(h);
	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) || !res ||
	    !pw.pw_dir || pw.pw_dir[0] != '/')
		return NULL;
	return strdup(pw.pw_dir);
}

/* Unknown cwd or home is not fatal: only entries that need them fail. */
static int init_dirs(struct policy *p, const struct policy_load_opts *opts)
{
	const char *cwd = opts ? opts->cwd : NULL;
	const char *home = opts ? opts->home : NULL;

	p->cwd = cwd ? strdup(cwd) : getcwd(NULL, 0);
	if (cwd && !p->cwd)
		return -ENOMEM;
	p->home = home ? strdup(home) : dup_home();
	if (home && !p->home)
		return -ENOMEM;
	p->guarded = opts && opts->guard;
	p->guard_uid = opts ? opts->guard_uid : 0;
	return 0;
}

const char *policy_discover(const char *cli_path)
{
	const char *env = getenv("BPFBOX_POLICY");

	if (cli_path && *cli_path)
		return cli_path;
	if (env && *env)
		return env;
	if (!access(POLICY_SYSTEM_PATH, F_OK))
		return POLICY_SYSTEM_PATH;
	return NULL;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_fs_rules; i++) {
		free(p->fs_rules[i].path);
		free(p->fs_rules[i].source);
		free(p->fs_rules[i].name);
		free(p->fs_rules[i].jpath);
	}
	free(p->fs_rules);
	free(p->ceiling_allowed_domains);
	free(p->ceiling_file);
	free(p->allowed_domains);
	strv_free(p->allowed_sources, p->n_allowed_domains);
	strv_free(p->allowed_rule_names, p->n_allowed_domains);
	free(p->denied_domains);
	strv_free(p->denied_sources, p->n_denied_domains);
	strv_free(p->denied_rule_names, p->n_denied_domains);
	if (p->denied_reasons)
		strv_free(p->denied_reasons, p->n_denied_domains);
	free(p->denied_addrs);
	strv_free(p->allow_unix_sockets, p->n_allow_unix_sockets);
	strv_free(p->env_deny, p->n_env_deny);
	policy_credentials_free(&p->cred);
	strv_free(p->git_safe_dirs, p->n_git_safe_dirs);
	strv_free(p->env_allow, p->n_env_allow);
	strv_free(p->device_allow, p->n_device_allow);
	free(p->log_file);
	policy_parent_free(&p->parent);
	policy_tls_free(&p->tls);
	policy_mitm_free(&p->mitm);
	strv_free(p->strip_response_headers, p->n_strip_response_headers);
	for (size_t i = 0; i < p->n_ignore; i++) {
		free(p->ignore[i].command);
		strv_free(p->ignore[i].lines, p->ignore[i].n_lines);
	}
	free(p->ignore);
	strv_free(p->grant_cuts, p->n_grant_cuts);
	free(p->file);
	free(p->cwd);
	free(p->home);
	free(p);
}

static struct policy *policy_new(const char *name, const struct policy_load_opts *opts)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if ((name && !(p->file = strdup(name))) || init_dirs(p, opts)) {
		policy_free(p);
		return NULL;
	}
	return p;
}

int policy_default(const struct policy_load_opts *opts, struct policy **out)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct pctx c = { .diags = &d };
	static const char tag[] = "default";

	*out = NULL;
	c.p = policy_new(NULL, opts);
	if (!c.p)
		return -ENOMEM;
	policy_sha256_hex(tag, strlen(tag), c.p->digest);
	if (policy_add_implicit_rules(&c) || !(c.p->denied_reasons = calloc(1, sizeof(char *)))) {
		policy_free(c.p);
		diag_list_free(&d);
		return -ENOMEM;
	}
	diag_list_free(&d);
	*out = c.p;
	return 0;
}

/* cJSON would silently cut a string at an escaped NUL; refuse it instead. */
static bool has_escaped_nul(const char *s, size_t len)
{
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		if (!in_str) {
			in_str = s[i] == '"';
			continue;
		}
		if (s[i] == '"')
			in_str = false;
		else if (s[i] == '\\' && i + 1 < len) {
			if (s[i + 1] == 'u' && i + 5 < len && !strncmp(s + i + 2, "0000", 4))
				return true;
			i++;
		}
	}
	return false;
}

static void parse_error_pos(struct pctx *c, const char *buf, const char *at)
{
	unsigned line = 1, col = 1;

	for (const char *q = buf; q < at && *q; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	perr(c, "", "invalid JSON at line %u, column %u", line, col);
}

/* The sections, in the order their problems are reported. */
static const struct json_member top_sections[] = {
	{ "network", policy_parse_network, true },
	{ "filesystem", policy_parse_filesystem, true },
	{ "credentials", policy_parse_credentials, false },
	{ "ignoreViolations", policy_parse_ignore, false },
	{ "git", policy_parse_git, false },
	{ "bpfbox", policy_parse_bpfbox, false },
	{ NULL, NULL, false },
};

static void parse_top(struct pctx *c, const cJSON *root)
{
	bool b;
	long long depth;

	check_keys(c, root, "", top_keys);
	parse_members(c, root, "", top_sections);
	jget_bool(c, root, "allowNestedUserNamespaces", "", &c->p->allow_nested_userns);
	if (jget_bool(c, root, "enableWeakerNestedSandbox", "", &b) == 1)
		pdebug(c, "enableWeakerNestedSandbox", "ignored: bpfbox needs no "
		       "weaker mode to run nested");
	if (jget_int(c, root, "mandatoryDenySearchDepth", "", 1, 10, &depth) == 1)
		pdebug(c, "mandatoryDenySearchDepth", "ignored: bpfbox matches "
		       "mandatory names at any depth");
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", s[i]))
			return false;
	return true;
}

int policy_load_buffer(const char *name, const char *json, size_t len,
		       const struct policy_load_opts *opts, struct policy **out,
		       struct diag_list *diags)
{
	struct pctx c = { .diags = diags, .strict = opts && opts->strict };
	size_t errors = diag_count(diags, DIAG_ERROR);
	const char *end = NULL;
	cJSON *root = NULL;
	char *copy = NULL;
	int ret = -EINVAL;

	*out = NULL;
	c.p = policy_new(name, opts);
	if (!c.p) {
		diags->oom = true;
		return -ENOMEM;
	}
	policy_sha256_hex(json, len, c.p->digest);
	if (blank(json, len)) {
		perr(&c, "", "the policy file is empty");
		goto out;
	}
	if (memchr(json, '\0', len)) {
		perr(&c, "", "the policy file contains a NUL byte");
		goto out;
	}
	if (has_escaped_nul(json, len)) {
		perr(&c, "", "a string contains \\u0000, which no path or name may hold");
		goto out;
	}
	copy = malloc(len + 1);
	if (!pcheck(&c, copy))
		goto out;
	memcpy(copy, json, len);
	copy[len] = '\0';
	/* len + 1 and require_null_terminated: trailing garbage is an error. */
	root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, true);
	if (!root) {
		parse_error_pos(&c, copy, end ? end : copy + len);
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		perr(&c, "", "expected a JSON object at the top level, got %s",
		     json_type_name(root));
		goto out;
	}
	parse_top(&c, root);
	if (!c.p->denied_reasons)
		c.p->denied_reasons = pcheck(&c, calloc(c.p->n_denied_domains + 1,
							sizeof(char *)));
	if (!c.oom && diag_count(diags, DIAG_ERROR) == errors) {
		*out = c.p;
		c.p = NULL;
		ret = 0;
	}
out:
	if (c.oom) {
		diags->oom = true;
		ret = -ENOMEM;
	}
	cJSON_Delete(root);
	free(copy);
	policy_free(c.p);
	return ret;
}

int policy_read_fd(int fd, char **buf, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap > POLICY_MAX_BYTES) {
				free(b);
				return -EFBIG;
			}
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(b);
			return e;
		}
		if (r == 0)
			break;
		n += r;
	}
	if (n > POLICY_MAX_BYTES) {
		free(b);
		return -EFBIG;
	}
	*buf = b;
	*len = n;
	return 0;
}

int policy_read_file(const char *file, char **buf, size_t *len, struct diag_list *diags)
{
	struct stat st;
	int fd, ret;

	*buf = NULL;
	*len = 0;
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		diag_add(diags, DIAG_ERROR, NULL, "cannot open the policy: %s", strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		diag_add(diags, DIAG_ERROR, NULL, "cannot stat the policy: %s", strerror(-ret));
	} else if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		diag_add(diags, DIAG_ERROR, NULL, "is a directory, not a policy file");
	} else {
		ret = policy_read_fd(fd, buf, len);
		if (ret == -EFBIG)
			diag_add(diags, DIAG_ERROR, NULL, "the policy file is larger than %d bytes",
				 POLICY_MAX_BYTES);
		else if (ret)
			diag_add(diags, DIAG_ERROR, NULL, "cannot read the policy: %s", strerror(-ret));
	}
	close(fd);
	return ret;
}

int policy_load_file(const char *file, const struct policy_load_opts *opts,
		     struct policy **out, struct diag_list *diags)
{
	char *buf = NULL;
	size_t len = 0;
	int ret;

	*out = NULL;
	ret = policy_read_file(file, &buf, &len, diags);
	if (!ret)
		ret = policy_load_buffer(file, buf, len, opts, out, diags);
	free(buf);
	return ret;
}
