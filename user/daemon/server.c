// SPDX-License-Identifier: MIT
/* The daemon's server: the accept loop, requests, workers, the stop. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/mono_clock.h"
#include "lib/start_trace.h"
#include "log/log.h"
#include "passwd_cache.h"
#include "refusals.h"
#include "relay.h"
#include "sandbox/bpf_state.h"
#include "sandbox/registry.h"
#include "sandbox/sandbox_gc.h"
#include "server_state.h"

/* A refused or failed request: the answer for the caller, and an event for the administrator unless its uid spent them. */
static void refuse(struct daemon *d, int fd, const struct peer *p, const char *why)
{
	struct log_event *ev;
	char uid[16];

	wire_send_msg(fd, WIRE_MSG_ERROR, d->o->setup_status, why);
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
	c->paused = false;
}

/*
 * A connection read again, or left unread, as its uid's read budget says. A paused one leaves
 * the epoll set: with no events asked for, a hang-up would still be reported, again and again.
 */
static void pending_watch(struct daemon *d, struct pending *c, bool paused)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)(c - d->pending) + 16 };

	if (c->paused != paused &&
	    !epoll_ctl(d->ep, paused ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, c->fd, paused ? NULL : &ev))
		c->paused = paused;
}

static size_t workers_of(const struct daemon *d, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n_workers; i++)
		n += d->workers[i].uid == uid;
	return n;
}

/* The worker's body: the caller's stdio and working directory, then the run, for the caller. */
static __attribute__((noreturn)) void worker_main(struct daemon *d, int conn, const struct peer *p,
						  const struct wire_exec *x, const int *fds)
{
	struct daemon_run run = { .conn = conn, .peer = p, .exec = x, .fds = fds, .ceiling = d->ceiling,
				  .ceiling_len = d->ceiling_len, .ceiling_seq = d->ceiling_seq,
				  .ceiling_seq_now = d->ceiling_seq_now };
	char cwd[PATH_MAX];
	sigset_t none;
	int status;

	daemon_close_for_child(d, conn);
	/* Not in the daemon's process group or session: a ^C to a foreground daemon spares the sandboxes. */
	setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(fds[x->fd_stdin], 0) < 0 || dup2(fds[x->fd_stdout], 1) < 0 || dup2(fds[x->fd_stderr], 2) < 0)
		_exit(1);
	/* The directory the caller opened, by its descriptor; its name is the kernel's, not the request's. */
	if (fchdir(fds[x->fd_cwd]) || !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "bpfbox: cannot enter the working directory: %s; the command was not run\n",
			strerror(errno));
		wire_send_msg(conn, WIRE_MSG_EXIT, d->o->setup_status, NULL);
		_exit(0);
	}
	run.cwd = cwd;
	log_close(d->log);
	start_trace("daemon worker ready");
	status = d->h->run(d->h->ctx, &run);
	if (status < 0)
		_exit(1);
	wire_send_msg(conn, WIRE_MSG_EXIT, status, NULL);
	_exit(0);
}

