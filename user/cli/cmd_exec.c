// SPDX-License-Identifier: MIT
/* bpfbox exec: run a command confined by a policy, and report what it was refused. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "commands.h"
#include "daemon/wire.h"
#include "exec_caller.h"
#include "exec_live.h"
#include "exec_update.h"
#include "lib/duration.h"
#include "lib/fd_table.h"
#include "lib/nofile.h"
#include "lib/start_trace.h"
#include "log/log.h"
#include "policy/policy.h"
#include "policy/policy_ceiling.h"
#include "sandbox/identity.h"
#include "sandbox/quota.h"
#include "sandbox/run.h"

_Static_assert(SANDBOX_EXIT_SETUP == BPFBOX_EXIT_SETUP, "a run's setup failure is bpfbox's own exit status");

extern char **environ;

struct exec_opts {
	const char *policy;
	const char *ceiling; /* --ceiling: the administrator's policy over --policy */
	bool strict;
	bool audit;
	struct log_config log;
	long long timeout_ms;
	long long kill_after_ms;
	int pass_fds[16];
	size_t n_pass_fds;
	const char *user; /* --user NAME|UID[:GROUP] */
	const char *quota; /* --quota: root's own shares of the host-wide maps */
	int control_fd; /* --control-fd: settings documents, one a line (-1: none) */
	char **argv;
};

/* One bpfbox exec: its options, the daemon's caller if any, and the sandbox's run when it runs here as root. */
struct exec_cmd {
	struct exec_opts opts;
	const struct exec_caller *caller; /* NULL: a root bpfbox exec; else the daemon's caller */
	struct wire_reader control; /* the caller's control frames */
	struct live_policy live; /* --control-fd's lines and the control socket */
	struct sandbox_run run;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfbox exec [OPTIONS] -- COMMAND [ARGS...]\n\n"
		"  --policy FILE        policy file (default: $BPFBOX_POLICY, then /etc/bpfbox/policy.json,\n"
		"                       then the built-in default policy)\n"
		"  --ceiling FILE       run as a caller bound by this administrator's policy: the\n"
		"                       --policy file (without one, FILE itself) narrowed by FILE;\n"
		"                       each grant FILE takes away is printed on stderr\n"
		"  --strict             treat policy warnings, and under --ceiling each grant it\n"
		"                       takes away, as errors (exit 125, nothing runs)\n"
		"  --audit              report would-be refusals without enforcing them\n"
		"  --log-file PATH      append JSON lines to PATH (default: stderr)\n"
		"  --log-fd N           write log lines to descriptor N\n"
		"  --log-format F       json or text (default: text on a terminal, else json)\n"
		"  --log-level L        debug, info, warn or error (default: info)\n"
		"  --timeout DURATION   stop the whole tree after DURATION (e.g. 30s, 5m, 1500ms)\n"
		"  --kill-after DURATION grace between SIGTERM and SIGKILL (default 5s)\n"
		"  --pass-fd N          pass descriptor N to the command (repeatable)\n"
		"  --user NAME|UID[:GROUP]\n"
		"                       run the command as this user (its groups, home, shell);\n"
		"                       overrides SUDO_UID/SUDO_GID/SUDO_USER\n"
		"  --control-fd N       read settings documents from descriptor N (3 or more), one\n"
		"                       a line, each replacing the live fields of the policy\n"
		"  --quota KEY=N[,KEY=N...]\n"
		"                       this run's shares of the host-wide kernel maps: rules,\n"
		"                       user-rules, learned, user-learned, learned-min-ttl\n"
		"                       (seconds); see bpfbox(8)\n\n"
		"who the command runs as: under sudo, the user who ran sudo; with --user, that\n"
		"user ('--user root' keeps uid 0); otherwise uid 0, always without capabilities\n"
		"and without a way to gain any (no-new-privileges, locked securebits)\n\n"
		"exit status: the command's; 128+N if it died of signal N, or if bpfbox was\n"
		"cancelled by SIGINT, SIGTERM or SIGHUP (N); 124 on --timeout; 126 cannot execute;\n"
		"127 command not found; 125 bpfbox could not set up the sandbox (nothing ran)\n");
}

