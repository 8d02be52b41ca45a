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

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
#define LOG_LEVELS 4

enum log_format {
	LOG_FORMAT_AUTO, /* text when the destination is a terminal, else JSON */
	LOG_FORMAT_JSON,
	LOG_FORMAT_TEXT,
};

struct log_config {
	enum log_level min_level; /* events below it are counted, not written */
	enum log_format format;
	const char *file_path; /* NULL = none; opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC, 0600 */
	int fd; /* -1 = none; duplicated (close-on-exec), caller keeps its own */
	/* When neither file_path nor fd is given, lines go to stderr (fd 2). */
};

/* The ECS version whose field names the events follow (ecs.version). */
#define LOG_ECS_VERSION "8.11.0"

/* Longest string value kept, in bytes; longer ones are cut and flagged. */
#define LOG_VALUE_MAX 16384

struct log;
struct log_event;

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

/* The fd lines are written to (e.g. to keep it out of a sandboxed child). */
int log_fd(const struct log *log);

/* True when lines are written as JSON (false: human-readable text). */
bool log_is_json(const struct log *log);

/*
 * Parse "debug", "info", "warn"/"warning", "error" and "auto", "json",
 * "text" (case-insensitive). Return 0 or -EINVAL (*out untouched).
 */
int log_level_parse(const char *s, enum log_level *out);
int log_format_parse(const char *s, enum log_format *out);

/* "debug", "info", "warn", "error" (the JSON log.level values). */
const char *log_level_name(enum log_level level);

/*
 * Starts an event. category and type may list several comma-separated
 * values ("access,denied"): ECS event.category and event.type are arrays.
 * kind NULL means "event"; outcome is "success", "failure" or "unknown"
 * (NULL). See docs/events.md for the values of each family. Returns NULL
 * when out of memory; the other functions then do nothing and log_emit()
 * returns -ENOMEM. An event belongs to one thread until emitted.
 */
struct log_event *log_event_new(enum log_level level, const char *kind, const char *category,
				const char *type, const char *action, const char *outcome);

/* Frees an event that will not be emitted. NULL is fine. */
void log_event_free(struct log_event *ev);

/*
 * Set a field by dotted ECS name ("process.thread.id"), creating nested
 * objects and replacing an existing value (or a non-object in the way).
 * Strings may be arbitrary bytes: invalid UTF-8 is replaced with U+FFFD
 * (one per maximal invalid subpart, as Unicode recommends) and values
 * longer than LOG_VALUE_MAX bytes are cut and flagged bpfbox.truncated.
 * A NULL value removes the field. Integers are exact up to 2^53.
 */
void log_event_set_str(struct log_event *ev, const char *dotted_key, const char *value);
void log_event_set_int(struct log_event *ev, const char *dotted_key, long long value);
void log_event_set_bool(struct log_event *ev, const char *dotted_key, bool value);
/* A NULL-terminated argv as an array of strings. */
void log_event_set_strv(struct log_event *ev, const char *dotted_key, char *const *argv);
/* At most len bytes of buf, stopping at a NUL: for fixed-size kernel buffers. */
void log_event_set_bytes(struct log_event *ev, const char *dotted_key, const void *buf,
			 size_t len);
/* error.code (symbolic errno, e.g. "EACCES") and error.message (strerror). */
void log_event_set_errno(struct log_event *ev, int err);

/* When the event happened (CLOCK_REALTIME); default: when it is emitted. */
void log_event_set_time(struct log_event *ev, const struct timespec *ts);

/* The human-readable message (ECS message); printf-style, sanitised like strings. */
void log_event_message(struct log_event *ev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Marks a refusal: counted as a violation and subject to ignore rules. */
void log_event_violation(struct log_event *ev);

/*
 * Turns a refusal into its audit-mode form: bpfbox.audit=true,
 * event.outcome "success" and "denied" replaced by "allowed" in event.type.
 */
void log_event_audit(struct log_event *ev);

enum log_level log_event_level(const struct log_event *ev);

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

/*
 * Module-internal, shared by user/log*.c; not for callers.
 */
struct cJSON;
struct cJSON *log_event_json(struct log_event *ev);
bool log_event_is_violation(const struct log_event *ev);
bool log_event_has_time(const struct log_event *ev);
const struct timespec *log_event_time(const struct log_event *ev);
int log_event_error(const struct log_event *ev);
/* Copies len bytes (stopping at NUL) as valid UTF-8, at most LOG_VALUE_MAX bytes. */
char *log_utf8_sanitize(const char *s, size_t len, bool *truncated);
/* Escapes control and bidi characters of valid UTF-8 for a terminal. */
char *log_text_escape(const char *s);
/*
 * Writes len bytes with one write() (more only if the kernel took part); 0 or
 * -errno. hold_sigpipe: turn a vanished reader's SIGPIPE into -EPIPE.
 */
int log_write_line(int fd, const char *buf, size_t len, bool hold_sigpipe);
/* The human line of an event, without newline. */
char *log_text_render(struct cJSON *root, enum log_level level);

#endif
