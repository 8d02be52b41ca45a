// SPDX-License-Identifier: MIT
/* bpfbox exec: run a command confined by a policy, and report what it was refused. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfbox.h"
#include "commands.h"
#include "daemon/wire.h"
#include "exec_caller.h"
#include "lib/duration.h"
#include "lib/signals.h"
#include "log/log.h"
#include "policy/policy.h"
#include "policy/policy_ceiling.h"
#include "sandbox/bpf_state.h"
#include "sandbox/cgroup.h"
#include "sandbox/identity.h"
#include "sandbox/kevent.h"
#include "sandbox/sandbox_git.h"
#include "sandbox/launch.h"
#include "sandbox/quota.h"
#include "sandbox/registry.h"
#include "sandbox/sandbox_devices.h"
#include "sandbox/sandbox_dns.h"
#include "sandbox/sandbox_env.h"
#include "sandbox/sandbox_gc.h"
#include "sandbox/sandbox_learned.h"
#include "sandbox/sandbox_maps.h"
#include "sandbox/sandbox_private.h"
#include "sandbox/sandbox_proxy.h"
#include "sandbox/sandbox_tmpdir.h"
#include "sandbox/supervise.h"

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
	char **argv;
};

/* Everything one run owns, released by exec_teardown whatever happened. */
struct exec_run {
	struct exec_opts opts;
	const struct exec_caller *caller; /* NULL: a root bpfbox exec; else the daemon's caller */
	struct wire_reader control; /* the caller's control frames */
	struct identity ident;
	struct log *log;
	struct policy *policy;
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
	struct rule_spec *specs;
	const char **spec_paths;
	bool *spec_no_links; /* parallel to spec_paths: resolved following no symlink */
	char **unix_names; /* abstract socket names allowed, pointing into the policy */
	size_t n_unix_names;
	const char **rule_names;
	char **owned_names;
	size_t n_specs, n_rule_names;
	size_t tmpdir_spec; /* the TMPDIR's entry in specs */
	struct timespec started;
	bool registered;
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
		{ "quota", required_argument, NULL, 'Q' },	{ "help", no_argument, NULL, 'h' },	       { NULL, 0, NULL, 0 },
	};
	int c;

	o->log.fd = -1;
	o->log.min_level = LOG_INFO;
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

static void setup_failed(struct exec_run *r, const char *what, const struct errmsg *em)
{
	struct log_event *ev;

	ev = log_event_new(LOG_ERROR, "event", "process", "start,error", "setup-failed", "failure");
	log_event_message(ev, "%s: %s; the command was not run", what, em->text);
	log_emit(r->log, ev);
	/* The log may be a file nobody watches: the reason also goes to the terminal. */
	if (log_is_json(r->log) && (r->opts.log.file_path || r->opts.log.fd >= 0))
		fprintf(stderr, "bpfbox: %s: %s; the command was not run\n", what, em->text);
}

/*
 * The caller's policy, its paths resolved with the caller's credentials: a
 * name only root could resolve stays as the caller wrote it, in the rules and
 * in every message.
 */
static int load_as_caller(struct exec_run *r, const struct policy_load_opts *lo, struct policy **out,
			  struct diag_list *diags)
{
	const struct exec_caller *c = r->caller;
	struct identity_fs saved;
	int err, back;

