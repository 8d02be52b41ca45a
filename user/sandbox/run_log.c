// SPDX-License-Identifier: MIT
/* What a run says: why it did not start, its start and exit lines, the limits that bit, the repositories it made. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cgroup.h"
#include "policy/policy.h"
#include "run.h"
#include "sandbox_maps.h"
#include "supervise.h"

void sandbox_run_failed(struct sandbox_run *r, const char *what, const struct errmsg *em)
{
	struct log_event *ev;

	ev = log_event_new(LOG_ERROR, "event", "process", "start,error", "setup-failed", "failure");
	log_event_message(ev, "%s: %s; the command was not run", what, em->text);
	log_emit(r->log, ev);
	/* The log may be a file nobody watches: the reason also goes to the terminal. */
	if (log_is_json(r->log) && r->req.log_elsewhere)
		fprintf(stderr, "bpfbox: %s: %s; the command was not run\n", what, em->text);
}

void sandbox_run_log_start(struct sandbox_run *r)
{
	struct log_event *ev = log_event_new(LOG_INFO, "event", "process", "start", "sandbox-start", "success");
	enum audit_scope scope = sandbox_run_audit_scope(r);
	bool audit = scope != AUDIT_NONE;
	char digest[80], who[320], uid[16], cuts[640] = "";

	/* Folded refusals reported at exit carry no flags of their own (but BB_OP_AUDITED). */
	r->kctx.audit = scope == AUDIT_ALL;
	log_event_set_int(ev, "process.pid", r->launch.pid);
	log_event_set_strv(ev, "process.args", r->req.argv);
	log_event_set_str(ev, "process.command_line", r->command_line);
	/* A daemon's caller names its file as it likes: a claim; the digest is of what it sent. */
	if (r->policy->file && r->req.caller_named_policy)
		log_event_set_str(ev, "bpfbox.caller.policy_name", r->policy->file);
	else if (r->policy->file)
		log_event_set_str(ev, "bpfbox.policy.path", r->policy->file);
	if (r->policy->n_grant_cuts)
		log_event_set_strv(ev, "bpfbox.policy.grant_cuts", (char *const *)r->policy->grant_cuts);
	snprintf(digest, sizeof(digest), "sha256:%s", r->policy->digest);
	log_event_set_str(ev, "bpfbox.policy.digest", digest);
	if (r->policy->has_ceiling) {
		if (r->policy->ceiling_file)
			log_event_set_str(ev, "bpfbox.policy.ceiling.path", r->policy->ceiling_file);
		snprintf(digest, sizeof(digest), "sha256:%s", r->policy->ceiling_digest);
		log_event_set_str(ev, "bpfbox.policy.ceiling.digest", digest);
	}
	log_event_set_int(ev, "bpfbox.proxy.port", r->http_port);
	if (r->socks_port != r->http_port)
		log_event_set_int(ev, "bpfbox.proxy.socks_port", r->socks_port);
	log_event_set_bool(ev, "bpfbox.audit", audit);
	if (audit)
		log_event_set_str(ev, "bpfbox.audit_scope", audit_scope_name(scope));
	if (r->ident.switch_user)
		snprintf(who, sizeof(who), "as %s (uid %u, from %s)", r->ident.name, (unsigned)r->ident.uid,
			 identity_source_name(r->ident.source));
	else if (r->ident.source == IDENTITY_ROOT)
		snprintf(who, sizeof(who), "as uid 0 without capabilities: no sudo user and no --user");
	else
		snprintf(who, sizeof(who), "as uid 0 without capabilities (%s)", identity_source_name(r->ident.source));
	snprintf(uid, sizeof(uid), "%u", r->ident.switch_user ? (unsigned)r->ident.uid : 0u);
	log_event_set_str(ev, "process.user.id", uid);
	if (r->policy->n_grant_cuts)
		snprintf(cuts, sizeof(cuts), "; grant cut (a symbolic link the caller could have placed): %s%s",
			 r->policy->grant_cuts[0], r->policy->n_grant_cuts > 1 ? " and more (bpfbox.policy.grant_cuts)" : "");
	log_event_message(ev, "sandbox started: %s (pid %d, %s, policy %s%s%s%s%s)%s%s", r->command_line,
			  r->launch.pid, who, r->policy->file ? r->policy->file : "built-in default",
			  r->req.caller_named_policy ? " as the caller named it" : "",
			  r->policy->has_ceiling ? " under the administrator's " : "",
			  r->policy->has_ceiling ? r->policy->ceiling_file : "",
			  scope == AUDIT_ALL	  ? ", audit mode"
			  : scope == AUDIT_CALLER ? ", audit mode of the caller's own rules only (the administrator's "
						    "refusals are enforced)"
						  : "",
			  r->ident.switch_user && r->ident.uid != 0
				  ? ""
				  : "; warning: it runs as uid 0, so files only root may read (/etc/shadow, "
				    "SSH host keys, /root) stay readable unless denyRead names them",
			  cuts);
	log_emit(r->log, ev);
}

