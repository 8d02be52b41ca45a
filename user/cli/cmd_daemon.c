// SPDX-License-Identifier: MIT
/*
 * bpfbox daemon: its options, and the run each worker makes for a caller (a
 * root `bpfbox exec` with the caller's options, under the administrator's
 * policy as a ceiling). The server itself is daemon/server.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "daemon/client.h"
#include "daemon/server.h"
#include "exec_caller.h"
#include "lib/duration.h"
#include "log/log_level.h"
#include "policy/policy.h"
#include "sandbox/quota.h"

struct daemon_opts {
	const char *socket;
	mode_t socket_mode;
	const char *socket_group;
	const char *log_file;
	int log_fd;
	const char *config;
	long max_per_user;
	long long stop_grace_ms;
	struct quota_limits quota; /* every caller's shares of the host-wide maps */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfbox daemon [OPTIONS]\n\n"
		"runs sandboxes for users who are not root; in the foreground, as root\n\n"
		"  --socket PATH          where to listen (default " BPFBOX_SOCKET_PATH ");\n"
		"                         a socket passed by systemd (LISTEN_FDS) is used instead\n"
		"  --socket-mode MODE     who may connect, as an octal mode (default 0666: every local user)\n"
		"  --socket-group GROUP   the socket's group (default root)\n"
		"  --log-file PATH        the administrator's log: every event of every sandbox\n"
		"                         (default /var/log/bpfbox/events.ndjson; SIGHUP reopens it)\n"
		"  --log-fd N             write the administrator's log to descriptor N instead\n"
		"  --config FILE          the administrator's policy, the ceiling of every caller's\n"
		"                         (default /etc/bpfbox/policy.json; missing: the built-in default)\n"
		"  --max-per-user N       concurrent sandboxes per user (default 16; 0: no limit)\n"
		"  --quota KEY=N[,KEY=N...]\n"
		"                         each sandbox's and each user's share of the host-wide kernel\n"
		"                         maps: rules (default 8192), user-rules (16384), learned\n"
		"                         (1024), user-learned (4096), learned-min-ttl (300 s)\n"
		"  --stop-grace DURATION  on SIGTERM, how long running sandboxes may go on before they are\n"
		"                         stopped (default 10s)\n\n"
		"signals: SIGHUP reopens the log; SIGTERM or SIGINT stop accepting, let running sandboxes\n"
		"finish for the grace, then stop them (SIGTERM, then SIGKILL) and exit 0\n");
}

