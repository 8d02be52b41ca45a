// SPDX-License-Identifier: MIT
/*
 * The daemon's side of live policy (issue 32): a caller's update relayed to
 * its own sandbox's control socket, and the administrator's policy re-read
 * on SIGHUP, kept only when valid, and sent to every running sandbox of the
 * daemon's to narrow it. Both talk to supervisors that may take seconds
 * (an update resolves paths in the kernel): each runs in a child of its own,
 * so the accept loop never waits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/diag.h"
#include "log/log.h"
#include "policy/policy.h"
#include "relay.h"
#include "sandbox/registry.h"
#include "sandbox/run_control.h"

static size_t relays_of(const struct daemon *d, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n_relays; i++)
		n += d->relays[i].uid == uid;
	return n;
}

bool daemon_relay_reaped(struct daemon *d, pid_t pid)
{
	for (size_t i = 0; i < d->n_relays; i++)
		if (d->relays[i].pid == pid) {
			if (pid == d->reload_pid)
				d->reload_pid = 0;
			d->relays[i] = d->relays[--d->n_relays];
			return true;
		}
	return false;
}

/* A child of the daemon's, counted under uid: 0 in the child, its pid in the daemon, -errno. */
static pid_t relay_fork(struct daemon *d, uid_t uid, int keep)
{
	pid_t pid;

	if (d->n_relays == DAEMON_MAX_RELAYS)
		return -EAGAIN;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		sigset_t none;

		/* Its lines are its own writer's (pid), with their own sequence. */
		log_child_after_fork(d->log);
		daemon_close_for_child(d, keep);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_IGN);
		return 0;
	}
	d->relays[d->n_relays++] = (struct worker){ pid, uid };
	return pid;
}

/* In the relay child: the request sent to the sandbox, its answer to the caller. */
static __attribute__((noreturn)) void relay_update(int conn, const struct peer *p, const struct wire_request *req)
{
	struct run_control_request q = {
		.op = RUN_CONTROL_UPDATE,
		.for_caller = p->uid != 0,
		.for_uid = (uint32_t)p->uid,
		.policy = req->update_policy,
		.policy_len = req->update_policy_len,
		.allow = (const char **)req->update_allow,
		.n_allow = req->n_update_allow,
		.deny = (const char **)req->update_deny,
		.n_deny = req->n_update_deny,
	};
	struct registry_entry e;
	struct errmsg em = { { 0 } };
	char *message = NULL;
	int err;

	/* The registry says whose it is; the supervisor checks it again against its own caller. */
	if (!run_control_id_valid(req->sandbox_id) || registry_read(req->sandbox_id, &e) ||
	    (p->uid != 0 && e.uid != p->uid)) {
		snprintf(em.text, sizeof(em.text), "%s: no such sandbox of yours (see bpfbox ps)", req->sandbox_id);
		wire_send_msg(conn, WIRE_MSG_ERROR, 1, em.text);
		_exit(0);
	}
	err = run_control_call(req->sandbox_id, &q, &message, &em);
	if (message && *message) {
		/* A message never outgrows a control frame: the end of a long one is cut. */
		if (strlen(message) > WIRE_MAX_CONTROL - 512)
			message[WIRE_MAX_CONTROL - 512] = 0;
		wire_send_msg(conn, err ? WIRE_MSG_ERROR : WIRE_MSG_TEXT, 1, message);
	} else if (err) {
		wire_send_msg(conn, WIRE_MSG_ERROR, 1, em.text);
	}
	if (!err)
		wire_send_msg(conn, WIRE_MSG_EXIT, 0, NULL);
	_exit(0);
}

int daemon_relay_update(struct daemon *d, int conn, const struct peer *p, const struct wire_request *req)
{
	pid_t pid;

	if (relays_of(d, p->owner) >= DAEMON_MAX_RELAYS_PER_UID)
		return -EBUSY;
	pid = relay_fork(d, p->owner, conn);
	if (pid == 0)
		relay_update(conn, p, req);
	return pid < 0 ? (int)pid : 0;
}

