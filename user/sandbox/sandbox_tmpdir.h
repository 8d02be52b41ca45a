/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's TMPDIR: made by root for the command's user, and removed
 * without following anything that user can redirect. Removal walks
 * descriptors only (openat2 with RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV,
 * unlinkat), checks that the top is the very directory the run created, and
 * runs in a child with the owner's credentials: even a surprise of the kernel
 * can then only remove what the owner could.
 */
#ifndef BPFBOX_SANDBOX_TMPDIR_H
#define BPFBOX_SANDBOX_TMPDIR_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/errmsg.h"

#define SANDBOX_TMP_PARENT "/tmp"
#define SANDBOX_TMP_PREFIX "bpfbox-"
/* Levels below the TMPDIR that removal descends; deeper entries are left (and reported). */
#define SANDBOX_TMP_MAX_DEPTH 128

/* Which directory a run created: kept in the registry, so that gc after a crash checks it too. */
struct tmpdir_id {
	uint64_t dev;
	uint64_t ino; /* 0: not recorded; nothing is removed */
	uid_t uid; /* its owner, whose credentials remove it */
	gid_t gid;
};

/* Creates path (SANDBOX_TMP_PARENT/SANDBOX_TMP_PREFIX...) 0700 for uid:gid and records its identity. */
int sandbox_tmpdir_create(const char *path, uid_t uid, gid_t gid, struct tmpdir_id *out, struct errmsg *em);
/*
 * Removes path and everything in it, if it is still the directory id names;
 * 0 also when it is already gone. Otherwise nothing that is not the
 * owner's own is touched and em says what was left and why.
 */
int sandbox_tmpdir_remove(const char *path, const struct tmpdir_id *id, struct errmsg *em);
/*
 * rm -rf of a tree only root can write (bpfbox's pins), in this process, by
 * descriptors: never following a symlink, never entering a mount.
 */
int remove_tree(const char *path);

#endif
