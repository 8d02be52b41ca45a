// SPDX-License-Identifier: MIT
/*
 * The log itself: destination, filters, stamping and the single write()
 * per line that keeps concurrent writers of one file from interleaving.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "log.h"
#include "log_ignore.h"
#include "log_redact.h"
#include "log_text.h"
#include "log_time.h"
#include "log_utf8.h"
#include "log_write.h"

struct log {
	pthread_mutex_t lock; /* seq, counts, sandbox, rules and the write */
	int fd;
	bool owns_fd;
	bool regular; /* a regular file: no reader to vanish, no SIGPIPE to hold back */
	bool json;
	pid_t pid; /* bpfbox.pid: getpid() once, not per line */
	enum log_level min_level;
	char *host;
	char *sandbox_id;
	char *command_line;
	char *user_id; /* the command's user (user.id, user.name) */
	char *user_name;
	struct log_ignore ignore;
	unsigned long long seq;
	struct log_counts counts;
	int admin_fd; /* -1: no administrator's log */
	char *admin_path; /* reopened after rotation; NULL for a given fd */
	unsigned long long admin_seq;
	struct log_redact secrets; /* values no line may show */
};

static char *host_name(void)
{
	char buf[256] = "";

	/* A name we cannot read is not worth failing the sandbox over. */
	if (gethostname(buf, sizeof(buf) - 1) || !buf[0])
		strcpy(buf, "unknown");
	return log_utf8_sanitize(buf, sizeof(buf), NULL);
}

static int open_destination(const struct log_config *cfg, struct log *log)
{
	if (cfg->file_path) {
		log->fd = open(cfg->file_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
			       0600);
		log->owns_fd = true;
	} else if (cfg->fd >= 0) {
		/* Our own close-on-exec copy: never leaks into the sandboxed command. */
		log->fd = fcntl(cfg->fd, F_DUPFD_CLOEXEC, 3);
		log->owns_fd = true;
	} else {
		log->fd = STDERR_FILENO;
		log->owns_fd = false;
	}
	return log->fd < 0 ? -errno : 0;
}

int log_open(const struct log_config *cfg, struct log **out)
{
	struct log *log;
	struct stat st;
	int err;

	if (!cfg || !out || (unsigned int)cfg->min_level >= LOG_LEVELS ||
	    (unsigned int)cfg->format > LOG_FORMAT_TEXT || cfg->fd < -1 ||
	    (cfg->file_path && cfg->fd >= 0))
		return -EINVAL;
	log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	log->fd = -1;
	log->admin_fd = -1;
	log->min_level = cfg->min_level;
	err = open_destination(cfg, log);
	if (err)
		goto err_free;
	log->host = host_name();
	if (!log->host) {
		err = -ENOMEM;
		goto err_close;
	}
	err = -pthread_mutex_init(&log->lock, NULL);
	if (err)
		goto err_close;
	log->pid = getpid();
	log->regular = !fstat(log->fd, &st) && S_ISREG(st.st_mode);
	if (cfg->format == LOG_FORMAT_AUTO)
		log->json = !isatty(log->fd);
	else
		log->json = cfg->format == LOG_FORMAT_JSON;
	*out = log;
	return 0;

err_close:
	if (log->owns_fd)
		close(log->fd);
err_free:
	free(log->host);
	free(log);
	return err;
}

void log_close(struct log *log)
{
	if (!log)
		return;
	if (log->owns_fd)
		close(log->fd);
	if (log->admin_fd >= 0)
		close(log->admin_fd);
	free(log->admin_path);
	pthread_mutex_destroy(&log->lock);
	log_ignore_free(&log->ignore);
	free(log->host);
	free(log->sandbox_id);
	free(log->command_line);
	free(log->user_id);
	free(log->user_name);
	log_redact_free(&log->secrets);
	free(log);
}

static int open_admin(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
}

