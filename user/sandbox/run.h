/* SPDX-License-Identifier: MIT */
/*
 * One run of a sandbox, step by step: set up (registry, cgroup, TMPDIR, the
 * policy's rules in the kernel, the ring buffer, the proxies, the launch),
 * supervise the command, report, tear down. `bpfbox exec` (cli/cmd_exec.c)
 * drives it for root and for the daemon's callers: it fills the request, the
 * identity and the policy, then calls these in order.
 */
#ifndef BPFBOX_SANDBOX_RUN_H
#define BPFBOX_SANDBOX_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lib/errmsg.h"
#include "log/log.h"
#include "policy/policy.h"
#include "policy/policy_ceiling.h"
#include "sandbox/cgroup.h"
#include "sandbox/identity.h"
#include "sandbox/kevent.h"
#include "sandbox/launch.h"
#include "sandbox/quota.h"
#include "sandbox/sandbox_cred.h"
#include "sandbox/sandbox_dns.h"
#include "sandbox/sandbox_env.h"
#include "sandbox/sandbox_git.h"
#include "sandbox/sandbox_learned.h"
#include "sandbox/sandbox_proxy.h"
#include "sandbox/sandbox_tls.h"
#include "sandbox/sandbox_tmpdir.h"
#include "sandbox/supervise.h"

struct bpf_state;
struct ring_buffer;
struct rule_spec;
struct supervise_result;

/* The exit status of a run that could not be set up (nothing ran): bpfbox's own 125. */
#define SANDBOX_EXIT_SETUP 125

/* What a run is asked for: a root bpfbox exec's options, or the daemon's caller's. */
struct sandbox_run_request {
	char **argv;
	bool audit; /* --audit */
	bool caller_bound; /* a caller under a ceiling (the daemon's, or exec --ceiling): audits its own narrowing */
	bool log_elsewhere; /* the log goes to a file or a descriptor, not to stderr */
	const char *admin_log_path; /* the administrator's log, or admin_log_fd (-1: none) */
	int admin_log_fd;
	long long timeout_ms; /* 0: none */
	long long kill_after_ms;
	const int *pass_fds; /* --pass-fd targets */
	size_t n_pass_fds;
	/* The daemon's caller's; for a root bpfbox exec for_caller is false and the rest unset. */
	bool for_caller;
	char **caller_env; /* the command's base environment (else bpfbox's own, then scrubbed) */
	bool caller_named_policy; /* the policy's name is the caller's claim, not a path bpfbox read */
	const int *pass_sources; /* where each --pass-fd target comes from */
	bool tty; /* a session of its own with stdin as the terminal */
	uint32_t quota_uid; /* whose share of the host-wide maps the run uses: the caller's, or root's */
	/* Control frames from the caller (supervise.h): control_fd -1 for none. */
	int control_fd;
	int (*control)(void *ctx);
	void *control_ctx;
	/* Live policy's descriptors and their reader (supervise.h): -1 for none. */
	int live_fds[SUPERVISE_LIVE_MAX];
	int (*live)(void *ctx, int fd);
	void *live_ctx;
};

/* A policy's rules as the kernel takes them (run_specs.c): the start's, then each live update's. */
struct run_rules {
	struct rule_spec *specs; /* spec i has rule id id_base + i */
	const char **paths; /* parallel to specs, for the resolver */
	bool *no_links; /* parallel to specs: resolved following no symlink */
	char **unix_names; /* abstract socket names allowed, pointing into the policy */
	size_t n_unix_names;
	const char **names; /* rule names by index, for events */
	char **owned_names;
	size_t n;
	size_t tmpdir_spec; /* the TMPDIR's entry in specs */
	uint32_t id_base; /* 0, or BB_RULE_GEN_BIT for odd generations */
};