static int parse_args(int argc, char **argv, struct exec_opts *o)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },    { "strict", no_argument, NULL, 's' },
		{ "audit", no_argument, NULL, 'a' },	       { "log-file", required_argument, NULL, 'f' },
		{ "log-fd", required_argument, NULL, 'd' },    { "log-format", required_argument, NULL, 'F' },
		{ "log-level", required_argument, NULL, 'l' }, { "timeout", required_argument, NULL, 't' },
		{ "kill-after", required_argument, NULL, 'k' }, { "pass-fd", required_argument, NULL, 'P' },
		{ "user", required_argument, NULL, 'u' },	{ "ceiling", required_argument, NULL, 'C' },
		{ "quota", required_argument, NULL, 'Q' },	{ "control-fd", required_argument, NULL, 'K' },	{ "help", no_argument, NULL, 'h' },	       { NULL, 0, NULL, 0 },
	};
	int c;

	o->log.fd = -1;
	o->log.min_level = LOG_INFO;
	o->control_fd = -1;
	o->kill_after_ms = 5000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy = optarg;
			break;
		case 's':
			o->strict = true;
			break;
		case 'C':
			o->ceiling = optarg;
			break;
		case 'a':
			o->audit = true;
			break;
		case 'f':
			o->log.file_path = optarg;
			break;
		case 'd':
			o->log.fd = atoi(optarg);
			break;
		case 'F':
			if (log_format_parse(optarg, &o->log.format)) {
				fprintf(stderr, "bpfbox: --log-format: expected json or text, got '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'l':
			if (log_level_parse(optarg, &o->log.min_level)) {
				fprintf(stderr, "bpfbox: --log-level: expected debug, info, warn or error, got '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 't':
		case 'k':
			if (parse_duration(optarg, c == 't' ? &o->timeout_ms : &o->kill_after_ms)) {
				fprintf(stderr, "bpfbox: --%s: not a duration: '%s'\n",
					c == 't' ? "timeout" : "kill-after", optarg);
				return -EINVAL;
			}
			break;
		case 'P':
			if (o->n_pass_fds == 16) {
				fprintf(stderr, "bpfbox: --pass-fd: at most 16\n");
				return -EINVAL;
			}
			o->pass_fds[o->n_pass_fds++] = atoi(optarg);
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'Q':
			o->quota = optarg;
			break;
		case 'K': {
			struct errmsg em = { { 0 } };
			char *end;
			long fd = strtol(optarg, &end, 10);

			if (*end || end == optarg || fd > INT32_MAX)
				fd = -1;
			if (live_control_check_fd((int)fd, &em)) {
				fprintf(stderr, "bpfbox: exec: %s\n", em.text);
				usage(stderr);
				return -EINVAL;
			}
			o->control_fd = (int)fd;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "bpfbox: exec: no command given\n");
		usage(stderr);
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

/*
 * The caller's policy, its paths resolved with the caller's credentials: a
 * name only root could resolve stays as the caller wrote it, in the rules and
 * in every message.
 */
static int load_as_caller(struct exec_cmd *r, const struct policy_load_opts *lo, struct policy **out,
			  struct diag_list *diags)
{
	const struct exec_caller *c = r->caller;
	struct identity_fs saved;
	int err, back;

	if (!r->run.ident.switch_user || !r->run.ident.uid)
		return policy_load_buffer(c->policy_name ? c->policy_name : "(policy)", c->policy_json,
					  c->policy_len, lo, out, diags);
	err = identity_fs_enter(&r->run.ident, &saved);
	if (err) {
		fprintf(stderr, "bpfbox: cannot take uid %u's credentials to resolve its policy's paths: %s; "
			"the command was not run\n", (unsigned)r->run.ident.uid, strerror(-err));
		return err;
	}
	err = policy_load_buffer(c->policy_name ? c->policy_name : "(policy)", c->policy_json, c->policy_len, lo,
				 out, diags);
	back = identity_fs_leave(&saved);
	if (back) {
		/* This process would go on with a caller's view of the filesystem: stop. */
		fprintf(stderr, "bpfbox: cannot return to the daemon's credentials after reading the policy: %s; "
			"the command was not run\n", strerror(-back));
		policy_free(*out);
		*out = NULL;
		return back;
	}
	return err;
}

/*
 * The daemon's caller: the administrator's policy (re-read for every run,
 * ~ meaning the caller's home) is the ceiling over the caller's, which came
 * as content. Every grant the ceiling takes away is named on stderr. The
 * administrator's grants follow no symlink the caller could have placed
 * (policy_path_guarded); one that meets such a link is cut for this caller.
 */
static int load_caller_policy(struct exec_cmd *r, struct policy_load_opts *lo, struct diag_list *diags)
{
	const struct exec_caller *c = r->caller;
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct policy *admin = NULL, *mine = NULL;
	struct policy_load_opts alo = *lo;
	int err;

	/* The caller's --strict is about its own file; the administrator's warnings never stop a run. */
	alo.strict = false;
	/* Root owns every directory: nothing to guard a root caller against. */
	alo.guard = r->run.ident.switch_user && r->run.ident.uid != 0;
	alo.guard_uid = r->run.ident.uid;
	/* The text the daemon holds: a file that no longer loads does not replace it until it is fixed. */
	if (c->ceiling_json)
		err = policy_load_buffer(c->ceiling_file, c->ceiling_json, c->ceiling_len, &alo, &admin, diags);
	else
		err = policy_default(&alo, &admin);
	if (err) {
		fprintf(stderr, "bpfbox: the administrator's policy %s is invalid; no sandbox can start until it "
			"is fixed (bpfbox policy check %s)\n", c->ceiling_file, c->ceiling_file);
		return err;
	}
	if (!c->has_policy) {
		r->run.policy = admin;
		return 0;
	}
	err = load_as_caller(r, lo, &mine, diags);
	if (!err) {
		err = policy_ceiling_apply(admin, mine, r->opts.strict, &r->run.policy, &cuts);
		ceiling_cuts_print(&cuts, stderr);
		if (err == -EPERM)
			fprintf(stderr, "bpfbox: --strict: %zu grant(s) of %s are outside the administrator's policy "
				"(%s); the command was not run\n", cuts.n, c->policy_name ? c->policy_name : "the policy",
				c->ceiling_file);
		else if (!err && cuts.oom)
			err = -ENOMEM;
	}
	ceiling_cuts_free(&cuts);
	policy_free(mine);
	policy_free(admin);
	return err;
}

static int load_policy(struct exec_cmd *r)
{
	/* ~ and the defaults mean the home of the user the command runs as. */
	struct policy_load_opts lo = { .strict = r->opts.strict, .home = r->run.ident.switch_user ? r->run.ident.home : NULL };
	struct diag_list diags;
	const char *file = r->caller ? (r->caller->has_policy ? r->caller->policy_name : r->caller->ceiling_file)
			   : r->opts.ceiling ? r->opts.policy ? r->opts.policy : r->opts.ceiling
					     : policy_discover(r->opts.policy);
	int err;

	diag_list_init(&diags);
	if (r->caller) {
		/* The caller's home, even for uid 0, and the directory it asked from. */
		lo.home = r->run.ident.home;
		lo.cwd = r->caller->cwd;
		err = load_caller_policy(r, &lo, &diags);
	} else if (r->opts.ceiling) {
		/* Both files for the same caller; the cuts go to stderr (docs/policy.md, "Ceiling"). */
		err = policy_load_under_ceiling(r->opts.ceiling, r->opts.policy, &lo, stderr, &r->run.policy);
	} else if (file) {
		err = policy_load_file(file, &lo, &r->run.policy, &diags);
	} else {
		err = policy_default(&lo, &r->run.policy);
	}
	diag_print(&diags, file, stderr, false);
	diag_list_free(&diags);
	if (err) {
		struct log_event *ev = log_event_new(LOG_ERROR, "event", "configuration", "error", "setup-failed",
						     "failure");

		/* A daemon's caller names its file as it likes: a claim, never a path the daemon read. */
		if (r->caller && r->caller->has_policy && file)
			log_event_set_str(ev, "bpfbox.caller.policy_name", file);
		else if (file)
			log_event_set_str(ev, "bpfbox.policy.path", file);
		if (r->opts.ceiling && r->opts.policy)
			log_event_set_str(ev, "bpfbox.policy.ceiling.path", r->opts.ceiling);
		log_event_set_errno(ev, -err);
		log_event_message(ev, "policy %s%s rejected; the command was not run", file ? file : "(default)",
				  r->caller && r->caller->has_policy ? " (the caller's name for it)" : "");
		log_emit(r->run.log, ev);
		/* On stderr the event itself says it. */
		if (r->opts.log.file_path || r->opts.log.fd >= 0)
			fprintf(stderr, "bpfbox: policy %s rejected; the command was not run\n",
				file ? file : "(default)");
		return err;
	}
	for (size_t i = 0; i < r->run.policy->n_grant_cuts; i++)
		fprintf(stderr, "bpfbox: %s: %s: a symbolic link on its way is one uid %u could have placed; "
			"grant cut, not granted\n", r->caller && r->caller->ceiling_file ? r->caller->ceiling_file
			: "the administrator's policy", r->run.policy->grant_cuts[i],
			(unsigned)r->run.ident.uid);
	return 0;
}

/* Reads the caller's control frames: a signal to forward, nothing, or -1 when it is gone. */
static int read_control(void *ctx)
{
	struct exec_cmd *r = ctx;
	struct wire_reader *rd = &r->control;
	struct wire_msg msg;
	struct errmsg em;
	uint32_t len;
	size_t n_fds;
	int fds[WIRE_MAX_FDS], ret, sig = 0;
	char *body;

	if (!rd->max)
		wire_reader_init(rd, WIRE_MAX_CONTROL);
	ret = wire_reader_read(rd, r->caller->control_fd);
	if (ret == 0)
		return 0;
	if (ret < 0) {
		wire_reader_release(rd);
		return -1;
	}
	body = wire_reader_take(rd, &len, fds, &n_fds);
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	/* A caller that breaks the protocol is treated as gone: its sandbox stops. */
	if (n_fds || wire_msg_decode(body, len, &msg, &em)) {
		free(body);
		return -1;
	}
	free(body);
	if (msg.type == WIRE_MSG_SIGNAL)
		sig = msg.signal;
	else if (msg.type == WIRE_MSG_CONT)
		kill(r->run.launch.pid, SIGCONT);
	else
		sig = -1;
	wire_msg_free(&msg);
	return sig;
}

static int client_opts_from(const struct exec_opts *o, struct exec_client_opts *c)
{
	if (o->user) {
		fprintf(stderr, "bpfbox: --user is for root: through the daemon the command runs as you "
			"(uid %u)\n", (unsigned)getuid());
		return -EPERM;
	}
	if (o->ceiling) {
		fprintf(stderr, "bpfbox: --ceiling is for root: through the daemon the administrator's policy "
			"is always the ceiling\n");
		return -EPERM;
	}
	if (o->quota) {
		fprintf(stderr, "bpfbox: --quota is for root's own runs: through the daemon the administrator "
			"sets the shares (bpfbox daemon --quota)\n");
		return -EPERM;
	}
	*c = (struct exec_client_opts){
		.policy = o->policy ? o->policy : getenv("BPFBOX_POLICY"),
		.strict = o->strict,
		.audit = o->audit,
		.log_file = o->log.file_path,
		.log_fd = o->log.fd,
		.log_format = o->log.format == LOG_FORMAT_AUTO ? -1 : (int)o->log.format,
		.log_level = o->log.min_level == LOG_INFO ? -1 : (int)o->log.min_level,
		.timeout_ms = o->timeout_ms,
		.kill_after_ms = o->kill_after_ms,
		.pass_fds = o->pass_fds,
		.n_pass_fds = o->n_pass_fds,
		.control_fd = o->control_fd,
		.argv = o->argv,
	};
	return 0;
}

/* The run's shares of the host-wide maps: the daemon's for its caller, else root's defaults or --quota. */
static int choose_quota(struct exec_cmd *r)
{
	struct errmsg em = { { 0 } };

	if (r->caller && r->opts.quota) {
		fprintf(stderr, "bpfbox: --quota is for root's own runs: the daemon's administrator sets the shares "
			"(bpfbox daemon --quota)\n");
		return -EPERM;
	}
	if (r->caller && r->caller->quota) {
		r->run.quota = *r->caller->quota;
		return 0;
	}
	quota_limits_default(&r->run.quota, "bpfbox exec --quota");
	if (r->opts.quota && quota_limits_parse(r->opts.quota, &r->run.quota, &em)) {
		fprintf(stderr, "bpfbox: --quota: %s\n", em.text);
		return -EINVAL;
	}
	return 0;
}

/* What the run is asked for: the options, and what the daemon's caller sent or opened. */
static void fill_request(struct exec_cmd *r)
{
	struct sandbox_run_request *q = &r->run.req;
	const struct exec_caller *c = r->caller;

	q->argv = r->opts.argv;
	q->audit = r->opts.audit;
	q->caller_bound = c || r->opts.ceiling;
	q->log_elsewhere = r->opts.log.file_path || r->opts.log.fd >= 0;
	q->timeout_ms = r->opts.timeout_ms;
	q->kill_after_ms = r->opts.kill_after_ms;
	q->pass_fds = r->opts.pass_fds;
	q->n_pass_fds = r->opts.n_pass_fds;
	if (!c)
		return;
	q->for_caller = true;
	q->caller_env = (char **)c->env;
	q->caller_named_policy = c->has_policy;
	q->pass_sources = c->pass_sources;
	q->tty = c->tty;
	/* Whose share a run uses: the daemon's caller, or root for root's own runs (whoever the command runs as). */
	q->quota_uid = (uint32_t)c->uid;
	q->admin_log_path = c->admin_log_path;
	q->admin_log_fd = c->admin_log_fd;
	if (c->control_fd >= 0) {
		q->control_fd = c->control_fd;
		q->control = read_control;
		q->control_ctx = r;
	}
}

/* Who the command runs as (--user, sudo's user, or the daemon's caller), then its policy. */
static int identify_and_load(struct exec_cmd *r)
{
	struct errmsg em = { { 0 } };
	int err;

	start_trace("log opened");
	if (geteuid() != 0) {
		errmsg_set(&em, -EPERM, "bpfbox exec must run as root (it loads BPF programs and creates cgroups)");
		sandbox_run_failed(&r->run, "permission", &em);
		return -EPERM;
	}
	if (r->caller ? identity_from_peer(r->caller->uid, r->caller->gid, &r->run.ident, &em)
		      : identity_resolve(r->opts.user, environ, &r->run.ident, &em)) {
		sandbox_run_failed(&r->run, "user", &em);
		return -EINVAL;
	}
	log_set_user(r->run.log, r->run.ident.uid, r->run.ident.name);
	start_trace("identity");
	/* BPFBOX_DEBUG_BPF=1 shows libbpf's messages, the verifier's log among them. */
	if (!getenv("BPFBOX_DEBUG_BPF"))
		libbpf_set_print(NULL);
	err = load_policy(r);
	start_trace("identity and policy");
	return err;
}

/* The policy's live side: --control-fd's lines and the control socket (bpfbox update, the daemon's reload). */
static int start_live(struct exec_cmd *r)
{
	struct errmsg em = { { 0 } };
	int err = live_policy_start(&r->live, &r->run, r->caller, r->opts.policy, r->opts.ceiling,
				    r->opts.control_fd, r->opts.strict, &em);

	if (err)
		sandbox_run_failed(&r->run, "policy", &em);
	return err;
}

/*
 * A sandbox of the daemon's is registered, with its control socket open,
 * before its command runs: a reload that walks the registry from now on
 * reaches it. One that went by while it was set up did not, and the
 * ceiling it was set up under may be wider than the one in force: its
 * command is not run (the caller starts it again, under the new one).
 */
static int ceiling_still_in_force(struct exec_cmd *r)
{
	const struct exec_caller *c = r->caller;
	struct errmsg em = { { 0 } };

	if (!c || !c->ceiling_seq_now || atomic_load(c->ceiling_seq_now) == c->ceiling_seq)
		return 0;
	errmsg_set(&em, -ESTALE, "the administrator's policy %s was reloaded while this sandbox was being set up; "
		   "run the command again to start it under the new one", c->ceiling_file);
	sandbox_run_failed(&r->run, "policy", &em);
	return -ESTALE;
}

/* The sandbox itself, run here: its exit status. */
static int exec_as_root(struct exec_cmd *r)
{
	int status = BPFBOX_EXIT_SETUP, nofile_err;
	struct errmsg nofile_em = { { 0 } };
	char self_exe[4096];
	ssize_t n;

	if (choose_quota(r))
		return BPFBOX_EXIT_SETUP;
	/* Reported once the log is open: the proxy sizes itself by this limit. */
	nofile_err = nofile_raise(&nofile_em);
	/* Before the live policy's, proxy's and resolver's threads: a start through the daemon holds more than the first 64. */
	fd_table_reserve(256);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = 0;
	fill_request(r);
	start_trace("quota and request");
	if (sandbox_run_open_log(&r->run, &r->opts.log))
		goto teardown;
	if (nofile_err) {
		sandbox_run_failed(&r->run, "descriptor limit", &nofile_em);
		goto teardown;
	}
	if (!identify_and_load(r) && !start_live(r) && !sandbox_run_setup(&r->run, self_exe) &&
	    !ceiling_still_in_force(r))
		status = sandbox_run_supervise(&r->run);
teardown:
	sandbox_run_teardown(&r->run);
	wire_reader_release(&r->control);
	live_policy_stop(&r->live);
	start_trace("teardown done");
	return status;
}

static int exec_main(int argc, char **argv, const struct exec_caller *caller)
{
	struct exec_cmd r = { .caller = caller };

	sandbox_run_init(&r.run);
	if (parse_args(argc, argv, &r.opts))
		return BPFBOX_EXIT_SETUP;
	start_trace("options");
	if (!caller && geteuid() != 0) {
		struct exec_client_opts co;

		/* Not root: the daemon runs the sandbox, with the same options. */
		if (client_opts_from(&r.opts, &co))
			return BPFBOX_EXIT_SETUP;
		return exec_client(&co);
	}
	return exec_as_root(&r);
}

int cmd_exec(int argc, char **argv)
{
	return exec_main(argc, argv, NULL);
}

int cmd_exec_for_caller(int argc, char **argv, const struct exec_caller *caller)
{
	return exec_main(argc, argv, caller);
}