int log_set_admin(struct log *log, const char *path, int fd)
{
	int nfd = path ? open_admin(path) : fcntl(fd, F_DUPFD_CLOEXEC, 3);
	char *copy = NULL;

	if (nfd < 0)
		return -errno;
	if (path && !(copy = strdup(path))) {
		close(nfd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&log->lock);
	if (log->admin_fd >= 0)
		close(log->admin_fd);
	free(log->admin_path);
	log->admin_fd = nfd;
	log->admin_path = copy;
	pthread_mutex_unlock(&log->lock);
	return 0;
}

void log_child_after_fork(struct log *log)
{
	/* The lock may have been held by a thread that does not exist here. */
	if (!log)
		return;
	pthread_mutex_init(&log->lock, NULL);
	log->pid = getpid();
}

int log_fd(const struct log *log)
{
	return log ? log->fd : -1;
}

bool log_is_json(const struct log *log)
{
	return log && log->json;
}

/* strdup() that keeps NULL; *failed is set when a non-NULL copy fails. */
static char *dup_or_null(const char *s, bool *failed)
{
	char *copy;

	if (!s)
		return NULL;
	copy = strdup(s);
	if (!copy)
		*failed = true;
	return copy;
}

/* Called locked: the command line stamped on every line holds no secret either. */
static void redact_command_line(struct log *log)
{
	bool failed;
	char *red = log_redact_string(&log->secrets, log->command_line, &failed);

	if (red || failed) {
		free(log->command_line);
		log->command_line = red ? red : strdup("[masked]");
	}
}

void log_set_sandbox(struct log *log, const char *sandbox_id, const char *command_line)
{
	bool failed = false;
	char *id, *cmd;

	if (!log)
		return;
	id = dup_or_null(sandbox_id, &failed);
	cmd = dup_or_null(command_line, &failed);
	if (failed) {
		free(id);
		free(cmd);
		log_msg(log, LOG_ERROR, "error", "out of memory setting the sandbox identity");
		return;
	}
	pthread_mutex_lock(&log->lock);
	free(log->sandbox_id);
	free(log->command_line);
	log->sandbox_id = id;
	log->command_line = cmd;
	redact_command_line(log);
	pthread_mutex_unlock(&log->lock);
}

int log_add_secret(struct log *log, const char *name, const char *value)
{
	int err;

	pthread_mutex_lock(&log->lock);
	err = log_redact_add(&log->secrets, name, value);
	redact_command_line(log);
	pthread_mutex_unlock(&log->lock);
	return err;
}

void log_redact_in_place(struct log *log, char *buf, size_t cap)
{
	bool failed;
	char *red;

	pthread_mutex_lock(&log->lock);
	red = log_redact_string(&log->secrets, buf, &failed);
	pthread_mutex_unlock(&log->lock);
	if (red)
		snprintf(buf, cap, "%s", red);
	else if (failed)
		snprintf(buf, cap, "[masked]");
	free(red);
}

void log_set_user(struct log *log, unsigned uid, const char *name)
{
	bool failed = false;
	char *id = NULL, *nm;

	if (!log)
		return;
	if (asprintf(&id, "%u", uid) < 0)
		id = NULL, failed = true;
	nm = dup_or_null(name, &failed);
	if (failed) {
		free(id);
		free(nm);
		log_msg(log, LOG_ERROR, "error", "out of memory setting the user identity");
		return;
	}
	pthread_mutex_lock(&log->lock);
	free(log->user_id);
	free(log->user_name);
	log->user_id = id;
	log->user_name = nm;
	pthread_mutex_unlock(&log->lock);
}

void log_set_ignore(struct log *log, const struct log_ignore_rule *rules, size_t n)
{
	struct log_ignore copy, old;

	if (!log)
		return;
	if (log_ignore_copy(rules, n, &copy)) {
		log_msg(log, LOG_ERROR, "error", "out of memory setting ignoreViolations; keeping the old rules");
		return;
	}
	pthread_mutex_lock(&log->lock);
	old = log->ignore;
	log->ignore = copy;
	pthread_mutex_unlock(&log->lock);
	log_ignore_free(&old);
}

/* A message nobody wrote still has to say something (and be non-empty). */
static void default_message(struct log_event *ev)
{
	cJSON *root = log_event_json(ev);
	cJSON *event = cJSON_GetObjectItemCaseSensitive(root, "event");
	const char *msg, *action, *outcome;

	msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "message"));
	action = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(event, "action"));
	outcome = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(event, "outcome"));

	if (msg && *msg)
		return;
	log_event_message(ev, "%s (%s)", action ? action : "event", outcome ? outcome : "unknown");
}

