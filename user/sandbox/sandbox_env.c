// SPDX-License-Identifier: MIT
/* Building the command's environment. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls/tls_bundle.h"

#include "sandbox_cred.h"
#include "sandbox_env.h"

static int env_push(struct env_list *e, char *entry)
{
	if (!entry)
		return -ENOMEM;
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;
		char **v = realloc(e->v, cap * sizeof(*v));

		if (!v) {
			free(entry);
			return -ENOMEM;
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = entry;
	e->v[e->n] = NULL;
	return 0;
}

static void env_unset(struct env_list *e, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < e->n; i++) {
		if (strncmp(e->v[i], name, len) || e->v[i][len] != '=')
			continue;
		free(e->v[i]);
		memmove(&e->v[i], &e->v[i + 1], (e->n - i) * sizeof(char *));
		e->n--;
		i--;
	}
}

static int env_set(struct env_list *e, const char *name, const char *value)
{
	char *entry;

	env_unset(e, name);
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return -ENOMEM;
	return env_push(e, entry);
}

const char *env_get(const struct env_list *e, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, len) && e->v[i][len] == '=')
			return e->v[i] + len + 1;
	return NULL;
}

/* What srt puts in front of every proxy-aware client. */
static int set_proxy_vars(struct env_list *e, const struct env_extra *x)
{
	static const char *const url_vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
						"https_proxy", "GRPC_PROXY", "grpc_proxy",
						"FTP_PROXY", "ftp_proxy", "DOCKER_HTTP_PROXY",
						"DOCKER_HTTPS_PROXY", "CLOUDSDK_PROXY_TYPE" };
	/* srt's list: loopback and private ranges go direct (and stay refused in the kernel). */
	static const char no_proxy[] =
		"localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16";
	char url[64], socks[64], hostport[32], ssh[4200];
	int err = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", x->proxy_port);
	snprintf(socks, sizeof(socks), "socks5h://127.0.0.1:%u", x->socks_port ? x->socks_port : x->proxy_port);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", x->proxy_port);
	for (size_t i = 0; i < sizeof(url_vars) / sizeof(url_vars[0]) - 1 && !err; i++)
		err = env_set(e, url_vars[i], url);
	if (!err)
		err = env_set(e, "CLOUDSDK_PROXY_TYPE", "http");
	if (!err)
		err = env_set(e, "CLOUDSDK_PROXY_ADDRESS", "127.0.0.1");
	if (!err) {
		char port[16];

		snprintf(port, sizeof(port), "%u", x->proxy_port);
		err = env_set(e, "CLOUDSDK_PROXY_PORT", port);
	}
	if (!err)
		err = env_set(e, "ALL_PROXY", socks);
	if (!err)
		err = env_set(e, "all_proxy", socks);
	if (!err)
		err = env_set(e, "RSYNC_PROXY", hostport);
	if (!err)
		err = env_set(e, "BPFBOX_PROXY", hostport);
	if (!err)
		err = env_set(e, "NO_PROXY", no_proxy);
	if (!err)
		err = env_set(e, "no_proxy", no_proxy);
	if (!err)
		err = env_set(e, "NODE_USE_ENV_PROXY", "1");
	if (!err && x->self_exe) {
		snprintf(ssh, sizeof(ssh), "ssh -o ProxyCommand='%s connect %%h %%p'", x->self_exe);
		err = env_set(e, "GIT_SSH_COMMAND", ssh);
	}
	return err;
}

/* git.safeDirectories: srt passes them as safe.directory through GIT_CONFIG_*. */
static int set_git_safe_dirs(struct env_list *e, const struct policy *p)
{
	char key[64], count[16];
	int err = 0;

	if (!p->n_git_safe_dirs)
		return 0;
	for (size_t i = 0; i < p->n_git_safe_dirs && !err; i++) {
		snprintf(key, sizeof(key), "GIT_CONFIG_KEY_%zu", i);
		err = env_set(e, key, "safe.directory");
		snprintf(key, sizeof(key), "GIT_CONFIG_VALUE_%zu", i);
		if (!err)
			err = env_set(e, key, p->git_safe_dirs[i]);
	}
	snprintf(count, sizeof(count), "%zu", p->n_git_safe_dirs);
	return err ? err : env_set(e, "GIT_CONFIG_COUNT", count);
}

/*
 * A masked variable: its sentinel (or srt's fake token, or the value with
 * its captures masked); nothing when the rule removes it or no table was
 * built (never the real value by default); the value itself only where
 * onExtractNoMatch "warn" let it pass, as srt does.
 */
static int masked_entry(struct env_list *out, const struct sandbox_cred *sc, const char *name, const char *entry)
{
	const char *fake;

	if (!sc || sandbox_cred_removed(sc, name))
		return 0;
	fake = sandbox_cred_env_for(sc, name);
	return env_push(out, strdup(fake ? fake : entry));
}

int env_build(const struct policy *p, char **environ_in, const struct env_extra *x, struct env_list *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (char **v = environ_in; v && *v && !err; v++) {
		const struct policy_cred_rule *cr;
		char name[256];

		if (!env_entry_name(*v, name, sizeof(name)))
			continue;
		if (policy_env_denied(p, name) || !policy_env_allowed(p, name))
			continue;
		cr = policy_cred_find(p, name);
		if (cr && cr->mode == POLICY_CRED_MASK)
			err = masked_entry(out, x->cred, name, *v);
		else
			err = env_push(out, strdup(*v));
	}
	/* Not what sudo left (HOME=/root under some configurations): the passwd entry's. */
	if (!err && x->user)
		err = env_set(out, "USER", x->user);
	if (!err && x->user)
		err = env_set(out, "LOGNAME", x->user);
	if (!err && x->home)
		err = env_set(out, "HOME", x->home);
	if (!err && x->shell)
		err = env_set(out, "SHELL", x->shell);
	if (!err)
		err = env_set(out, "TMPDIR", x->tmpdir);
	if (!err)
		err = env_set(out, "BPFBOX_SANDBOX_ID", x->sandbox_id);
	if (!err)
		err = env_set(out, "SANDBOX_RUNTIME", "1");
	if (!err && x->proxy_port)
		err = set_proxy_vars(out, x);
	/* The variables srt sets, over whatever the caller had: the sandbox's CA must be trusted. */
	for (size_t i = 0; !err && x->ca_bundle && i < TLS_BUNDLE_NENV; i++)
		err = env_set(out, tls_bundle_env[i], x->ca_bundle);
	if (!err)
		err = set_git_safe_dirs(out, p);
	if (!err && !out->v)
		err = env_push(out, strdup("BPFBOX=1"));
	if (err)
		env_free(out);
	return err;
}

void env_free(struct env_list *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

const char *env_entry_name(const char *entry, char *name, size_t cap)
{
	const char *eq = strchr(entry, '=');
	size_t len;

	if (!eq || (len = (size_t)(eq - entry)) >= cap)
		return NULL;
	memcpy(name, entry, len);
	name[len] = 0;
	return eq + 1;
}

void env_scrub_self(const struct policy *p, char **environ_in)
{
	for (char **v = environ_in; v && *v; v++) {
		const struct policy_cred_rule *cr;
		char name[256];
		const char *value = env_entry_name(*v, name, sizeof(name));

		if (!value)
			continue;
		cr = policy_cred_find(p, name);
		/* /proc/PID/environ shows this block: the secret must not stay in it. */
		if (policy_env_denied(p, name) || (cr && cr->mode == POLICY_CRED_MASK))
			memset(*v + (value - *v), 'x', strlen(value));
	}
}
