/* SPDX-License-Identifier: MIT */
/*
 * The daemon's state, shared by its loop (server.c: requests, workers, the stop) and its
 * setup (server_setup.c: the log, the shared BPF state, the socket, signals); the loop calls
 * down into the setup.
 */
#ifndef BPFBOX_DAEMON_SERVER_STATE_H
#define BPFBOX_DAEMON_SERVER_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "listen.h"
#include "lib/errmsg.h"
#include "passwd_cache.h"
#include "read_budget.h"
#include "refusals.h"
#include "server.h"
#include "wire.h"

#define DAEMON_MAX_PENDING 64 /* connections still sending their request */
#define DAEMON_MAX_PENDING_PER_UID 8
#define DAEMON_REQUEST_TIMEOUT_S 10
#define DAEMON_MAX_RELAYS 32 /* updates relayed and reloads in flight (relay.c) */
#define DAEMON_MAX_RELAYS_PER_UID 2
#define DAEMON_PID_FILE BPFBOX_RUN_DIR "/bpfbox.pid"
#define STR_(x) #x
#define STR(x) STR_(x)
#define PASSWD_LOOKUPS_PER_S_TEXT STR(PASSWD_LOOKUPS_PER_S)

struct pending {
	int fd; /* -1: free slot */
	struct peer peer;
	time_t deadline;
	struct wire_reader rd;
	bool paused; /* out of the epoll set until its uid's read budget refills (read_budget.h) */
};

struct worker {
	pid_t pid;
	uid_t uid; /* the owner it counts under (struct peer) */
};

struct daemon {
	const struct daemon_config *o;
	const struct daemon_handlers *h;
	struct listener listener;
	struct log *log;
	struct bpf_state *bpf;
	int ep, sig_fd, tick_fd;
	struct pending pending[DAEMON_MAX_PENDING];
	struct worker workers[DAEMON_MAX_WORKERS];
	size_t n_workers;
	struct worker relays[DAEMON_MAX_RELAYS]; /* children relaying an update or a reload */
	size_t n_relays;
	pid_t reload_pid; /* the reload child in flight, 0: none */
	bool reload_again; /* a SIGHUP came during it */
	char *ceiling; /* the administrator's policy in force for new sandboxes (NULL: built-in default) */
	size_t ceiling_len;
	/*
	 * Which ceiling that is, counted from 0 at start: a worker keeps the
	 * number it was forked with; ceiling_seq_now is the daemon's current
	 * one in memory the workers share, so a sandbox still being set up
	 * when a reload went by learns it missed it (relay.c).
	 */
	unsigned ceiling_seq;
	_Atomic unsigned *ceiling_seq_now;
	bool reload_owed; /* the running sandboxes were not told the ceiling in force: the next SIGHUP tells them */
	struct refusals refusals; /* what of them reaches the log */
	struct read_budget budget; /* how fast each uid's requests are read */
	struct passwd_cache passwd; /* who has an entry, and its name */
	bool stopping;
	time_t stop_at; /* grace over: workers get SIGTERM */
	time_t kill_at; /* then SIGKILL */
};

/* In a forked child: nothing of the daemon's open but keep (a caller's connection, or -1). */
void daemon_close_for_child(struct daemon *d, int keep);
/* The administrator's policy read at start (server_setup.c): 0, or -errno with em. */
int daemon_ceiling_load(struct daemon *d, struct errmsg *em);
/* A policy file's text, at most 1 MiB: *text NULL when it does not exist (the built-in default). */
int daemon_ceiling_read(const char *path, char **text, size_t *len);
/* Opens the administrator's log (again, on SIGHUP), replacing the one open. */
int daemon_open_log(struct daemon *d);
/* What gc left of a dead supervisor's sandbox, for the administrator (a sandbox_gc_dead note). */
void daemon_gc_note(void *ctx, const char *text);
/* The log, the shared BPF state and the registry, and what earlier runs left behind. */
int daemon_setup_state(struct daemon *d, struct errmsg *em);
/* Signals, the tick and the socket, all in one epoll set; then the pid file and the start event. */
int daemon_setup_loop(struct daemon *d, struct errmsg *em);

#endif
