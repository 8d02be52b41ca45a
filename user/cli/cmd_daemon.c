// SPDX-License-Identifier: MIT
/*
 * bpfbox daemon: sandboxes for users who are not root. One root process
 * listens on a Unix socket; each connection sends one request (exec, ps or
 * stop). Identity comes from SO_PEERCRED alone. An exec is run by a worker
 * process forked for it, which is a root `bpfbox exec` for that caller under
 * the administrator's policy as a ceiling, watching the connection: a caller
 * that goes away takes its sandbox with it. Workers outlive the daemon, so a
 * daemon killed or restarted leaves every running sandbox confined.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "commands.h"
#include "daemon/listen.h"
#include "daemon/passwd_cache.h"
#include "daemon/refusals.h"
#include "daemon/wire.h"
#include "exec_caller.h"
#include "log/log.h"
#include "policy/policy.h"
#include "sandbox/bpf_state.h"
#include "sandbox/quota.h"
#include "sandbox/registry.h"
#include "sandbox/sandbox_gc.h"

#define DAEMON_MAX_PENDING 64 /* connections still sending their request */
#define DAEMON_MAX_PENDING_PER_UID 8
#define DAEMON_REQUEST_TIMEOUT_S 10
#define DAEMON_MAX_WORKERS 1024
#define DAEMON_PID_FILE BPFBOX_RUN_DIR "/bpfbox.pid"
#define STR_(x) #x
#define STR(x) STR_(x)
#define PASSWD_LOOKUPS_PER_S_TEXT STR(PASSWD_LOOKUPS_PER_S)

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

struct pending {
	int fd; /* -1: free slot */
	struct peer peer;
	time_t deadline;
	struct wire_reader rd;
};

struct worker {
	pid_t pid;
	uid_t uid; /* the owner it counts under (struct peer) */
};