/* Is text a valid policy? Its problems go to the log, and to stderr. */
static int ceiling_check(struct daemon *d, const char *text, size_t len)
{
	struct policy_load_opts lo = { .home = "/root", .cwd = "/" };
	struct diag_list diags;
	struct policy *p = NULL;
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;
	int err;

	if (!text)
		return 0;
	diag_list_init(&diags);
	err = policy_load_buffer(d->o->config, text, len, &lo, &p, &diags);
	policy_free(p);
	if (err) {
		f = open_memstream(&out, &out_len);
		if (f) {
			diag_print(&diags, d->o->config, f, false);
			fclose(f);
		}
		log_msg(d->log, LOG_ERROR, "ceiling-reload-refused",
			"the administrator's policy %s is not valid; the one loaded before stays in force: %s",
			d->o->config, out ? out : "");
		fprintf(stderr, "bpfbox: daemon: %s is not valid; the policy loaded before stays in force\n%s",
			d->o->config, out ? out : "");
		free(out);
	}
	diag_list_free(&diags);
	return err;
}

/*
 * Sandboxes told at once. Each is told by a process of its own: one that
 * takes long to answer (its own update in progress, a stalled supervisor)
 * delays only itself, not every sandbox after it in the walk; another
 * user's sandbox is narrowed at once.
 */
#define RELOAD_AT_ONCE 64

struct reload_walk {
	struct daemon *d;
	size_t sent, failed, running;
};

/* One sandbox of the daemon's: the new ceiling sent, what it said logged; 0 when it took it. */
static int tell_one(struct daemon *d, const struct registry_entry *e)
{
	/* No file: empty, which a sandbox reads as the built-in default, as a new sandbox gets it. */
	struct run_control_request q = { .op = RUN_CONTROL_CEILING, .ceiling = d->ceiling ? d->ceiling : "",
					  .ceiling_len = d->ceiling ? d->ceiling_len : 0 };
	struct errmsg em = { { 0 } };
	char *message = NULL;
	int err;

	err = run_control_call(e->id, &q, &message, &em);
	log_msg(d->log, err ? LOG_WARN : LOG_INFO, "ceiling-reload-sandbox", "%s (uid %u): %s", e->id,
		(unsigned)e->uid, message && *message ? message : em.text);
	/*
	 * No answer (a supervisor busy or stalled by its own update, a full
	 * backlog): it would go on under the old ceiling. Fail closed.
	 */
	if (err && err != -ENOENT && err != -EPERM && registry_alive(e)) {
		struct errmsg why = { { 0 } };

		if (sandbox_stop_for(e->id, true, 0, &why))
			log_msg(d->log, LOG_ERROR, "ceiling-reload-sandbox", "%s (uid %u): not told the new policy and "
				"could not be stopped: %s", e->id, (unsigned)e->uid, why.text);
		else
			log_msg(d->log, LOG_WARN, "ceiling-reload-sandbox", "%s (uid %u): stopped: it did not take the "
				"administrator's new policy", e->id, (unsigned)e->uid);
	}
	free(message);
	return err;
}

/* Waits for one teller: false when none is left. */
static bool reload_collect_one(struct reload_walk *w)
{
	int status;
	pid_t pid;

	do
		pid = waitpid(-1, &status, 0);
	while (pid < 0 && errno == EINTR);
	if (pid < 0)
		return false;
	w->running--;
	w->failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return true;
}

