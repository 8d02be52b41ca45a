// SPDX-License-Identifier: MIT
/* One run of a sandbox: its id and log, setup up to the command's exec, supervision, teardown. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfbox.h"
#include "bpf_state.h"
#include "cgroup_attach.h"
#include "lib/signals.h"
#include "lib/start_trace.h"
#include "registry.h"
#include "run.h"
#include "sandbox_devices.h"
#include "sandbox_gc.h"
#include "sandbox_maps.h"
#include "sandbox_private.h"
#include "supervise.h"

extern char **environ;

void sandbox_run_init(struct sandbox_run *r)
{
	memset(r, 0, sizeof(*r));
	r->ringbuf_fd = -1;
	r->signal_fd = -1;
	r->req.admin_log_fd = -1;
	r->req.control_fd = -1;
	for (int i = 0; i < SUPERVISE_LIVE_MAX; i++)
		r->req.live_fds[i] = -1;
}

static void make_id(struct sandbox_run *r)
{
	unsigned char rnd[6] = { 0 };

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		clock_gettime(CLOCK_MONOTONIC, (struct timespec *)rnd);
	snprintf(r->id, sizeof(r->id), "bb-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5]);
	snprintf(r->tmpdir, sizeof(r->tmpdir), "/tmp/bpfbox-%s", r->id + 3);
}

static void join_command(struct sandbox_run *r)
{
	size_t off = 0;

	r->command_line[0] = 0;
	for (char **a = r->req.argv; *a && off < sizeof(r->command_line) - 1; a++)
		off += (size_t)snprintf(r->command_line + off, sizeof(r->command_line) - off, "%s%s",
					a == r->req.argv ? "" : " ", *a);
}

int sandbox_run_open_log(struct sandbox_run *r, const struct log_config *log)
{
	int err;

	make_id(r);
	join_command(r);
	err = log_open(log, &r->log);
	if (err) {
		fprintf(stderr, "bpfbox: opening the log %s: %s; the command was not run\n",
			log->file_path ? log->file_path : "", strerror(-err));
		return err;
	}
	log_set_sandbox(r->log, r->id, r->command_line);
	if (r->req.admin_log_path || r->req.admin_log_fd >= 0) {
		err = log_set_admin(r->log, r->req.admin_log_path, r->req.admin_log_fd);
		if (err) {
			struct errmsg em = { { 0 } };

			errmsg_set(&em, err, "opening the administrator's log %s",
				   r->req.admin_log_path ? r->req.admin_log_path : "(descriptor)");
			sandbox_run_failed(r, "log", &em);
			return err;
		}
	}
	return 0;
}

/* Blocks the signals the supervisor handles; the child restores its own mask. */
static int block_signals(struct sandbox_run *r)
{
	static const int watch[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, 0 };
	static const int block_only[] = { SIGPIPE, 0 };
	int fd = signals_block_to_fd(watch, block_only, &r->old_mask);

	if (fd < 0)
		return fd;
	r->signal_fd = fd;
	return 0;
}