/* Called locked: the fields every line carries. */
static void stamp(struct log *log, struct log_event *ev)
{
	struct timespec now;
	char when[64];

	if (log_event_has_time(ev)) {
		now = *log_event_time(ev);
	} else {
		clock_gettime(CLOCK_REALTIME, &now);
	}
	log_format_utc(&now, when, sizeof(when));
	log_event_set_str(ev, "@timestamp", when);
	log_event_set_str(ev, "host.name", log->host);
	log_event_set_int(ev, "bpfbox.pid", log->pid);
	log_event_set_int(ev, "bpfbox.seq", (long long)++log->seq);
	if (log->sandbox_id)
		log_event_set_str(ev, "bpfbox.sandbox.id", log->sandbox_id);
	if (log->command_line)
		log_event_set_str(ev, "bpfbox.sandbox.command_line", log->command_line);
	if (log->user_id)
		log_event_set_str(ev, "user.id", log->user_id);
	if (log->user_name)
		log_event_set_str(ev, "user.name", log->user_name);
}

static char *with_newline(char *body)
{
	size_t n = strlen(body);
	char *line = realloc(body, n + 2);

	if (!line) {
		free(body);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

/* The JSON or text line with its newline; NULL when out of memory. */
static char *make_line(struct log *log, struct log_event *ev, const char *text)
{
	char *body;

	if (log->json)
		body = cJSON_PrintUnformatted(log_event_json(ev));
	else
		body = text ? strdup(text) : NULL;
	return body ? with_newline(body) : NULL;
}

/*
 * Called locked. After logrotate moved the file away (or removed it), the
 * next line goes to a new file at the path: one stat per administrator's
 * line, so that a long-running sandbox follows the rotation by itself.
 */
static void admin_follow(struct log *log)
{
	struct stat now, held;
	int fd;

	if (!log->admin_path)
		return;
	if (!stat(log->admin_path, &now) && !fstat(log->admin_fd, &held) && now.st_dev == held.st_dev &&
	    now.st_ino == held.st_ino)
		return;
	fd = open_admin(log->admin_path);
	if (fd < 0)
		return; /* keep writing where we were rather than lose lines */
	close(log->admin_fd);
	log->admin_fd = fd;
}

/* Called locked: the administrator's copy of every event, JSON, unfiltered. */
static void admin_write(struct log *log, struct log_event *ev)
{
	char *body;

	if (log->admin_fd < 0)
		return;
	admin_follow(log);
	stamp(log, ev);
	log_event_set_int(ev, "bpfbox.seq", (long long)++log->admin_seq);
	body = cJSON_PrintUnformatted(log_event_json(ev));
	body = body ? with_newline(body) : NULL;
	if (!body || log_write_line(log->admin_fd, body, strlen(body), false))
		log->counts.write_errors++;
	free(body);
}

/* bpfbox.<name> of an event as a count, or dflt when absent or odd. */
static unsigned long long bpfbox_count(cJSON *bb, const char *name, unsigned long long dflt)
{
	cJSON *item = cJSON_GetObjectItemCaseSensitive(bb, name);

	if (!cJSON_IsNumber(item) || item->valuedouble < 1)
		return dflt;
	return (unsigned long long)item->valuedouble;
}

/* Called locked: updates counters, returns true when the event is to be written. */
static bool account(struct log *log, struct log_event *ev, const char *text)
{
	cJSON *root = log_event_json(ev);
	cJSON *bb = cJSON_GetObjectItemCaseSensitive(root, "bpfbox");
	enum log_level level = log_event_level(ev);
	bool violation = log_event_is_violation(ev);
	/* A folded line stands for bpfbox.count refusals. */
	unsigned long long n = bpfbox_count(bb, "count", 1);

	log->counts.seen[level]++;
	log->counts.lost += bpfbox_count(bb, "lost", 0);
	if (violation) {
		log->counts.violations += n;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bb, "audit")))
			log->counts.audited += n;
	}
	if (level < log->min_level) {
		log->counts.filtered++;
		return false;
	}
	/* Errors are never hidden, even when marked as violations. */
	if (violation && level < LOG_ERROR &&
	    log_ignore_matches(&log->ignore, log->command_line,
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "message")), text)) {
		log->counts.ignored += n;
		return false;
	}
	return true;
}

