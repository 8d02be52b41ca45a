// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "nofile.h"

/* The limit bpfbox was started with: what the command gets back. */
static struct rlimit found;
static bool raised;

int nofile_raise(struct errmsg *em)
{
	struct rlimit now;

	if (getrlimit(RLIMIT_NOFILE, &now))
		return errmsg_set(em, -errno, "reading the descriptor limit (RLIMIT_NOFILE)");
	if (!raised) {
		found = now;
		raised = true;
	}
	if (now.rlim_max != RLIM_INFINITY && now.rlim_max < NOFILE_MIN)
		return errmsg_set(em, -EMFILE,
				  "the descriptor limit is %lu (hard %lu): a sandbox needs at least %d for its maps, "
				  "proxy and resolver; raise it (ulimit -n %d, or LimitNOFILE= for a service)",
				  (unsigned long)now.rlim_cur, (unsigned long)now.rlim_max, NOFILE_MIN, 4 * NOFILE_MIN);
	now.rlim_cur = now.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &now))
		return errmsg_set(em, -errno, "raising the descriptor limit to its hard limit %lu",
				  (unsigned long)now.rlim_max);
	return 0;
}

void nofile_restore(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &found);
}

unsigned long nofile_soft(void)
{
	struct rlimit now;

	if (getrlimit(RLIMIT_NOFILE, &now))
		return NOFILE_MIN;
	return now.rlim_cur == RLIM_INFINITY ? (unsigned long)-1 : (unsigned long)now.rlim_cur;
}