void sandbox_run_teardown(struct sandbox_run *r)
{
	struct errmsg em = { { 0 } };

	if (r->launched && r->launch.go_fd >= 0)
		launch_abort(&r->launch);
	if (r->cg_made)
		cgroup_kill_all(r->cg.path, 5000);
	if (r->events) {
		ring_buffer__consume(r->events);
		ring_buffer__free(r->events);
	}
	if (r->proxy_started)
		sandbox_proxy_stop(&r->proxy);
	start_trace("teardown: cgroup killed, proxy stopped");
	sandbox_tls_free(&r->tls);
	sandbox_cred_free(&r->cred);
	if (r->cg_made && r->bpf)
		sandbox_private_sweep_shm(r->bpf, r->cg.id);
	if (r->dns_started)
		sandbox_dns_stop(&r->dns);
	start_trace("teardown: resolver stopped");
	sandbox_learned_free(&r->learned);
	if (r->maps_added)
		sandbox_maps_remove(r->bpf, r->cg.id);
	start_trace("teardown: map entries removed");
	if (r->ringbuf_fd >= 0)
		close(r->ringbuf_fd);
	if (r->cg_made)
		cgroup_destroy(&r->cg);
	start_trace("teardown: cgroup removed");
	if (r->launched)
		launch_release(&r->launch);
	if (r->tmpdir_id.ino && sandbox_tmpdir_remove(r->tmpdir, &r->tmpdir_id, &em))
		log_msg(r->log, LOG_WARN, "warning", "TMPDIR not removed: %s", em.text);
	start_trace("teardown: TMPDIR removed");
	if (r->cg_made)
		sandbox_private_release(r->bpf, r->cg.id);
	if (r->registered)
		registry_remove(r->id);
	sandbox_git_free(&r->git);
	env_free(&r->env);
	identity_free(&r->ident);
	bpf_state_close(r->bpf);
	run_rules_free(&r->rules);
	run_rules_free(&r->prev_rules);
	policy_free(r->policy);
	for (size_t i = 0; i < r->n_retired; i++)
		policy_free(r->retired[i]);
	free(r->retired);
	if (r->signal_fd >= 0)
		close(r->signal_fd);
	log_close(r->log);
}

/* Written before the cgroup is made and again after, so that gc finds all a dead supervisor left. */
static int register_sandbox(struct sandbox_run *r)
{
	struct registry_entry e = { 0 };
	int err;

	snprintf(e.id, sizeof(e.id), "%s", r->id);
	e.supervisor = getpid();
	e.supervisor_start = process_start_time(e.supervisor);
	e.cgroup_id = r->cg.id;
	snprintf(e.cgroup, sizeof(e.cgroup), "%s", r->cg.path);
	snprintf(e.tmpdir, sizeof(e.tmpdir), "%s", r->tmpdir);
	e.tmpdir_dev = r->tmpdir_id.dev;
	e.tmpdir_ino = r->tmpdir_id.ino;
	snprintf(e.policy, sizeof(e.policy), "%s", r->policy->file ? r->policy->file : "(default)");
	snprintf(e.command, sizeof(e.command), "%s", r->command_line);
	/* A daemon's sandbox: the reload of that file (a restarted daemon's too) finds it by this. */
	if (r->req.for_caller && r->policy->has_ceiling && r->policy->ceiling_file)
		snprintf(e.ceiling, sizeof(e.ceiling), "%s", r->policy->ceiling_file);
	e.started = (long long)time(NULL);
	e.child = r->launched ? r->launch.pid : 0;
	e.uid = r->ident.switch_user ? r->ident.uid : 0;
	e.gid = r->ident.switch_user ? r->ident.gid : 0;
	err = registry_write(&e);
	if (!err)
		r->registered = true;
	return err;
}

/*
 * srt's external proxies: httpProxyPort and socksProxyPort each replace the
 * proxy bpfbox would run for that protocol. Ours serves both on one port and
 * runs unless both are external.
 */
/*
 * network.tlsTerminate: the CA and upstream verification, before the proxy.
 * Files a caller's policy names are read as the caller; a CA the
 * administrator's ceiling names is root's.
 */
static int start_tls(struct sandbox_run *r, struct errmsg *em)
{
	const struct policy *p = r->policy;
	const struct identity *reader = r->ident.switch_user && !p->tls.from_ceiling ? &r->ident : NULL;

	if (!p->tls.enabled)
		return 0;
	return sandbox_tls_setup(&r->tls, p, reader, r->id, em);
}