struct daemon {
	struct daemon_opts o;
	struct listener listener;
	struct log *log;
	struct bpf_state *bpf;
	int ep, sig_fd, tick_fd;
	struct pending pending[DAEMON_MAX_PENDING];
	struct worker workers[DAEMON_MAX_WORKERS];
	size_t n_workers;
	struct refusals refusals; /* what of them reaches the log */
	struct passwd_cache passwd; /* who has an entry, and its name */
	bool stopping;
	time_t stop_at; /* grace over: workers get SIGTERM */
	time_t kill_at; /* then SIGKILL */
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

/* A refused or failed request: the answer for the caller, and an event for the administrator unless its uid spent them. */
static void refuse(struct daemon *d, int fd, const struct peer *p, const char *why)
{
	struct log_event *ev;
	char uid[16];

	wire_send_msg(fd, WIRE_MSG_ERROR, BPFBOX_EXIT_SETUP, why);
	if (!refusals_note(&d->refusals, p->owner, time(NULL)))
		return;
	ev = log_event_new(LOG_WARN, "event", "process", "denied", "daemon-request-refused", "failure");
	snprintf(uid, sizeof(uid), "%u", (unsigned)p->owner);
	log_event_set_str(ev, "user.id", uid);
	log_event_set_str(ev, "user.name", passwd_cache_name(&d->passwd, p->owner));
	log_event_set_int(ev, "process.pid", p->pid);
	if (p->uid != p->owner) {
		snprintf(uid, sizeof(uid), "%u", (unsigned)p->uid);
		log_event_set_str(ev, "process.user.id", uid);
		log_event_message(ev, "request of uid %u (in a user namespace of uid %u) refused: %s", (unsigned)p->uid,
				  (unsigned)p->owner, why);
	} else {
		log_event_message(ev, "request of uid %u refused: %s", (unsigned)p->uid, why);
	}
	log_emit(d->log, ev);
}

/* One window's refusals that were counted, not logged. */
static void report_refusals(void *ctx, const struct refusal_summary *s)
{
	struct daemon *d = ctx;
	struct log_event *ev = log_event_new(LOG_WARN, "event", "process", "denied", "daemon-refusals-summary",
					     "failure");
	char uid[16];

	log_event_set_int(ev, "bpfbox.count", (long long)s->count);
	log_event_set_int(ev, "event.duration", (long long)s->seconds * 1000000000LL);
	if (s->other) {
		log_event_message(ev, "%lu more refusals from other uids (the daemon's table of %d uids was full) in "
				  "the last %lld s; the first %d were logged in full", s->count, REFUSALS_UIDS,
				  (long long)s->seconds, REFUSALS_FIRST);
	} else {
		snprintf(uid, sizeof(uid), "%u", (unsigned)s->uid);
		log_event_set_str(ev, "user.id", uid);
		log_event_set_str(ev, "user.name", passwd_cache_name(&d->passwd, s->uid));
		log_event_message(ev, "%lu more refusals from uid %u in the last %lld s; the first %d were logged in "
				  "full", s->count, (unsigned)s->uid, (long long)s->seconds, REFUSALS_FIRST);
	}
	log_emit(d->log, ev);
}

static void close_pending(struct pending *c)
{
	wire_reader_release(&c->rd);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static size_t workers_of(const struct daemon *d, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n_workers; i++)
		n += d->workers[i].uid == uid;
	return n;
}

/* In the forked worker: nothing of the daemon's but the caller's connection and descriptors. */
static void worker_close_daemon(struct daemon *d, int keep)
{
	for (size_t i = 0; i < DAEMON_MAX_PENDING; i++) {
		if (d->pending[i].fd == keep)
			continue;
		if (d->pending[i].fd >= 0) {
			wire_reader_release(&d->pending[i].rd);
			close(d->pending[i].fd);
		}
	}
	close(d->listener.fd);
	close(d->ep);
	close(d->sig_fd);
	close(d->tick_fd);
}

static char *fmt_arg(const char *fmt, long long v)
{
	char *s = NULL;

	return asprintf(&s, fmt, v) < 0 ? NULL : s;
}

/* The worker's body: `bpfbox exec` with the caller's options, for the caller. */
static __attribute__((noreturn)) void worker_main(struct daemon *d, int conn, const struct peer *p,
						  struct wire_request *req, int *fds, size_t n_fds)
{
	struct wire_exec *x = &req->exec;
	static const char *const formats[] = { "auto", "json", "text" };
	int pass_sources[WIRE_MAX_PASS], status;
	char **argv = calloc(x->argc + 2 * WIRE_MAX_PASS + 24, sizeof(char *));
	struct exec_caller caller = { 0 };
	char cwd[PATH_MAX];
	sigset_t none;
	int argc = 0;

	worker_close_daemon(d, conn);
	/* Not in the daemon's process group or session: a ^C to a foreground daemon spares the sandboxes. */
	setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (!argv || dup2(fds[x->fd_stdin], 0) < 0 || dup2(fds[x->fd_stdout], 1) < 0 || dup2(fds[x->fd_stderr], 2) < 0)
		_exit(1);
	/* The directory the caller opened, by its descriptor; its name is the kernel's, not the request's. */
	if (fchdir(fds[x->fd_cwd]) || !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "bpfbox: cannot enter the working directory: %s; the command was not run\n",
			strerror(errno));
		wire_send_msg(conn, WIRE_MSG_EXIT, BPFBOX_EXIT_SETUP, NULL);
		_exit(0);
	}
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
		argv[argc++] = fmt_arg("%lld", fds[x->fd_log]);
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
		pass_sources[i] = fds[x->pass[i].index];
	}
	argv[argc++] = "--";
	for (size_t i = 0; i < x->argc; i++)
		argv[argc++] = x->argv[i];
	for (int i = 0; i < argc; i++)
		if (!argv[i])
			_exit(1);
	caller = (struct exec_caller){
		.uid = p->uid,
		.gid = p->gid,
		.env = x->env,
		.has_policy = x->has_policy,
		.policy_name = x->policy_name,
		.policy_json = x->policy_json,
		.policy_len = x->policy_len,
		.ceiling_file = d->o.config,
		.cwd = cwd,
		.admin_log_path = d->o.log_file,
		.admin_log_fd = d->o.log_fd,
		.control_fd = conn,
		.tty = x->tty,
		.pass_sources = pass_sources,
		.quota = &d->o.quota,
	};
	log_close(d->log);
	status = cmd_exec_for_caller(argc, argv, &caller);
	wire_send_msg(conn, WIRE_MSG_EXIT, status, NULL);
	_exit(0);
}

