// SPDX-License-Identifier: MIT
/* The sandbox's TMPDIR: made for the command's user, removed by descriptors as that user. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox_tmpdir.h"

/* A removal still running after this long is killed: a huge tree, or a file system that hangs. */
#define REMOVE_DEADLINE_MS 60000
/* Passes over one directory while its owner may still be adding entries. */
#define REMOVE_PASSES 16

/* A directory entry of dir_fd, opened without following a symlink or crossing a mount. */
static int open_below(int dir_fd, const char *name, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH,
	};
	struct stat parent, st;
	int fd = (int)syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));

	if (fd >= 0 || errno != ENOSYS)
		return fd < 0 ? -errno : fd;
	/* Without openat2 (a seccomp filter): O_NOFOLLOW on a single name, and no other device. */
	fd = openat(dir_fd, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(dir_fd, &parent) || fstat(fd, &st) || st.st_dev != parent.st_dev) {
		close(fd);
		return -EXDEV;
	}
	return fd;
}

static int empty_dir(int dir_fd, int depth);

/* Removes one entry of dir_fd: a file or a symlink as such, a directory after its contents. */
static int remove_entry(int dir_fd, const char *name, int depth)
{
	char self[64];
	int fd, err;

	if (!unlinkat(dir_fd, name, 0) || errno == ENOENT)
		return 0;
	if (errno != EISDIR)
		return -errno;
	if (depth <= 0)
		return -EMLINK;
	fd = open_below(dir_fd, name, O_RDONLY);
	if (fd == -EACCES) {
		/* A directory its owner made unreadable: the owner may make it readable again. */
		fd = open_below(dir_fd, name, O_PATH);
		if (fd < 0)
			return fd;
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		err = chmod(self, S_IRWXU) ? -errno : 0;
		close(fd);
		if (err)
			return err;
		fd = open_below(dir_fd, name, O_RDONLY);
	}
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	err = empty_dir(fd, depth - 1);
	close(fd);
	if (err)
		return err;
	if (unlinkat(dir_fd, name, AT_REMOVEDIR) && errno != ENOENT)
		return -errno;
	return 0;
}

/* Removes every entry of dir_fd, descending at most depth levels. */
static int empty_dir(int dir_fd, int depth)
{
	struct dirent *de;
	struct stat st;
	int err = 0;

	/* Entries can only go if the directory is writable and searchable by its owner. */
	if (!fstat(dir_fd, &st) && (st.st_mode & S_IRWXU) != S_IRWXU)
		fchmod(dir_fd, (st.st_mode & 07777) | S_IRWXU);
	for (int pass = 0; pass < REMOVE_PASSES; pass++) {
		int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
		bool seen = false;
		DIR *dir;

		if (fd < 0)
			return -errno;
		dir = fdopendir(fd);
		if (!dir) {
			close(fd);
			return -errno;
		}
		/* The copy shares dir_fd's offset: each pass reads from the start. */
		rewinddir(dir);
		err = 0;
		while ((de = readdir(dir))) {
			int e;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			seen = true;
			e = remove_entry(dir_fd, de->d_name, depth);
			if (e && !err)
				err = e;
		}
		closedir(dir);
		if (!seen)
			return 0;
		/* A mount point or a depth beyond the bound does not change with another pass. */
		if (err == -EXDEV || err == -EMLINK || err == -EBUSY)
			return err;
	}
	return err ? err : -ENOTEMPTY;
}

static int same_dir(const struct stat *st, const struct tmpdir_id *id)
{
	return S_ISDIR(st->st_mode) && (uint64_t)st->st_dev == id->dev && (uint64_t)st->st_ino == id->ino &&
	       st->st_uid == id->uid;
}

/* Credentials of the owner: no group but its own, no capability left. */
static int become_owner(const struct tmpdir_id *id)
{
	uid_t ru, eu, su;

	if (id->uid == 0)
		return 0;
	if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, id->gid, id->gid, id->gid) ||
	    syscall(SYS_setresuid, id->uid, id->uid, id->uid))
		return -errno;
	if (getresuid(&ru, &eu, &su) || ru != id->uid || eu != id->uid || su != id->uid)
		return -EPERM;
	return 0;
}