static int start_proxies(struct sandbox_run *r, struct errmsg *em)
{
	const struct policy *p = r->policy;
	int err;

	bool transparent = !p->transparent_off;

	/*
	 * bpfbox.network.transparent: the sandbox's DNS (port 53 goes to it in
	 * the kernel) teaches the kernel the addresses of allowed names, and TCP
	 * to those goes to our proxy's transparent listener. It needs our proxy.
	 */
	if (transparent) {
		err = sandbox_learned_init(&r->learned, p, r->bpf, r->cg.id, &r->quota, r->req.quota_uid);
		if (err)
			return errmsg_set(em, err, "the learned address table");
		sandbox_learned_at_launch(&r->learned, "/etc/hosts");
		if (r->learned.refused)
			log_msg(r->log, LOG_WARN, "learned-address-refused",
				"%llu address(es) of /etc/hosts and allowedDomains were not learned: the sandbox's "
				"share of %u learned addresses is full (%s learned=N raises it)",
				r->learned.refused, r->quota.learned, r->quota.option);
	}
	start_trace("learned addresses");
	if (!p->http_proxy_port || !p->socks_proxy_port || transparent) {
		err = start_tls(r, em);
		if (err)
			return err;
		start_trace("TLS termination");
		err = sandbox_proxy_start_transparent(&r->proxy, p, r->log, transparent ? &r->learned : NULL,
						      r->bpf->maps.tconns, r->cg.id,
						      r->tls.ca ? &r->tls.cfg : NULL, &r->cred, em);
		if (err)
			return err;
		r->proxy_started = true;
		start_trace("proxy");
	} else if (p->tls.enabled || p->mitm.enabled) {
		return errmsg_set(em, -EINVAL, "network.%s needs bpfbox's own proxy, but httpProxyPort and "
				  "socksProxyPort send every connection to other proxies",
				  p->tls.enabled ? "tlsTerminate" : "mitmProxy");
	}
	r->http_port = p->http_proxy_port ? (unsigned)p->http_proxy_port : r->proxy.port;
	r->socks_port = p->socks_proxy_port ? (unsigned)p->socks_proxy_port : r->proxy.port;
	if (transparent) {
		err = sandbox_dns_start(&r->dns, p, r->log, &r->learned, r->bpf->maps.dns_peers, r->cg.id, em);
		if (err)
			return err;
		r->dns_started = true;
	}
	return 0;
}
/*
 * Registered before the cgroup exists: a concurrent gc removes every bpfbox
 * cgroup that no entry explains, as the leftover of a crash. Then the cgroup,
 * its limits and the TMPDIR, each registered for gc should this supervisor die.
 */
static int setup_cgroup_and_tmpdir(struct sandbox_run *r)
{
	struct cgroup_limits lim;
	struct errmsg em = { { 0 } };
	char parent[PATH_MAX];
	int err;

	err = cgroup_parent_ensure(parent, sizeof(parent), &em);
	if (err)
		return sandbox_run_failed(r, "cgroup", &em), err;
	snprintf(r->cg.path, sizeof(r->cg.path), "%s/%s", parent, r->id);
	err = register_sandbox(r);
	if (err)
		return errmsg_set(&em, err, "writing %s/%s", REGISTRY_DIR, r->id),
		       sandbox_run_failed(r, "registry", &em), err;
	err = cgroup_create(r->id, &r->cg, &em);
	if (err)
		return sandbox_run_failed(r, "cgroup", &em), err;
	r->cg_made = true;
	/* Again, now with the cgroup's id. */
	err = register_sandbox(r);
	if (err)
		return errmsg_set(&em, err, "writing %s/%s", REGISTRY_DIR, r->id),
		       sandbox_run_failed(r, "registry", &em), err;
	lim = (struct cgroup_limits){ r->policy->limit_pids, r->policy->limit_memory_bytes,
				      r->policy->limit_cpu_percent };
	err = cgroup_apply_limits(&r->cg, &lim, &em);
	if (err)
		return sandbox_run_failed(r, "resource limits", &em), err;
	err = sandbox_tmpdir_create(r->tmpdir, r->ident.switch_user ? r->ident.uid : 0,
				    r->ident.switch_user ? r->ident.gid : 0, &r->tmpdir_id, &em);
	if (err)
		return sandbox_run_failed(r, "TMPDIR", &em), -EIO;
	/* Its identity, for gc should this supervisor die: gc removes only that directory. */
	err = register_sandbox(r);
	if (err)
		return errmsg_set(&em, err, "writing %s/%s", REGISTRY_DIR, r->id),
		       sandbox_run_failed(r, "registry", &em), err;
	return 0;
}