static long long elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000LL + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* Nothing of the sandbox runs any more: what it left in the repositories it made is read now. */
void sandbox_run_check_new_repositories(struct sandbox_run *r)
{
	bool strict = r->policy->git_new != POLICY_GIT_REPORT;
	int err;

	err = sandbox_git_check(&r->git, &r->ident, strict, r->log, &r->git_result);
	if (err)
		log_msg(r->log, LOG_WARN, "warning", "the repositories the sandbox made were not all checked: %s; "
			"read their .git/config and .git/hooks before running git in them", strerror(-err));
	if (r->git_result.unchecked)
		log_msg(r->log, LOG_WARN, "warning", "%u repositor%s made in the sandbox could not be checked (see "
			"the git-unchecked lines): read their .git/config and .git/hooks before running git there",
			r->git_result.unchecked, r->git_result.unchecked == 1 ? "y" : "ies");
}

void sandbox_run_log_exit(struct sandbox_run *r, const struct supervise_result *res)
{
	uint64_t lost = 0, denied = 0;
	struct log_counts counts;
	struct log_event *ev;
	bool ok = res->exit_code == 0 && !res->term_signal;
	long long ms = elapsed_ms(&r->started);
	const char *by = res->ended_by ? res->ended_by : "exit";
	char how[64], tail[96], git[96];

	sandbox_maps_counters(r->bpf, r->cg.id, &lost, &denied);
	if (lost) {
		ev = log_event_new(LOG_WARN, "event", "process", "info", "events-lost", "unknown");
		log_event_set_int(ev, "bpfbox.lost", (long long)lost);
		log_event_message(ev, "lost %llu kernel refusal reports: the ring buffer was full; they were "
				      "enforced but not reported one by one",
				  (unsigned long long)lost);
		log_emit(r->log, ev);
	}
	ev = log_event_new(ok ? LOG_INFO : LOG_ERROR, "event", "process", "end", "sandbox-exit",
			   ok ? "success" : "failure");
	log_event_set_int(ev, "process.pid", r->launch.pid);
	if (res->term_signal) {
		log_event_set_int(ev, "bpfbox.exit.signal", res->term_signal);
		snprintf(how, sizeof(how), "SIG%s", sigabbrev_np(res->term_signal));
		log_event_set_str(ev, "bpfbox.exit.signal_name", how);
		snprintf(how, sizeof(how), "killed by SIG%s", sigabbrev_np(res->term_signal));
	} else {
		log_event_set_int(ev, "process.exit_code", res->exit_code);
		snprintf(how, sizeof(how), "exited with status %d", res->exit_code);
	}
	log_event_set_str(ev, "bpfbox.exit.ended_by", by);
	log_event_set_int(ev, "event.duration", ms * 1000000LL);
	log_get_counts(r->log, &counts);
	log_event_set_int(ev, "bpfbox.counts.denied", (long long)denied);
	log_event_set_int(ev, "bpfbox.counts.audited", (long long)counts.audited);
	log_event_set_int(ev, "bpfbox.counts.ignored", (long long)counts.ignored);
	log_event_set_int(ev, "bpfbox.counts.lost", (long long)lost);
	log_event_set_int(ev, "bpfbox.counts.warnings", (long long)counts.seen[LOG_WARN]);
	log_event_set_int(ev, "bpfbox.counts.errors", (long long)counts.seen[LOG_ERROR]);
	log_event_set_int(ev, "bpfbox.counts.git_repositories", (long long)r->git_result.repos);
	log_event_set_int(ev, "bpfbox.counts.git_findings", (long long)r->git_result.findings);
	tail[0] = 0;
	if (denied && lost)
		snprintf(tail, sizeof(tail), " (%llu refusals, %llu not reported one by one)",
			 (unsigned long long)denied, (unsigned long long)lost);
	else if (denied)
		snprintf(tail, sizeof(tail), " (%llu refusal%s%s)", (unsigned long long)denied, denied == 1 ? "" : "s",
			 r->kctx.audit ? " audited, none enforced" : "");
	git[0] = 0;
	if (r->git_result.findings)
		snprintf(git, sizeof(git), "; %u finding%s in repositories it made (%s)", r->git_result.findings,
			 r->git_result.findings == 1 ? "" : "s",
			 r->policy->git_new == POLICY_GIT_REPORT ? "reported, left in place" : "removed");
	log_event_message(ev, "sandbox %s after %lld.%lld s%s%s%s%s", how, ms / 1000, (ms % 1000) / 100, tail,
			  strcmp(by, "exit") && strcmp(by, "signal") ? ", ended by " : "",
			  strcmp(by, "exit") && strcmp(by, "signal") ? by : "", git);
	log_emit(r->log, ev);
}