static void start_worker(struct daemon *d, struct pending *c, struct wire_request *req, int *fds, size_t n_fds)
{
	char why[256];
	pid_t pid;

	if (d->o.max_per_user && workers_of(d, c->peer.owner) >= (size_t)d->o.max_per_user) {
		snprintf(why, sizeof(why),
			 "uid %u already runs %ld sandboxes, the administrator's limit (bpfbox daemon --max-per-user)",
			 (unsigned)c->peer.owner, d->o.max_per_user);
		refuse(d, c->fd, &c->peer, why);
		return;
	}
	if (d->n_workers == DAEMON_MAX_WORKERS) {
		refuse(d, c->fd, &c->peer, "the daemon runs as many sandboxes as it can; try again later");
		return;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, sizeof(why), "the daemon could not start a worker: %s", strerror(errno));
		refuse(d, c->fd, &c->peer, why);
		return;
	}
	if (pid == 0)
		worker_main(d, c->fd, &c->peer, req, fds, n_fds);
	d->workers[d->n_workers++] = (struct worker){ pid, c->peer.owner };
}

static void answer_ps(int fd, const struct peer *p, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		wire_send_msg(fd, WIRE_MSG_ERROR, 1, "out of memory");
		return;
	}
	ps_render(f, json, p->uid == 0, p->uid);
	fclose(f);
	/* The table goes in pieces a control frame can carry. */
	for (size_t off = 0; off < len;) {
		char piece[WIRE_MAX_CONTROL - 512];
		size_t n = len - off < sizeof(piece) - 1 ? len - off : sizeof(piece) - 1;

		memcpy(piece, text + off, n);
		piece[n] = 0;
		if (wire_send_msg(fd, WIRE_MSG_TEXT, 0, piece))
			break;
		off += n;
	}
	free(text);
	wire_send_msg(fd, WIRE_MSG_EXIT, 0, NULL);
}

static void handle_request(struct daemon *d, struct pending *c)
{
	struct wire_request req;
	struct errmsg em = { { 0 } };
	int fds[WIRE_MAX_FDS];
	size_t n_fds;
	uint32_t len;
	char *body = wire_reader_take(&c->rd, &len, fds, &n_fds), why[600];

	if (wire_request_decode(body, len, n_fds, &req, &em)) {
		snprintf(why, sizeof(why), "bad request: %s", em.text);
		refuse(d, c->fd, &c->peer, why);
	} else if (req.op == WIRE_OP_PS) {
		answer_ps(c->fd, &c->peer, req.ps_json);
	} else if (req.op == WIRE_OP_STOP) {
		if (sandbox_stop_for(req.stop_id, c->peer.uid == 0, c->peer.uid, &em))
			wire_send_msg(c->fd, WIRE_MSG_ERROR, 1, em.text);
		else
			wire_send_msg(c->fd, WIRE_MSG_EXIT, 0, NULL);
	} else if (d->stopping) {
		refuse(d, c->fd, &c->peer, "the daemon is stopping");
	} else {
		start_worker(d, c, &req, fds, n_fds);
	}
	/* The worker holds its own copies; the daemon keeps none of the caller's descriptors. */
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	wire_request_free(&req);
	free(body);
	close_pending(c);
}

/*
 * Who may take a slot: a peer whose uid has a passwd entry, counted under
 * the owner of its user namespace (a user's subordinate uids are that
 * user's). Checked before the slot is taken; NULL when refused, with why.
 */