static int parse_args(int argc, char **argv, struct daemon_opts *o)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },	  { "socket-mode", required_argument, NULL, 'm' },
		{ "socket-group", required_argument, NULL, 'g' }, { "log-file", required_argument, NULL, 'f' },
		{ "log-fd", required_argument, NULL, 'd' },	  { "config", required_argument, NULL, 'c' },
		{ "max-per-user", required_argument, NULL, 'u' }, { "stop-grace", required_argument, NULL, 't' },
		{ "quota", required_argument, NULL, 'Q' },	  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct errmsg em = { { 0 } };
	char *end;
	int c;

	*o = (struct daemon_opts){ .socket = BPFBOX_SOCKET_PATH, .socket_mode = 0666, .log_fd = -1,
				   .config = POLICY_SYSTEM_PATH, .max_per_user = 16, .stop_grace_ms = 10000 };
	quota_limits_default(&o->quota, "bpfbox daemon --quota");
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'm':
			o->socket_mode = (mode_t)strtoul(optarg, &end, 8);
			if (*end || !*optarg || o->socket_mode > 0777) {
				fprintf(stderr, "bpfbox: daemon: --socket-mode: expected an octal mode, got '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'g':
			o->socket_group = optarg;
			break;
		case 'f':
			o->log_file = optarg;
			break;
		case 'd':
			o->log_fd = (int)strtol(optarg, &end, 10);
			if (*end || o->log_fd < 0 || fcntl(o->log_fd, F_GETFD) < 0) {
				fprintf(stderr, "bpfbox: daemon: --log-fd %s: not an open descriptor\n", optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			o->config = optarg;
			break;
		case 'u':
			o->max_per_user = strtol(optarg, &end, 10);
			if (*end || !*optarg || o->max_per_user < 0 || o->max_per_user > DAEMON_MAX_WORKERS) {
				fprintf(stderr, "bpfbox: daemon: --max-per-user: expected 0 to %d, got '%s'\n",
					DAEMON_MAX_WORKERS, optarg);
				return -EINVAL;
			}
			break;
		case 'Q':
			if (quota_limits_parse(optarg, &o->quota, &em)) {
				fprintf(stderr, "bpfbox: daemon: --quota: %s\n", em.text);
				return -EINVAL;
			}
			break;
		case 't':
			if (parse_duration(optarg, &o->stop_grace_ms)) {
				fprintf(stderr, "bpfbox: daemon: --stop-grace: not a duration: '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bpfbox: daemon: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (o->log_file && o->log_fd >= 0) {
		fprintf(stderr, "bpfbox: daemon: --log-file and --log-fd exclude each other\n");
		return -EINVAL;
	}
	if (!o->log_file && o->log_fd < 0)
		o->log_file = "/var/log/bpfbox/events.ndjson";
	return 0;
}

static char *fmt_arg(const char *fmt, long long v)
{
	char *s = NULL;

	return asprintf(&s, fmt, v) < 0 ? NULL : s;
}

/* The `bpfbox exec` command line of the caller's request; pass_sources[i] is where --pass-fd i comes from. */
static int exec_argv(const struct daemon_run *r, char **argv, int *pass_sources)
{
	const struct wire_exec *x = r->exec;
	static const char *const formats[] = { "auto", "json", "text" };
	int argc = 0;

	argv[argc++] = "exec";
	if (x->strict)
		argv[argc++] = "--strict";
	if (x->audit)
		argv[argc++] = "--audit";
	if (x->timeout_ms) {
		argv[argc++] = "--timeout";
		argv[argc++] = fmt_arg("%lldms", x->timeout_ms);
	}
	if (x->kill_after_ms >= 0) {
		argv[argc++] = "--kill-after";
		argv[argc++] = fmt_arg("%lldms", x->kill_after_ms);
	}
	if (x->fd_log >= 0) {
		argv[argc++] = "--log-fd";
		argv[argc++] = fmt_arg("%lld", r->fds[x->fd_log]);
	}
	if (x->fd_control >= 0) {
		/* The caller's descriptor, received here: srt's control channel, read by this worker. */
		argv[argc++] = "--control-fd";
		argv[argc++] = fmt_arg("%lld", r->fds[x->fd_control]);
	}
	if (x->log_format >= 0) {
		argv[argc++] = "--log-format";
		argv[argc++] = (char *)formats[x->log_format];
	}
	if (x->log_level >= 0) {
		argv[argc++] = "--log-level";
		argv[argc++] = (char *)log_level_name((enum log_level)x->log_level);
	}
	for (size_t i = 0; i < x->n_pass; i++) {
		argv[argc++] = "--pass-fd";
		argv[argc++] = fmt_arg("%lld", x->pass[i].target);
		pass_sources[i] = r->fds[x->pass[i].index];
	}
	argv[argc++] = "--";
	for (size_t i = 0; i < x->argc; i++)
		argv[argc++] = x->argv[i];
	return argc;
}

/* The worker's run: `bpfbox exec` with the caller's options, for the caller. */
static int run_for_caller(void *ctx, const struct daemon_run *r)
{
	const struct daemon_opts *o = ctx;
	const struct wire_exec *x = r->exec;
	int pass_sources[WIRE_MAX_PASS], argc;
	char **argv = calloc(x->argc + 2 * WIRE_MAX_PASS + 24, sizeof(char *));
	struct exec_caller caller;

	if (!argv)
		return -ENOMEM;
	argc = exec_argv(r, argv, pass_sources);
	for (int i = 0; i < argc; i++)
		if (!argv[i])
			return -ENOMEM;
	caller = (struct exec_caller){
		.uid = r->peer->uid,
		.gid = r->peer->gid,
		.env = x->env,
		.has_policy = x->has_policy,
		.policy_name = x->policy_name,
		.policy_json = x->policy_json,
		.policy_len = x->policy_len,
		.ceiling_file = o->config,
		.ceiling_json = r->ceiling,
		.ceiling_len = r->ceiling_len,
		.ceiling_seq = r->ceiling_seq,
		.ceiling_seq_now = r->ceiling_seq_now,
		.cwd = r->cwd,
		.admin_log_path = o->log_file,
		.admin_log_fd = o->log_fd,
		.control_fd = r->conn,
		.control_fd_shown = x->control_fd_number,
		.tty = x->tty,
		.pass_sources = pass_sources,
		.quota = &o->quota,
	};
	return cmd_exec_for_caller(argc, argv, &caller);
}

int cmd_daemon(int argc, char **argv)
{
	struct daemon_opts o;
	struct daemon_handlers h = { .run = run_for_caller, .ps = ps_render, .ctx = &o };
	struct daemon_config cfg;
	struct errmsg em = { { 0 } };
	char quota[160];

	if (parse_args(argc, argv, &o))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "bpfbox: daemon must run as root (it loads BPF programs and creates cgroups)\n");
		return BPFBOX_EXIT_SETUP;
	}
	quota_limits_format(&o.quota, quota, sizeof(quota));
	cfg = (struct daemon_config){
		.socket = o.socket,
		.socket_mode = o.socket_mode,
		.socket_group = o.socket_group,
		.log_file = o.log_file,
		.log_fd = o.log_fd,
		.config = o.config,
		.quota = quota,
		.max_per_user = o.max_per_user,
		.stop_grace_ms = o.stop_grace_ms,
		.setup_status = BPFBOX_EXIT_SETUP,
	};
	if (daemon_serve(&cfg, &h, &em)) {
		if (em.text[0])
			fprintf(stderr, "bpfbox: daemon: %s\n", em.text);
		return 1;
	}
	return 0;
}
