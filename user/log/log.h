/* SPDX-License-Identifier: MIT */
/*
 * bpfbox's event log: every report (lifecycle, kernel refusal, proxy
 * decision, bpfbox's own diagnostics) becomes one NDJSON line following
 * docs/events.md and schema/events.schema.json, or one human-readable line
 * when the destination is a terminal.
 *
 * A struct log owns everything (no global state) and may be shared by
 * threads: emission is serialised by a mutex so sequence numbers follow
 * the order of lines. Each line is built in memory and written with one
 * write() call, so processes appending to one file never interleave.
 *
 * Typical use:
 *	struct log_event *ev = log_event_new(LOG_WARN, "event", "file",
 *					     "access,denied", "open-read", "failure");
 *	log_event_set_str(ev, "file.path", path);
 *	log_event_set_int(ev, "process.pid", pid);
 *	log_event_message(ev, "denied open-read of %s", path);
 *	log_event_violation(ev);
 *	log_emit(log, ev);
 *
 * Event builders never fail visibly: on error they record it in the event
 * and log_emit() reports it (after writing what it can), so callers need
 * not check each step. All of them accept a NULL event (as returned by
 * log_event_new() when out of memory) and do nothing.
 */
#ifndef BPFBOX_LOG_H
#define BPFBOX_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "log_event.h"
#include "log_level.h"



struct log_config {
	enum log_level min_level; /* events below it are counted, not written */
	enum log_format format;
	const char *file_path; /* NULL = none; opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC, 0600 */
	int fd; /* -1 = none; duplicated (close-on-exec), caller keeps its own */
	/* When neither file_path nor fd is given, lines go to stderr (fd 2). */
};


struct log;

/*
 * Suppresses reporting of refusals (events marked by
 * log_event_violation()). A rule applies when command is "*" or a
 * substring of the sandboxed command line (log_set_sandbox()); the event
 * is then dropped when any of lines is a substring of its message or of
 * its human-readable line. Lifecycle events and errors are never dropped.
 * A NULL command means "*".
 */
struct log_ignore_rule {
	const char *command;
	const char *const *lines;
	size_t n_lines;
};

/*
 * Counters over the life of a log, for the sandbox-exit summary. Events
 * are counted whatever their fate; refusals (violations, audited, ignored)
 * are weighted by bpfbox.count since one line may stand for many.
 */
struct log_counts {
	unsigned long long seen[LOG_LEVELS]; /* events passed to log_emit() */
	unsigned long long written[LOG_LEVELS]; /* lines fully written */
	unsigned long long filtered; /* events below min_level */
	unsigned long long violations; /* refusals marked by log_event_violation() */
	unsigned long long audited; /* of those, let through by audit mode */
	unsigned long long ignored; /* of those, not written due to ignore rules */
	unsigned long long lost; /* sum of bpfbox.lost over events-lost events */
	unsigned long long write_errors; /* lines not (fully) written */
};

/*
 * Opens a log as described by cfg. Returns 0 and sets *out, or a negative
 * errno: -EINVAL for a bad config (both file_path and fd, bad level or
 * format), -errno of open()/fcntl() for the destination, -ENOMEM.
 * Nothing is leaked on failure.
 */
int log_open(const struct log_config *cfg, struct log **out);

/*
 * Closes the destination it opened or duplicated (never stderr) and frees
 * everything. No other thread may still be using the log. NULL is fine.
 */
void log_close(struct log *log);

/*
 * Sets the sandbox identity stamped on every later line as
 * bpfbox.sandbox.id and bpfbox.sandbox.command_line (not process.*,
 * which describes the process an event is about). Either may be NULL to
 * clear it. Strings are copied.
 */
void log_set_sandbox(struct log *log, const char *sandbox_id, const char *command_line);

/*
 * A value no later line may show (a denied or masked credential's):
 * replaced by "[masked:NAME]" in every string of every event, this log's
 * and the administrator's copy. 0 or -ENOMEM; values shorter than
 * LOG_REDACT_MIN (log_redact.h) are not registered.
 */
int log_add_secret(struct log *log, const char *name, const char *value);
/* buf (NUL-terminated, cap bytes) with the secrets replaced, cut to fit; "[masked]" when out of memory. */
void log_redact_in_place(struct log *log, char *buf, size_t cap);

/* The user the sandboxed command runs as, stamped on every later line as user.id and user.name. */
void log_set_user(struct log *log, unsigned uid, const char *name);

/*
 * Replaces the ignore rules with a copy of rules[0..n). On allocation
 * failure the previous rules stay and an error line is logged.
 */
void log_set_ignore(struct log *log, const struct log_ignore_rule *rules, size_t n);

/*
 * Resets the lock in a child after fork(): another thread of the parent may
 * have held it at fork time. Call before logging in the child.
 */
void log_child_after_fork(struct log *log);

/*
 * The administrator's log (the daemon's): every event also goes there as a
 * JSON line, whatever this log's level, format and ignore rules, numbered by
 * a bpfbox.seq of its own. With a path, the file is reopened when it was
 * renamed or removed (log rotation) before the next line; fd >= 0 is used
 * as it is (duplicated). Returns 0 or a negative errno of open().
 */
int log_set_admin(struct log *log, const char *path, int fd);

/* The fd lines are written to (e.g. to keep it out of a sandboxed child). */
int log_fd(const struct log *log);

/* True when lines are written as JSON (false: human-readable text). */
bool log_is_json(const struct log *log);



/*
 * Consumes ev. Counts it, drops it when below min_level or matched by an
 * ignore rule (returns 0), otherwise stamps @timestamp (RFC 3339 UTC with
 * microseconds), host.name, bpfbox.pid, bpfbox.seq (1, 2, ...
 * per log, for written lines only, so a gap means a lost line) and the
 * sandbox fields, then writes one line with one write() call (looping only
 * on a partial write). Returns 0, or a negative errno: the write error, or
 * an error recorded while building the event (-ENOMEM, -EINVAL for a bad
 * key), in which case what could be built was still written.
 */
int log_emit(struct log *log, struct log_event *ev);

/*
 * bpfbox's own diagnostics: event.kind "event", event.category
 * ["process"], event.type ["error"] and outcome "failure" at LOG_ERROR,
 * else ["info"] and "unknown". action NULL means "debug", "info",
 * "warning" or "error" after the level; "setup-failed" is the other usual
 * one (see docs/events.md).
 */
void log_msg(struct log *log, enum log_level level, const char *action, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Events passed to log_emit() at this level, written or not. */
unsigned long long log_count(const struct log *log, enum log_level level);
void log_get_counts(const struct log *log, struct log_counts *out);


#endif
