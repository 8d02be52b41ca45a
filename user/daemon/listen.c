// SPDX-License-Identifier: MIT
/* The daemon's listening socket (bound, or passed by systemd) and its peers' credentials. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <linux/nsfs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "listen.h"

#define SD_LISTEN_FDS_START 3
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif
#define USERNS_MAX_DEPTH 33 /* the kernel nests at most 32 below the initial one */

/* The sd_listen_fds(3) protocol, without libsystemd: one stream socket at fd 3. */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int type = 0;
	socklen_t len = sizeof(type);

	if (!pid || !n || strtol(pid, NULL, 10) != (long)getpid() || strtol(n, NULL, 10) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (getsockopt(SD_LISTEN_FDS_START, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM)
		return -2;
	fcntl(SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
	fcntl(SD_LISTEN_FDS_START, F_SETFL, fcntl(SD_LISTEN_FDS_START, F_GETFL) | O_NONBLOCK);
	return SD_LISTEN_FDS_START;
}

/* A socket file nobody answers on is a dead daemon's: replace it. One that answers is refused. */
static int clear_stale(const struct sockaddr_un *sa, struct errmsg *em)
{
	struct stat st;
	int fd, err = 0;

	if (lstat(sa->sun_path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return errmsg_set(em, -EEXIST, "%s exists and is not a socket", sa->sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errmsg_set(em, -errno, "socket");
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		err = errmsg_set(em, -EADDRINUSE, "another bpfbox daemon is listening on %s", sa->sun_path);
	else if (unlink(sa->sun_path) && errno != ENOENT)
		err = errmsg_set(em, -errno, "removing the stale socket %s", sa->sun_path);
	close(fd);
	return err;
}

/*
 * The socket is removed, bound, chowned and chmodded by name: in a directory
 * another user can write (without the sticky bit), that user could put a
 * symlink in its place between two of those calls and have root chown and
 * chmod a file of its choice.
 */
static int check_socket_dir(const char *dir, struct errmsg *em)
{
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errmsg_set(em, -errno, "opening %s", dir);
	if (fstat(fd, &st))
		err = errmsg_set(em, -errno, "reading %s", dir);
	else if (st.st_uid != 0 || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
		err = errmsg_set(em, -EPERM, "--socket's directory %s is not root's alone (owner uid %u, mode %04o): "
				 "another user could swap the socket for a symlink while the daemon sets its mode; "
				 "use a directory only root writes, such as /run/bpfbox", dir, (unsigned)st.st_uid,
				 (unsigned)(st.st_mode & 07777));
	close(fd);
	return err;
}

int listener_open(const struct listen_opts *o, struct listener *l, struct errmsg *em)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	gid_t gid = 0;
	int err;

	memset(l, 0, sizeof(*l));
	l->fd = activated_socket();
	if (l->fd == -2)
		return errmsg_set(em, -EINVAL, "systemd passed a descriptor that is not a stream socket "
				  "(bpfbox.socket must use ListenStream=)");
	if (l->fd >= 0) {
		l->activated = true;
		return 0;
	}
	if (strlen(o->path) >= sizeof(sa.sun_path))
		return errmsg_set(em, -ENAMETOOLONG, "--socket %s: longer than %zu bytes", o->path,
				  sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, o->path);
	snprintf(l->path, sizeof(l->path), "%s", o->path);
	if (o->group) {
		struct group *g = getgrnam(o->group);

		if (!g)
			return errmsg_set(em, -ENOENT, "--socket-group %s: no such group", o->group);
		gid = g->gr_gid;
	}
	snprintf(dir, sizeof(dir), "%s", o->path);
	if (mkdir(dirname(dir), 0755) && errno != EEXIST)
		return errmsg_set(em, -errno, "creating the directory of %s", o->path);
	err = check_socket_dir(dir, em);
	if (err)
		return err;
	err = clear_stale(&sa, em);
	if (err)
		return err;
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0)
		return errmsg_set(em, -errno, "creating the socket");
	/* Bound under a umask that lets nobody in before the mode and group are set. */
	{
		mode_t old = umask(0777);

		err = bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
		umask(old);
	}
	if (err) {
		errmsg_set(em, err, "binding %s", o->path);
		goto fail;
	}
	if (chown(o->path, 0, gid) || chmod(o->path, o->mode)) {
		err = errmsg_set(em, -errno, "setting the owner and mode of %s", o->path);
		goto fail;
	}
	if (listen(l->fd, 128)) {
		err = errmsg_set(em, -errno, "listening on %s", o->path);
		goto fail;
	}
	return 0;
fail:
	unlink(o->path);
	close(l->fd);
	l->fd = -1;
	return err;
}

void listener_close(struct listener *l)
{
	if (l->fd < 0)
		return;
	close(l->fd);
	if (!l->activated && l->path[0])
		unlink(l->path);
	l->fd = -1;
}

int peer_credentials(int fd, struct peer *p)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len))
		return -errno;
	p->uid = p->owner = uc.uid;
	p->gid = uc.gid;
	p->pid = uc.pid;
	/* The peer's process itself, where the kernel can name it (6.5+): see peer_still_there. */
	len = sizeof(pidfd);
	p->pidfd = getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) ? -1 : pidfd;
	return 0;
}

void peer_release(struct peer *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

/*
 * What was read under /proc/PID was the peer's: with a pidfd, the process
 * is still there, so its pid was not reused in between. Without one (before
 * 6.5) the pid is SO_PEERCRED's, as peer_in_sandbox has always trusted it.
 */
static bool peer_still_there(const struct peer *p)
{
	return p->pidfd < 0 || !syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0);
}

int peer_owner(struct peer *p)
{
	char path[64];
	struct stat self, st;
	uid_t owner = p->uid;
	int fd, parent, err = 0;

	if (stat("/proc/self/ns/user", &self))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	/* Up to the namespace just below the daemon's: its owner is the real user. */
	for (int depth = 0;; depth++) {
		if (fstat(fd, &st)) {
			err = -errno;
			break;
		}
		if (st.st_dev == self.st_dev && st.st_ino == self.st_ino)
			break;
		if (depth == USERNS_MAX_DEPTH || ioctl(fd, NS_GET_OWNER_UID, &owner)) {
			err = -ELOOP;
			break;
		}
		parent = ioctl(fd, NS_GET_PARENT);
		if (parent < 0) {
			/* Not below the daemon's namespace: nothing the daemon can account. */
			err = -EPERM;
			break;
		}
		close(fd);
		fd = parent;
	}
	close(fd);
	if (!err && !peer_still_there(p))
		err = -ESRCH;
	if (!err)
		p->owner = owner;
	return err;
}

bool peer_in_sandbox(const struct peer *p)
{
	char path[64], line[4096];
	bool inside = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)p->pid);
	f = fopen(path, "re");
	/* Gone already, or unreadable: not a caller to serve. */
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::/bpfbox/", 11) || !strcmp(line, "0::/bpfbox\n"))
			inside = true;
	fclose(f);
	return inside || !peer_still_there(p);
}
