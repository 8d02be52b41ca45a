/* SPDX-License-Identifier: MIT */
/*
 * A running sandbox's policy changed from outside (issue 32): the lines of
 * exec --control-fd and the requests of its control socket (bpfbox update,
 * the daemon relaying a caller's update or its ceiling reload), each loaded
 * as the policy was at start (the caller's credentials for its paths, the
 * administrator's policy as the ceiling over it) and switched to with
 * sandbox_run_update.
 */
#ifndef BPFBOX_CLI_EXEC_UPDATE_H
#define BPFBOX_CLI_EXEC_UPDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "exec_caller.h"
#include "exec_live.h"
#include "policy/policy.h"
#include "sandbox/run.h"

struct live_policy {
	struct live_control ctl; /* the caller's document in force, and --control-fd's lines */
	struct sandbox_run *run;
	const struct exec_caller *caller; /* the daemon's caller, or NULL for root's run */
	struct policy_load_opts lo; /* as at start: the caller's home and launch directory, --strict */
	bool bound; /* under a ceiling: the daemon's, or exec --ceiling */
	char *ceiling; /* the administrator's policy text in force (NULL: the built-in default) */
	size_t ceiling_len;
	const char *ceiling_name; /* for messages */
	bool doc_is_ceiling; /* the caller named no policy: the ceiling's document is its */
	int listen_fd; /* the control socket (-1: none) */
};

/*
 * After the run's id is known and its policy loaded: the document in force
 * (policy_file's, the caller's text, the ceiling's, or {}), the ceiling's
 * text, --control-fd's reader and the control socket, both handed to the
 * run's live descriptors. 0, or -errno with em (the command is not run).
 */
int live_policy_start(struct live_policy *lp, struct sandbox_run *run, const struct exec_caller *caller,
		      const char *policy_file, const char *ceiling_file, int control_fd, bool strict,
		      struct errmsg *em);
/* supervise.h's live callback for both descriptors: 1 when fd is done with. */
int live_policy_read(void *ctx, int fd);
/* The control socket removed, everything freed; safe on a zeroed or failed start. */
void live_policy_stop(struct live_policy *lp);

#endif