static int reload_one(void *ctx, const struct registry_entry *e)
{
	struct reload_walk *w = ctx;
	struct daemon *d = w->d;
	bool ours = false;
	pid_t pid;

	for (size_t i = 0; i < d->n_workers && !ours; i++)
		ours = d->workers[i].pid == e->supervisor;
	/* Or a sandbox under the same file whose daemon died (SIGKILL): it must not keep an older one. */
	ours = ours || (d->o->config && e->ceiling[0] && !strcmp(e->ceiling, d->o->config) && registry_alive(e));
	if (!ours)
		return 0;
	while (w->running >= RELOAD_AT_ONCE && reload_collect_one(w))
		;
	w->sent++;
	pid = fork();
	if (pid == 0) {
		log_child_after_fork(d->log);
		_exit(tell_one(d, e) ? 1 : 0);
	}
	if (pid > 0) {
		w->running++;
		return 0;
	}
	/* No process for it: told from here, the walk waits. */
	w->failed += tell_one(d, e) != 0;
	return 0;
}

/* In the reload child: every running sandbox of the daemon's, told at once. */
static __attribute__((noreturn)) void reload_all(struct daemon *d)
{
	struct reload_walk w = { .d = d };

	registry_each(reload_one, &w);
	while (w.running && reload_collect_one(&w))
		;
	log_msg(d->log, w.failed ? LOG_WARN : LOG_INFO, "ceiling-reloaded",
		"the administrator's policy %s reloaded: %zu running sandbox(es) told, %zu could not be narrowed "
		"and were stopped or did not answer", d->o->config, w.sent, w.failed);
	_exit(0);
}

void daemon_ceiling_reload(struct daemon *d)
{
	char *text = NULL;
	size_t len = 0;
	pid_t pid;
	int err;

	/* One reload at a time, so sandboxes never end on an older ceiling than a later reload's. */
	if (d->reload_pid) {
		d->reload_again = true;
		return;
	}
	d->reload_again = false;
	err = daemon_ceiling_read(d->o->config, &text, &len);
	if (err) {
		log_msg(d->log, LOG_ERROR, "ceiling-reload-refused",
			"cannot read the administrator's policy %s (%s); the one loaded before stays in force",
			d->o->config, strerror(-err));
		return;
	}
	/* logrotate's SIGHUP too: an unchanged policy bothers no sandbox, unless they were never told it. */
	if (len == d->ceiling_len && (!text) == (!d->ceiling) && (!text || !memcmp(text, d->ceiling, len))) {
		free(text);
		if (!d->reload_owed)
			return;
	} else {
		if (ceiling_check(d, text, len)) {
			free(text);
			return;
		}
		free(d->ceiling);
		d->ceiling = text;
		d->ceiling_len = len;
		/*
		 * Before the walk starts: a worker that registers after the walk
		 * read the registry sees the new number and does not run its command.
		 */
		d->ceiling_seq++;
		atomic_store(d->ceiling_seq_now, d->ceiling_seq);
	}
	pid = relay_fork(d, 0, -1);
	if (pid == 0)
		reload_all(d);
	d->reload_owed = pid < 0;
	if (pid < 0)
		log_msg(d->log, LOG_ERROR, "ceiling-reload-refused",
			"the administrator's policy %s is loaded for new sandboxes, but running ones could not be told "
			"(%s); send SIGHUP again", d->o->config, strerror((int)-pid));
	else
		d->reload_pid = pid;
}

static int count_orphan(void *ctx, const struct registry_entry *e)
{
	struct reload_walk *w = ctx;

	if (w->d->o->config && e->ceiling[0] && !strcmp(e->ceiling, w->d->o->config) && registry_alive(e))
		w->sent++;
	return 0;
}

void daemon_ceiling_push_orphans(struct daemon *d)
{
	struct reload_walk w = { .d = d };
	pid_t pid;

	registry_each(count_orphan, &w);
	if (!w.sent)
		return;
	log_msg(d->log, LOG_INFO, "ceiling-reload", "%zu sandbox(es) of an earlier daemon under %s still run: "
		"telling them the policy read now", w.sent, d->o->config);
	pid = relay_fork(d, 0, -1);
	if (pid == 0)
		reload_all(d);
	d->reload_owed = pid < 0;
	if (pid > 0)
		d->reload_pid = pid;
}