/* The child: returns a positive errno, or 0 once the directory is gone. */
static int remove_as_owner(const char *name, const struct tmpdir_id *id)
{
	struct stat st;
	int parent_fd, fd, err;

	/* Nothing of the supervisor's (maps, the caller's connection, logs) stays open in here. */
	syscall(SYS_close_range, 3, ~0U, 0);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	err = become_owner(id);
	if (err)
		return -err;
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	parent_fd = open(SANDBOX_TMP_PARENT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent_fd < 0)
		return errno;
	fd = open_below(parent_fd, name, O_RDONLY);
	if (fd < 0)
		return fd == -ENOENT ? 0 : -fd;
	err = fstat(fd, &st) ? -errno : same_dir(&st, id) ? 0 : -ESTALE;
	for (int pass = 0; !err && pass < REMOVE_PASSES; pass++) {
		err = empty_dir(fd, SANDBOX_TMP_MAX_DEPTH);
		if (err)
			break;
		/* The name is removed only while it still holds this directory. */
		if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		if (!same_dir(&st, id)) {
			err = -ESTALE;
			break;
		}
		if (!unlinkat(parent_fd, name, AT_REMOVEDIR) || errno == ENOENT)
			break;
		err = errno == ENOTEMPTY || errno == EEXIST ? 0 : -errno;
		if (!err && pass == REMOVE_PASSES - 1)
			err = -ENOTEMPTY;
	}
	close(fd);
	close(parent_fd);
	return -err;
}

/* The name under SANDBOX_TMP_PARENT that path is, or NULL if it is not a sandbox's TMPDIR. */
static const char *tmp_name(const char *path)
{
	size_t n = strlen(SANDBOX_TMP_PARENT);

	if (strncmp(path, SANDBOX_TMP_PARENT, n) || path[n] != '/')
		return NULL;
	path += n + 1;
	if (strncmp(path, SANDBOX_TMP_PREFIX, strlen(SANDBOX_TMP_PREFIX)) || strchr(path, '/') ||
	    !path[strlen(SANDBOX_TMP_PREFIX)])
		return NULL;
	return path;
}

int sandbox_tmpdir_create(const char *path, uid_t uid, gid_t gid, struct tmpdir_id *out, struct errmsg *em)
{
	const char *name = tmp_name(path);
	struct stat st;
	int parent_fd, fd = -1, err = 0;

	memset(out, 0, sizeof(*out));
	if (!name)
		return errmsg_set(em, -EINVAL, "%s is not under %s/%s", path, SANDBOX_TMP_PARENT, SANDBOX_TMP_PREFIX);
	parent_fd = open(SANDBOX_TMP_PARENT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent_fd < 0)
		return errmsg_set(em, -errno, "opening %s", SANDBOX_TMP_PARENT);
	/* A random name: an existing entry (anyone's) is an error, never reused. */
	if (mkdirat(parent_fd, name, 0700)) {
		err = errmsg_set(em, -errno, "creating %s", path);
		goto cleanup;
	}
	fd = open_below(parent_fd, name, O_RDONLY);
	if (fd < 0) {
		err = errmsg_set(em, fd, "opening %s just created", path);
		goto cleanup;
	}
	if ((uid || gid) && fchown(fd, uid, gid)) {
		err = errmsg_set(em, -errno, "giving %s to uid %u", path, (unsigned)uid);
		goto cleanup;
	}
	if (fstat(fd, &st)) {
		err = errmsg_set(em, -errno, "reading %s", path);
		goto cleanup;
	}
	*out = (struct tmpdir_id){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, st.st_uid, st.st_gid };
cleanup:
	if (fd >= 0)
		close(fd);
	close(parent_fd);
	return err;
}

