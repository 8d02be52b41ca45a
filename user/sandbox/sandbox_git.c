// SPDX-License-Identifier: MIT
/*
 * The end-of-run check of the repositories a sandbox made. The kernel let
 * the sandbox write their config (git needs it); a key there could run a
 * command the next time a person runs git in that repository, outside any
 * sandbox. The check reads and rewrites what the sandbox's user owns, so it
 * runs as that user, in a child: root never opens a name the user placed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git/git_repo.h"
#include "sandbox_git.h"

/* The child's records; past this many the rest is counted, not sent one by one. */
#define GIT_RECORDS_MAX 256
#define GIT_CHECK_DEADLINE_MS 10000

#define REC_UNCHECKED 0 /* kinds beyond enum git_finding_kind */
#define REC_CHECKED 100
#define REC_MORE 101

/* One finding, as the child sends it: one write, so at most PIPE_BUF bytes. */
struct git_record {
	uint32_t kind;
	uint32_t item;
	uint32_t count; /* REC_MORE: findings not sent */
	char file[64];
	char key[256];
	char value[512];
	char reason[128];
	char action[64];
	char target[1024]; /* the git directory a .git file points at */
};

_Static_assert(sizeof(struct git_record) <= 4096, "a record is one atomic pipe write");

void sandbox_git_note(struct sandbox_git *g, const struct bb_event *ev)
{
	struct sandbox_git_item *it;
	uint64_t ino;

	if (!g->items) {
		g->items = calloc(BB_MAX_NEW_GIT, sizeof(*g->items));
		if (!g->items) {
			g->unlisted++;
			return;
		}
	}
	if (g->n >= BB_MAX_NEW_GIT) {
		g->unlisted++;
		return;
	}
	it = &g->items[g->n];
	it->path = strndup(ev->path, sizeof(ev->path));
	if (!it->path) {
		g->unlisted++;
		return;
	}
	memcpy(&ino, ev->addr, sizeof(ino));
	it->ino = ino;
	it->dev = makedev(BB_KDEV_MAJOR(ev->rdev), BB_KDEV_MINOR(ev->rdev));
	it->dir = ev->op == BB_OP_MKDIR;
	g->n++;
}

void sandbox_git_free(struct sandbox_git *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->items[i].path);
	free(g->items);
	g->items = NULL;
	g->n = 0;
}

/* ---- the child ---- */

#define OVERLAYFS_MAGIC 0x794c7630

/*
 * Whether st (of fd) is the object the kernel recorded. overlayfs reports a
 * file's device as its upper filesystem's, where the kernel saw the
 * overlay's: there the directory holding it (dir_fd), which overlayfs
 * reports as its own, stands in for the device.
 */
static bool same_object(const struct stat *st, int fd, int dir_fd, const struct sandbox_git_item *it)
{
	struct stat dst;
	struct statfs fs;

	if ((uint64_t)st->st_ino != it->ino)
		return false;
	if ((uint64_t)st->st_dev == it->dev)
		return true;
	return !S_ISDIR(st->st_mode) && !fstatfs(fd, &fs) && fs.f_type == OVERLAYFS_MAGIC && dir_fd >= 0 &&
	       !fstat(dir_fd, &dst) && (uint64_t)dst.st_dev == it->dev;
}

/* The directory holding path, opened; -1 if there is none. */
static int open_parent(const char *path)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

struct child {
	int out;
	uint32_t item;
	const char *target;
	const char *prefix; /* before each finding's file: "modules/NAME/" */
	bool hide_values; /* a .git file's target: what the sandbox could not read stays unread */
	unsigned found; /* findings of the item being checked */
	unsigned sent;
	unsigned more;
};

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static void send_record(struct child *c, uint32_t kind, const char *file, const char *key, const char *value,
			const char *reason, const char *action)
{
	struct git_record rec = { .kind = kind, .item = c->item };

	if (kind != REC_CHECKED && c->sent >= GIT_RECORDS_MAX) {
		c->more++;
		return;
	}
	copy(rec.file, sizeof(rec.file), file);
	copy(rec.key, sizeof(rec.key), key);
	copy(rec.value, sizeof(rec.value), value);
	copy(rec.reason, sizeof(rec.reason), reason);
	copy(rec.action, sizeof(rec.action), action);
	copy(rec.target, sizeof(rec.target), c->target);
	if (write(c->out, &rec, sizeof(rec)) == (ssize_t)sizeof(rec) && kind != REC_CHECKED)
		c->sent++;
}

