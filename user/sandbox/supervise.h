/* SPDX-License-Identifier: MIT */
/* Watching the command: its exit, signals to forward, the timeout, and the event stream. */
#ifndef BPFBOX_SUPERVISE_H
#define BPFBOX_SUPERVISE_H

#include <stdbool.h>
#include <sys/types.h>

struct ring_buffer;

/* bpfbox's status when --timeout stopped the tree, as timeout(1). */
#define BPFBOX_EXIT_TIMEOUT 124

/* How many live-policy descriptors the loop watches besides the rest. */
#define SUPERVISE_LIVE_MAX 2

struct supervise_opts {
	pid_t pid;
	int pidfd;
	const char *cgroup_path;
	struct ring_buffer *events;
	int signal_fd; /* signalfd for the forwarded and cancelling signals */
	long long timeout_ms; /* 0 = none */
	long long kill_after_ms; /* grace between SIGTERM and cgroup.kill */
	/*
	 * The daemon's connection to its caller (-1: none). When it is readable,
	 * control(ctx) returns a signal the caller forwards (handled as if bpfbox
	 * had received it), 0 for nothing, or -1 when the caller is gone: the
	 * run is then cancelled as by a hangup and ends "disconnected".
	 */
	int control_fd;
	int (*control)(void *ctx);
	void *control_ctx;
	/*
	 * Live policy's descriptors (issue 32: exec --control-fd, the sandbox's
	 * control socket), -1 for none. When one is readable, live(live_ctx, fd)
	 * reads it (cli/ decides what it means): 0 to keep watching it, 1 to stop
	 * (end of file). Neither ever ends the run.
	 */
	int live_fds[SUPERVISE_LIVE_MAX];
	int (*live)(void *ctx, int fd);
	void *live_ctx;
};

struct supervise_result {
	int exit_code; /* what bpfbox exits with: the status, 128+signal, 124 on timeout, 128+N if cancelled */
	int status_code; /* exit status when exited */
	int term_signal; /* signal that killed it, 0 when it exited */
	bool core_dumped;
	const char *ended_by; /* "exit", "signal", "timeout", "cancelled:SIGxxx" */
	int cancel_signal; /* the signal that cancelled bpfbox, if any */
	char ended_buf[32];
};

int supervise(const struct supervise_opts *o, struct supervise_result *r);
/* Reaps every exited child of this process (the orphans it adopted as subreaper). */
void supervise_reap_all(void);

#endif
