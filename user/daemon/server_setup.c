// SPDX-License-Identifier: MIT
/* The daemon's setup: its log, the shared BPF state, the registry, the socket and signals. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "log/log.h"
#include "sandbox/bpf_state.h"
#include "sandbox/registry.h"
#include "sandbox/sandbox_gc.h"
#include "sandbox/run_control.h"
#include "server_state.h"

int daemon_open_log(struct daemon *d)
{
	struct log_config cfg = { .min_level = LOG_INFO, .format = LOG_FORMAT_JSON, .fd = d->o->log_fd,
				  .file_path = d->o->log_file };
	struct log *log;
	char dir[PATH_MAX];
	int err;

	if (d->o->log_file) {
		char *slash;

		snprintf(dir, sizeof(dir), "%s", d->o->log_file);
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

void daemon_gc_note(void *ctx, const char *text)
{
	struct daemon *d = ctx;

	log_msg(d->log, LOG_WARN, "warning", "gc: %s", text);
}

/*
 * Every worker is a fork of the daemon and looks its caller up (getpwuid,
 * getgrouplist). The name service's modules for both databases (nsswitch.conf:
 * files, systemd, sss, ...) are loaded here, once, and every worker inherits
 * them instead of loading them again on its start. The answers are not kept:
 * each worker still asks.
 */
static void warm_name_service(void)
{
	gid_t groups[8];
	int n = 8;

	if (getpwuid(0))
		getgrouplist("root", 0, groups, &n);
}

int daemon_setup_state(struct daemon *d, struct errmsg *em)
{
	struct errmsg why = { { 0 } };
	int err;

	err = daemon_open_log(d);
	if (err)
		return errmsg_set(em, err, "opening the log %s", d->o->log_file ? d->o->log_file : "(fd)");
	if (!getenv("BPFBOX_DEBUG_BPF"))
		libbpf_set_print(NULL);
	/* New sandboxes start under the text read here until a valid one replaces it (SIGHUP). */
	err = daemon_ceiling_load(d, em);
	if (err)
		return err;
	/* The shared programs stay loaded and pinned while the daemon runs; none is started without them. */
	err = bpf_state_open(&d->bpf, &why);
	if (err) {
		errmsg_set(em, 0, "kernel enforcement cannot be set up: %s (bpfbox doctor says how to fix the host)",
			   why.text);
		return err;
	}
	/* The registry holds every caller's command line: root's alone, whatever an older bpfbox left. */
	err = registry_secure(true);
	if (err) {
		errmsg_set(em, 0, "making %s root's alone (0700, entries 0600): %s; it must be a directory owned by root",
			   REGISTRY_DIR, strerror(-err));
		return err;
	}
	/* What a daemon or a supervisor killed earlier left behind. */
	sandbox_gc_dead(d->bpf, false, daemon_gc_note, d);
	warm_name_service();
	return 0;
}

int daemon_setup_loop(struct daemon *d, struct errmsg *em)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	struct listen_opts lo = { d->o->socket, d->o->socket_mode, d->o->socket_group };
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;
	FILE *pf;
	int err;

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
	err = listener_open(&lo, &d->listener, em);
	if (err)
		return err;
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
	log_msg(d->log, LOG_INFO, "daemon-start",
		"daemon listening on %s%s, ceiling %s, at most %ld sandbox(es) per user, quota %s",
		d->listener.activated ? "the socket systemd passed" : d->o->socket, d->listener.activated ? "" : "",
		d->o->config, d->o->max_per_user, d->o->quota);
	return 0;
}

/* In a forked child: nothing of the daemon's but the caller's connection (and a worker's descriptors). */
void daemon_close_for_child(struct daemon *d, int keep)
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

/* The administrator's policy as a file holds it: *text NULL for none (the built-in default). */
int daemon_ceiling_read(const char *path, char **text, size_t *len)
{
	struct stat st;
	FILE *f;
	ssize_t n;
	size_t cap = 0;

	*text = NULL;
	*len = 0;
	if (!path || (stat(path, &st) && errno == ENOENT))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = getdelim(text, &cap, 0, f);
	fclose(f);
	if (n < 0 || (size_t)n > RUN_CONTROL_POLICY_MAX) {
		free(*text);
		*text = NULL;
		return n < 0 ? -EIO : -E2BIG;
	}
	*len = (size_t)n;
	return 0;
}

int daemon_ceiling_load(struct daemon *d, struct errmsg *em)
{
	int err = daemon_ceiling_read(d->o->config, &d->ceiling, &d->ceiling_len);
	void *seq;

	if (err)
		return errmsg_set(em, err, "reading the administrator's policy %s", d->o->config);
	/* Shared with every worker forked later: the number of the ceiling in force now. */
	seq = mmap(NULL, sizeof(*d->ceiling_seq_now), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (seq == MAP_FAILED)
		return errmsg_set(em, -errno, "mapping the ceiling's number for the workers");
	d->ceiling_seq_now = seq;
	atomic_init(d->ceiling_seq_now, d->ceiling_seq);
	return 0;
}
