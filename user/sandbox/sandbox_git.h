/* SPDX-License-Identifier: MIT */
/*
 * The .git directories and files a sandbox made (the kernel's BB_EV_GIT
 * records), and their check when it ends: executing config keys and hooks
 * logged, and under "strict" removed (docs/git.md).
 */
#ifndef BPFBOX_SANDBOX_GIT_H
#define BPFBOX_SANDBOX_GIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfbox.h"
#include "log/log.h"
#include "sandbox/identity.h"

struct sandbox_git_item {
	char *path;
	uint64_t dev; /* user-space encoding, as stat reports it */
	uint64_t ino;
	bool dir; /* a .git directory; else a .git file pointing at one */
};

struct sandbox_git {
	struct sandbox_git_item *items; /* BB_MAX_NEW_GIT, allocated with the first */
	size_t n;
	unsigned long long unlisted; /* records past the list (or out of memory): not checked */
};

struct sandbox_git_result {
	unsigned repos; /* checked */
	unsigned findings; /* keys, hooks and files reported */
	unsigned unchecked; /* moved, removed or not listed: their config was not read */
};

/* Keeps one BB_EV_GIT record. */
void sandbox_git_note(struct sandbox_git *g, const struct bb_event *ev);
/*
 * Checks every repository noted, in a child with id's credentials, and logs
 * what it finds. Returns 0 or a negative errno (the check could not run).
 */
int sandbox_git_check(const struct sandbox_git *g, const struct identity *id, bool strict, struct log *log,
		      struct sandbox_git_result *res);
void sandbox_git_free(struct sandbox_git *g);

#endif
