/* SPDX-License-Identifier: MIT */
/* The command's environment: inherited (or allow-listed), minus denied credentials, plus bpfbox's. */
#ifndef BPFBOX_SANDBOX_ENV_H
#define BPFBOX_SANDBOX_ENV_H

#include <stddef.h>

#include "policy/policy.h"

struct env_list {
	char **v; /* NULL-terminated, for execve */
	size_t n, cap;
};

struct env_extra {
	const char *sandbox_id;
	const char *tmpdir;
	unsigned proxy_port; /* the HTTP proxy; 0: no proxy variables */
	unsigned socks_port; /* the SOCKS proxy; 0: the HTTP proxy's port */
	const char *self_exe; /* bpfbox, for GIT_SSH_COMMAND's ProxyCommand */
	const char *user; /* the target user: USER, LOGNAME, HOME, SHELL from its passwd entry; NULL: inherited */
	const char *home;
	const char *shell;
	const char *ca_bundle; /* TLS termination's trust bundle: srt's CA variables point to it; NULL: none */
	const struct sandbox_cred *cred; /* masked variables' values for the command; NULL: masked ones are dropped */
};

struct sandbox_cred;

/* NAME of a "NAME=value" entry into name (cap bytes): its value, or NULL when it has none or NAME does not fit. */
const char *env_entry_name(const char *entry, char *name, size_t cap);
int env_build(const struct policy *p, char **environ_in, const struct env_extra *x, struct env_list *out);
const char *env_get(const struct env_list *e, const char *name);
void env_free(struct env_list *e);
/* Overwrites denied variables' values in this process's own initial environment block. */
void env_scrub_self(const struct policy *p, char **environ_in);

#endif
