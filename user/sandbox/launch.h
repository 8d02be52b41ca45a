/* SPDX-License-Identifier: MIT */
/*
 * Starting the command: a child cloned straight into the sandbox cgroup
 * (CLONE_INTO_CGROUP), which first resolves the rule paths in the kernel,
 * then waits for the launcher's go, drops every privilege and execs.
 */
#ifndef BPFBOX_LAUNCH_H
#define BPFBOX_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf_state.h"
#include "identity.h"
#include "lib/errmsg.h"
#include "sandbox_maps.h"

/* The child's step that failed. */
enum launch_stage {
	LAUNCH_STAGE_PRIVILEGES = 1, /* no-new-privileges, securebits, capabilities */
	LAUNCH_STAGE_USER, /* switching to the target user and checking it */
	LAUNCH_STAGE_CWD, /* the user cannot enter the working directory */
	LAUNCH_STAGE_EXEC,
};

#define LAUNCH_MAX_KEEP_FDS 16

struct launch_spec {
	/*
	 * PATH for argv[0] without a slash, searched by the child once it is the
	 * command's user: root never looks into a directory the caller names.
	 */
	const char *search_path;
	char *const *argv;
	char *const *envp;
	const struct bpf_state *bpf;
	uint64_t sandbox_id;
	int cgroup_fd;
	const char *const *resolve_paths;
	size_t n_resolve;
	const bool *resolve_no_links; /* per path: follow no symlink (sandbox_resolve_paths); may be NULL */
	const int *keep_fds; /* extra descriptors passed on (--pass-fd), as the command sees them */
	size_t n_keep_fds;
	const int *keep_fd_sources; /* NULL: keep_fds as they are; else moved from these (the daemon's) */
	bool new_session_tty; /* a session of its own with stdin as its controlling terminal */
	const struct identity *identity; /* who the command runs as */
	const char *cwd; /* entered again as that user; NULL: left as it is */
};

struct launch {
	pid_t pid;
	int pidfd;
	int go_fd; /* write end: the launcher's go */
	int status_fd; /* read end: resolution done, then exec failure or EOF on success */
	struct resolve_result *results; /* shared with the child, n_resolve entries */
	size_t n_results;
	int exec_errno; /* after launch_go failed: errno of the failed exec or setup step */
	bool setup_failed; /* privileges could not be dropped (never exec'd) */
	enum launch_stage stage; /* which step failed */
};

/* Clones the child; it resolves paths and waits. */
int launch_start(const struct launch_spec *spec, struct launch *out, struct errmsg *em);
/* Waits until the child has resolved the rule paths (results are then valid). */
int launch_wait_resolved(struct launch *l, struct errmsg *em);
/* Lets the child exec; returns 0 once exec succeeded, else -errno (see exec_errno, setup_failed). */
int launch_go(struct launch *l);
/* Tells the child to give up without running anything (it exits 125). */
void launch_abort(struct launch *l);
void launch_release(struct launch *l);

/* PATH search as execvp would do it (into a buffer: the child allocates nothing); NULL PATH: the default. */
int launch_find_program(const char *name, const char *path_env, char *out, size_t len);

#endif
