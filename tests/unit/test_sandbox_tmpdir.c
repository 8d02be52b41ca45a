// SPDX-License-Identifier: MIT
/*
 * The sandbox's TMPDIR: removed as its owner (uid 1, daemon, which every
 * Debian system has), by descriptors; a symlink, another directory in its
 * place or an entry the owner cannot remove is left, and nothing outside it
 * changes. Needs root (to act as the owner); skipped otherwise.
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
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/sandbox_tmpdir.h"

#define OWNER 1

struct fixture {
	char top[64];
	char victim[64]; /* root's, 0700, with a file "x" */
	struct tmpdir_id id;
};

static void put(const char *path, bool owned)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
	if (owned)
		assert_int_equal(lchown(path, OWNER, OWNER), 0);
}

static void put_dir(const char *path, bool owned)
{
	assert_int_equal(mkdir(path, 0755), 0);
	if (owned)
		assert_int_equal(lchown(path, OWNER, OWNER), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct errmsg em = { { 0 } };
	char path[256];

	if (geteuid() != 0) {
		free(f);
		return -1;
	}
	snprintf(f->victim, sizeof(f->victim), "/tmp/bb-unit-victim-XXXXXX");
	assert_non_null(mkdtemp(f->victim));
	snprintf(path, sizeof(path), "%s/x", f->victim);
	put(path, false);
	snprintf(f->top, sizeof(f->top), "%s/%sunit-%d", SANDBOX_TMP_PARENT, SANDBOX_TMP_PREFIX, (int)getpid());
	assert_int_equal(sandbox_tmpdir_create(f->top, OWNER, OWNER, &f->id, &em), 0);
	*state = f;
	return 0;
}

static void victim_intact(const struct fixture *f)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/x", f->victim);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 2);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.away' '%s'", f->top, f->top, f->victim);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void made_for_the_owner(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	assert_int_equal(lstat(f->top, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, OWNER);
	assert_int_equal(f->id.ino, (uint64_t)st.st_ino);
	assert_int_equal(f->id.uid, OWNER);
}

static void tree_removed_links_not_followed(void **state)
{
	struct fixture *f = *state;
	struct errmsg em = { { 0 } };
	char path[256];

	snprintf(path, sizeof(path), "%s/a", f->top);
	put_dir(path, true);
	snprintf(path, sizeof(path), "%s/a/b", f->top);
	put_dir(path, true);
	snprintf(path, sizeof(path), "%s/a/b/x", f->top);
	put(path, true);
	/* A link to the victims by the name of their file: removed as a link. */
	snprintf(path, sizeof(path), "%s/a/link", f->top);
	assert_int_equal(symlink(f->victim, path), 0);
	assert_int_equal(lchown(path, OWNER, OWNER), 0);
	snprintf(path, sizeof(path), "%s/x", f->top);
	put(path, true);
	/* One the owner made unreadable: the owner may open it up again. */
	snprintf(path, sizeof(path), "%s/closed", f->top);
	put_dir(path, true);
	snprintf(path, sizeof(path), "%s/closed/x", f->top);
	put(path, true);
	snprintf(path, sizeof(path), "%s/closed", f->top);
	assert_int_equal(chmod(path, 0), 0);
	assert_int_equal(sandbox_tmpdir_remove(f->top, &f->id, &em), 0);
	assert_int_equal(access(f->top, F_OK), -1);
	victim_intact(f);
	/* Gone already: nothing to do. */
	assert_int_equal(sandbox_tmpdir_remove(f->top, &f->id, &em), 0);
}

/* The empty TMPDIR a command leaves most often: removed in place, and root's identity is back after. */
static void empty_removed_identity_restored(void **state)
{
	struct fixture *f = *state;
	struct errmsg em = { { 0 } };
	char path[256];

	assert_int_equal(sandbox_tmpdir_remove(f->top, &f->id, &em), 0);
	assert_int_equal(access(f->top, F_OK), -1);
	assert_int_equal(syscall(SYS_setfsuid, -1), 0);
	assert_int_equal(syscall(SYS_setfsgid, -1), 0);
	/* Root's file capabilities are back too: a file in root's 0700 directory is made and removed. */
	snprintf(path, sizeof(path), "%s/after", f->victim);
	put(path, false);
	assert_int_equal(unlink(path), 0);
}

/* Another user's empty directory in its place: not the sandbox's, left (and no rmdir as root). */
static void other_users_empty_directory_is_left(void **state)
{
	struct fixture *f = *state;
	struct errmsg em = { { 0 } };
	char away[128];
	struct stat st;

	snprintf(away, sizeof(away), "%s.away", f->top);
	assert_int_equal(rename(f->top, away), 0);
	assert_int_equal(mkdir(f->top, 0755), 0);
	assert_int_equal(lchown(f->top, OWNER + 1, OWNER + 1), 0);
	assert_int_equal(sandbox_tmpdir_remove(f->top, &f->id, &em), -ESTALE);
	assert_int_equal(lstat(f->top, &st), 0);
	assert_int_equal(st.st_uid, OWNER + 1);
	assert_int_equal(syscall(SYS_setfsuid, -1), 0);
}

static void symlink_in_its_place_is_left(void **state)
{
	struct fixture *f = *state;
	struct errmsg em = { { 0 } };
	char away[128];
	struct stat st;
	int err;

	snprintf(away, sizeof(away), "%s.away", f->top);
	assert_int_equal(rename(f->top, away), 0);
	assert_int_equal(symlink(f->victim, f->top), 0);
	err = sandbox_tmpdir_remove(f->top, &f->id, &em);
	assert_true(err == -ELOOP || err == -ENOTDIR);
	assert_non_null(strstr(em.text, "a symlink or a file took its place"));
	assert_int_equal(lstat(f->top, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	victim_intact(f);
}

static void other_directory_in_its_place_is_left(void **state)
{
	struct fixture *f = *state;
	struct errmsg em = { { 0 } };
	char away[128];

	snprintf(away, sizeof(away), "%s.away", f->top);
	assert_int_equal(rename(f->top, away), 0);
	put_dir(f->top, true);
	assert_int_equal(sandbox_tmpdir_remove(f->top, &f->id, &em), -ESTALE);
	assert_non_null(strstr(em.text, "not the directory the sandbox was given"));
	assert_int_equal(access(f->top, F_OK), 0);
}

static void only_what_the_owner_may_remove(void **state)
{
	struct fixture *f = *state;
	struct errmsg em = { { 0 } };
	char path[256];

	/* root's directory inside: as root this would go; as the owner it cannot. */
	snprintf(path, sizeof(path), "%s/roots", f->top);
	put_dir(path, false);
	snprintf(path, sizeof(path), "%s/roots/x", f->top);
	put(path, false);
	int err = sandbox_tmpdir_remove(f->top, &f->id, &em);
	assert_int_equal(err, -EACCES);
	assert_non_null(strstr(em.text, "as uid 1"));
	assert_int_equal(access(path, F_OK), 0);
}

static void unrecorded_or_foreign_paths_are_refused(void **state)
{
	struct fixture *f = *state;
	struct tmpdir_id none = { 0 };
	struct errmsg em = { { 0 } };

	assert_int_equal(sandbox_tmpdir_remove(f->top, &none, &em), -ENODATA);
	assert_int_equal(sandbox_tmpdir_remove("/etc/bpfbox-x", &f->id, &em), -EINVAL);
	assert_int_equal(sandbox_tmpdir_remove("/tmp/bpfbox-x/../../etc", &f->id, &em), -EINVAL);
	assert_int_equal(sandbox_tmpdir_remove("/tmp/other", &f->id, &em), -EINVAL);
	assert_int_equal(access(f->top, F_OK), 0);
}

static void too_deep_is_reported(void **state)
{
	struct fixture *f = *state;
	struct errmsg em = { { 0 } };
	char path[4096];
	size_t n = (size_t)snprintf(path, sizeof(path), "%s", f->top);

	for (int i = 0; i <= SANDBOX_TMP_MAX_DEPTH; i++) {
		n += (size_t)snprintf(path + n, sizeof(path) - n, "/d");
		put_dir(path, true);
	}
	assert_int_equal(sandbox_tmpdir_remove(f->top, &f->id, &em), -EMLINK);
	assert_non_null(strstr(em.text, "levels deep"));
}

static void root_tree_by_descriptors(void **state)
{
	struct fixture *f = *state;
	char top[128], path[256];

	snprintf(top, sizeof(top), "%s/pins", f->victim);
	put_dir(top, false);
	snprintf(path, sizeof(path), "%s/sub", top);
	put_dir(path, false);
	snprintf(path, sizeof(path), "%s/sub/link", top);
	assert_int_equal(symlink(f->victim, path), 0);
	assert_int_equal(remove_tree(top), 0);
	assert_int_equal(access(top, F_OK), -1);
	victim_intact(f);
	assert_int_equal(remove_tree(top), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(made_for_the_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(tree_removed_links_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_removed_identity_restored, setup, teardown),
		cmocka_unit_test_setup_teardown(other_users_empty_directory_is_left, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_in_its_place_is_left, setup, teardown),
		cmocka_unit_test_setup_teardown(other_directory_in_its_place_is_left, setup, teardown),
		cmocka_unit_test_setup_teardown(only_what_the_owner_may_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(unrecorded_or_foreign_paths_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(too_deep_is_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(root_tree_by_descriptors, setup, teardown),
	};

	if (geteuid() != 0) {
		printf("# test_sandbox_tmpdir: skipped, it needs root to act as the TMPDIR's owner\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
