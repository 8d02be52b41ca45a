/* SPDX-License-Identifier: MIT */
/*
 * The daemon's listening socket and what the kernel says of each peer: the
 * socket systemd passed (socket activation) or one bound here with the
 * administrator's mode and group; the caller's uid, gid and pid
 * (SO_PEERCRED), the user it counts under (the owner of its user
 * namespace) and whether it is itself inside a bpfbox sandbox.
 */
#ifndef BPFBOX_DAEMON_LISTEN_H
#define BPFBOX_DAEMON_LISTEN_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/errmsg.h"

struct listen_opts {
	const char *path;
	mode_t mode; /* who may connect: the socket's mode ... */
	const char *group; /* ... and group (NULL: root's) */
};

struct listener {
	int fd;
	bool activated; /* passed by systemd: not ours to unlink */
	char path[108];
};

/* fd 3 when LISTEN_PID/LISTEN_FDS name this process, else a socket bound at o->path. */
int listener_open(const struct listen_opts *o, struct listener *l, struct errmsg *em);
void listener_close(struct listener *l);

struct peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	uid_t owner; /* who answers for it: uid, or its user namespace's owner (peer_owner) */
	int pidfd; /* SO_PEERPIDFD (6.5+), else -1; peer_release closes it */
};

/* SO_PEERCRED (owner = uid until peer_owner) and, where the kernel has it, SO_PEERPIDFD. */
int peer_credentials(int fd, struct peer *p);
void peer_release(struct peer *p);
/*
 * Sets p->owner: for a peer in a user namespace below the daemon's, the
 * owner of the outermost one (the user who created it, whose subordinate
 * uids it maps), however deep the peer is; else its own uid. -ESRCH: the
 * process is gone (or, with a pidfd, its pid could have been reused).
 */
int peer_owner(struct peer *p);
/*
 * Is the peer's process in a bpfbox sandbox's cgroup? A request from inside
 * one would start a sandbox bounded by the administrator's policy alone,
 * outside the one it is in: such requests are refused.
 */
bool peer_in_sandbox(const struct peer *p);

#endif