static const char *admit(struct daemon *d, struct peer *p, char *why, size_t len)
{
	int ret = peer_owner(p);

	if (ret == -ESRCH)
		return "the connecting process is gone";
	if (ret) {
		snprintf(why, len, "the user namespace of the connecting process cannot be traced to a user (%s)",
			 strerror(-ret));
		return why;
	}
	/* The owner's name for the log (cached: one lookup a minute per owner). */
	if (p->owner != p->uid)
		passwd_cache_lookup(&d->passwd, p->owner, time(NULL), NULL);
	ret = passwd_cache_lookup(&d->passwd, p->uid, time(NULL), NULL);
	if (ret == 0) {
		snprintf(why, len, "uid %u has no passwd entry (a subordinate uid of a user namespace is not a user "
			 "the daemon serves)", (unsigned)p->uid);
		return why;
	}
	if (ret == -EAGAIN)
		return "the daemon looks up at most " PASSWD_LOOKUPS_PER_S_TEXT " new uids a second; try again";
	if (ret < 0) {
		snprintf(why, len, "looking up uid %u in the passwd database failed: %s", (unsigned)p->uid,
			 strerror(-ret));
		return why;
	}
	return NULL;
}

static void accept_one(struct daemon *d)
{
	struct pending *c = NULL;
	struct epoll_event ev = { .events = EPOLLIN };
	struct peer p;
	size_t same = 0;
	char buf[256];
	const char *why;
	int fd = accept4(d->listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (peer_credentials(fd, &p)) {
		close(fd);
		return;
	}
	why = admit(d, &p, buf, sizeof(buf));
	for (size_t i = 0; i < DAEMON_MAX_PENDING && !why; i++) {
		if (d->pending[i].fd < 0 && !c)
			c = &d->pending[i];
		else if (d->pending[i].fd >= 0 && d->pending[i].peer.owner == p.owner)
			same++;
	}
	if (!why && (!c || same >= DAEMON_MAX_PENDING_PER_UID))
		why = "too many connections are still sending their requests; try again";
	if (!why && peer_in_sandbox(&p))
		why = "requests from inside a bpfbox sandbox are refused (a sandbox cannot start another outside "
		      "itself)";
	peer_release(&p);
	if (why) {
		refuse(d, fd, &p, why);
		close(fd);
		return;
	}
	c->fd = fd;
	c->peer = p;
	c->deadline = time(NULL) + DAEMON_REQUEST_TIMEOUT_S;
	wire_reader_init(&c->rd, WIRE_MAX_REQUEST);
	ev.data.u64 = (uint64_t)(c - d->pending) + 16;
	epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void read_pending(struct daemon *d, struct pending *c)
{
	int ret = wire_reader_read(&c->rd, c->fd);
	char why[160];

	if (ret == 0)
		return;
	if (ret == 1) {
		handle_request(d, c);
		return;
	}
	if (ret != -EPIPE) {
		snprintf(why, sizeof(why), "bad request: %s",
			 ret == -EMSGSIZE ? "larger than the daemon accepts"
			 : ret == -E2BIG  ? "more descriptors than the daemon accepts"
			 : ret == -EPROTO ? "not a bpfbox request (bad frame)"
					  : strerror(-ret));
		refuse(d, c->fd, &c->peer, why);
	}
	close_pending(c);
}

static void reap_workers(struct daemon *d)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		for (size_t i = 0; i < d->n_workers; i++)
			if (d->workers[i].pid == pid) {
				d->workers[i] = d->workers[--d->n_workers];
				break;
			}
}

static int open_log(struct daemon *d)
{
	struct log_config cfg = { .min_level = LOG_INFO, .format = LOG_FORMAT_JSON, .fd = d->o.log_fd,
				  .file_path = d->o.log_file };
	struct log *log;
	char dir[PATH_MAX];
	int err;

	if (d->o.log_file) {
		char *slash;

		snprintf(dir, sizeof(dir), "%s", d->o.log_file);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			mkdir(dir, 0750);
		}
	}
	err = log_open(&cfg, &log);
	if (err)
		return err;
	log_close(d->log);
	d->log = log;
	return 0;
}