/* Limits that bit during the run: a fork bomb shows as refused forks, a memory hog as OOM kills. */
void sandbox_run_report_limits(struct sandbox_run *r)
{
	long long forks = cgroup_event_count(r->cg.path, "pids.events", "max");
	long long ooms = cgroup_event_count(r->cg.path, "memory.events", "oom_kill");

	if (forks)
		log_msg(r->log, LOG_WARN, "warning", "resource limit reached: %lld fork(s) refused by pids.max=%lld",
			forks, r->policy->limit_pids);
	if (ooms)
		log_msg(r->log, LOG_WARN, "warning", "resource limit reached: %lld process(es) killed by memory.max=%lld",
			ooms, r->policy->limit_memory_bytes);
}

int sandbox_run_exec_failure_status(struct sandbox_run *r)
{
	struct log_event *ev;
	int e = r->launch.exec_errno;
	int status = r->launch.setup_failed ? SANDBOX_EXIT_SETUP : e == ENOENT ? 127 : 126;
	char text[PATH_MAX + 512];

	ev = log_event_new(LOG_ERROR, "event", "process", "start,error",
			   r->launch.setup_failed ? "setup-failed" : "exec-failed", "failure");
	log_event_set_str(ev, "process.executable", r->req.argv[0]);
	log_event_set_errno(ev, e);
	log_event_set_int(ev, "process.exit_code", status);
	if (r->launch.setup_failed && r->launch.stage == LAUNCH_STAGE_CWD)
		snprintf(text, sizeof(text), "user %s (uid %u) cannot enter the working directory %s: %s; the command "
			 "was not run", r->ident.name, (unsigned)r->ident.uid, r->policy->cwd, strerror(e));
	else if (r->launch.setup_failed && r->launch.stage == LAUNCH_STAGE_USER)
		snprintf(text, sizeof(text), "could not become user %s (uid %u, gid %u) for %s: %s; the command was not run",
			 r->ident.name, (unsigned)r->ident.uid, (unsigned)r->ident.gid, r->req.argv[0], strerror(e));
	else if (r->launch.setup_failed)
		snprintf(text, sizeof(text), "could not drop privileges for %s: %s", r->req.argv[0], strerror(e));
	else
		snprintf(text, sizeof(text), "cannot execute %s: %s", r->req.argv[0], strerror(e));
	log_event_message(ev, "%s", text);
	log_emit(r->log, ev);
	if (!log_is_json(r->log) || r->req.log_elsewhere) {
		if (r->launch.setup_failed)
			fprintf(stderr, "bpfbox: %s\n", text);
		else
			fprintf(stderr, "bpfbox: %s: %s\n", r->req.argv[0],
				e == ENOENT ? "command not found" : strerror(e));
	}
	return status;
}
