// SPDX-License-Identifier: MIT
/*
 * The administrator's policy versions (policy_store.c): versions numbered,
 * read back with their metadata, the oldest beyond the bound removed; the
 * history directory made 0700 and refused when others may write it or it is
 * a link; a link planted at the next version's name refused, its target
 * untouched; the policy file replaced whole (a new inode, 0644, no temporary
 * left), a link in its place replaced rather than followed; the lock held.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "policy/policy.h"
#include "policy/policy_store.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/bb-store-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

/* root/name, in one of two buffers taken in turn (a call may need two paths). */
static char *path(const char *name)
{
	static char buf[2][256];
	static int turn;

	turn ^= 1;
	snprintf(buf[turn], sizeof(buf[turn]), "%s/%s", root, name);
	return buf[turn];
}

static void add(int fd, const char *text, const char *message, unsigned want)
{
	struct policy_version m = { 0 };

	policy_store_who(&m);
	snprintf(m.source, sizeof(m.source), "apply");
	snprintf(m.message, sizeof(m.message), "%s", message);
	assert_int_equal(policy_store_add(fd, text, strlen(text), &m), 0);
	assert_int_equal(m.number, want);
}

static void test_versions(void **state)
{
	struct policy_version *v;
	char *text, sha[65];
	size_t n, len;
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(policy_store_open(path("lib/history"), false), -ENOENT);
	fd = policy_store_open(path("lib/history"), true);
	assert_true(fd >= 0);
	assert_int_equal(stat(path("lib/history"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	add(fd, "{\"a\":1}", "first", 1);
	add(fd, "{\"a\":2}", "second, \"quoted\"", 2);
	assert_int_equal(policy_store_list(fd, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].number, 1);
	assert_int_equal(v[1].number, 2);
	assert_string_equal(v[1].message, "second, \"quoted\"");
	assert_string_equal(v[1].source, "apply");
	assert_int_equal(v[1].uid, getuid());
	assert_int_equal(strlen(v[1].applied_at), 20);
	assert_int_equal(v[1].applied_at[10], 'T');
	policy_sha256_hex("{\"a\":2}", 7, sha);
	assert_string_equal(v[1].sha256, sha);
	free(v);
	assert_int_equal(policy_store_read(fd, 1, &text, &len), 0);
	assert_int_equal(len, 7);
	assert_memory_equal(text, "{\"a\":1}", 7);
	free(text);
	assert_int_equal(policy_store_read(fd, 3, &text, &len), -ENOENT);
	assert_int_equal(policy_store_read(fd, 0, &text, &len), -ENOENT);
	assert_int_equal(stat(path("lib/history/000001.json"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	close(fd);
}

static void test_bound(void **state)
{
	struct policy_version *v;
	char text[32];
	size_t n;
	int fd;

	(void)state;
	fd = policy_store_open(path("bound"), true);
	assert_true(fd >= 0);
	for (unsigned i = 1; i <= POLICY_HISTORY_KEEP + 5; i++) {
		snprintf(text, sizeof(text), "{\"v\":%u}", i);
		add(fd, text, "", i);
	}
	assert_int_equal(policy_store_list(fd, &v, &n), 0);
	assert_int_equal(n, POLICY_HISTORY_KEEP);
	assert_int_equal(v[0].number, 6);
	assert_int_equal(v[n - 1].number, POLICY_HISTORY_KEEP + 5);
	free(v);
	assert_int_equal(access(path("bound/000005.meta.json"), F_OK), -1);
	close(fd);
}

static void test_hostile_history(void **state)
{
	struct policy_version m = { 0 };
	char buf[32] = "";
	int fd, victim;

	(void)state;
	/* Writable by others: refused. A link as the directory: refused. */
	assert_int_equal(mkdir(path("open"), 0700), 0);
	assert_int_equal(chmod(path("open"), 0777), 0);
	assert_int_equal(policy_store_open(path("open"), true), -EPERM);
	assert_int_equal(symlink(path("open"), path("link")), 0);
	assert_true(policy_store_open(path("link"), true) < 0);

	/* A link planted at the next version's name: refused, its target untouched. */
	victim = open(path("victim"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(victim >= 0);
	assert_int_equal(write(victim, "intact", 6), 6);
	close(victim);
	fd = policy_store_open(path("planted"), true);
	assert_true(fd >= 0);
	add(fd, "{}", "", 1);
	assert_int_equal(symlink(path("victim"), path("planted/000002.json")), 0);
	snprintf(m.source, sizeof(m.source), "apply");
	assert_int_equal(policy_store_add(fd, "{\"evil\":1}", 10, &m), -EEXIST);
	victim = open(path("victim"), O_RDONLY);
	assert_int_equal(read(victim, buf, sizeof(buf) - 1), 6);
	assert_string_equal(buf, "intact");
	close(victim);
	close(fd);
}

/* A group a file of ours may be given other than our own: any for root, else one we belong to; -1 if none. */
static gid_t other_group(void)
{
	gid_t groups[64];
	int n;

	if (geteuid() == 0)
		return getegid() == 4 ? 5 : 4;
	n = getgroups(64, groups);
	for (int i = 0; i < n; i++)
		if (groups[i] != getegid())
			return groups[i];
	return (gid_t)-1;
}

static void test_replace(void **state)
{
	gid_t other;
	struct stat before, after;
	char buf[64] = "";
	int fd;

	(void)state;
	fd = open(path("policy.json"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "old", 3), 3);
	close(fd);
	assert_int_equal(stat(path("policy.json"), &before), 0);
	assert_int_equal(policy_store_replace(path("policy.json"), "{\"new\":true}", 12), 0);
	assert_int_equal(stat(path("policy.json"), &after), 0);
	assert_true(before.st_ino != after.st_ino);
	/* The administrator's 0600 (a parent proxy's password inside) is kept, and its group. */
	assert_int_equal(after.st_mode & 07777, 0600);
	assert_int_equal(after.st_gid, before.st_gid);
	fd = open(path("policy.json"), O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 12);
	assert_string_equal(buf, "{\"new\":true}");
	close(fd);
	/* Never more than 0644, and the group kept: 0666 with another group becomes 0644 with it. */
	other = other_group();
	assert_int_equal(chmod(path("policy.json"), 0666), 0);
	if (other != (gid_t)-1)
		assert_int_equal(chown(path("policy.json"), (uid_t)-1, other), 0);
	assert_int_equal(policy_store_replace(path("policy.json"), "{}", 2), 0);
	assert_int_equal(stat(path("policy.json"), &after), 0);
	assert_int_equal(after.st_mode & 07777, 0644);
	if (other != (gid_t)-1)
		assert_int_equal(after.st_gid, other);
	/* A new file: 0644. */
	assert_int_equal(policy_store_replace(path("fresh.json"), "{}", 2), 0);
	assert_int_equal(stat(path("fresh.json"), &after), 0);
	assert_int_equal(after.st_mode & 07777, 0644);

	/* A link in the policy's place is replaced, not followed. */
	fd = open(path("elsewhere"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(chmod(path("elsewhere"), 0640), 0);
	assert_int_equal(symlink(path("elsewhere"), path("linked.json")), 0);
	assert_int_equal(policy_store_replace(path("linked.json"), "{}", 2), 0);
	assert_int_equal(lstat(path("linked.json"), &after), 0);
	assert_true(S_ISREG(after.st_mode));
	/* With the permissions of the file the link named, not 0644. */
	assert_int_equal(after.st_mode & 07777, 0640);
	fd = open(path("elsewhere"), O_RDONLY);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 4);
	close(fd);

	/* No temporary file left beside it; a missing directory is an error. */
	snprintf(buf, sizeof(buf), ".bpfbox-policy.%d.tmp", (int)getpid());
	assert_int_equal(access(path(buf), F_OK), -1);
	assert_int_equal(policy_store_replace(path("missing/policy.json"), "{}", 2), -ENOENT);
	assert_int_equal(policy_store_replace("policy.json", "{}", 2), -EINVAL);
}

static void test_lock(void **state)
{
	int fd, status;
	pid_t child;

	(void)state;
	fd = policy_store_open(path("locked"), true);
	assert_true(fd >= 0);
	child = fork();
	if (!child) {
		int other = open(path("locked"), O_RDONLY | O_DIRECTORY);

		_exit(other >= 0 && flock(other, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_hostile_history),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_lock),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