static void on_finding(void *ctx, const struct git_finding *f)
{
	struct child *c = ctx;
	char file[64];

	snprintf(file, sizeof(file), "%s%s", c->prefix ? c->prefix : "", f->file);
	c->found++;
	send_record(c, f->kind, file, f->key, c->hide_values ? NULL : f->value, f->reason, f->action);
}

/* A submodule's git directory in .git/modules/: git runs its hooks and reads its config there. */
static int check_modules(struct child *c, int git_fd, bool strict)
{
	char prefix[300];
	struct dirent *de;
	int fd, n, seen = 0, err = 0;
	DIR *dir;

	fd = openat(git_fd, "modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(dir)) && seen < BB_MAX_NEW_GIT) {
		int sub;

		if (de->d_name[0] == '.')
			continue;
		sub = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		seen++;
		snprintf(prefix, sizeof(prefix), "modules/%s/", de->d_name);
		c->prefix = prefix;
		n = git_repo_check(sub, strict, on_finding, c);
		c->prefix = NULL;
		close(sub);
		if (n < 0)
			err = n;
	}
	closedir(dir);
	return err;
}

/*
 * A .git file with findings where it points: under strict the pointer goes
 * aside (NAME.bpfbox-removed), so git no longer reaches that directory from
 * here. The target itself is never changed: the sandbox wrote the pointer,
 * not necessarily what it names.
 */
static const char *set_pointer_aside(const struct sandbox_git_item *it)
{
	const char *done = "reported (setting the .git file aside failed)";
	int dir_fd = open_parent(it->path), fd = -1;
	struct stat st;

	if (dir_fd < 0)
		return done;
	fd = openat(dir_fd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && same_object(&st, fd, dir_fd, it) &&
	    !renameat(dir_fd, ".git", dir_fd, ".git.bpfbox-removed"))
		done = "the .git file set aside as .git.bpfbox-removed";
	if (fd >= 0)
		close(fd);
	close(dir_fd);
	return done;
}

