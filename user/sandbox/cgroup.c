// SPDX-License-Identifier: MIT
/* cgroup v2 management: the sandbox's own cgroup, its limits, its teardown. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/mono_clock.h"
#include "cgroup.h"

int cgroup2_mount_point(char *out, size_t len, struct errmsg *em)
{
	char line[4096], *sep, *mnt;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int err = -ENOENT;

	if (!f)
		return errmsg_set(em, -errno, "reading /proc/self/mountinfo");
	while (fgets(line, sizeof(line), f)) {
		/* Fields: id parent maj:min root mountpoint opts ... - fstype source superopts */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		strtok(line, " ");
		for (int i = 0; i < 3; i++)
			strtok(NULL, " ");
		mnt = strtok(NULL, " ");
		if (mnt && strlen(mnt) < len) {
			strcpy(out, mnt);
			err = 0;
			break;
		}
	}
	fclose(f);
	if (err)
		return errmsg_set(em, err, "no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup)");
	return 0;
}

int cgroup_parent_ensure(char *parent, size_t len, struct errmsg *em)
{
	char mnt[PATH_MAX];
	struct stat st;
	int err;

	err = cgroup2_mount_point(mnt, sizeof(mnt), em);
	if (err)
		return err;
	if ((size_t)snprintf(parent, len, "%s/%s", mnt, BPFBOX_CGROUP_PARENT) >= len)
		return errmsg_set(em, -ENAMETOOLONG, "cgroup path");
	if (mkdir(parent, 0755) && errno != EEXIST)
		return errmsg_set(em, -errno, "creating cgroup %s", parent);
	if (stat(parent, &st))
		return errmsg_set(em, -errno, "stat %s", parent);
	/* Delegation containment holds only under a parent the sandbox cannot write. */
	if (st.st_uid != 0 || (st.st_mode & 022))
		return errmsg_set(em, -EPERM, "%s must be owned by root and not group/world writable", parent);
	return 0;
}

int cgroup_id_of(const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.id;
	return 0;
}

/* Lets the sandbox cgroups use the controllers their limits need. */
static void enable_controllers(const char *parent)
{
	char path[PATH_MAX], mnt[PATH_MAX];
	const char *ctl[] = { "+pids", "+memory", "+cpu" };
	int fd;

	snprintf(mnt, sizeof(mnt), "%s", parent);
	*strrchr(mnt, '/') = 0;
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", mnt);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!write(fd, ctl[i], strlen(ctl[i]));
			close(fd);
		}
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!write(fd, ctl[i], strlen(ctl[i]));
			close(fd);
		}
	}
}

int cgroup_create(const char *name, struct sandbox_cgroup *cg, struct errmsg *em)
{
	char parent[PATH_MAX];
	int err;

	cg->dir_fd = -1;
	err = cgroup_parent_ensure(parent, sizeof(parent), em);
	if (err)
		return err;
	if ((size_t)snprintf(cg->path, sizeof(cg->path), "%s/%s", parent, name) >= sizeof(cg->path))
		return errmsg_set(em, -ENAMETOOLONG, "cgroup path");
	if (mkdir(cg->path, 0755))
		return errmsg_set(em, -errno, "creating cgroup %s", cg->path);
	cg->dir_fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dir_fd < 0) {
		err = errmsg_set(em, -errno, "opening cgroup %s", cg->path);
		rmdir(cg->path);
		return err;
	}
	err = cgroup_id_of(cg->path, &cg->id);
	if (err) {
		errmsg_set(em, err, "cgroup id of %s", cg->path);
		close(cg->dir_fd);
		cg->dir_fd = -1;
		rmdir(cg->path);
		return err;
	}
	return 0;
}

static int write_file_at(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Is NAME listed in the cgroup's cgroup.controllers (usable by it)? */
static bool controller_available(const char *path, const char *name)
{
	char file[PATH_MAX], buf[512], *tok, *save;
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "%s/cgroup.controllers", path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, name))
			return true;
	return false;
}