/* What gc left of a dead supervisor's sandbox, for the administrator. */
static void gc_note(void *ctx, const char *text)
{
	struct daemon *d = ctx;

	log_msg(d->log, LOG_WARN, "warning", "gc: %s", text);
}

static void begin_stop(struct daemon *d, int sig)
{
	if (d->stopping)
		return;
	d->stopping = true;
	listener_close(&d->listener);
	for (size_t i = 0; i < DAEMON_MAX_PENDING; i++)
		if (d->pending[i].fd >= 0)
			close_pending(&d->pending[i]);
	d->stop_at = time(NULL) + (time_t)((d->o.stop_grace_ms + 999) / 1000);
	log_msg(d->log, LOG_INFO, "daemon-stop",
		"daemon stopping (SIG%s): %zu running sandbox(es) have %lld ms to finish", sigabbrev_np(sig),
		d->n_workers, d->o.stop_grace_ms);
}

/* Once a second: requests too slow to arrive, and the stop's grace. */
static bool tick(struct daemon *d)
{
	time_t now = time(NULL);

	for (size_t i = 0; i < DAEMON_MAX_PENDING; i++) {
		struct pending *c = &d->pending[i];

		if (c->fd >= 0 && now >= c->deadline) {
			refuse(d, c->fd, &c->peer, "the request did not arrive in time");
			close_pending(c);
		}
	}
	refusals_flush(&d->refusals, now, false, report_refusals, d);
	if (!d->stopping)
		return true;
	if (!d->n_workers)
		return false;
	if (!d->kill_at && now >= d->stop_at) {
		/* Each worker stops its tree as on a cancel: SIGTERM, SIGKILL after its grace. */
		for (size_t i = 0; i < d->n_workers; i++)
			kill(d->workers[i].pid, SIGTERM);
		d->kill_at = now + 10;
	} else if (d->kill_at && now >= d->kill_at) {
		for (size_t i = 0; i < d->n_workers; i++)
			kill(d->workers[i].pid, SIGKILL);
		reap_workers(d);
		sandbox_gc_dead(d->bpf, false, gc_note, d);
		return d->n_workers != 0;
	}
	return true;
}

