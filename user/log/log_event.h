/* SPDX-License-Identifier: MIT */
/*
 * Building one event: an ECS document filled field by field, then handed
 * to log_emit() (log.h). See log.h for the error model of the builders.
 */
#ifndef BPFBOX_LOG_EVENT_H
#define BPFBOX_LOG_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "log_level.h"

struct log_event;

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

/* For the logger (log.c): the document and what the builders recorded. */
struct cJSON;
struct cJSON *log_event_json(struct log_event *ev);
bool log_event_is_violation(const struct log_event *ev);
bool log_event_has_time(const struct log_event *ev);
const struct timespec *log_event_time(const struct log_event *ev);
int log_event_error(const struct log_event *ev);

#endif