/* Writes one limit; a missing controller is an error, never a silent no-limit. */
static int set_limit(const struct sandbox_cgroup *cg, const char *ctl, const char *file, const char *value,
		     struct errmsg *em)
{
	int err;

	if (!controller_available(cg->path, ctl))
		return errmsg_set(em, -EOPNOTSUPP,
				  "the policy sets a %s limit but the %s controller is not available to cgroup v2 "
				  "under %s (bound to a cgroup v1 hierarchy, or disabled at boot?)",
				  ctl, ctl, cg->path);
	err = write_file_at(cg->path, file, value);
	if (err)
		return errmsg_set(em, err, "setting %s on %s to %s", file, cg->path, value);
	return 0;
}

int cgroup_apply_limits(const struct sandbox_cgroup *cg, const struct cgroup_limits *lim, struct errmsg *em)
{
	char parent[PATH_MAX], value[64];
	int err;

	if (!lim->pids && !lim->memory_bytes && !lim->cpu_percent)
		return 0;
	snprintf(parent, sizeof(parent), "%s", cg->path);
	*strrchr(parent, '/') = 0;
	enable_controllers(parent);
	if (lim->pids) {
		snprintf(value, sizeof(value), "%lld", lim->pids);
		err = set_limit(cg, "pids", "pids.max", value, em);
		if (err)
			return err;
	}
	if (lim->memory_bytes) {
		snprintf(value, sizeof(value), "%lld", lim->memory_bytes);
		err = set_limit(cg, "memory", "memory.max", value, em);
		if (err)
			return err;
		/* Swap would let the tree grow past its memory limit. */
		write_file_at(cg->path, "memory.swap.max", "0");
	}
	if (lim->cpu_percent) {
		snprintf(value, sizeof(value), "%d 100000", lim->cpu_percent * 1000);
		err = set_limit(cg, "cpu", "cpu.max", value, em);
		if (err)
			return err;
	}
	return 0;
}

long long cgroup_event_count(const char *path, const char *file, const char *key)
{
	char name[PATH_MAX], line[128], k[64];
	long long v, found = 0;
	FILE *f;

	snprintf(name, sizeof(name), "%s/%s", path, file);
	f = fopen(name, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", k, &v) == 2 && !strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

int cgroup_populated(const char *path)
{
	char file[PATH_MAX], buf[256];
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	return strstr(buf, "populated 1") != NULL;
}

int cgroup_signal_all(const char *path, int sig)
{
	char file[PATH_MAX];
	int count = 0;
	long pid;
	FILE *f;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%ld", &pid) == 1) {
		if (kill((pid_t)pid, sig) == 0)
			count++;
	}
	fclose(f);
	return count;
}

int cgroup_kill_all(const char *path, int timeout_ms)
{
	char file[PATH_MAX];
	long long deadline = mono_ms() + timeout_ms;
	struct pollfd pfd;
	int populated;

	populated = cgroup_populated(path);
	if (populated <= 0)
		return populated;
	if (write_file_at(path, "cgroup.kill", "1"))
		cgroup_signal_all(path, SIGKILL); /* kernels before 5.14 */
	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	pfd.fd = open(file, O_RDONLY | O_CLOEXEC);
	pfd.events = POLLPRI;
	while ((populated = cgroup_populated(path)) > 0 && mono_ms() < deadline) {
		if (pfd.fd >= 0)
			poll(&pfd, 1, 50);
		else
			usleep(10000);
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	return populated > 0 ? -EBUSY : 0;
}

int cgroup_destroy(struct sandbox_cgroup *cg)
{
	int err = 0;

	if (!cg->path[0])
		return 0;
	cgroup_kill_all(cg->path, 5000);
	if (cg->dir_fd >= 0) {
		close(cg->dir_fd);
		cg->dir_fd = -1;
	}
	if (rmdir(cg->path) && errno != ENOENT)
		err = -errno;
	cg->path[0] = 0;
	return err;
}