/* Everything one run owns, released by sandbox_run_teardown whatever happened. */
struct sandbox_run {
	struct sandbox_run_request req;
	struct identity ident; /* filled by the driver before setup */
	struct log *log;
	struct policy *policy; /* loaded by the driver; the run frees it */
	struct bpf_state *bpf;
	struct sandbox_cgroup cg;
	bool cg_made;
	bool maps_added;
	int ringbuf_fd;
	struct ring_buffer *events;
	struct kevent_ctx kctx;
	struct sandbox_git git; /* the repositories the sandbox made, checked when it ends */
	struct sandbox_git_result git_result;
	struct sandbox_proxy proxy;
	bool proxy_started;
	struct sandbox_tls tls; /* network.tlsTerminate: tls.ca set once made */
	struct sandbox_cred cred; /* masked credentials: the real values, the command's sentinels */
	struct sandbox_dns dns;
	bool dns_started;
	struct sandbox_learned learned; /* transparent: the addresses learned for allowed names */
	struct quota_limits quota; /* the run's shares of the host-wide maps (sandbox/quota.h) */
	unsigned http_port; /* where the proxy variables point: ours or the policy's external proxies */
	unsigned socks_port;
	struct launch launch;
	bool launched;
	struct env_list env;
	int signal_fd;
	sigset_t old_mask;
	char id[32];
	char tmpdir[64];
	struct tmpdir_id tmpdir_id; /* ino 0 until it is made */
	char command_line[1024];
	struct run_rules rules; /* the rule set in force */
	const struct run_rules *update_rules; /* the set a live update is loading, for its notes */
	struct run_rules prev_rules; /* the one before the last live update: events in flight name its rules */
	uint32_t gen; /* the generation of rules (BB_RULES_KEY) */
	uint32_t rules_held; /* rule map entries rules wrote: the sandbox's share in use */
	struct policy **retired; /* policies a live update replaced, kept until teardown */
	size_t n_retired;
	struct timespec started;
	bool registered;
};

/* An empty run, safe to tear down. */
void sandbox_run_init(struct sandbox_run *r);
/* The run's id, TMPDIR name and command line, and its log (and the administrator's); -errno, said once. */
int sandbox_run_open_log(struct sandbox_run *r, const struct log_config *log);
/* Says why the command was not run: in the log, and on stderr if nobody may watch the log. */
void sandbox_run_failed(struct sandbox_run *r, const char *what, const struct errmsg *em);
/* Everything up to the command's exec (the policy and identity filled); on failure nothing ran. */
int sandbox_run_setup(struct sandbox_run *r, char *self_exe);
/* Lets the command exec, supervises it and reports its end: the exit status to return. */
int sandbox_run_supervise(struct sandbox_run *r);
void sandbox_run_teardown(struct sandbox_run *r);

/*
 * Replaces a running sandbox's policy with next, the whole effective policy
 * (already under the ceiling, if any): files, Unix sockets and devices switch
 * in the kernel in one map update (sandbox/run_update.c); the proxy and the
 * resolver decide by next from their next decision, and open connections to
 * a name next no longer allows are closed. One event records the change,
 * naming source ("control-fd", "update", "ceiling-reload"). On success the
 * run owns next (the old policy is kept until teardown: events in flight
 * still name its rules); on failure nothing changed, next is still the
 * caller's, and em says why: -EINVAL names a field that cannot change while
 * running, -ENOSPC a full share of the rule maps.
 */
int sandbox_run_update(struct sandbox_run *r, struct policy *next, const char *source, struct errmsg *em);

/* Between the run's own files (run.c, run_specs.c, run_log.c, run_update.c). */
int sandbox_run_build_specs(struct sandbox_run *r);
int run_rules_build(const struct sandbox_run *r, const struct policy *p, uint32_t id_base, struct run_rules *out);
void run_rules_free(struct run_rules *rr);
/* The policy's abstract socket names and devices within the per-sandbox bounds; em names the field. */
int run_rules_check_bounds(const struct run_rules *rr, const struct policy *p, struct errmsg *em);
/* Writes a resolved rule set under a rules key: files, abstract names, devices; *written counts rule entries. */
int run_rules_load(struct sandbox_run *r, const struct run_rules *rr, const struct policy *p,
		   const struct resolve_result *res, uint64_t key, uint32_t *written, struct errmsg *em);
enum audit_scope sandbox_run_audit_scope(const struct sandbox_run *r);
uint32_t sandbox_run_flags(const struct sandbox_run *r);
int sandbox_run_load_rules(struct sandbox_run *r, struct errmsg *em);
void sandbox_run_device_note(void *ctx, const char *path, const char *what);
void sandbox_run_log_start(struct sandbox_run *r);
void sandbox_run_log_exit(struct sandbox_run *r, const struct supervise_result *res);
void sandbox_run_report_limits(struct sandbox_run *r);
void sandbox_run_check_new_repositories(struct sandbox_run *r);
int sandbox_run_exec_failure_status(struct sandbox_run *r);

#endif
