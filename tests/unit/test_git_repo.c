// SPDX-License-Identifier: MIT
/*
 * The end-of-run check of a git directory (user/git/git_repo.c): executing
 * keys found and, under strict, removed with the original kept aside; a
 * config that is a link, or one git would not read, set aside; hooks git
 * would run disabled, samples left; nothing outside the directory touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "git/git_repo.h"

struct seen {
	int n;
	char keys[16][128];
	char files[16][128];
	char actions[16][64];
	int kinds[16];
};

static void note(void *ctx, const struct git_finding *f)
{
	struct seen *s = ctx;

	if (s->n >= 16)
		return;
	snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s", f->key ? f->key : "");
	snprintf(s->files[s->n], sizeof(s->files[0]), "%s", f->file);
	snprintf(s->actions[s->n], sizeof(s->actions[0]), "%s", f->action);
	s->kinds[s->n] = f->kind;
	s->n++;
}

static char dir[64];
static int dir_fd = -1;

static void put(const char *name, const char *text)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *slurp(const char *name)
{
	static char buf[4096];
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = 0;
	return buf;
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_git_repo.XXXXXX");
	assert_non_null(mkdtemp(dir));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dir_fd >= 0);
	assert_int_equal(mkdirat(dir_fd, "hooks", 0755), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	close(dir_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const char config[] = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = /tmp/evil\n"
			     "[alias]\n\tst = status\n\tx = !sh -c id\n[user]\n\tname = agent\n";

static void strict_removes_keys_and_keeps_the_original(void **state)
{
	struct seen s = { 0 };
	char *now;

	put("config", config);
	assert_int_equal(git_repo_check(dir_fd, true, note, &s), 2);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.keys[0], "core.fsmonitor");
	assert_string_equal(s.keys[1], "alias.x");
	assert_string_equal(s.actions[0], "removed");
	now = slurp("config");
	assert_non_null(now);
	assert_null(strstr(now, "fsmonitor"));
	assert_null(strstr(now, "sh -c"));
	assert_non_null(strstr(now, "status"));
	assert_non_null(strstr(now, "agent"));
	assert_string_equal(slurp("config.bpfbox-removed"), config);
	assert_null(slurp("config.bpfbox-new"));
}

static void report_leaves_everything(void **state)
{
	struct seen s = { 0 };

	put("config", config);
	assert_int_equal(git_repo_check(dir_fd, false, note, &s), 2);
	assert_string_equal(s.actions[1], "reported");
	assert_string_equal(slurp("config"), config);
	assert_null(slurp("config.bpfbox-removed"));
}

static void clean_config_is_untouched(void **state)
{
	struct seen s = { 0 };
	const char *clean = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = /x\n";

	put("config", clean);
	assert_int_equal(git_repo_check(dir_fd, true, note, &s), 0);
	assert_string_equal(slurp("config"), clean);
	assert_null(slurp("config.bpfbox-removed"));
}

static void linked_or_unreadable_config_is_set_aside(void **state)
{
	struct seen s = { 0 };

	put("outside", config);
	assert_int_equal(symlinkat("outside", dir_fd, "config"), 0);
	put("config.worktree", "[core\n");
	assert_int_equal(git_repo_check(dir_fd, true, note, &s), 2);
	assert_int_equal(s.kinds[0], GIT_FINDING_FILE);
	assert_string_equal(s.actions[0], "set aside");
	assert_int_equal(s.kinds[1], GIT_FINDING_FILE);
	assert_string_equal(s.files[1], "config.worktree");
	assert_int_equal(faccessat(dir_fd, "config", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* The link went aside, not what it led to. */
	assert_string_equal(slurp("outside"), config);
	assert_null(slurp("config.worktree"));
}

static void hooks_disabled_samples_left(void **state)
{
	struct seen s = { 0 };

	put("hooks/pre-commit", "#!/bin/sh\n");
	put("hooks/pre-commit.sample", "#!/bin/sh\n");
	assert_int_equal(git_repo_check(dir_fd, true, note, &s), 1);
	assert_int_equal(s.kinds[0], GIT_FINDING_HOOK);
	assert_string_equal(s.files[0], "hooks/pre-commit");
	assert_string_equal(s.actions[0], "disabled");
	assert_null(slurp("hooks/pre-commit"));
	assert_non_null(slurp("hooks/pre-commit.bpfbox-disabled"));
	assert_non_null(slurp("hooks/pre-commit.sample"));
}

static void hooks_link_is_disabled(void **state)
{
	struct seen s = { 0 };

	assert_int_equal(unlinkat(dir_fd, "hooks", AT_REMOVEDIR), 0);
	assert_int_equal(symlinkat("/tmp", dir_fd, "hooks"), 0);
	assert_int_equal(git_repo_check(dir_fd, true, note, &s), 1);
	assert_string_equal(s.actions[0], "disabled");
	assert_int_equal(faccessat(dir_fd, "hooks", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}

static void git_file_targets(void **state)
{
	char out[256];
	int fd;

	put("dotgit", "gitdir: ../main/.git/worktrees/wt \n");
	fd = openat(dir_fd, "dotgit", O_RDONLY | O_CLOEXEC);
	assert_int_equal(git_file_target(fd, out, sizeof(out)), 0);
	close(fd);
	assert_string_equal(out, "../main/.git/worktrees/wt");
	put("dotgit", "not a pointer\n");
	fd = openat(dir_fd, "dotgit", O_RDONLY | O_CLOEXEC);
	assert_int_equal(git_file_target(fd, out, sizeof(out)), -EINVAL);
	close(fd);
	put("dotgit", "gitdir: \n");
	fd = openat(dir_fd, "dotgit", O_RDONLY | O_CLOEXEC);
	assert_int_equal(git_file_target(fd, out, sizeof(out)), -EINVAL);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(strict_removes_keys_and_keeps_the_original, setup, teardown),
		cmocka_unit_test_setup_teardown(report_leaves_everything, setup, teardown),
		cmocka_unit_test_setup_teardown(clean_config_is_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(linked_or_unreadable_config_is_set_aside, setup, teardown),
		cmocka_unit_test_setup_teardown(hooks_disabled_samples_left, setup, teardown),
		cmocka_unit_test_setup_teardown(hooks_link_is_disabled, setup, teardown),
		cmocka_unit_test_setup_teardown(git_file_targets, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