static void start_worker(struct daemon *d, struct pending *c, const struct wire_exec *x, const int *fds)
{
	char why[256];
	pid_t pid;

	if (d->o->max_per_user && workers_of(d, c->peer.owner) >= (size_t)d->o->max_per_user) {
		snprintf(why, sizeof(why),
			 "uid %u already runs %ld sandboxes, the administrator's limit (bpfbox daemon --max-per-user)",
			 (unsigned)c->peer.owner, d->o->max_per_user);
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
		worker_main(d, c->fd, &c->peer, x, fds);
	d->workers[d->n_workers++] = (struct worker){ pid, c->peer.owner };
}

static void answer_ps(struct daemon *d, int fd, const struct peer *p, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		wire_send_msg(fd, WIRE_MSG_ERROR, 1, "out of memory");
		return;
	}
	d->h->ps(f, json, p->uid == 0, p->uid);
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

static void relay(struct daemon *d, struct pending *c, const struct wire_request *req)
{
	int err = daemon_relay_update(d, c->fd, &c->peer, req);

	if (err == -EBUSY)
		wire_send_msg(c->fd, WIRE_MSG_ERROR, 1, "an update of yours is already in flight; try again when it "
			      "has answered");
	else if (err)
		wire_send_msg(c->fd, WIRE_MSG_ERROR, 1, "the daemon relays as many updates as it can; try again later");
}

static void handle_request(struct daemon *d, struct pending *c)
{
	struct wire_request req;
	struct errmsg em = { { 0 } };
	int fds[WIRE_MAX_FDS];
	size_t n_fds;
	uint32_t len;
	char *body = wire_reader_take(&c->rd, &len, fds, &n_fds), why[600];

	start_trace("daemon read the request");
	if (wire_request_decode(body, len, n_fds, &req, &em)) {
		snprintf(why, sizeof(why), "bad request: %s", em.text);
		refuse(d, c->fd, &c->peer, why);
	} else if (req.op == WIRE_OP_PS) {
		answer_ps(d, c->fd, &c->peer, req.ps_json);
	} else if (req.op == WIRE_OP_STOP) {
		if (sandbox_stop_for(req.sandbox_id, c->peer.uid == 0, c->peer.uid, &em))
			wire_send_msg(c->fd, WIRE_MSG_ERROR, 1, em.text);
		else
			wire_send_msg(c->fd, WIRE_MSG_EXIT, 0, NULL);
	} else if (req.op == WIRE_OP_UPDATE) {
		relay(d, c, &req);
	} else if (d->stopping) {
		refuse(d, c->fd, &c->peer, "the daemon is stopping");
	} else {
		start_worker(d, c, &req.exec, fds);
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
	unsigned long long left = read_budget_left(&d->budget, c->peer.owner, mono_ms());
	size_t before = c->rd.have;
	char why[160];
	int ret;

	if (!left) {
		pending_watch(d, c, true);
		return;
	}
	ret = wire_reader_read_max(&c->rd, c->fd, left > SIZE_MAX ? SIZE_MAX : (size_t)left);
	read_budget_spend(&d->budget, c->peer.owner, c->rd.have - before);
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

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
		if (daemon_relay_reaped(d, pid))
			continue;
		for (size_t i = 0; i < d->n_workers; i++)
			if (d->workers[i].pid == pid) {
				d->workers[i] = d->workers[--d->n_workers];
				break;
			}
	}
	if (d->reload_again && !d->reload_pid && !d->stopping)
		daemon_ceiling_reload(d);
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
	d->stop_at = time(NULL) + (time_t)((d->o->stop_grace_ms + 999) / 1000);
	log_msg(d->log, LOG_INFO, "daemon-stop",
		"daemon stopping (SIG%s): %zu running sandbox(es) have %lld ms to finish", sigabbrev_np(sig),
		d->n_workers, d->o->stop_grace_ms);
}

/* Once a second: requests too slow to arrive, those whose uid may be read again, and the stop's grace. */
static bool tick(struct daemon *d)
{
	time_t now = time(NULL);

	for (size_t i = 0; i < DAEMON_MAX_PENDING; i++) {
		struct pending *c = &d->pending[i];

		if (c->fd >= 0 && now >= c->deadline) {
			refuse(d, c->fd, &c->peer, "the request did not arrive in time");
			close_pending(c);
		} else if (c->fd >= 0 && c->paused && read_budget_left(&d->budget, c->peer.owner, mono_ms())) {
			pending_watch(d, c, false);
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
		sandbox_gc_dead(d->bpf, false, daemon_gc_note, d);
		return d->n_workers != 0;
	}
	return true;
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
			if (daemon_open_log(d))
				fprintf(stderr, "bpfbox: daemon: reopening the log failed; writing to the old one\n");
			else
				log_msg(d->log, LOG_INFO, "daemon-log-reopened", "log reopened (SIGHUP)");
			if (!d->stopping)
				daemon_ceiling_reload(d);
			break;
		default:
			begin_stop(d, (int)si.ssi_signo);
		}
		/* One signal per wake-up is enough: the descriptor stays readable for the rest. */
		break;
	}
}

/* Runs until the stop is over: 0, or -errno when waiting failed. */
static int loop(struct daemon *d)
{
	for (bool running = true; running;) {
		struct epoll_event evs[16];
		int n = epoll_wait(d->ep, evs, 16, -1);

		if (n < 0 && errno != EINTR)
			return -errno;
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
	return 0;
}

int daemon_serve(const struct daemon_config *cfg, const struct daemon_handlers *h, struct errmsg *em)
{
	struct daemon *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	d->o = cfg;
	d->h = h;
	for (size_t i = 0; i < DAEMON_MAX_PENDING; i++)
		d->pending[i].fd = -1;
	refusals_init(&d->refusals);
	passwd_cache_init(&d->passwd);
	d->listener.fd = d->ep = d->sig_fd = d->tick_fd = -1;
	err = daemon_setup_state(d, em);
	if (!err)
		err = daemon_setup_loop(d, em);
	if (err)
		goto cleanup;
	daemon_ceiling_push_orphans(d);
	err = loop(d);
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
	free(d->ceiling);
	free(d);
	return err;
}
