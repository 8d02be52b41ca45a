// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy apply` run by several administrators at once (policy_apply_cli.c): each
 * reads the file in force only under the history's lock, so the history holds the file
 * found before the first apply once, then one version per apply, and the file in force is
 * one of them whole. Before the lock covered the read, an apply that read the file while
 * another replaced it kept the replaced text again as a "found" version.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/policy_apply_cli.h"
#include "policy/policy.h"
#include "policy/policy_store.h"

#define APPLIERS 8

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_concurrent_applies(void **state)
{
	char dir[] = "/tmp/bb-apply-XXXXXX", target[96], history[96], file[96], text[256], cmd[128];
	struct policy_version *v;
	int fd, found = 0, status;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/policy.json", dir);
	snprintf(history, sizeof(history), "%s/history", dir);
	write_file(target, "{\"network\":{\"allowedDomains\":[],\"deniedDomains\":[]},"
		   "\"filesystem\":{\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[]}}\n");
	for (int i = 0; i < APPLIERS; i++) {
		snprintf(file, sizeof(file), "%s/p%d.json", dir, i);
		snprintf(text, sizeof(text), "{\"network\":{\"allowedDomains\":[\"a%d.example\"],\"deniedDomains\":[]},"
			 "\"filesystem\":{\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[]}}\n", i);
		write_file(file, text);
	}
	for (int i = 0; i < APPLIERS; i++) {
		if (fork() == 0) {
			char *argv[] = { "--target", target, "--history", history, file, NULL };

			snprintf(file, sizeof(file), "%s/p%d.json", dir, i);
			if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
				_exit(3);
			_exit(policy_apply_command("apply", 5, argv));
		}
	}
	for (int i = 0; i < APPLIERS; i++) {
		assert_true(wait(&status) > 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	fd = policy_store_open(history, false);
	assert_true(fd >= 0);
	assert_int_equal(policy_store_list(fd, &v, &n), 0);
	close(fd);
	for (size_t i = 0; i < n; i++)
		found += !strcmp(v[i].source, "found");
	assert_int_equal(found, 1);
	assert_int_equal(n, 1 + APPLIERS);
	assert_string_equal(v[0].source, "found");
	free(v);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_applies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