int log_emit(struct log *log, struct log_event *ev)
{
	enum log_level level = log_event_level(ev);
	char *text = NULL, *line = NULL;
	bool need_text, write_it;
	int err = 0;

	if (!ev)
		return -ENOMEM;
	if (!log) {
		log_event_free(ev);
		return -EINVAL;
	}
	default_message(ev);
	/* Rendered unlocked, and only when the text format or an ignore rule needs it. */
	pthread_mutex_lock(&log->lock);
	/* Before anything renders it: the text form, the administrator's copy, the line. */
	log_redact_json(&log->secrets, log_event_json(ev));
	need_text = !log->json || (log->ignore.n && log_event_is_violation(ev));
	pthread_mutex_unlock(&log->lock);
	if (need_text)
		text = log_text_render(log_event_json(ev), level);
	pthread_mutex_lock(&log->lock);
	write_it = account(log, ev, text);
	admin_write(log, ev);
	if (!write_it)
		goto unlock;
	stamp(log, ev);
	line = make_line(log, ev, text);
	err = line ? log_write_line(log->fd, line, strlen(line), !log->regular) : -ENOMEM;
	if (err)
		log->counts.write_errors++;
	else
		log->counts.written[level]++;
unlock:
	pthread_mutex_unlock(&log->lock);
	if (!err)
		err = log_event_error(ev);
	free(line);
	free(text);
	log_event_free(ev);
	return err;
}

void log_msg(struct log *log, enum log_level level, const char *action, const char *fmt, ...)
{
	static const char *const actions[LOG_LEVELS] = { "debug", "info", "warning", "error" };
	struct log_event *ev;
	char *text = NULL;
	va_list ap;
	int n;

	if ((unsigned int)level >= LOG_LEVELS)
		level = LOG_ERROR;
	ev = log_event_new(level, "event", "process", level == LOG_ERROR ? "error" : "info",
			   action ? action : actions[level],
			   level == LOG_ERROR ? "failure" : "unknown");
	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		log_event_message(ev, "%s", text);
		free(text);
	}
	log_emit(log, ev);
}

unsigned long long log_count(const struct log *log, enum log_level level)
{
	struct log_counts c;

	if ((unsigned int)level >= LOG_LEVELS)
		return 0;
	log_get_counts(log, &c);
	return c.seen[level];
}

void log_get_counts(const struct log *log, struct log_counts *out)
{
	pthread_mutex_t *lock;

	memset(out, 0, sizeof(*out));
	if (!log)
		return;
	/* Locking does not change the log as callers see it; hence the cast. */
	lock = (pthread_mutex_t *)&log->lock;
	pthread_mutex_lock(lock);
	*out = log->counts;
	pthread_mutex_unlock(lock);
}
