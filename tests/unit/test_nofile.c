// SPDX-License-Identifier: MIT
/* The descriptor limit: raised for the supervisor, the caller's given back (user/lib/nofile.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/nofile.h"

/* Each case runs in a child: its limits and nofile.c's saved limit are its own. Returns its failed step, or 0. */
static int in_child(int (*body)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(body());
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static rlim_t soft(void)
{
	struct rlimit r;

	getrlimit(RLIMIT_NOFILE, &r);
	return r.rlim_cur;
}

static int raise_and_restore(void)
{
	struct rlimit r = { 100, 2048 };
	struct errmsg em = { { 0 } };

	if (setrlimit(RLIMIT_NOFILE, &r))
		return 1;
	if (nofile_raise(&em) || soft() != 2048 || nofile_soft() != 2048)
		return 2;
	/* A second raise (a daemon's worker) keeps the limit found first. */
	r.rlim_cur = 500;
	if (setrlimit(RLIMIT_NOFILE, &r) || nofile_raise(&em) || soft() != 2048)
		return 3;
	nofile_restore();
	if (soft() != 100)
		return 4;
	return 0;
}

static int below_the_least(void)
{
	struct rlimit r = { 64, 64 };
	struct errmsg em = { { 0 } };

	if (setrlimit(RLIMIT_NOFILE, &r))
		return 1;
	if (nofile_raise(&em) != -EMFILE)
		return 2;
	if (!strstr(em.text, "descriptor limit is 64 (hard 64)") || !strstr(em.text, "ulimit -n"))
		return 3;
	/* Nothing was changed: the limit is the caller's still. */
	if (soft() != 64)
		return 4;
	return 0;
}

static int restore_without_raise(void)
{
	rlim_t before = soft();

	nofile_restore();
	return soft() == before ? 0 : 1;
}

static void test_raise_and_restore(void **state)
{
	assert_int_equal(in_child(raise_and_restore), 0);
}

static void test_below_the_least(void **state)
{
	assert_int_equal(in_child(below_the_least), 0);
}

static void test_restore_without_raise(void **state)
{
	assert_int_equal(in_child(restore_without_raise), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raise_and_restore),
		cmocka_unit_test(test_below_the_least),
		cmocka_unit_test(test_restore_without_raise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