	if (!r->ident.switch_user || !r->ident.uid)
		return policy_load_buffer(c->policy_name ? c->policy_name : "(policy)", c->policy_json,
					  c->policy_len, lo, out, diags);
	err = identity_fs_enter(&r->ident, &saved);
	if (err) {
		fprintf(stderr, "bpfbox: cannot take uid %u's credentials to resolve its policy's paths: %s; "
			"the command was not run\n", (unsigned)r->ident.uid, strerror(-err));
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
static int load_caller_policy(struct exec_run *r, struct policy_load_opts *lo, struct diag_list *diags)
{
	const struct exec_caller *c = r->caller;
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct policy *admin = NULL, *mine = NULL;
	struct policy_load_opts alo = *lo;
	struct stat st;
	int err;

	/* The caller's --strict is about its own file; the administrator's warnings never stop a run. */
	alo.strict = false;
	/* Root owns every directory: nothing to guard a root caller against. */
	alo.guard = r->ident.switch_user && r->ident.uid != 0;
	alo.guard_uid = r->ident.uid;
	if (c->ceiling_file && !stat(c->ceiling_file, &st))
		err = policy_load_file(c->ceiling_file, &alo, &admin, diags);
	else
		err = policy_default(&alo, &admin);
	if (err) {
		fprintf(stderr, "bpfbox: the administrator's policy %s is invalid; no sandbox can start until it "
			"is fixed (bpfbox policy check %s)\n", c->ceiling_file, c->ceiling_file);
		return err;
	}
	if (!c->has_policy) {
		r->policy = admin;
		return 0;
	}
	err = load_as_caller(r, lo, &mine, diags);
	if (!err) {
		err = policy_ceiling_apply(admin, mine, r->opts.strict, &r->policy, &cuts);
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

static int load_policy(struct exec_run *r)
{
	/* ~ and the defaults mean the home of the user the command runs as. */
	struct policy_load_opts lo = { .strict = r->opts.strict, .home = r->ident.switch_user ? r->ident.home : NULL };
	struct diag_list diags;
	const char *file = r->caller ? (r->caller->has_policy ? r->caller->policy_name : r->caller->ceiling_file)
			   : r->opts.ceiling ? r->opts.policy ? r->opts.policy : r->opts.ceiling
					     : policy_discover(r->opts.policy);
	int err;

	diag_list_init(&diags);
	if (r->caller) {
		/* The caller's home, even for uid 0, and the directory it asked from. */
		lo.home = r->ident.home;
		lo.cwd = r->caller->cwd;
		err = load_caller_policy(r, &lo, &diags);
	} else if (r->opts.ceiling) {
		/* Both files for the same caller; the cuts go to stderr (docs/policy.md, "Ceiling"). */
		err = policy_load_under_ceiling(r->opts.ceiling, r->opts.policy, &lo, stderr, &r->policy);
	} else if (file) {
		err = policy_load_file(file, &lo, &r->policy, &diags);
	} else {
		err = policy_default(&lo, &r->policy);
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
		log_emit(r->log, ev);
		/* On stderr the event itself says it. */
		if (r->opts.log.file_path || r->opts.log.fd >= 0)
			fprintf(stderr, "bpfbox: policy %s rejected; the command was not run\n",
				file ? file : "(default)");
		return err;
	}
	for (size_t i = 0; i < r->policy->n_grant_cuts; i++)
		fprintf(stderr, "bpfbox: %s: %s: a symbolic link on its way is one uid %u could have placed; "
			"grant cut, not granted\n", r->caller && r->caller->ceiling_file ? r->caller->ceiling_file
			: "the administrator's policy", r->policy->grant_cuts[i],
			(unsigned)r->ident.uid);
	return 0;
}

static uint32_t spec_flags(enum fs_rule_kind kind)
{
	switch (kind) {
	case FS_DENY_READ:
		return BB_R_DENY_READ;
	case FS_ALLOW_READ:
		return BB_R_ALLOW_READ;
	case FS_ALLOW_WRITE:
		return BB_R_ALLOW_WRITE;
	default:
		return BB_R_DENY_WRITE;
	}
}

/* Rule id i names specs[i]; the table also gives events their rule names. */
static int build_specs(struct exec_run *r)
{
	const struct policy *p = r->policy;
	size_t cap = p->n_fs_rules + p->n_allow_unix_sockets + 3, n = 0;

	r->specs = calloc(cap, sizeof(*r->specs));
	r->spec_paths = calloc(cap, sizeof(*r->spec_paths));
	r->spec_no_links = calloc(cap, sizeof(*r->spec_no_links));
	r->rule_names = calloc(cap, sizeof(*r->rule_names));
	r->owned_names = calloc(cap, sizeof(*r->owned_names));
	r->unix_names = calloc(cap, sizeof(*r->unix_names));
	if (!r->specs || !r->spec_paths || !r->spec_no_links || !r->rule_names || !r->owned_names || !r->unix_names)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_fs_rules && !p->fs_disabled; i++) {
		/* Under a ceiling each layer stays apart in the kernel (docs/design.md, "Two layers"). */
		enum rule_layer layer = p->fs_rules[i].layer == FS_LAYER_CEILING ? RULE_LAYER_CEILING : RULE_LAYER_OWN;

		r->specs[n] = (struct rule_spec){ p->fs_rules[i].path, spec_flags(p->fs_rules[i].kind), (uint32_t)n,
						  layer, p->fs_rules[i].no_links };
		r->rule_names[n] = p->fs_rules[i].name;
		n++;
	}
	r->tmpdir_spec = n;
	/* The sandbox's own TMPDIR is writable in both layers. */
	r->specs[n] = (struct rule_spec){ r->tmpdir, BB_R_ALLOW_WRITE, (uint32_t)n,
					  p->has_ceiling ? RULE_LAYER_BOTH : RULE_LAYER_OWN, false };
	r->rule_names[n] = "implicit:allowWrite:TMPDIR";
	n++;
	/* Marks, not rules: /dev/shm's objects are decided by their creator; bpfbox's own state is off limits. */
	r->specs[n] = (struct rule_spec){ SANDBOX_SHM_DIR, BB_R_SHM, (uint32_t)n, RULE_LAYER_OWN, false };
	r->rule_names[n] = "builtin:shm";
	n++;
	r->specs[n] = (struct rule_spec){ BPFBOX_RUN_DIR, BB_R_BPFBOX_STATE, (uint32_t)n, RULE_LAYER_OWN, false };
	r->rule_names[n] = "builtin:bpfbox-state";
	n++;
	for (size_t i = 0; i < p->n_allow_unix_sockets; i++) {
		/* "@name": an abstract socket, matched by name in its own map. */
		if (p->allow_unix_sockets[i][0] == '@') {
			r->unix_names[r->n_unix_names++] = p->allow_unix_sockets[i] + 1;
			continue;
		}
		if (asprintf(&r->owned_names[n], "allowUnixSockets:%s", p->allow_unix_sockets[i]) < 0)
			return -ENOMEM;
		/* A guarded policy's socket paths were checked for the caller's links: none may appear since. */
		r->specs[n] = (struct rule_spec){ p->allow_unix_sockets[i], BB_R_UNIX_ALLOW, (uint32_t)n,
						  RULE_LAYER_OWN, p->guarded };
		r->rule_names[n] = r->owned_names[n];
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		r->spec_paths[i] = r->specs[i].path;
		r->spec_no_links[i] = r->specs[i].no_links;
	}
	r->n_specs = n;
	r->n_rule_names = n;
	return 0;
}

/* A caller (the daemon's, or exec --ceiling) audits only its own narrowing. */
static enum audit_scope run_audit_scope(const struct exec_run *r)
{
	return policy_audit_scope(r->policy, r->caller || r->opts.ceiling, r->opts.audit);
}

static uint32_t sandbox_flags(const struct exec_run *r)
{
	const struct policy *p = r->policy;
	enum audit_scope audit = run_audit_scope(r);
	uint32_t f = 0;

	if (audit == AUDIT_ALL)
		f |= BB_SB_AUDIT;
	else if (audit == AUDIT_CALLER)
		f |= BB_SB_AUDIT_OWN;
	if (p->allow_git_config)
		f |= BB_SB_ALLOW_GIT_CONFIG;
	if (p->fs_disabled)
		f |= BB_SB_FS_DISABLED;
	if (p->allow_all_unix_sockets)
		f |= BB_SB_ALLOW_ALL_UNIX;
	if (p->allow_local_binding)
		f |= BB_SB_ALLOW_LOCAL_BIND;
	if (p->allow_nested_userns)
		f |= BB_SB_ALLOW_USERNS;
	if (p->has_ceiling)
		f |= BB_SB_CEILING;
	if (p->git_new == POLICY_GIT_REFUSE)
		f |= BB_SB_GIT_NO_NEW;
	return f;
}

static void rule_note(void *ctx, const struct rule_spec *spec, const char *what)
{
	struct exec_run *r = ctx;

	log_msg(r->log, LOG_WARN, "warning", "rule %s (%s): %s", r->rule_names[spec->rule], spec->path, what);
}

static void device_note(void *ctx, const char *path, const char *what)
{
	struct exec_run *r = ctx;

	log_msg(r->log, LOG_WARN, "warning", "bpfbox.devices.allow %s: %s; the sandbox cannot open it", path, what);
}

static void make_id(struct exec_run *r)
{
	unsigned char rnd[6] = { 0 };

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		clock_gettime(CLOCK_MONOTONIC, (struct timespec *)rnd);
	snprintf(r->id, sizeof(r->id), "bb-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5]);
	snprintf(r->tmpdir, sizeof(r->tmpdir), "/tmp/bpfbox-%s", r->id + 3);
}

static void join_command(struct exec_run *r)
{
	size_t off = 0;

	r->command_line[0] = 0;
	for (char **a = r->opts.argv; *a && off < sizeof(r->command_line) - 1; a++)
		off += (size_t)snprintf(r->command_line + off, sizeof(r->command_line) - off, "%s%s",
					a == r->opts.argv ? "" : " ", *a);
}

static void log_start(struct exec_run *r)
{
	struct log_event *ev = log_event_new(LOG_INFO, "event", "process", "start", "sandbox-start", "success");
	enum audit_scope scope = run_audit_scope(r);
	bool audit = scope != AUDIT_NONE;
	char digest[80], who[320], uid[16], cuts[640] = "";

	/* Folded refusals reported at exit carry no flags of their own (but BB_OP_AUDITED). */
	r->kctx.audit = scope == AUDIT_ALL;
	log_event_set_int(ev, "process.pid", r->launch.pid);
	log_event_set_strv(ev, "process.args", r->opts.argv);
	log_event_set_str(ev, "process.command_line", r->command_line);
	/* A daemon's caller names its file as it likes: a claim; the digest is of what it sent. */
	if (r->policy->file && r->caller && r->caller->has_policy)
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
			  r->caller && r->caller->has_policy ? " as the caller named it" : "",
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
static void check_new_repositories(struct exec_run *r)
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

static void log_exit(struct exec_run *r, const struct supervise_result *res)
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

/* Blocks the signals the supervisor handles; the child restores its own mask. */
static int block_signals(struct exec_run *r)
{
	static const int watch[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, 0 };
	static const int block_only[] = { SIGPIPE, 0 };
	int fd = signals_block_to_fd(watch, block_only, &r->old_mask);

	if (fd < 0)
		return fd;
	r->signal_fd = fd;
	return 0;
}

static void exec_teardown(struct exec_run *r)
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
	if (r->cg_made && r->bpf)
		sandbox_private_sweep_shm(r->bpf, r->cg.id);
	if (r->dns_started)
		sandbox_dns_stop(&r->dns);
	sandbox_learned_free(&r->learned);
	if (r->maps_added)
		sandbox_maps_remove(r->bpf, r->cg.id);
	if (r->ringbuf_fd >= 0)
		close(r->ringbuf_fd);
	if (r->cg_made)
		cgroup_destroy(&r->cg);
	if (r->launched)
		launch_release(&r->launch);
	if (r->tmpdir_id.ino && sandbox_tmpdir_remove(r->tmpdir, &r->tmpdir_id, &em))
		log_msg(r->log, LOG_WARN, "warning", "TMPDIR not removed: %s", em.text);
	if (r->cg_made)
		sandbox_private_release(r->bpf, r->cg.id);
	if (r->registered)
		registry_remove(r->id);
	sandbox_git_free(&r->git);
	env_free(&r->env);
	identity_free(&r->ident);
	bpf_state_close(r->bpf);
	for (size_t i = 0; i < r->n_specs; i++)
		free(r->owned_names ? r->owned_names[i] : NULL);
	free(r->owned_names);
	free(r->specs);
	free(r->spec_paths);
	free(r->spec_no_links);
	free(r->unix_names);
	free(r->rule_names);
	policy_free(r->policy);
	if (r->signal_fd >= 0)
		close(r->signal_fd);
	wire_reader_release(&r->control);
	log_close(r->log);
}

/* Whose share a run uses: the daemon's caller, or root for root's own runs (whoever the command runs as). */
static uint32_t quota_uid(const struct exec_run *r)
{
	return r->caller ? (uint32_t)r->caller->uid : 0;
}

/* Written before the cgroup is made and again after, so that gc finds all a dead supervisor left. */
static int register_sandbox(struct exec_run *r)
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
 * The sandbox's share of the rule maps is reserved for what its resolved
 * rules write at most, before any is written; then it is lowered to what
 * they did write (rules on one object share an entry).
 */
static int reserve_and_load_rules(struct exec_run *r, struct errmsg *em)
{
	uint32_t need = sandbox_maps_rule_entries(r->specs, r->launch.results, r->n_specs), written = 0;
	int err;

	err = quota_reserve(r->bpf, &r->quota, r->cg.id, quota_uid(r), QUOTA_RULES, need, em);
	if (err)
		return err;
	err = sandbox_maps_load_rules(r->bpf, r->cg.id, r->specs, r->launch.results, r->n_specs, rule_note, r,
				      &written, em);
	if (!err)
		quota_settle(r->bpf, r->cg.id, QUOTA_RULES, written);
	return err;
}

/* Everything up to the command's exec; on failure the command never ran. */
/*
 * srt's external proxies: httpProxyPort and socksProxyPort each replace the
 * proxy bpfbox would run for that protocol. Ours serves both on one port and
 * runs unless both are external.
 */
static int start_proxies(struct exec_run *r, struct errmsg *em)
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
		err = sandbox_learned_init(&r->learned, p, r->bpf, r->cg.id, &r->quota, quota_uid(r));
		if (err)
			return errmsg_set(em, err, "the learned address table");
		sandbox_learned_at_launch(&r->learned, "/etc/hosts");
		if (r->learned.refused)
			log_msg(r->log, LOG_WARN, "learned-address-refused",
				"%llu address(es) of /etc/hosts and allowedDomains were not learned: the sandbox's "
				"share of %u learned addresses is full (%s learned=N raises it)",
				r->learned.refused, r->quota.learned, r->quota.option);
	}
	if (!p->http_proxy_port || !p->socks_proxy_port || transparent) {
		err = sandbox_proxy_start_transparent(&r->proxy, p, r->log, transparent ? &r->learned : NULL,
						      r->bpf->maps.tconns, r->cg.id, em);
		if (err)
			return err;
		r->proxy_started = true;
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

static int exec_setup(struct exec_run *r, char *self_exe)
{
	struct sandbox_ports ports;
	struct launch_spec ls = { 0 };
	struct cgroup_limits lim;
	struct env_extra x = { 0 };
	struct errmsg em = { { 0 } };
	char parent[PATH_MAX];
	int err;

	err = block_signals(r);
	if (err)
		return errmsg_set(&em, err, "blocking signals"), setup_failed(r, "signals", &em), err;
	err = bpf_state_open(&r->bpf, &em);
	if (err)
		return setup_failed(r, "BPF-LSM enforcement is not available", &em), err;
	/* Leftovers of supervisors that died (SIGKILL) go before a new sandbox starts. */
	sandbox_gc_dead(r->bpf, false, NULL, NULL);
	/*
	 * Registered before the cgroup exists: a concurrent gc removes every
	 * bpfbox cgroup that no entry explains, as the leftover of a crash.
	 */
	err = cgroup_parent_ensure(parent, sizeof(parent), &em);
	if (err)
		return setup_failed(r, "cgroup", &em), err;
	snprintf(r->cg.path, sizeof(r->cg.path), "%s/%s", parent, r->id);
	err = register_sandbox(r);
	if (err)
		return errmsg_set(&em, err, "writing %s/%s", REGISTRY_DIR, r->id), setup_failed(r, "registry", &em),
		       err;
	err = cgroup_create(r->id, &r->cg, &em);
	if (err)
		return setup_failed(r, "cgroup", &em), err;
	r->cg_made = true;
	/* Again, now with the cgroup's id. */
	err = register_sandbox(r);
	if (err)
		return errmsg_set(&em, err, "writing %s/%s", REGISTRY_DIR, r->id), setup_failed(r, "registry", &em),
		       err;
	lim = (struct cgroup_limits){ r->policy->limit_pids, r->policy->limit_memory_bytes,
				      r->policy->limit_cpu_percent };
	err = cgroup_apply_limits(&r->cg, &lim, &em);
	if (err)
		return setup_failed(r, "resource limits", &em), err;
	err = sandbox_tmpdir_create(r->tmpdir, r->ident.switch_user ? r->ident.uid : 0,
				    r->ident.switch_user ? r->ident.gid : 0, &r->tmpdir_id, &em);
	if (err)
		return setup_failed(r, "TMPDIR", &em), -EIO;
	/* Its identity, for gc should this supervisor die: gc removes only that directory. */
	err = register_sandbox(r);
	if (err)
		return errmsg_set(&em, err, "writing %s/%s", REGISTRY_DIR, r->id), setup_failed(r, "registry", &em),
		       err;
	err = build_specs(r);
	if (err)
		return errmsg_set(&em, err, "building rules"), setup_failed(r, "rules", &em), err;
	if (r->n_unix_names > QUOTA_SANDBOX_UNIX_NAMES || r->policy->n_device_allow > QUOTA_SANDBOX_DEVICES) {
		bool names = r->n_unix_names > QUOTA_SANDBOX_UNIX_NAMES;

		errmsg_set(&em, -EDQUOT, "%s: %zu %s, over the limit of %d per sandbox (the host-wide %s map holds %d "
			   "for every sandbox)", names ? "network.allowUnixSockets" : "bpfbox.devices",
			   names ? r->n_unix_names : r->policy->n_device_allow, names ? "abstract socket names" : "devices",
			   names ? QUOTA_SANDBOX_UNIX_NAMES : QUOTA_SANDBOX_DEVICES, names ? "unix_names" : "device_allow",
			   names ? BB_MAX_UNIX_NAMES : BB_MAX_DEVICES);
		return setup_failed(r, "loading the policy into the kernel", &em), -EDQUOT;
	}
	err = sandbox_maps_add(r->bpf, r->cg.id, sandbox_flags(r), r->policy->sock_allow, &r->ringbuf_fd, &em);
	if (err)
		return setup_failed(r, "registering the sandbox", &em), err;
	r->maps_added = true;
	err = sandbox_maps_allow_unix_names(r->bpf, r->cg.id, (const char *const *)r->unix_names, r->n_unix_names,
					    &em);
	if (!err)
		err = sandbox_devices_load(r->bpf, r->cg.id, r->policy->device_allow, r->policy->n_device_allow,
					   device_note, r, &em);
	if (err)
		return setup_failed(r, "loading the policy into the kernel", &em), err;
	r->kctx.log = r->log;
	r->kctx.git = &r->git;
	r->kctx.sandbox_id = r->cg.id;
	r->kctx.rule_names = r->rule_names;
	r->kctx.n_rules = r->n_rule_names;
	r->events = ring_buffer__new(r->ringbuf_fd, kevent_handle, &r->kctx, NULL);
	if (!r->events)
		return errmsg_set(&em, -errno, "opening the ring buffer"), setup_failed(r, "events", &em), -EIO;
	/* The network programs are in place before the first instruction of the command. */
	err = bpf_state_attach_cgroup(r->bpf, r->cg.dir_fd, &em);
	if (err)
		return setup_failed(r, "network enforcement", &em), err;
	err = start_proxies(r, &em);
	if (err)
		return setup_failed(r, "proxy", &em), err;
	x.sandbox_id = r->id;
	x.tmpdir = r->tmpdir;
	x.proxy_port = r->http_port;
	x.socks_port = r->socks_port;
	x.self_exe = self_exe;
	if (r->ident.switch_user) {
		x.user = r->ident.name;
		x.home = r->ident.home;
		x.shell = r->ident.shell;
	}
	err = env_build(r->policy, r->caller ? (char **)r->caller->env : environ, &x, &r->env);
	if (err)
		return errmsg_set(&em, err, "building the environment"), setup_failed(r, "environment", &em), err;
	if (!r->caller)
		env_scrub_self(r->policy, environ);

	ls.search_path = env_get(&r->env, "PATH");
	ls.argv = r->opts.argv;
	ls.envp = r->env.v;
	ls.bpf = r->bpf;
	ls.sandbox_id = r->cg.id;
	ls.cgroup_fd = r->cg.dir_fd;
	ls.resolve_paths = r->spec_paths;
	ls.resolve_no_links = r->spec_no_links;
	ls.n_resolve = r->n_specs;
	ls.keep_fds = r->opts.pass_fds;
	ls.n_keep_fds = r->opts.n_pass_fds;
	if (r->caller) {
		ls.keep_fd_sources = r->caller->pass_sources;
		ls.new_session_tty = r->caller->tty;
	}
	ls.identity = &r->ident;
	ls.cwd = r->policy->cwd;
	/* Orphaned background jobs become ours, to be killed and reaped at the end. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	err = launch_start(&ls, &r->launch, &em);
	if (err)
		return setup_failed(r, "launch", &em), err;
	r->launched = true;
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
		err = reserve_and_load_rules(r, &em);
	/* By the identity the kernel resolved: no other sandbox reaches it, whatever the path. */
	if (!err && !r->launch.results[r->tmpdir_spec].err && !r->launch.results[r->tmpdir_spec].missing)
		err = sandbox_private_claim_dir(r->bpf, r->cg.id, r->launch.results[r->tmpdir_spec].dev,
						r->launch.results[r->tmpdir_spec].ino, &em);
	else if (!err)
		err = errmsg_set(&em, -ENOENT, "resolving %s in the kernel", r->tmpdir);
	if (!err)
		err = sandbox_maps_enforce(r->bpf, r->cg.id, &ports, &em);
	if (err)
		return setup_failed(r, "loading the policy into the kernel", &em), err;
	/* Now with the command's pid, for bpfbox ps. */
	register_sandbox(r);
	clock_gettime(CLOCK_MONOTONIC, &r->started);
	log_start(r);
	return 0;
}

/* Limits that bit during the run: a fork bomb shows as refused forks, a memory hog as OOM kills. */
static void report_limits(struct exec_run *r)
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

static int exec_failure_status(struct exec_run *r)
{
	struct log_event *ev;
	int e = r->launch.exec_errno;
	int status = r->launch.setup_failed ? BPFBOX_EXIT_SETUP : e == ENOENT ? 127 : 126;
	char text[PATH_MAX + 512];

	ev = log_event_new(LOG_ERROR, "event", "process", "start,error",
			   r->launch.setup_failed ? "setup-failed" : "exec-failed", "failure");
	log_event_set_str(ev, "process.executable", r->opts.argv[0]);
	log_event_set_errno(ev, e);
	log_event_set_int(ev, "process.exit_code", status);
	if (r->launch.setup_failed && r->launch.stage == LAUNCH_STAGE_CWD)
		snprintf(text, sizeof(text), "user %s (uid %u) cannot enter the working directory %s: %s; the command "
			 "was not run", r->ident.name, (unsigned)r->ident.uid, r->policy->cwd, strerror(e));
	else if (r->launch.setup_failed && r->launch.stage == LAUNCH_STAGE_USER)
		snprintf(text, sizeof(text), "could not become user %s (uid %u, gid %u) for %s: %s; the command was not run",
			 r->ident.name, (unsigned)r->ident.uid, (unsigned)r->ident.gid, r->opts.argv[0], strerror(e));
	else if (r->launch.setup_failed)
		snprintf(text, sizeof(text), "could not drop privileges for %s: %s", r->opts.argv[0], strerror(e));
	else
		snprintf(text, sizeof(text), "cannot execute %s: %s", r->opts.argv[0], strerror(e));
	log_event_message(ev, "%s", text);
	log_emit(r->log, ev);
	if (!log_is_json(r->log) || r->opts.log.file_path || r->opts.log.fd >= 0) {
		if (r->launch.setup_failed)
			fprintf(stderr, "bpfbox: %s\n", text);
		else
			fprintf(stderr, "bpfbox: %s: %s\n", r->opts.argv[0],
				e == ENOENT ? "command not found" : strerror(e));
	}
	return status;
}

/* Reads the caller's control frames: a signal to forward, nothing, or -1 when it is gone. */
static int read_control(void *ctx)
{
	struct exec_run *r = ctx;
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
		kill(r->launch.pid, SIGCONT);
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
		.argv = o->argv,
	};
	return 0;
}

static int exec_main(int argc, char **argv, const struct exec_caller *caller)
{
	struct exec_run r = { .ringbuf_fd = -1, .signal_fd = -1, .caller = caller };
	struct supervise_result res = { 0 };
	struct supervise_opts so = { 0 };
	char self_exe[4096];
	ssize_t n;
	int err, status;

	memset(&r.launch, 0, sizeof(r.launch));
	if (parse_args(argc, argv, &r.opts))
		return BPFBOX_EXIT_SETUP;
	if (!caller && geteuid() != 0) {
		struct exec_client_opts co;

		/* Not root: the daemon runs the sandbox, with the same options. */
		if (client_opts_from(&r.opts, &co))
			return BPFBOX_EXIT_SETUP;
		return exec_client(&co);
	}
	if (caller && r.opts.quota) {
		fprintf(stderr, "bpfbox: --quota is for root's own runs: the daemon's administrator sets the shares "
			"(bpfbox daemon --quota)\n");
		return BPFBOX_EXIT_SETUP;
	}
	if (caller && caller->quota) {
		r.quota = *caller->quota;
	} else {
		struct errmsg em = { { 0 } };

		quota_limits_default(&r.quota, "bpfbox exec --quota");
		if (r.opts.quota && quota_limits_parse(r.opts.quota, &r.quota, &em)) {
			fprintf(stderr, "bpfbox: --quota: %s\n", em.text);
			return BPFBOX_EXIT_SETUP;
		}
	}
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = 0;
	make_id(&r);
	join_command(&r);
	err = log_open(&r.opts.log, &r.log);
	if (err) {
		fprintf(stderr, "bpfbox: opening the log %s: %s; the command was not run\n",
			r.opts.log.file_path ? r.opts.log.file_path : "", strerror(-err));
		return BPFBOX_EXIT_SETUP;
	}
	log_set_sandbox(r.log, r.id, r.command_line);
	if (caller && (caller->admin_log_path || caller->admin_log_fd >= 0)) {
		err = log_set_admin(r.log, caller->admin_log_path, caller->admin_log_fd);
		if (err) {
			struct errmsg em = { { 0 } };

			errmsg_set(&em, err, "opening the administrator's log %s",
				   caller->admin_log_path ? caller->admin_log_path : "(descriptor)");
			setup_failed(&r, "log", &em);
			exec_teardown(&r);
			return BPFBOX_EXIT_SETUP;
		}
	}
	if (geteuid() != 0) {
		struct errmsg em = { { 0 } };

		errmsg_set(&em, -EPERM, "bpfbox exec must run as root (it loads BPF programs and creates cgroups)");
		setup_failed(&r, "permission", &em);
		exec_teardown(&r);
		return BPFBOX_EXIT_SETUP;
	}
	{
		struct errmsg em = { { 0 } };

		if (caller ? identity_from_peer(caller->uid, caller->gid, &r.ident, &em)
			   : identity_resolve(r.opts.user, environ, &r.ident, &em)) {
			setup_failed(&r, "user", &em);
			exec_teardown(&r);
			return BPFBOX_EXIT_SETUP;
		}
		log_set_user(r.log, r.ident.uid, r.ident.name);
	}
	/* BPFBOX_DEBUG_BPF=1 shows libbpf's messages, the verifier's log among them. */
	if (!getenv("BPFBOX_DEBUG_BPF"))
		libbpf_set_print(NULL);
	if (load_policy(&r)) {
		exec_teardown(&r);
		return BPFBOX_EXIT_SETUP;
	}
	if (r.policy->n_ignore) {
		struct log_ignore_rule rules[64];
		size_t k = r.policy->n_ignore < 64 ? r.policy->n_ignore : 64;

		for (size_t i = 0; i < k; i++)
			rules[i] = (struct log_ignore_rule){ r.policy->ignore[i].command,
							     (const char *const *)r.policy->ignore[i].lines,
							     r.policy->ignore[i].n_lines };
		log_set_ignore(r.log, rules, k);
	}
	if (exec_setup(&r, self_exe)) {
		exec_teardown(&r);
		return BPFBOX_EXIT_SETUP;
	}
	if (launch_go(&r.launch)) {
		status = exec_failure_status(&r);
		exec_teardown(&r);
		return status;
	}
	so.pid = r.launch.pid;
	so.pidfd = r.launch.pidfd;
	so.cgroup_path = r.cg.path;
	so.events = r.events;
	so.signal_fd = r.signal_fd;
	so.timeout_ms = r.opts.timeout_ms;
	so.kill_after_ms = r.opts.kill_after_ms;
	so.control_fd = -1;
	if (caller && caller->control_fd >= 0) {
		so.control_fd = caller->control_fd;
		so.control = read_control;
		so.control_ctx = &r;
	}
	err = supervise(&so, &res);
	/* Background jobs and daemons die with the command. */
	cgroup_kill_all(r.cg.path, 5000);
	supervise_reap_all();
	report_limits(&r);
	ring_buffer__consume(r.events);
	sandbox_maps_pending(r.bpf, r.cg.id, kevent_report_pending, &r.kctx);
	check_new_repositories(&r);
	if (err) {
		res.exit_code = BPFBOX_EXIT_SETUP;
		res.ended_by = "error";
	}
	log_exit(&r, &res);
	status = res.exit_code;
	exec_teardown(&r);
	return status;
}

int cmd_exec(int argc, char **argv)
{
	return exec_main(argc, argv, NULL);
}

int cmd_exec_for_caller(int argc, char **argv, const struct exec_caller *caller)
{
	return exec_main(argc, argv, caller);
}
