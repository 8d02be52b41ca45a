/* SPDX-License-Identifier: MIT */
/*
 * Live sandboxes, one small file each under /run/bpfbox/sandboxes/, so that
 * `bpfbox ps` can list them and `bpfbox gc` can find what a dead supervisor left.
 * Only root reads them (the directory 0700, each file 0600): they hold every
 * sandbox's command line. Other users get their own through the daemon.
 */
#ifndef BPFBOX_REGISTRY_H
#define BPFBOX_REGISTRY_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/errmsg.h"

#define REGISTRY_DIR "/run/bpfbox/sandboxes"

struct registry_entry {
	char id[64];
	pid_t supervisor;
	unsigned long long supervisor_start; /* /proc/PID/stat starttime, against pid reuse */
	pid_t child;
	uint64_t cgroup_id;
	char cgroup[PATH_MAX];
	char tmpdir[PATH_MAX];
	uint64_t tmpdir_dev; /* the directory the run created (sandbox_tmpdir.h), checked before removal */
	uint64_t tmpdir_ino; /* 0: not created yet */
	char policy[PATH_MAX];
	char command[1024];
	long long started; /* unix seconds */
	char ceiling[PATH_MAX]; /* a daemon's sandbox: the administrator's policy file over it ("" otherwise) */
	uid_t uid; /* who the command runs as: its owner for ps and stop through the daemon */
	gid_t gid; /* and its group: gc removes the TMPDIR with both */
};

/*
 * Makes the registry directory root's alone (0700), also when an older bpfbox
 * left it looser; with entries, every entry file 0600 as well.
 */
int registry_secure(bool entries);
int registry_write(const struct registry_entry *e);
int registry_read(const char *id, struct registry_entry *e);
void registry_remove(const char *id);
/* Is the supervisor that wrote e still running? */
bool registry_alive(const struct registry_entry *e);
unsigned long long process_start_time(pid_t pid);
/* Calls fn for every entry; stops when fn returns non-zero. */
int registry_each(int (*fn)(void *ctx, const struct registry_entry *e), void *ctx);
/* Stops sandbox id for uid (root: any) by signalling its supervisor; 0, or -errno with why in em. */
int sandbox_stop_for(const char *id, bool any_user, uid_t uid, struct errmsg *em);

#endif
