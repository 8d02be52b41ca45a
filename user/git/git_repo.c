// SPDX-License-Identifier: MIT
/*
 * The end-of-run check of a git directory the sandbox made. It runs with the
 * directory owner's credentials (sandbox/sandbox_git.c) and opens nothing by
 * a name that could be a link: the sandbox's code made every entry here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git_config.h"
#include "git_repo.h"

/* hooks/ entries looked at; more are reported as one finding. */
#define HOOKS_MAX_ENTRIES 1024

static const char *const config_files[] = { "config", "config.worktree" };

static void emit(git_finding_fn fn, void *ctx, enum git_finding_kind kind, const char *file, const char *key,
		 const char *value, const char *reason, const char *action)
{
	struct git_finding f = { kind, file, key, value, reason, action };

	fn(ctx, &f);
}

/* Reads a regular file of at most max bytes, not following a link; *out is NUL-terminated. */
static int read_small(int dir_fd, const char *name, size_t max, char **out, size_t *out_len)
{
	struct stat st;
	size_t got = 0;
	char *buf = NULL;
	int fd, err = 0;

	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	if ((size_t)st.st_size > max) {
		err = -EFBIG;
		goto cleanup;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = 0;
	*out = buf;
	*out_len = got;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

/* name -> name.bpfbox-removed, so git no longer reads it and a person can still. */
static int set_aside(int dir_fd, const char *name)
{
	char aside[256];

	snprintf(aside, sizeof(aside), "%s.bpfbox-removed", name);
	return renameat(dir_fd, name, dir_fd, aside) ? -errno : 0;
}

/* Writes text as name's new content: beside it, then renamed over it, the original set aside. */
static int replace_file(int dir_fd, const char *name, const char *text, size_t len)
{
	char tmp[256], aside[256];
	size_t done = 0;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.bpfbox-new", name);
	snprintf(aside, sizeof(aside), "%s.bpfbox-removed", name);
	unlinkat(dir_fd, tmp, 0);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		done += (size_t)n;
	}
	if (!err && fsync(fd))
		err = -errno;
	close(fd);
	/* A hard link keeps the original under its aside name; the rename then replaces the config. */
	if (!err) {
		unlinkat(dir_fd, aside, 0);
		if (linkat(dir_fd, name, dir_fd, aside, 0) || renameat(dir_fd, tmp, dir_fd, name))
			err = -errno;
	}
	if (err)
		unlinkat(dir_fd, tmp, 0);
	return err;
}

static int check_config(int gitdir_fd, const char *name, bool strict, git_finding_fn fn, void *ctx)
{
	struct git_config cfg = { 0 };
	char key[1024], why[160];
	char *text = NULL, *out = NULL;
	size_t len = 0, out_len = 0, found = 0;
	bool *skip = NULL, whole = false;
	int err, line = 0;

	err = read_small(gitdir_fd, name, GIT_CONFIG_MAX_BYTES, &text, &len);
	if (err == -ENOENT)
		return 0;
	if (!err)
		err = git_config_parse(text, len, &cfg, &line);
	if (err == -ENOMEM)
		goto cleanup;
	if (err) {
		/* git follows a link and reads what this check could not: nothing of it is vouched for. */
		if (err == -ELOOP)
			snprintf(why, sizeof(why), "a symbolic link, which git follows");
		else if (line)
			snprintf(why, sizeof(why), "not a config file git reads (line %d)", line);
		else
			snprintf(why, sizeof(why), "could not be read: %s", strerror(-err));
		err = strict ? set_aside(gitdir_fd, name) : 0;
		emit(fn, ctx, GIT_FINDING_FILE, name, NULL, NULL, why,
		     !strict ? "reported" : err ? "reported (setting it aside failed)" : "set aside");
		found = 1;
		err = 0;
		goto cleanup;
	}
	skip = calloc(cfg.n ? cfg.n : 1, sizeof(*skip));
	if (!skip) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < cfg.n; i++)
		if (git_config_exec_reason(&cfg.entries[i])) {
			skip[i] = true;
			found++;
		}
	if (found && strict) {
		err = git_config_serialise(&cfg, skip, &out, &out_len);
		if (!err)
			err = replace_file(gitdir_fd, name, out, out_len);
		/* A config that cannot be written again without the keys goes aside whole. */
		else if (err == -EINVAL && !set_aside(gitdir_fd, name))
			whole = true;
	}
	for (size_t i = 0; i < cfg.n; i++) {
		const struct git_config_entry *e = &cfg.entries[i];

		if (!skip[i])
			continue;
		if (e->subsection)
			snprintf(key, sizeof(key), "%s.%s.%s", e->section, e->subsection, e->key);
		else
			snprintf(key, sizeof(key), "%s.%s", e->section, e->key);
		emit(fn, ctx, GIT_FINDING_KEY, name, key, e->value, git_config_exec_reason(e),
		     !strict ? "reported" : whole ? "removed (the whole file set aside)" :
		     err ? "reported (removing it failed)" : "removed");
	}
	err = 0;
cleanup:
	free(skip);
	free(out);
	free(text);
	git_config_free(&cfg);
	return err ? err : (int)found;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !memcmp(s + n - t, tail, t);
}