static int setup(struct daemon *d)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	struct listen_opts lo = { d->o.socket, d->o.socket_mode, d->o.socket_group };
	struct epoll_event ev = { .events = EPOLLIN };
	struct errmsg em = { { 0 } };
	char quota[160];
	sigset_t set;
	FILE *pf;
	int err;

	for (size_t i = 0; i < DAEMON_MAX_PENDING; i++)
		d->pending[i].fd = -1;
	refusals_init(&d->refusals);
	passwd_cache_init(&d->passwd);
	d->listener.fd = d->ep = d->sig_fd = d->tick_fd = -1;
	err = open_log(d);
	if (err) {
		fprintf(stderr, "bpfbox: daemon: opening the log %s: %s\n", d->o.log_file ? d->o.log_file : "(fd)",
			strerror(-err));
		return err;
	}
	if (!getenv("BPFBOX_DEBUG_BPF"))
		libbpf_set_print(NULL);
	/* The shared programs stay loaded and pinned while the daemon runs; none is started without them. */
	err = bpf_state_open(&d->bpf, &em);
	if (err) {
		fprintf(stderr, "bpfbox: daemon: BPF-LSM enforcement is not available: %s (bpfbox doctor says how "
			"to fix the host)\n", em.text);
		return err;
	}
	/* The registry holds every caller's command line: root's alone, whatever an older bpfbox left. */
	err = registry_secure(true);
	if (err) {
		fprintf(stderr, "bpfbox: daemon: making %s root's alone (0700, entries 0600): %s; it must be a "
			"directory owned by root\n", REGISTRY_DIR, strerror(-err));
		return err;
	}
	/* What a daemon or a supervisor killed earlier left behind. */
	sandbox_gc_dead(d->bpf, false, gc_note, d);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	d->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	if (d->sig_fd < 0 || d->tick_fd < 0 || d->ep < 0)
		return -errno;
	err = listener_open(&lo, &d->listener, &em);
	if (err) {
		fprintf(stderr, "bpfbox: daemon: %s\n", em.text);
		return err;
	}
	timerfd_settime(d->tick_fd, 0, &its, NULL);
	ev.data.u64 = 0;
	epoll_ctl(d->ep, EPOLL_CTL_ADD, d->listener.fd, &ev);
	ev.data.u64 = 1;
	epoll_ctl(d->ep, EPOLL_CTL_ADD, d->sig_fd, &ev);
	ev.data.u64 = 2;
	epoll_ctl(d->ep, EPOLL_CTL_ADD, d->tick_fd, &ev);
	pf = fopen(DAEMON_PID_FILE, "we");
	if (pf) {
		fprintf(pf, "%d\n", (int)getpid());
		fclose(pf);
	}
	quota_limits_format(&d->o.quota, quota, sizeof(quota));
	log_msg(d->log, LOG_INFO, "daemon-start",
		"daemon listening on %s%s, ceiling %s, at most %ld sandbox(es) per user, quota %s",
		d->listener.activated ? "the socket systemd passed" : d->o.socket, d->listener.activated ? "" : "",
		d->o.config, d->o.max_per_user, quota);
	return 0;
}

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap_workers(d);
			break;
		case SIGHUP:
			if (open_log(d))
				fprintf(stderr, "bpfbox: daemon: reopening the log failed; writing to the old one\n");
			else
				log_msg(d->log, LOG_INFO, "daemon-log-reopened", "log reopened (SIGHUP)");
			break;
		default:
			begin_stop(d, (int)si.ssi_signo);
		}
		/* One signal per wake-up is enough: the descriptor stays readable for the rest. */
		break;
	}
}

int cmd_daemon(int argc, char **argv)
{
	struct daemon *d = calloc(1, sizeof(*d));
	int err, status = 0;

	if (!d)
		return 1;
	if (parse_args(argc, argv, &d->o)) {
		free(d);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bpfbox: daemon must run as root (it loads BPF programs and creates cgroups)\n");
		free(d);
		return BPFBOX_EXIT_SETUP;
	}
	err = setup(d);
	if (err) {
		status = 1;
		goto cleanup;
	}
	for (bool running = true; running;) {
		struct epoll_event evs[16];
		int n = epoll_wait(d->ep, evs, 16, -1);

		if (n < 0 && errno != EINTR) {
			status = 1;
			break;
		}
		for (int i = 0; i < n; i++) {
			uint64_t k = evs[i].data.u64, ticks;

			if (k == 0 && !d->stopping)
				accept_one(d);
			else if (k == 1)
				handle_signals(d);
			else if (k == 2) {
				(void)!read(d->tick_fd, &ticks, sizeof(ticks));
				running = tick(d);
			} else if (k >= 16 && d->pending[k - 16].fd >= 0)
				read_pending(d, &d->pending[k - 16]);
		}
		if (d->stopping && !d->n_workers)
			running = false;
	}
	refusals_flush(&d->refusals, time(NULL), true, report_refusals, d);
	log_msg(d->log, LOG_INFO, "daemon-exit", "daemon stopped");
cleanup:
	for (size_t i = 0; i < DAEMON_MAX_PENDING; i++)
		if (d->pending[i].fd >= 0)
			close_pending(&d->pending[i]);
	listener_close(&d->listener);
	unlink(DAEMON_PID_FILE);
	bpf_state_close(d->bpf);
	log_close(d->log);
	free(d);
	return status;
}
