// SPDX-License-Identifier: MIT
/* The supervisor's event loop. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cgroup.h"
#include "supervise.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

enum phase { RUNNING, TERMINATING, KILLING };

static void arm(int tfd, long long ms)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (ms % 1000) * 1000000;
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	timerfd_settime(tfd, 0, &its, NULL);
}

/* Graceful stop of the whole tree: SIGTERM to every process, then cgroup.kill after the grace. */
static void begin_termination(const struct supervise_opts *o, int tfd, enum phase *phase)
{
	if (*phase != RUNNING)
		return;
	cgroup_signal_all(o->cgroup_path, SIGTERM);
	*phase = TERMINATING;
	arm(tfd, o->kill_after_ms);
}

/*
 * Forwards the signal to the command; returns true when it cancels the run.
 * ^C and ^\ typed on the terminal already reached the command, which shares
 * bpfbox's process group: they are its to handle (an interactive program
 * survives them, as under a shell), not a cancellation of bpfbox.
 */
static bool forward_signal(const struct supervise_opts *o, int sig, enum phase phase, struct supervise_result *r)
{
	/* A first SIGTERM reaches the command with the rest of the tree. */
	if (sig != SIGTERM || phase != RUNNING)
		kill(o->pid, sig);
	if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP)
		return false;
	if (!r->cancel_signal)
		r->cancel_signal = sig;
	return true;
}

static bool handle_signal(const struct supervise_opts *o, enum phase phase, struct supervise_result *r)
{
	struct signalfd_siginfo si;
	int sig;

	if (read(o->signal_fd, &si, sizeof(si)) != sizeof(si))
		return false;
	sig = (int)si.ssi_signo;
	if (sig == SIGCHLD)
		return false;
	if (si.ssi_code == SI_KERNEL && (sig == SIGINT || sig == SIGQUIT))
		return false;
	return forward_signal(o, sig, phase, r);
}

void supervise_reap_all(void)
{
	siginfo_t info;

	for (;;) {
		memset(&info, 0, sizeof(info));
		if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG) || !info.si_pid)
			return;
	}
}

/* What woke the loop: the epoll data of each source. */
enum source { SRC_CHILD, SRC_SIGNAL, SRC_TIMER, SRC_EVENTS, SRC_CONTROL, SRC_LIVE /* + index */ };

static void watch(int ep, int fd, uint32_t events, enum source src)
{
	struct epoll_event ev = { .events = events, .data.u32 = src };

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void watch_sources(const struct supervise_opts *o, int ep, int tfd)
{
	watch(ep, o->pidfd, EPOLLIN, SRC_CHILD);
	watch(ep, o->signal_fd, EPOLLIN, SRC_SIGNAL);
	watch(ep, tfd, EPOLLIN, SRC_TIMER);
	if (o->events)
		watch(ep, ring_buffer__epoll_fd(o->events), EPOLLIN, SRC_EVENTS);
	if (o->control && o->control_fd >= 0)
		watch(ep, o->control_fd, EPOLLIN | EPOLLRDHUP, SRC_CONTROL);
	for (int i = 0; o->live && i < SUPERVISE_LIVE_MAX; i++)
		if (o->live_fds[i] >= 0)
			watch(ep, o->live_fds[i], EPOLLIN, SRC_LIVE + i);
}

/* A live-policy descriptor is readable: cli/'s callback reads it; at its end it is no longer watched. */
static void live_ready(const struct supervise_opts *o, int ep, unsigned i)
{
	if (i >= SUPERVISE_LIVE_MAX)
		return;
	if (o->live(o->live_ctx, o->live_fds[i]) > 0)
		epoll_ctl(ep, EPOLL_CTL_DEL, o->live_fds[i], NULL);
}

/* How the command ended, and what the run reports for it. */
static void record_end(const siginfo_t *info, bool timed_out, bool disconnected, struct supervise_result *r)
{
	if (info->si_code == CLD_EXITED) {
		r->status_code = info->si_status;
		r->exit_code = info->si_status;
		r->ended_by = "exit";
	} else {
		r->term_signal = info->si_status;
		r->core_dumped = info->si_code == CLD_DUMPED;
		r->exit_code = 128 + info->si_status;
		r->ended_by = "signal";
	}
	/* A stopped run never looks like a success, whatever the command did with the signal. */
	if (timed_out) {
		r->ended_by = "timeout";
		r->exit_code = BPFBOX_EXIT_TIMEOUT;
	} else if (disconnected) {
		r->ended_by = "disconnected";
		r->exit_code = 128 + SIGHUP;
	} else if (r->cancel_signal) {
		snprintf(r->ended_buf, sizeof(r->ended_buf), "cancelled:SIG%s", sigabbrev_np(r->cancel_signal));
		r->ended_by = r->ended_buf;
		r->exit_code = 128 + r->cancel_signal;
	}
}

int supervise(const struct supervise_opts *o, struct supervise_result *r)
{
	struct epoll_event evs[8];
	enum phase phase = RUNNING;
	bool timed_out = false, disconnected = false;
	siginfo_t info;
	int ep, tfd, err = 0;

	memset(r, 0, sizeof(*r));
	ep = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (ep < 0 || tfd < 0) {
		err = -errno;
		goto cleanup;
	}
	watch_sources(o, ep, tfd);
	if (o->timeout_ms > 0)
		arm(tfd, o->timeout_ms);
	for (;;) {
		int n = epoll_wait(ep, evs, 8, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		for (int i = 0; i < n; i++) {
			uint64_t ticks;

			switch (evs[i].data.u32) {
			case SRC_CHILD:
				memset(&info, 0, sizeof(info));
				if (waitid(P_PIDFD, (id_t)o->pidfd, &info, WEXITED | WNOHANG) == 0 && info.si_pid) {
					record_end(&info, timed_out, disconnected, r);
					goto cleanup;
				}
				break;
			case SRC_SIGNAL:
				if (handle_signal(o, phase, r))
					begin_termination(o, tfd, &phase);
				break;
			case SRC_TIMER:
				(void)!read(tfd, &ticks, sizeof(ticks));
				if (phase == RUNNING) {
					timed_out = true;
					begin_termination(o, tfd, &phase);
				} else if (phase == TERMINATING) {
					phase = KILLING;
					cgroup_kill_all(o->cgroup_path, 0);
				}
				break;
			case SRC_EVENTS:
				ring_buffer__consume(o->events);
				break;
			case SRC_CONTROL: {
				int sig = o->control(o->control_ctx);

				if (sig > 0 && forward_signal(o, sig, phase, r)) {
					begin_termination(o, tfd, &phase);
				} else if (sig < 0) {
					/* Nobody is left to see the output or the status: stop the tree. */
					epoll_ctl(ep, EPOLL_CTL_DEL, o->control_fd, NULL);
					disconnected = true;
					begin_termination(o, tfd, &phase);
				}
				break;
			}
			default: /* SRC_LIVE + i */
				live_ready(o, ep, evs[i].data.u32 - SRC_LIVE);
				break;
			}
		}
	}
cleanup:
	if (tfd >= 0)
		close(tfd);
	if (ep >= 0)
		close(ep);
	return err;
}
