// SPDX-License-Identifier: MIT
/*
 * Who the command runs as: sudo's variables checked against the password
 * database, --user overriding them, uid 0 with neither. Uses the accounts
 * every Debian system has (root, daemon).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/identity.h"

static void neither_is_root(void **state)
{
	char *env[] = { "HOME=/root", NULL };
	struct errmsg em = { { 0 } };
	struct identity id;

	assert_int_equal(identity_resolve(NULL, env, &id, &em), 0);
	assert_int_equal(id.source, IDENTITY_ROOT);
	assert_false(id.switch_user);
	assert_int_equal(id.uid, 0);
	assert_string_equal(id.name, "root");
	identity_free(&id);
}

static void sudo_user_from_passwd(void **state)
{
	char *env[] = { "SUDO_UID=1", "SUDO_GID=1", "SUDO_USER=daemon", "HOME=/root", NULL };
	struct errmsg em = { { 0 } };
	struct identity id;

	assert_int_equal(identity_resolve(NULL, env, &id, &em), 0);
	assert_int_equal(id.source, IDENTITY_SUDO);
	assert_true(id.switch_user);
	assert_int_equal(id.uid, 1);
	assert_int_equal(id.gid, 1);
	assert_string_equal(id.name, "daemon");
	assert_string_equal(id.home, "/usr/sbin");
	assert_true(id.n_groups >= 1);
	identity_free(&id);
}

static void sudo_name_mismatch_is_refused(void **state)
{
	char *env[] = { "SUDO_UID=1", "SUDO_GID=1", "SUDO_USER=root", NULL };
	char *no_user[] = { "SUDO_UID=1", "SUDO_GID=1", NULL };
	char *bad_uid[] = { "SUDO_UID=1x", "SUDO_USER=daemon", NULL };
	struct errmsg em = { { 0 } };
	struct identity id;

	assert_int_equal(identity_resolve(NULL, env, &id, &em), -EINVAL);
	assert_non_null(strstr(em.text, "SUDO_USER=root does not match SUDO_UID=1"));
	assert_non_null(strstr(em.text, "daemon"));
	assert_int_equal(identity_resolve(NULL, no_user, &id, &em), -EINVAL);
	assert_int_equal(identity_resolve(NULL, bad_uid, &id, &em), -EINVAL);
}

static void user_option_overrides_sudo(void **state)
{
	char *env[] = { "SUDO_UID=0", "SUDO_GID=0", "SUDO_USER=root", NULL };
	struct errmsg em = { { 0 } };
	struct identity id;

	assert_int_equal(identity_resolve("daemon", env, &id, &em), 0);
	assert_int_equal(id.source, IDENTITY_OPTION);
	assert_int_equal(id.uid, 1);
	identity_free(&id);
	assert_int_equal(identity_resolve("1:0", env, &id, &em), 0);
	assert_int_equal(id.uid, 1);
	assert_int_equal(id.gid, 0);
	identity_free(&id);
	assert_int_equal(identity_resolve("root", env, &id, &em), 0);
	assert_false(id.switch_user);
	assert_int_equal(id.uid, 0);
	identity_free(&id);
	assert_int_equal(identity_resolve("root:daemon", env, &id, &em), -EINVAL);
	assert_int_equal(identity_resolve("no-such-user-bb", env, &id, &em), -ENOENT);
	assert_non_null(strstr(em.text, "no user 'no-such-user-bb'"));
	assert_int_equal(identity_resolve("daemon:no-such-group-bb", env, &id, &em), -ENOENT);
	assert_int_equal(identity_resolve(":0", env, &id, &em), -EINVAL);
	assert_int_equal(identity_resolve("daemon:", env, &id, &em), -EINVAL);
}

/* As the caller, a root-only directory cannot be searched; back as root, it can. */
static void fs_as_caller_and_back(void **state)
{
	gid_t groups[1] = { 65534 };
	struct identity id = { .uid = 65534, .gid = 65534, .groups = groups, .n_groups = 1 };
	char dir[] = "/tmp/bpfbox-fsid-XXXXXX", inner[64];
	struct identity_fs saved;
	struct stat st;

	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0700), 0);
	snprintf(inner, sizeof(inner), "%s/x", dir);
	assert_int_equal(mkdir(inner, 0755), 0);
	assert_int_equal(identity_fs_enter(&id, &saved), 0);
	assert_int_equal(stat(inner, &st), -1);
	assert_int_equal(errno, EACCES);
	assert_int_equal(identity_fs_leave(&saved), 0);
	assert_int_equal(stat(inner, &st), 0);
	assert_int_equal(rmdir(inner), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(neither_is_root),
		cmocka_unit_test(fs_as_caller_and_back),
		cmocka_unit_test(sudo_user_from_passwd),
		cmocka_unit_test(sudo_name_mismatch_is_refused),
		cmocka_unit_test(user_option_overrides_sudo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
