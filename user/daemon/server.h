/* SPDX-License-Identifier: MIT */
/*
 * The daemon's server: one root process listens on a Unix socket; each
 * connection sends one request (exec, ps or stop). Identity comes from
 * SO_PEERCRED alone. An exec is run by a worker process forked for it, which
 * calls the run the command line gave (a root `bpfbox exec` for that caller),
 * watching the connection: a caller that goes away takes its sandbox with
 * it. Workers outlive the daemon, so a daemon killed or restarted leaves
 * every running sandbox confined.
 */
#ifndef BPFBOX_DAEMON_SERVER_H
#define BPFBOX_DAEMON_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/errmsg.h"
#include "listen.h"
#include "wire.h"

#define DAEMON_MAX_WORKERS 1024

struct daemon_config {
	const char *socket;
	mode_t socket_mode;
	const char *socket_group;
	const char *log_file; /* the administrator's log, or log_fd */
	int log_fd;
	const char *config; /* the administrator's policy, for the start message */
	const char *quota; /* the shares of the host-wide maps, for the start message */
	long max_per_user; /* concurrent sandboxes per user; 0: no limit */
	long long stop_grace_ms;
	int setup_status; /* the exit status a caller gets when its command was not run */
};

/* What a worker hands the run: the request as the caller sent it, the rest as the kernel says. */
struct daemon_run {
	int conn; /* the connection: control frames in; the server sends the exit frame */
	const struct peer *peer;
	const struct wire_exec *exec;
	const int *fds; /* the descriptors received, which exec's indexes name */
	const char *cwd; /* the working directory the worker entered, as the kernel names it */
	const char *ceiling; /* the administrator's policy in force, as the daemon read it (NULL: built-in default) */
	size_t ceiling_len;
	unsigned ceiling_seq; /* its number */
	const _Atomic unsigned *ceiling_seq_now; /* the number of the daemon's ceiling now (shared memory) */
};

struct daemon_handlers {
	/* In the worker, stdio already the caller's: the run's exit status, or -errno if it could not start. */
	int (*run)(void *ctx, const struct daemon_run *r);
	/* `bpfbox ps` for a caller: every sandbox, or uid's only. */
	int (*ps)(FILE *out, bool json, bool all_users, uid_t uid);
	void *ctx;
};

/*
 * Serves until SIGTERM or SIGINT and the stop's grace. 0 after a stop,
 * -errno when the server could not start (em says why, when there is a
 * why) or its loop failed.
 */
int daemon_serve(const struct daemon_config *cfg, const struct daemon_handlers *h, struct errmsg *em);

#endif
