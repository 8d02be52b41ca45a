// SPDX-License-Identifier: MIT
/*
 * bpfbox's own options under a ceiling: mode, git.newRepositories (the
 * stricter wins), the environment (policy_ceiling_env.c), limits (the smaller
 * wins) and the log, which stays the caller's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

static void fmt_bytes(char *buf, size_t len, long long v)
{
	static const char unit[] = "TGMK";

	for (int i = 0; i < 4; i++) {
		long long m = 1LL << (10 * (4 - i));

		if (v % m == 0) {
			snprintf(buf, len, "%lld%c", v / m, unit[i]);
			return;
		}
	}
	snprintf(buf, len, "%lld", v);
}

static void fmt_limit(char *buf, size_t len, const char *kind, long long v)
{
	if (!strcmp(kind, "memory"))
		fmt_bytes(buf, len, v);
	else if (!strcmp(kind, "cpu"))
		snprintf(buf, len, "%lld%%", v);
	else
		snprintf(buf, len, "%lld", v);
}

/* The smaller limit; 0 is "none", so any limit is smaller. */
static long long ceiling_limit(struct ceiling *c, const char *kind, long long caller,
			       long long admin)
{
	char path[32], v[32], lim[32], *outcome = NULL;

	if (!admin || (caller && caller <= admin))
		return caller;
	if (!caller)
		return admin;
	snprintf(path, sizeof(path), "bpfbox.limits.%s", kind);
	fmt_limit(v, sizeof(v), kind, caller);
	fmt_limit(lim, sizeof(lim), kind, admin);
	if (asprintf(&outcome, "limited to %s", lim) < 0) {
		c->oom = true;
		return admin;
	}
	ceiling_cut(c, path, v, "above the administrator's limit", outcome);
	free(outcome);
	return admin;
}

/* The stricter of the two; reporting without removing only when both ask for it. */
static void ceiling_git_new(struct ceiling *c)
{
	static const int rank[] = { [POLICY_GIT_REPORT] = 0, [POLICY_GIT_STRICT] = 1, [POLICY_GIT_REFUSE] = 2 };
	enum policy_git_new a = c->admin->git_new, u = c->caller->git_new;
	char value[32], outcome[32];

	c->p->git_new = rank[a] > rank[u] ? a : u;
	if (rank[u] < rank[a]) {
		snprintf(value, sizeof(value), "\"%s\"", policy_git_new_name(u));
		snprintf(outcome, sizeof(outcome), "\"%s\" applies", policy_git_new_name(a));
		ceiling_cut(c, "bpfbox.git.newRepositories", value, "looser than the administrator's policy", outcome);
	}
}

void ceiling_bpfbox(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	/* The caller may audit its own narrowing, never the administrator's refusals: nothing is cut. */
	p->audit = a->audit && u->audit;
	p->ceiling_audit = a->audit;
	p->audit_own = u->audit && !a->audit;
	ceiling_git_new(c);
	ceiling_env(c);
	p->limit_pids = ceiling_limit(c, "pids", u->limit_pids, a->limit_pids);
	p->limit_memory_bytes = ceiling_limit(c, "memory", u->limit_memory_bytes,
					      a->limit_memory_bytes);
	p->limit_cpu_percent = (int)ceiling_limit(c, "cpu", u->limit_cpu_percent,
						  a->limit_cpu_percent);
	/* Where the caller's own events go, and what it does not want to see, is its own. */
	p->log_file = ceiling_strdup(c, u->log_file);
	p->log_format = u->log_format;
}
