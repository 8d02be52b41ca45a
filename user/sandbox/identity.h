/* SPDX-License-Identifier: MIT */
/*
 * Who the sandboxed command runs as: the user sudo acted for (SUDO_UID,
 * SUDO_GID, SUDO_USER), the one --user names, or, with neither, uid 0
 * without capabilities.
 */
#ifndef BPFBOX_IDENTITY_H
#define BPFBOX_IDENTITY_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/errmsg.h"

enum identity_source {
	IDENTITY_ROOT, /* neither sudo variables nor --user */
	IDENTITY_SUDO,
	IDENTITY_OPTION, /* --user */
	IDENTITY_PEER, /* the daemon's caller, by SO_PEERCRED */
};

struct identity {
	enum identity_source source;
	bool switch_user; /* false: the command stays uid 0 (no capabilities either way) */
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups, as initgroups(3) would set them */
	int n_groups;
	char *name; /* from the password database */
	char *home;
	char *shell;
};

/*
 * Settles the identity from --user (NULL when not given) and the sudo
 * variables of env. Returns 0 or a negative errno with em saying why.
 */
int identity_resolve(const char *user_opt, char *const *env, struct identity *id, struct errmsg *em);
/*
 * The daemon's caller: uid and gid as the kernel reported them for the
 * connection (SO_PEERCRED), name, home, shell and groups from the password
 * database. Nothing the caller wrote is consulted.
 */
int identity_from_peer(uid_t uid, gid_t gid, struct identity *id, struct errmsg *em);
void identity_free(struct identity *id);
const char *identity_source_name(enum identity_source source);

/*
 * In the launcher's child, while it still holds CAP_SETUID and CAP_SETGID:
 * groups, gid, uid, then checks that the switch took. Allocates nothing.
 * Returns 0 or a negative errno (-EPERM when the check found a difference).
 */
int identity_switch(const struct identity *id);

/*
 * This thread's filesystem checks made as id (its groups, fsgid, fsuid), for
 * names a caller gave: what id cannot reach stays unresolved, so no message
 * shows what the caller could not have seen. Raw syscalls, this thread
 * only; the capabilities that bypass permissions go with fsuid 0 and come
 * back with it. identity_fs_leave undoes it (and frees saved).
 */
struct identity_fs {
	gid_t *groups; /* this thread's groups before */
	int n_groups;
	bool entered;
};
int identity_fs_enter(const struct identity *id, struct identity_fs *saved);
int identity_fs_leave(struct identity_fs *saved);

#endif