/* The sandbox's entry in the maps, its abstract socket names and devices; the rules come once resolved. */
static int setup_maps(struct sandbox_run *r)
{
	struct errmsg em = { { 0 } };
	int err;

	err = sandbox_run_build_specs(r);
	if (err)
		return errmsg_set(&em, err, "building rules"), sandbox_run_failed(r, "rules", &em), err;
	err = run_rules_check_bounds(&r->rules, r->policy, &em);
	if (err)
		return sandbox_run_failed(r, "loading the policy into the kernel", &em), err;
	err = sandbox_maps_add(r->bpf, r->cg.id, sandbox_run_flags(r), r->policy->sock_allow, &r->ringbuf_fd, &em);
	if (err)
		return sandbox_run_failed(r, "registering the sandbox", &em), err;
	r->maps_added = true;
	err = sandbox_maps_allow_unix_names(r->bpf, r->cg.id, (const char *const *)r->rules.unix_names, r->rules.n_unix_names,
					    &em);
	if (!err)
		err = sandbox_devices_load(r->bpf, r->cg.id, r->policy->device_allow, r->policy->n_device_allow,
					   sandbox_run_device_note, r, &em);
	if (err)
		return sandbox_run_failed(r, "loading the policy into the kernel", &em), err;
	return 0;
}

/* The kernel's refusals, read from the sandbox's ring buffer into log events. */
static int setup_events(struct sandbox_run *r)
{
	struct errmsg em = { { 0 } };

	r->kctx.log = r->log;
	r->kctx.git = &r->git;
	r->kctx.sandbox_id = r->cg.id;
	r->kctx.rule_names[0] = r->rules.names;
	r->kctx.n_rules[0] = r->rules.n;
	r->events = ring_buffer__new(r->ringbuf_fd, kevent_handle, &r->kctx, NULL);
	if (!r->events)
		return errmsg_set(&em, -errno, "opening the ring buffer"), sandbox_run_failed(r, "events", &em), -EIO;
	return 0;
}