/* Waits for the removing child, at most REMOVE_DEADLINE_MS; returns its result as a negative errno. */
static int wait_removal(pid_t pid)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), status = 0, ret;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	bool late = false;

	if (pidfd >= 0) {
		do
			ret = poll(&p, 1, REMOVE_DEADLINE_MS);
		while (ret < 0 && errno == EINTR);
		if (ret == 0) {
			kill(pid, SIGKILL);
			late = true;
		}
		close(pidfd);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -ECHILD;
	if (late)
		return -ETIMEDOUT;
	if (!WIFEXITED(status))
		return -EINTR;
	return -WEXITSTATUS(status);
}

/*
 * The common end, a TMPDIR the command left empty, without a child: one
 * rmdir with the owner's file-system identity (setfsuid changes this thread
 * alone, and drops the file capabilities while it is not 0), so the sticky
 * parent lets it remove the owner's own entry and nothing else, whatever
 * was swapped in after the check. True when the directory is gone; false
 * sends the caller to the child, which walks, removes and reports.
 */
static bool removed_if_empty(const char *name, const struct tmpdir_id *id)
{
	int parent_fd = open(SANDBOX_TMP_PARENT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long old_uid, old_gid;
	struct stat st;
	bool gone = false;
	int err;

	if (parent_fd < 0)
		return false;
	if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !same_dir(&st, id))
		goto cleanup;
	old_gid = syscall(SYS_setfsgid, id->gid);
	old_uid = syscall(SYS_setfsuid, id->uid);
	/* setfsuid reports the identity before the call: asking again with -1 returns the one in force. */
	if (syscall(SYS_setfsuid, -1) == (long)id->uid && syscall(SYS_setfsgid, -1) == (long)id->gid) {
		err = unlinkat(parent_fd, name, AT_REMOVEDIR) ? errno : 0;
		gone = !err || err == ENOENT;
	}
	syscall(SYS_setfsuid, old_uid);
	syscall(SYS_setfsgid, old_gid);
cleanup:
	close(parent_fd);
	return gone;
}

int sandbox_tmpdir_remove(const char *path, const struct tmpdir_id *id, struct errmsg *em)
{
	const char *name = tmp_name(path);
	pid_t pid;
	int err;

	if (!path[0])
		return 0;
	if (!name)
		return errmsg_set(em, -EINVAL, "%s is not a sandbox's TMPDIR (%s/%s...): left as it is", path,
				  SANDBOX_TMP_PARENT, SANDBOX_TMP_PREFIX);
	if (!id->ino)
		return errmsg_set(em, -ENODATA, "%s: which directory the run created was not recorded: left as it "
				  "is (remove it by hand if it is stale)", path);
	if (removed_if_empty(name, id))
		return 0;
	pid = fork();
	if (pid < 0)
		return errmsg_set(em, -errno, "removing %s: fork", path);
	if (pid == 0)
		_exit(remove_as_owner(name, id));
	err = wait_removal(pid);
	switch (-err) {
	case 0:
		return 0;
	case ELOOP:
	case ENOTDIR:
		return errmsg_set(em, err, "%s is no longer the directory the sandbox was given (a symlink or a "
				  "file took its place): left as it is", path);
	case ESTALE:
		return errmsg_set(em, err, "%s is not the directory the sandbox was given (another device, inode "
				  "or owner than uid %u's): left as it is", path, (unsigned)id->uid);
	case EXDEV:
	case EBUSY:
		return errmsg_set(em, err, "%s holds a mount point: it and what is below it were left", path);
	case EMLINK:
		return errmsg_set(em, err, "%s is more than %d levels deep: the deeper entries were left", path,
				  SANDBOX_TMP_MAX_DEPTH);
	case ENOTEMPTY:
		return errmsg_set(em, err, "%s kept getting new entries while it was removed: left", path);
	case ETIMEDOUT:
		return errmsg_set(em, err, "removing %s took longer than %d s: stopped, the rest was left", path,
				  REMOVE_DEADLINE_MS / 1000);
	default:
		return errmsg_set(em, err, "removing %s as uid %u", path, (unsigned)id->uid);
	}
}

int remove_tree(const char *path)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int parent_fd, err;

	if (!slash || slash == path || !slash[1] || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = remove_entry(parent_fd, slash + 1, SANDBOX_TMP_MAX_DEPTH);
	close(parent_fd);
	return err;
}
