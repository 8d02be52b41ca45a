/* SPDX-License-Identifier: MIT */
/* The per-invocation cgroup v2 of a sandbox, under bpfbox's root-owned parent. */
#ifndef BPFBOX_CGROUP_H
#define BPFBOX_CGROUP_H

#include <stdint.h>
#include <limits.h>

#include "lib/errmsg.h"

#define BPFBOX_CGROUP_PARENT "bpfbox"

struct sandbox_cgroup {
	char path[PATH_MAX];
	int dir_fd; /* O_PATH|O_DIRECTORY of the cgroup, for CLONE_INTO_CGROUP and attach */
	uint64_t id;
};

struct cgroup_limits {
	long long pids; /* 0 = unset */
	long long memory_bytes;
	int cpu_percent;
};

/* Finds the cgroup v2 mount point; negative errno when there is none. */
int cgroup2_mount_point(char *out, size_t len, struct errmsg *em);
/* Creates <mount>/bpfbox (root-owned, 0755) if missing; *parent receives its path. */
int cgroup_parent_ensure(char *parent, size_t len, struct errmsg *em);
int cgroup_id_of(const char *path, uint64_t *id);
int cgroup_create(const char *name, struct sandbox_cgroup *cg, struct errmsg *em);
int cgroup_apply_limits(const struct sandbox_cgroup *cg, const struct cgroup_limits *lim, struct errmsg *em);
/* Kills every task in the cgroup (cgroup.kill) and waits up to timeout_ms for it to empty. */
int cgroup_kill_all(const char *path, int timeout_ms);
int cgroup_signal_all(const char *path, int sig);
int cgroup_populated(const char *path);
/* The value of KEY in a flat keyed file such as pids.events; 0 when absent. */
long long cgroup_event_count(const char *path, const char *file, const char *key);
/* Kills what is left, removes the directory and closes dir_fd. */
int cgroup_destroy(struct sandbox_cgroup *cg);

#endif
