/* SPDX-License-Identifier: MIT */
/*
 * A run of `bpfbox exec` that the daemon starts for a caller (cmd_daemon.c),
 * and the non-root client that asks for it (exec_client.c). The worker runs
 * the same code as a root `bpfbox exec`, with what the kernel vouched for
 * (the caller's uid and gid), what the caller sent as content (argv, its
 * environment, its policy's text) and what it opened itself (stdio, the
 * working directory, the log file, --pass-fd descriptors).
 */
#ifndef BPFBOX_CLI_EXEC_CALLER_H
#define BPFBOX_CLI_EXEC_CALLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/errmsg.h"

struct quota_limits;

struct exec_caller {
	uid_t uid; /* SO_PEERCRED */
	gid_t gid;
	char *const *env; /* the caller's environment: the command's base, never bpfbox's */
	bool has_policy; /* false: the administrator's policy as it is */
	const char *policy_name; /* the caller's name for its file, for messages only */
	const char *policy_json;
	size_t policy_len;
	const char *ceiling_file; /* the administrator's policy, for messages */
	const char *ceiling_json; /* its text as the daemon holds it (NULL: the built-in default) */
	size_t ceiling_len;
	unsigned ceiling_seq; /* its number, and the daemon's number now: they differ once a reload went by */
	const _Atomic unsigned *ceiling_seq_now;
	const char *cwd; /* the caller's working directory (the daemon entered it by descriptor) */
	const char *admin_log_path; /* the administrator's log, or admin_log_fd */
	int admin_log_fd;
	int control_fd; /* the connection: control frames in, the exit status out */
	int control_fd_shown; /* --control-fd's number in the caller, for messages (-1: none) */
	bool tty; /* stdin is the caller's pty: a session of its own, with it as the terminal */
	const int *pass_sources; /* where each --pass-fd target comes from */
	const struct quota_limits *quota; /* the daemon's shares of the host-wide maps (bpfbox daemon --quota) */
};

/* `bpfbox exec ARGS` for a caller of the daemon: the exit status to report to it. */
int cmd_exec_for_caller(int argc, char **argv, const struct exec_caller *caller);

/* What the non-root client sends, parsed from the same options. */
struct exec_client_opts {
	const char *policy;
	bool strict, audit;
	const char *log_file;
	int log_fd;
	int log_format; /* -1 default */
	int log_level; /* -1 default */
	long long timeout_ms;
	long long kill_after_ms;
	const int *pass_fds;
	size_t n_pass_fds;
	int control_fd; /* --control-fd: passed to the daemon, read by its worker (-1: none) */
	char **argv;
};

/* A non-root `bpfbox exec`: through the daemon's socket; returns the run's exit status. */
int exec_client(const struct exec_client_opts *o);


#endif
