// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h"

unsigned long long process_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* Field 22; the command name (field 2) may hold spaces, so count from its ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start;
}

static void entry_path(const char *id, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", REGISTRY_DIR, id);
}

/* s with every control byte as '?': one line of the registry file. */
static const char *one_line(const char *s, char *out, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = 0;
	return out;
}

/* Sets fd's mode to mode if it is looser; fd must be root's. */
static int tighten(int fd, mode_t mode)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (st.st_uid != 0)
		return -EPERM;
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode))
		return -errno;
	return 0;
}

int registry_secure(bool entries)
{
	struct dirent *de;
	int dir_fd, fd, err;
	DIR *dir;

	mkdir("/run/bpfbox", 0755);
	if (mkdir(REGISTRY_DIR, 0700) && errno != EEXIST)
		return -errno;
	dir_fd = open(REGISTRY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0)
		return -errno;
	err = tighten(dir_fd, 0700);
	if (err || !entries) {
		close(dir_fd);
		return err;
	}
	dir = fdopendir(dir_fd);
	if (!dir) {
		err = -errno;
		close(dir_fd);
		return err;
	}
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd(dir), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!err)
			err = tighten(fd, 0600);
		close(fd);
	}
	closedir(dir);
	return err;
}

int registry_write(const struct registry_entry *e)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], policy[PATH_MAX], ceiling[PATH_MAX], command[1024];
	FILE *f;
	int fd, err;

	err = registry_secure(false);
	if (err)
		return err;
	entry_path(e->id, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* A .tmp file an older bpfbox left keeps its mode through O_TRUNC. */
	if (fchmod(fd, 0600)) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	/*
	 * The policy's name and the command line come from the daemon's caller:
	 * a control byte in them must not start a line of its own (uid=,
	 * supervisor=, cgroup= would then be the caller's to choose for ps, stop
	 * and gc, which act as root).
	 */
	fprintf(f, "id=%s\nsupervisor=%d\nsupervisor_start=%llu\nchild=%d\ncgroup_id=%" PRIu64
		   "\ncgroup=%s\ntmpdir=%s\ntmpdir_dev=%" PRIu64 "\ntmpdir_ino=%" PRIu64
		   "\npolicy=%s\nstarted=%lld\nuid=%u\ngid=%u\nceiling=%s\ncommand=%s\n",
		e->id, e->supervisor, e->supervisor_start, e->child, e->cgroup_id, e->cgroup, e->tmpdir,
		e->tmpdir_dev, e->tmpdir_ino, one_line(e->policy, policy, sizeof(policy)), e->started,
		(unsigned)e->uid, (unsigned)e->gid, one_line(e->ceiling, ceiling, sizeof(ceiling)),
		one_line(e->command, command, sizeof(command)));
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

static void copy_field(char *dst, size_t len, const char *v)
{
	snprintf(dst, len, "%s", v);
}

int registry_read(const char *id, struct registry_entry *e)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	FILE *f;

	memset(e, 0, sizeof(*e));
	entry_path(id, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '='), *v;

		if (!eq)
			continue;
		*eq = 0;
		v = eq + 1;
		v[strcspn(v, "\n")] = 0;
		if (!strcmp(line, "id"))
			copy_field(e->id, sizeof(e->id), v);
		else if (!strcmp(line, "supervisor"))
			e->supervisor = atoi(v);
		else if (!strcmp(line, "supervisor_start"))
			e->supervisor_start = strtoull(v, NULL, 10);
		else if (!strcmp(line, "child"))
			e->child = atoi(v);
		else if (!strcmp(line, "cgroup_id"))
			e->cgroup_id = strtoull(v, NULL, 10);
		else if (!strcmp(line, "cgroup"))
			copy_field(e->cgroup, sizeof(e->cgroup), v);
		else if (!strcmp(line, "tmpdir"))
			copy_field(e->tmpdir, sizeof(e->tmpdir), v);
		else if (!strcmp(line, "tmpdir_dev"))
			e->tmpdir_dev = strtoull(v, NULL, 10);
		else if (!strcmp(line, "tmpdir_ino"))
			e->tmpdir_ino = strtoull(v, NULL, 10);
		else if (!strcmp(line, "policy"))
			copy_field(e->policy, sizeof(e->policy), v);
		else if (!strcmp(line, "started"))
			e->started = atoll(v);
		else if (!strcmp(line, "uid"))
			e->uid = (uid_t)strtoul(v, NULL, 10);
		else if (!strcmp(line, "gid"))
			e->gid = (gid_t)strtoul(v, NULL, 10);
		else if (!strcmp(line, "ceiling"))
			copy_field(e->ceiling, sizeof(e->ceiling), v);
		else if (!strcmp(line, "command"))
			copy_field(e->command, sizeof(e->command), v);
	}
	fclose(f);
	return e->id[0] ? 0 : -EINVAL;
}

void registry_remove(const char *id)
{
	char path[PATH_MAX];

	entry_path(id, path, sizeof(path));
	unlink(path);
}

bool registry_alive(const struct registry_entry *e)
{
	return e->supervisor > 0 && process_start_time(e->supervisor) == e->supervisor_start;
}

int registry_each(int (*fn)(void *ctx, const struct registry_entry *e), void *ctx)
{
	struct registry_entry e;
	struct dirent *de;
	DIR *dir = opendir(REGISTRY_DIR);
	int ret = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
			continue;
		if (registry_read(de->d_name, &e) == 0)
			ret = fn(ctx, &e);
	}
	closedir(dir);
	return ret;
}

int sandbox_stop_for(const char *id, bool any_user, uid_t uid, struct errmsg *em)
{
	struct registry_entry e;

	/* An id is a registry file name: nothing that could name another path. */
	if (strncmp(id, "bb-", 3) || strlen(id) > 32 || strspn(id + 3, "0123456789abcdef") != strlen(id + 3))
		return errmsg_set(em, -EINVAL, "%s: not a sandbox id (bb-...; see bpfbox ps)", id);
	if (registry_read(id, &e) || (!any_user && e.uid != uid))
		return errmsg_set(em, -ENOENT, "%s: no such sandbox of yours (see bpfbox ps)", id);
	if (!registry_alive(&e))
		return errmsg_set(em, -ESRCH, "%s: its supervisor is gone; bpfbox gc removes it", id);
	/* The supervisor stops the tree (SIGTERM, SIGKILL after its grace) and reports. */
	if (kill(e.supervisor, SIGTERM))
		return errmsg_set(em, -errno, "%s: signalling its supervisor", id);
	return 0;
}