/* The command's environment, then its launch: the child resolves the rule paths and waits for the go. */
static int setup_launch(struct sandbox_run *r, char *self_exe)
{
	struct launch_spec ls = { 0 };
	struct env_extra x = { 0 };
	struct errmsg em = { { 0 } };
	int err;

	x.sandbox_id = r->id;
	x.tmpdir = r->tmpdir;
	x.proxy_port = r->http_port;
	x.socks_port = r->socks_port;
	x.self_exe = self_exe;
	if (r->tls.ca) {
		err = sandbox_tls_bundle(&r->tls, r->tmpdir, &r->tmpdir_id, &em);
		if (err)
			return sandbox_run_failed(r, "TLS termination", &em), err;
		x.ca_bundle = r->tls.bundle;
	}
	x.cred = &r->cred;
	if (r->ident.switch_user) {
		x.user = r->ident.name;
		x.home = r->ident.home;
		x.shell = r->ident.shell;
	}
	err = env_build(r->policy, r->req.for_caller ? r->req.caller_env : environ, &x, &r->env);
	if (err)
		return errmsg_set(&em, err, "building the environment"), sandbox_run_failed(r, "environment", &em),
		       err;
	if (!r->req.for_caller)
		env_scrub_self(r->policy, environ);

	ls.search_path = env_get(&r->env, "PATH");
	ls.argv = r->req.argv;
	ls.envp = r->env.v;
	ls.bpf = r->bpf;
	ls.sandbox_id = r->cg.id;
	ls.cgroup_fd = r->cg.dir_fd;
	ls.resolve_paths = r->rules.paths;
	ls.resolve_no_links = r->rules.no_links;
	ls.n_resolve = r->rules.n;
	ls.keep_fds = r->req.pass_fds;
	ls.n_keep_fds = r->req.n_pass_fds;
	if (r->req.for_caller) {
		ls.keep_fd_sources = r->req.pass_sources;
		ls.new_session_tty = r->req.tty;
	}
	ls.identity = &r->ident;
	ls.cwd = r->policy->cwd;
	/* Orphaned background jobs become ours, to be killed and reaped at the end. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	err = launch_start(&ls, &r->launch, &em);
	if (err)
		return sandbox_run_failed(r, "launch", &em), err;
	r->launched = true;
	return 0;
}

/* Once the child resolved the paths: the rules by the kernel's identities, the TMPDIR claimed, enforcement on. */
static int setup_enforce(struct sandbox_run *r)
{
	struct sandbox_ports ports;
	struct errmsg em = { { 0 } };
	int err;

	ports = (struct sandbox_ports){
		.proxy = r->http_port,
		.socks = r->socks_port != r->http_port ? r->socks_port : 0,
		.own_proxy = r->proxy_started ? r->proxy.port : 0,
		.dns4 = r->dns.port4,
		.dns6 = r->dns.port6,
		.transparent4 = r->proxy.tport4,
		.transparent6 = r->proxy.tport6,
	};
	err = launch_wait_resolved(&r->launch, &em);
	if (!err)
		err = sandbox_run_load_rules(r, &em);
	/* By the identity the kernel resolved: no other sandbox reaches it, whatever the path. */
	if (!err && !r->launch.results[r->rules.tmpdir_spec].err && !r->launch.results[r->rules.tmpdir_spec].missing)
		err = sandbox_private_claim_dir(r->bpf, r->cg.id, r->launch.results[r->rules.tmpdir_spec].dev,
						r->launch.results[r->rules.tmpdir_spec].ino, &em);
	else if (!err)
		err = errmsg_set(&em, -ENOENT, "resolving %s in the kernel", r->tmpdir);
	if (!err)
		err = sandbox_maps_enforce(r->bpf, r->cg.id, &ports, &em);
	if (err)
		return sandbox_run_failed(r, "loading the policy into the kernel", &em), err;
	return 0;
}

/* The policy's ignore rules, every one of them: lines the log drops for a command. */
static void set_log_ignore(struct sandbox_run *r)
{
	size_t n = r->policy->n_ignore;
	struct log_ignore_rule *rules;

	if (!n)
		return;
	rules = calloc(n, sizeof(*rules));
	if (!rules) {
		log_msg(r->log, LOG_ERROR, "error", "out of memory setting ignoreViolations: every refusal is reported");
		return;
	}
	for (size_t i = 0; i < n; i++)
		rules[i] = (struct log_ignore_rule){ r->policy->ignore[i].command,
						     (const char *const *)r->policy->ignore[i].lines,
						     r->policy->ignore[i].n_lines };
	log_set_ignore(r->log, rules, n);
	free(rules);
}

/*
 * The values of the credentials the policy denies or masks: no log line
 * (this sandbox's or the administrator's copy), registry entry or `ps`
 * shows them. Masked ones go into the table the proxy reads, the command
 * gets their sentinels.
 */
static int register_secrets(struct sandbox_run *r, struct errmsg *em)
{
	char **env = r->req.for_caller ? r->req.caller_env : environ;
	int err;

	for (char **v = env; v && *v; v++) {
		char name[256];
		const char *value = env_entry_name(*v, name, sizeof(name));

		if (value && policy_env_denied(r->policy, name) && log_add_secret(r->log, name, value))
			return errmsg_set(em, -ENOMEM, "keeping denied credentials out of the log"), -ENOMEM;
	}
	err = sandbox_cred_setup(&r->cred, r->policy, env, r->log, em);
	log_redact_in_place(r->log, r->command_line, sizeof(r->command_line));
	return err;
}

/* Everything up to the command's exec; on failure the command never ran. */
int sandbox_run_setup(struct sandbox_run *r, char *self_exe)
{
	struct errmsg em = { { 0 } };
	int err;

	err = register_secrets(r, &em);
	if (err)
		return sandbox_run_failed(r, "credentials", &em), err;
	set_log_ignore(r);
	err = block_signals(r);
	if (err)
		return errmsg_set(&em, err, "blocking signals"), sandbox_run_failed(r, "signals", &em), err;
	start_trace("secrets and signals");
	err = bpf_state_open(&r->bpf, &em);
	if (err)
		return sandbox_run_failed(r, "kernel enforcement cannot be set up", &em), err;
	start_trace("BPF state opened");
	/* Leftovers of supervisors that died (SIGKILL) go before a new sandbox starts. */
	sandbox_gc_dead(r->bpf, false, NULL, NULL);
	start_trace("dead supervisors collected");
	err = setup_cgroup_and_tmpdir(r);
	start_trace("registry, cgroup, limits, TMPDIR");
	if (!err)
		err = setup_maps(r);
	start_trace("rule specs and sandbox map entries");
	if (!err)
		err = setup_events(r);
	if (err)
		return err;
	start_trace("ring buffer");
	/* The network programs are in place before the first instruction of the command (inherited from the parent, or attached here). */
	err = cgroup_attach_sandbox(r->bpf, r->cg.dir_fd, &em);
	if (err)
		return sandbox_run_failed(r, "network enforcement", &em), err;
	start_trace("cgroup programs");
	err = start_proxies(r, &em);
	if (err)
		return sandbox_run_failed(r, "proxy", &em), err;
	start_trace("resolver");
	err = setup_launch(r, self_exe);
	start_trace("environment and clone into the cgroup");
	if (!err)
		err = setup_enforce(r);
	if (err)
		return err;
	start_trace("rules resolved, loaded and enforced");
	/* Now with the command's pid, for bpfbox ps. */
	register_sandbox(r);
	start_trace("registered");
	clock_gettime(CLOCK_MONOTONIC, &r->started);
	sandbox_run_log_start(r);
	start_trace("start logged");
	return 0;
}

int sandbox_run_supervise(struct sandbox_run *r)
{
	struct supervise_result res = { 0 };
	struct supervise_opts so = { 0 };
	int err;

	if (launch_go(&r->launch))
		return sandbox_run_exec_failure_status(r);
	start_trace("go");
	so.pid = r->launch.pid;
	so.pidfd = r->launch.pidfd;
	so.cgroup_path = r->cg.path;
	so.events = r->events;
	so.signal_fd = r->signal_fd;
	so.timeout_ms = r->req.timeout_ms;
	so.kill_after_ms = r->req.kill_after_ms;
	so.control_fd = -1;
	if (r->req.control_fd >= 0) {
		so.control_fd = r->req.control_fd;
		so.control = r->req.control;
		so.control_ctx = r->req.control_ctx;
	}
	memcpy(so.live_fds, r->req.live_fds, sizeof(so.live_fds));
	so.live = r->req.live;
	so.live_ctx = r->req.live_ctx;
	err = supervise(&so, &res);
	start_trace("command ended");
	/* Background jobs and daemons die with the command. */
	cgroup_kill_all(r->cg.path, 5000);
	supervise_reap_all();
	/* Nothing is left to ask it: its folded query lines go before the exit line counts them. */
	if (r->dns_started)
		sandbox_dns_stop(&r->dns);
	start_trace("cgroup emptied");
	sandbox_run_report_limits(r);
	ring_buffer__consume(r->events);
	sandbox_maps_pending(r->bpf, r->cg.id, kevent_report_pending, &r->kctx);
	sandbox_run_check_new_repositories(r);
	if (err) {
		res.exit_code = SANDBOX_EXIT_SETUP;
		res.ended_by = "error";
	}
	sandbox_run_log_exit(r, &res);
	start_trace("exit logged");
	return res.exit_code;
}