/* The git directory of a .git file the sandbox made: where its pointer leads. */
static int open_target(int file_fd, const char *path, char *target, size_t len)
{
	char dir[PATH_MAX], *slash;
	int fd, err;

	err = git_file_target(file_fd, target, len);
	if (err)
		return err;
	if (target[0] == '/')
		return open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -EINVAL;
	*slash = 0;
	fd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = openat(fd, target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (err < 0)
		err = -errno;
	close(fd);
	return err;
}

static void check_item(struct child *c, const struct sandbox_git_item *it, bool strict)
{
	char target[1024] = "", why[160];
	struct stat st;
	int fd, git_fd = -1, dir_fd, n;

	c->target = NULL;
	/* Recorded paths end in /.git: the kernel records nothing else. */
	dir_fd = open_parent(it->path);
	fd = dir_fd < 0 ? -1 : openat(dir_fd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	n = fd >= 0 && !fstat(fd, &st) && same_object(&st, fd, dir_fd, it);
	if (dir_fd >= 0)
		close(dir_fd);
	if (!n) {
		send_record(c, REC_UNCHECKED, NULL, NULL, NULL,
			    "moved or removed before the check: its config was not read", "reported");
		goto cleanup;
	}
	if (it->dir) {
		git_fd = fd;
		fd = -1;
	} else {
		git_fd = open_target(fd, it->path, target, sizeof(target));
		c->target = target;
		if (git_fd < 0) {
			snprintf(why, sizeof(why), "its git directory could not be opened: %s", strerror(-git_fd));
			send_record(c, REC_UNCHECKED, NULL, NULL, NULL, why, "reported");
			goto cleanup;
		}
	}
	c->found = 0;
	c->hide_values = !it->dir;
	/* Through a .git file only reading: what it points at may be anybody's. */
	n = git_repo_check(git_fd, it->dir && strict, on_finding, c);
	if (n >= 0 && it->dir)
		n = check_modules(c, git_fd, strict);
	c->hide_values = false;
	if (n < 0) {
		snprintf(why, sizeof(why), "could not be checked: %s", strerror(-n));
		send_record(c, REC_UNCHECKED, NULL, NULL, NULL, why, "reported");
		goto cleanup;
	}
	if (!it->dir && c->found && strict)
		send_record(c, GIT_FINDING_FILE, ".git", NULL, NULL,
			    "a .git file made in the sandbox points at a git directory with the findings above",
			    set_pointer_aside(it));
	send_record(c, REC_CHECKED, NULL, NULL, NULL, NULL, NULL);
cleanup:
	if (fd >= 0)
		close(fd);
	if (git_fd >= 0)
		close(git_fd);
}

static int child_main(const struct sandbox_git *g, const struct identity *id, bool strict, int out)
{
	struct child c = { .out = 3 };

	/* Nothing of the supervisor's (maps, the caller's connection, logs) stays open in here. */
	if (dup2(out, 3) < 0)
		return 1;
	syscall(SYS_close_range, 4, ~0U, 0);
	if (id->switch_user && identity_switch(id))
		return 1;
	for (size_t i = 0; i < g->n; i++) {
		c.item = (uint32_t)i;
		check_item(&c, &g->items[i], strict);
	}
	if (c.more) {
		struct git_record rec = { .kind = REC_MORE, .count = c.more };

		if (write(c.out, &rec, sizeof(rec)) < 0)
			return 1;
	}
	return 0;
}

/* ---- the parent ---- */

static void log_record(const struct sandbox_git *g, const struct git_record *rec, struct log *log,
		       struct sandbox_git_result *res)
{
	const char *repo = rec->item < g->n ? g->items[rec->item].path : "?";
	const char *action = rec->kind == GIT_FINDING_KEY ? "git-config-key" :
			     rec->kind == GIT_FINDING_HOOK ? "git-hook" :
			     rec->kind == GIT_FINDING_FILE ? "git-file" : "git-unchecked";
	struct log_event *ev;
	char what[1200];

	if (rec->kind == REC_CHECKED) {
		res->repos++;
		return;
	}
	ev = log_event_new(LOG_WARN, "event", "file", "info", action, "unknown");
	log_event_set_str(ev, "bpfbox.git.repository", repo);
	if (rec->target[0])
		log_event_set_str(ev, "bpfbox.git.directory", rec->target);
	if (rec->file[0])
		log_event_set_str(ev, "bpfbox.git.file", rec->file);
	if (rec->key[0])
		log_event_set_str(ev, "bpfbox.git.key", rec->key);
	/* Through a .git file the value is not read out: the target may be out of the sandbox's reach. */
	if (rec->kind == GIT_FINDING_KEY && !rec->target[0])
		log_event_set_str(ev, "bpfbox.git.value", rec->value);
	log_event_set_str(ev, "bpfbox.git.reason", rec->reason);
	log_event_set_str(ev, "bpfbox.git.action", rec->action);
	if (rec->kind == REC_UNCHECKED) {
		res->unchecked++;
		log_event_message(ev, "repository %s, made in the sandbox, %s", repo, rec->reason);
	} else {
		res->findings++;
		if (rec->kind == GIT_FINDING_KEY && rec->target[0])
			snprintf(what, sizeof(what), "%s of %s (where its .git file points): %s %s", rec->file,
				 rec->target, rec->key, rec->reason);
		else if (rec->kind == GIT_FINDING_KEY)
			snprintf(what, sizeof(what), "%s: %s = \"%s\" %s", rec->file, rec->key, rec->value,
				 rec->reason);
		else
			snprintf(what, sizeof(what), "%s: %s", rec->file, rec->reason);
		log_event_message(ev, "repository %s, made in the sandbox: %s; %s", repo, what, rec->action);
	}
	log_emit(log, ev);
}

int sandbox_git_check(const struct sandbox_git *g, const struct identity *id, bool strict, struct log *log,
		      struct sandbox_git_result *res)
{
	struct git_record rec;
	size_t got = 0;
	int fds[2], status, err = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->unchecked = (unsigned)g->unlisted;
	if (!g->n)
		return 0;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		close(fds[0]);
		_exit(child_main(g, id, strict, fds[1]));
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		ssize_t n;
		int ret = poll(&p, 1, GIT_CHECK_DEADLINE_MS);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			kill(pid, SIGKILL);
			err = -ETIMEDOUT;
			break;
		}
		n = read(fds[0], (char *)&rec + got, sizeof(rec) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got < sizeof(rec))
			continue;
		got = 0;
		if (rec.kind == REC_MORE)
			res->findings += rec.count;
		else
			log_record(g, &rec, log, res);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -ECHILD;
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status)))
		err = -EPERM;
	/* Whatever the child did not vouch for counts as unchecked. */
	if (res->repos + res->unchecked < g->n + g->unlisted)
		res->unchecked = (unsigned)(g->n + g->unlisted) - res->repos;
	return err;
}