/* hooks/: git runs an entry by its name; the samples' names, and ones disabled here, it never runs. */
static int check_hooks(int gitdir_fd, bool strict, git_finding_fn fn, void *ctx)
{
	char file[300], renamed[300];
	struct dirent *de;
	int fd, found = 0, seen = 0;
	DIR *dir;

	fd = openat(gitdir_fd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		struct stat st;
		bool link = !fstatat(gitdir_fd, "hooks", &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);
		int err = 0;

		/* A link: git runs hooks from wherever it leads. Anything else there, git runs nothing from. */
		if (link && strict)
			err = renameat(gitdir_fd, "hooks", gitdir_fd, "hooks.bpfbox-disabled") ? -errno : 0;
		emit(fn, ctx, GIT_FINDING_FILE, "hooks", NULL, NULL,
		     link ? "a symbolic link: git would run hooks from where it leads" : "not a directory",
		     !link || !strict ? "reported" : err ? "reported (disabling it failed)" : "disabled");
		return 1;
	}
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		int err = -errno;

		close(fd);
		return err;
	}
	while ((de = readdir(dir))) {
		int err = 0;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || ends_with(de->d_name, ".sample") ||
		    ends_with(de->d_name, ".bpfbox-disabled"))
			continue;
		if (++seen > HOOKS_MAX_ENTRIES) {
			emit(fn, ctx, GIT_FINDING_FILE, "hooks", NULL, NULL, "more entries than this check reads",
			     "reported");
			found++;
			break;
		}
		snprintf(file, sizeof(file), "hooks/%s", de->d_name);
		if (strict) {
			snprintf(renamed, sizeof(renamed), "%s.bpfbox-disabled", de->d_name);
			err = renameat(dirfd(dir), de->d_name, dirfd(dir), renamed) ? -errno : 0;
		}
		emit(fn, ctx, GIT_FINDING_HOOK, file, NULL, NULL, "git runs a hook by this name",
		     !strict ? "reported" : err ? "reported (disabling it failed)" : "disabled");
		found++;
	}
	closedir(dir);
	return found;
}

int git_repo_check(int gitdir_fd, bool strict, git_finding_fn fn, void *ctx)
{
	int found = 0, n;

	for (size_t i = 0; i < sizeof(config_files) / sizeof(config_files[0]); i++) {
		n = check_config(gitdir_fd, config_files[i], strict, fn, ctx);
		if (n < 0)
			return n;
		found += n;
	}
	n = check_hooks(gitdir_fd, strict, fn, ctx);
	if (n < 0)
		return n;
	return found + n;
}

int git_file_target(int fd, char *out, size_t len)
{
	char buf[4097];
	size_t got = 0, n;
	char *p;

	while (got < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = 0;
	if (strncmp(buf, "gitdir:", 7) || memchr(buf, 0, got))
		return -EINVAL;
	p = buf + 7;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, "\r\n");
	/* git trims trailing whitespace of the line too. */
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (!n || n >= len)
		return -EINVAL;
	memcpy(out, p, n);
	out[n] = 0;
	return 0;
}
