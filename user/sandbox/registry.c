// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

int registry_write(const struct registry_entry *e)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], policy[PATH_MAX], command[1024];
	FILE *f;

	mkdir("/run/bpfbox", 0755);
	if (mkdir(REGISTRY_DIR, 0755) && errno != EEXIST)
		return -errno;
	entry_path(e->id, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	/*
	 * The policy's name and the command line come from the daemon's caller:
	 * a control byte in them must not start a line of its own (uid=,
	 * supervisor=, cgroup= would then be the caller's to choose for ps, stop
	 * and gc, which act as root).
	 */
	fprintf(f, "id=%s\nsupervisor=%d\nsupervisor_start=%llu\nchild=%d\ncgroup_id=%" PRIu64
		   "\ncgroup=%s\ntmpdir=%s\npolicy=%s\nstarted=%lld\nuid=%u\ncommand=%s\n",
		e->id, e->supervisor, e->supervisor_start, e->child, e->cgroup_id, e->cgroup, e->tmpdir,
		one_line(e->policy, policy, sizeof(policy)), e->started, (unsigned)e->uid,
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
		else if (!strcmp(line, "policy"))
			copy_field(e->policy, sizeof(e->policy), v);
		else if (!strcmp(line, "started"))
			e->started = atoll(v);
		else if (!strcmp(line, "uid"))
			e->uid = (uid_t)strtoul(v, NULL, 10);
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
