/* SPDX-License-Identifier: MIT */
/*
 * What in a git directory would make git run something later: its config
 * files' executing keys (git_config.h) and hooks/ entries git would run.
 * Checked by descriptors, nothing followed: the directory's owner made it.
 */
#ifndef BPFBOX_GIT_REPO_H
#define BPFBOX_GIT_REPO_H

#include <stdbool.h>
#include <stddef.h>

enum git_finding_kind {
	GIT_FINDING_KEY = 1, /* an executing key in a config file */
	GIT_FINDING_HOOK, /* an entry of hooks/ git would run */
	GIT_FINDING_FILE, /* a config file or hooks/ git reads but this check could not (a link, unparsable) */
};

struct git_finding {
	enum git_finding_kind kind;
	const char *file; /* relative to the git directory: "config", "hooks/pre-commit" */
	const char *key; /* section[.subsection].key; NULL unless GIT_FINDING_KEY */
	const char *value; /* NULL for a bare key */
	const char *reason; /* why git would run something, or why it was not read */
	const char *action; /* "reported", "removed", "set aside", "disabled", or what failed */
};

typedef void (*git_finding_fn)(void *ctx, const struct git_finding *f);

/*
 * Checks the git directory open at gitdir_fd: config, config.worktree and
 * hooks/. With strict, executing keys leave the config (the original kept
 * beside it as NAME.bpfbox-removed), an unreadable config is set aside and
 * hooks are renamed NAME.bpfbox-disabled. Returns the findings' count or a
 * negative errno.
 */
int git_repo_check(int gitdir_fd, bool strict, git_finding_fn fn, void *ctx);

/*
 * The target of a .git file ("gitdir: PATH"), read from fd: 0 with out
 * holding PATH (relative to the file's directory unless absolute), or a
 * negative errno (-EINVAL: not a .git file git reads).
 */
int git_file_target(int fd, char *out, size_t len);

#endif
