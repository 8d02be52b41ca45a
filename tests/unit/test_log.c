// SPDX-License-Identifier: MIT
/* The log API: nesting, stamping, levels, ignore rules, counts, destinations, failures. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "log/log.h"

struct fx {
	char dir[64];
	char path[128];
	struct log *log;
};

/* Each test logs to its own file; teardown validates every line against the schema. */
static int open_fx(void **state, enum log_level min, enum log_format format)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct log_config cfg = { .min_level = min, .format = format, .fd = -1 };

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "%s/bpfbox-log-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/events.ndjson", fx->dir);
	cfg.file_path = fx->path;
	if (log_open(&cfg, &fx->log))
		return -1;
	*state = fx;
	return 0;
}

static int setup(void **state)
{
	return open_fx(state, LOG_DEBUG, LOG_FORMAT_JSON);
}

static int validate(const char *path, bool quiet)
{
	const char *src = getenv("BPFBOX_SRCDIR") ? getenv("BPFBOX_SRCDIR") : ".";
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd), "python3 %s/tests/tools/validate-events.py --check-seq '%s'%s",
		 src, path, quiet ? " 2>/dev/null" : "");
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	int rc = 0;

	char admin[160];

	log_close(fx->log);
	if (access(fx->path, F_OK) == 0) {
		rc = validate(fx->path, false) ? -1 : 0;
		unlink(fx->path);
	}
	/* A failed test leaves nothing behind either (the VM tests count what is in /tmp). */
	snprintf(admin, sizeof(admin), "%s/admin.ndjson", fx->dir);
	unlink(admin);
	rmdir(fx->dir);
	free(fx);
	return rc;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	char chunk[65536];
	size_t n;

	assert_non_null(f);
	assert_non_null(out);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, out);
	fclose(f);
	fclose(out);
	return buf;
}

/* Line i (0-based) of the log file parsed, or NULL when there are fewer lines. */
static cJSON *line_json(struct fx *fx, size_t i)
{
	char *all = slurp(fx->path), *p = all, *nl;
	cJSON *json = NULL;

	for (; (nl = strchr(p, '\n')); p = nl + 1) {
		if (i-- == 0) {
			*nl = '\0';
			json = cJSON_Parse(p);
			assert_non_null(json);
			break;
		}
	}
	free(all);
	return json;
}

static size_t line_count(struct fx *fx)
{
	char *all = slurp(fx->path);
	size_t n = 0;

	for (char *p = all; *p; p++)
		n += *p == '\n';
	free(all);
	return n;
}

static cJSON *get(cJSON *root, const char *dotted)
{
	char *copy = strdup(dotted), *save = NULL;
	cJSON *item = root;

	for (char *seg = strtok_r(copy, ".", &save); seg && item; seg = strtok_r(NULL, ".", &save))
		item = cJSON_GetObjectItemCaseSensitive(item, seg);
	free(copy);
	return item;
}

static const char *get_str(cJSON *root, const char *dotted)
{
	return cJSON_GetStringValue(get(root, dotted));
}

static long long get_int(cJSON *root, const char *dotted)
{
	cJSON *item = get(root, dotted);

	assert_true(cJSON_IsNumber(item));
	return (long long)item->valuedouble;
}

static struct log_event *refusal(const char *path)
{
	struct log_event *ev =
		log_event_new(LOG_WARN, "event", "file", "access,denied", "open-read", "failure");

	log_event_set_str(ev, "file.path", path);
	log_event_set_int(ev, "process.pid", 42);
	log_event_set_str(ev, "process.name", "cat");
	log_event_set_str(ev, "rule.name", "denyRead:/home/u/.ssh");
	log_event_message(ev, "denied open-read of %s", path);
	log_event_violation(ev);
	return ev;
}

static void test_nested_keys(void **state)
{
	struct fx *fx = *state;
	struct log_event *ev = refusal("/home/u/.ssh/id_rsa");
	cJSON *j;

	log_event_set_int(ev, "process.thread.id", 43);
	log_event_set_str(ev, "process.user.id", "1000");
	log_event_set_str(ev, "process.executable", "/usr/bin/cat");
	log_event_set_int(ev, "process.thread.id", 44); /* replaces, no duplicate key */
	assert_int_equal(log_emit(fx->log, ev), 0);

	j = line_json(fx, 0);
	assert_true(cJSON_IsObject(get(j, "process")));
	assert_true(cJSON_IsObject(get(j, "process.thread")));
	assert_int_equal(get_int(j, "process.thread.id"), 44);
	assert_int_equal(get_int(j, "process.pid"), 42);
	assert_string_equal(get_str(j, "process.user.id"), "1000");
	assert_string_equal(get_str(j, "file.path"), "/home/u/.ssh/id_rsa");
	assert_string_equal(get_str(j, "event.kind"), "event");
	assert_string_equal(get_str(j, "event.action"), "open-read");
	assert_string_equal(get_str(j, "event.outcome"), "failure");
	assert_string_equal(get_str(j, "log.level"), "warn");
	assert_int_equal(cJSON_GetArraySize(get(j, "event.category")), 1);
	assert_string_equal(cJSON_GetArrayItem(get(j, "event.type"), 0)->valuestring, "access");
	assert_string_equal(cJSON_GetArrayItem(get(j, "event.type"), 1)->valuestring, "denied");
	/* No dotted key ever reaches the output. */
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "process.pid"));
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "file.path"));
	cJSON_Delete(j);
}

static void test_replace_remove_and_types(void **state)
{
	struct fx *fx = *state;
	struct log_event *ev = log_event_new(LOG_INFO, "event", "process", "info", "info", NULL);
	char *argv[] = { "sh", "-c", "echo \"hi\"", NULL };
	cJSON *j;

	log_event_set_str(ev, "process", "scalar in the way");
	log_event_set_int(ev, "process.pid", 7); /* replaces the scalar with an object */
	log_event_set_strv(ev, "process.args", argv);
	log_event_set_str(ev, "file.path", "/gone");
	log_event_set_str(ev, "file.path", NULL);
	log_event_set_str(ev, "url.path", NULL); /* removing what is not there is fine */
	log_event_set_bool(ev, "bpfbox.audit", false);
	log_event_message(ev, "types %d", 1);
	assert_int_equal(log_emit(fx->log, ev), 0);

	j = line_json(fx, 0);
	assert_int_equal(get_int(j, "process.pid"), 7);
	assert_int_equal(cJSON_GetArraySize(get(j, "process.args")), 3);
	assert_string_equal(cJSON_GetArrayItem(get(j, "process.args"), 2)->valuestring,
			    "echo \"hi\"");
	assert_null(get(j, "file.path"));
	assert_null(get(j, "url"));
	assert_true(cJSON_IsFalse(get(j, "bpfbox.audit")));
	assert_string_equal(get_str(j, "event.outcome"), "unknown"); /* NULL outcome */
	cJSON_Delete(j);
}

static void test_bad_keys_still_written(void **state)
{
	struct fx *fx = *state;
	static const char *const bad[] = { "", ".a", "a.", "a..b" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct log_event *ev = log_event_new(LOG_WARN, NULL, "process", "info", "warning", NULL);

		log_event_message(ev, "bad key '%s'", bad[i]);
		log_event_set_str(ev, bad[i], "x");
		assert_int_equal(log_emit(fx->log, ev), -EINVAL);
	}
	/* A report is never lost to a programming slip: the lines were written. */
	assert_int_equal(line_count(fx), 4);
}

static void test_stamped_fields_and_seq(void **state)
{
	struct fx *fx = *state;
	struct timespec ts = { .tv_sec = 1704164645, .tv_nsec = 123456789 };
	struct log_event *ev;
	cJSON *j;
	int y, mo, d, h, mi, s, us;
	char z;

	log_set_sandbox(fx->log, "sb-1", "cat /etc/passwd");
	for (int i = 0; i < 3; i++)
		log_msg(fx->log, LOG_INFO, NULL, "line %d", i);
	ev = log_event_new(LOG_INFO, "event", "process", "info", "info", NULL);
	log_event_set_time(ev, &ts);
	log_event_set_int(ev, "bpfbox.seq", 999); /* stamping wins */
	log_event_message(ev, "with a given time");
	assert_int_equal(log_emit(fx->log, ev), 0);

	for (int i = 0; i < 4; i++) {
		j = line_json(fx, (size_t)i);
		assert_int_equal(get_int(j, "bpfbox.seq"), i + 1);
		assert_int_equal(get_int(j, "bpfbox.pid"), getpid());
		assert_string_equal(get_str(j, "bpfbox.sandbox.id"), "sb-1");
		assert_string_equal(get_str(j, "bpfbox.sandbox.command_line"), "cat /etc/passwd");
		assert_string_equal(get_str(j, "ecs.version"), LOG_ECS_VERSION);
		assert_non_null(get_str(j, "host.name"));
		assert_int_equal(sscanf(get_str(j, "@timestamp"), "%4d-%2d-%2dT%2d:%2d:%2d.%6d%c", &y,
					&mo, &d, &h, &mi, &s, &us, &z),
				 8);
		assert_int_equal(z, 'Z');
		assert_int_equal(strlen(get_str(j, "@timestamp")), 27);
		/* The sandbox's command line is not passed off as the event's process. */
		assert_null(get(j, "process.command_line"));
		if (i == 3)
			assert_string_equal(get_str(j, "@timestamp"), "2024-01-02T03:04:05.123456Z");
		cJSON_Delete(j);
	}
}

static void test_level_filter(void **state)
{
	struct fx *fx = *state;
	struct log_counts c;
	cJSON *j;

	log_close(fx->log);
	assert_int_equal(log_open(&(struct log_config){ .min_level = LOG_WARN,
							  .format = LOG_FORMAT_JSON,
							  .file_path = fx->path,
							  .fd = -1 },
				  &fx->log),
			 0);
	log_msg(fx->log, LOG_DEBUG, NULL, "debug");
	log_msg(fx->log, LOG_INFO, NULL, "info");
	log_msg(fx->log, LOG_WARN, NULL, "warn");
	log_msg(fx->log, LOG_ERROR, NULL, "error");
	assert_int_equal(log_emit(fx->log, refusal("/x")), 0);
	log_msg(fx->log, LOG_INFO, NULL, "info again");

	assert_int_equal(line_count(fx), 3);
	j = line_json(fx, 0);
	assert_string_equal(get_str(j, "message"), "warn");
	assert_int_equal(get_int(j, "bpfbox.seq"), 1); /* filtered events take no number */
	cJSON_Delete(j);
	j = line_json(fx, 2);
	assert_string_equal(get_str(j, "event.action"), "open-read");
	assert_int_equal(get_int(j, "bpfbox.seq"), 3);
	cJSON_Delete(j);

	log_get_counts(fx->log, &c);
	assert_int_equal(c.seen[LOG_DEBUG], 1);
	assert_int_equal(c.seen[LOG_INFO], 2);
	assert_int_equal(c.seen[LOG_WARN], 2);
	assert_int_equal(c.written[LOG_WARN], 2);
	assert_int_equal(c.written[LOG_INFO], 0);
	assert_int_equal(c.filtered, 3);
	assert_int_equal(c.violations, 1);
	assert_int_equal(log_count(fx->log, LOG_INFO), 2);
	assert_int_equal(log_count(fx->log, LOG_ERROR), 1);
}

static void test_log_msg_shape(void **state)
{
	struct fx *fx = *state;
	static const char *const want[][4] = {
		{ "debug", "debug", "info", "unknown" },
		{ "info", "info", "info", "unknown" },
		{ "warn", "warning", "info", "unknown" },
		{ "error", "error", "error", "failure" },
	};
	cJSON *j;

	for (int l = LOG_DEBUG; l <= LOG_ERROR; l++)
		log_msg(fx->log, (enum log_level)l, NULL, "level %d: %s", l, "text");
	log_msg(fx->log, LOG_ERROR, "setup-failed", "cannot attach");
	for (int l = LOG_DEBUG; l <= LOG_ERROR; l++) {
		j = line_json(fx, (size_t)l);
		assert_string_equal(get_str(j, "log.level"), want[l][0]);
		assert_string_equal(get_str(j, "event.action"), want[l][1]);
		assert_string_equal(cJSON_GetArrayItem(get(j, "event.type"), 0)->valuestring,
				    want[l][2]);
		assert_string_equal(get_str(j, "event.outcome"), want[l][3]);
		assert_string_equal(cJSON_GetArrayItem(get(j, "event.category"), 0)->valuestring,
				    "process");
		cJSON_Delete(j);
	}
	j = line_json(fx, 4);
	assert_string_equal(get_str(j, "event.action"), "setup-failed");
	assert_string_equal(get_str(j, "message"), "cannot attach");
	cJSON_Delete(j);
}

static void test_ignore_rules(void **state)
{
	struct fx *fx = *state;
	const char *any_lines[] = { "/home/u/.cache" };
	const char *npm_lines[] = { "[pid 42 cat]", "id_rsa" };
	struct log_ignore_rule rules[] = {
		{ "*", any_lines, 1 },
		{ "npm", npm_lines, 2 },
	};
	struct log_counts c;
	struct log_event *ev;
	cJSON *j;

	log_set_sandbox(fx->log, "sb", "bash -c 'git status'");
	log_set_ignore(fx->log, rules, 2);
	any_lines[0] = "scribbled over"; /* the log kept its own copy */

	assert_int_equal(log_emit(fx->log, refusal("/home/u/.cache/x")), 0); /* "*" */
	assert_int_equal(log_emit(fx->log, refusal("/home/u/.ssh/id_rsa")), 0); /* not npm */
	log_set_sandbox(fx->log, "sb", "npm install");
	assert_int_equal(log_emit(fx->log, refusal("/home/u/.ssh/id_rsa")), 0); /* message */
	assert_int_equal(log_emit(fx->log, refusal("/etc/shadow")), 0); /* text line: [pid 42 cat] */
	/* Not a violation: same words, never suppressed. */
	ev = log_event_new(LOG_WARN, "event", "process", "info", "warning", NULL);
	log_event_message(ev, "cannot read /home/u/.cache/x");
	assert_int_equal(log_emit(fx->log, ev), 0);
	/* An error is never suppressed, even marked as a violation. */
	ev = log_event_new(LOG_ERROR, "event", "process", "error", "error", "failure");
	log_event_message(ev, "/home/u/.cache broke");
	log_event_violation(ev);
	assert_int_equal(log_emit(fx->log, ev), 0);

	assert_int_equal(line_count(fx), 3);
	j = line_json(fx, 0);
	assert_string_equal(get_str(j, "file.path"), "/home/u/.ssh/id_rsa");
	assert_int_equal(get_int(j, "bpfbox.seq"), 1);
	cJSON_Delete(j);
	log_get_counts(fx->log, &c);
	assert_int_equal(c.ignored, 3);
	assert_int_equal(c.violations, 5);

	log_set_ignore(fx->log, NULL, 0);
	assert_int_equal(log_emit(fx->log, refusal("/home/u/.cache/y")), 0);
	assert_int_equal(line_count(fx), 4);
}

/* A denied or masked credential's value appears in no line: message, fields, command line, the administrator's copy. */
static void test_secrets_redacted(void **state)
{
	struct fx *fx = *state;
	static const char key[] = "sk-ant-REAL-0123456789";
	char admin[160], cmd[128], *all, *a;
	struct log_event *ev;
	cJSON *j;

	snprintf(admin, sizeof(admin), "%s/admin.ndjson", fx->dir);
	assert_int_equal(log_set_admin(fx->log, admin, -1), 0);
	log_set_sandbox(fx->log, "sb", "curl -H x-api-key:sk-ant-REAL-0123456789 https://api.example.com/");
	assert_int_equal(log_add_secret(fx->log, "ANTHROPIC_API_KEY", key), 0);
	/* Short values are not registered: they would garble every line. */
	assert_int_equal(log_add_secret(fx->log, "PIN", "123"), 0);
	assert_int_equal(log_add_secret(fx->log, "", key), -EINVAL);
	/* A secret inside a longer one: the longer is replaced whole. */
	assert_int_equal(log_add_secret(fx->log, "SHORT", "sk-ant-REAL"), 0);

	ev = refusal("/tmp/sk-ant-REAL-0123456789/x");
	log_event_set_str(ev, "url.full", "https://h/?k=sk-ant-REAL-0123456789&j=sk-ant-REAL-0123456789");
	log_event_message(ev, "denied sk-ant-REAL-0123456789 and sk-ant-REAL-x 123");
	assert_int_equal(log_emit(fx->log, ev), 0);

	j = line_json(fx, 0);
	assert_string_equal(get_str(j, "file.path"), "/tmp/[masked:ANTHROPIC_API_KEY]/x");
	assert_string_equal(get_str(j, "url.full"),
			    "https://h/?k=[masked:ANTHROPIC_API_KEY]&j=[masked:ANTHROPIC_API_KEY]");
	assert_string_equal(get_str(j, "message"), "denied [masked:ANTHROPIC_API_KEY] and [masked:SHORT]-x 123");
	assert_string_equal(get_str(j, "bpfbox.sandbox.command_line"),
			    "curl -H x-api-key:[masked:ANTHROPIC_API_KEY] https://api.example.com/");
	cJSON_Delete(j);
	all = slurp(fx->path);
	a = slurp(admin);
	assert_non_null(all);
	assert_non_null(a);
	assert_null(strstr(all, "sk-ant-REAL"));
	assert_null(strstr(a, "sk-ant-REAL"));
	assert_non_null(strstr(a, "[masked:ANTHROPIC_API_KEY]"));
	free(all);
	free(a);

	/* What the registry and ps show goes through the same replacement. */
	snprintf(cmd, sizeof(cmd), "echo %s", key);
	log_redact_in_place(fx->log, cmd, sizeof(cmd));
	assert_string_equal(cmd, "echo [masked:ANTHROPIC_API_KEY]");
	/* Longer once replaced: cut to the buffer, never the value. */
	snprintf(cmd, 17, "%s", "echo sk-ant-REAL");
	log_redact_in_place(fx->log, cmd, 17);
	assert_string_equal(cmd, "echo [masked:SHO");
	unlink(admin);
}

static void test_audit_and_count(void **state)
{
	struct fx *fx = *state;
	struct log_event *ev = refusal("/home/u/.bashrc");
	struct log_counts c;
	cJSON *j, *types;

	log_event_set_int(ev, "bpfbox.count", 5);
	log_event_audit(ev);
	log_event_message(ev, "would deny open-read of %s (audit mode)", "/home/u/.bashrc");
	assert_int_equal(log_emit(fx->log, ev), 0);
	ev = log_event_new(LOG_WARN, "event", "process", "info", "events-lost", NULL);
	log_event_set_int(ev, "bpfbox.lost", 9);
	log_event_message(ev, "lost 9 kernel events");
	assert_int_equal(log_emit(fx->log, ev), 0);

	j = line_json(fx, 0);
	assert_true(cJSON_IsTrue(get(j, "bpfbox.audit")));
	assert_string_equal(get_str(j, "event.outcome"), "success");
	types = get(j, "event.type");
	assert_int_equal(cJSON_GetArraySize(types), 2);
	assert_string_equal(cJSON_GetArrayItem(types, 1)->valuestring, "allowed");
	assert_int_equal(get_int(j, "bpfbox.count"), 5);
	cJSON_Delete(j);
	log_get_counts(fx->log, &c);
	assert_int_equal(c.violations, 5); /* weighted by bpfbox.count */
	assert_int_equal(c.audited, 5);
	assert_int_equal(c.lost, 9);
}

static void test_errno_and_bytes(void **state)
{
	struct fx *fx = *state;
	struct log_event *ev = log_event_new(LOG_ERROR, "event", "process", "error", "setup-failed",
					     "failure");
	char comm[16] = "cat\0garbage";
	char path[8] = { '/', 'a', 'b', 'c', 'd', 'e', 'f', 'g' }; /* no NUL */
	cJSON *j;

	log_event_set_errno(ev, -EACCES);
	log_event_set_bytes(ev, "process.name", comm, sizeof(comm));
	log_event_set_bytes(ev, "file.path", path, sizeof(path));
	log_event_message(ev, "setup failed");
	assert_int_equal(log_emit(fx->log, ev), 0);
	j = line_json(fx, 0);
	assert_string_equal(get_str(j, "error.code"), "EACCES");
	assert_string_equal(get_str(j, "error.message"), "Permission denied");
	assert_string_equal(get_str(j, "process.name"), "cat");
	assert_string_equal(get_str(j, "file.path"), "/abcdefg");
	cJSON_Delete(j);
}

static void test_null_event(void **state)
{
	struct fx *fx = *state;

	/* What callers see when log_event_new() ran out of memory. */
	log_event_set_str(NULL, "a", "b");
	log_event_set_int(NULL, "a", 1);
	log_event_set_bool(NULL, "a", true);
	log_event_set_strv(NULL, "a", NULL);
	log_event_set_bytes(NULL, "a", "b", 1);
	log_event_set_errno(NULL, EIO);
	log_event_message(NULL, "x");
	log_event_violation(NULL);
	log_event_audit(NULL);
	log_event_free(NULL);
	assert_int_equal(log_emit(fx->log, NULL), -ENOMEM);
	assert_int_equal(log_emit(NULL, log_event_new(LOG_INFO, "event", "process", "info", "info",
						      NULL)),
			 -EINVAL);
	log_close(NULL);
}

static void test_parse(void **state)
{
	enum log_level l = LOG_DEBUG;
	enum log_format f = LOG_FORMAT_AUTO;

	assert_int_equal(log_level_parse("WARNING", &l), 0);
	assert_int_equal(l, LOG_WARN);
	assert_int_equal(log_level_parse("error", &l), 0);
	assert_int_equal(l, LOG_ERROR);
	assert_int_equal(log_level_parse("Debug", &l), 0);
	assert_int_equal(l, LOG_DEBUG);
	assert_int_equal(log_level_parse("loud", &l), -EINVAL);
	assert_int_equal(log_level_parse(NULL, &l), -EINVAL);
	assert_int_equal(l, LOG_DEBUG);
	assert_int_equal(log_format_parse("json", &f), 0);
	assert_int_equal(f, LOG_FORMAT_JSON);
	assert_int_equal(log_format_parse("TEXT", &f), 0);
	assert_int_equal(f, LOG_FORMAT_TEXT);
	assert_int_equal(log_format_parse("auto", &f), 0);
	assert_int_equal(f, LOG_FORMAT_AUTO);
	assert_int_equal(log_format_parse("yaml", &f), -EINVAL);
	assert_string_equal(log_level_name(LOG_WARN), "warn");
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_open_failures(void **state)
{
	struct fx *fx = *state;
	char missing[256], dirpath[256];
	struct log *log = (struct log *)0x1;
	struct mallinfo2 before, after;
	int fds;

	snprintf(missing, sizeof(missing), "%s/no/such/dir/log", fx->dir);
	snprintf(dirpath, sizeof(dirpath), "%s", fx->dir);
	struct log_config bad[] = {
		{ LOG_INFO, LOG_FORMAT_JSON, missing, -1 },
		{ LOG_INFO, LOG_FORMAT_JSON, dirpath, -1 },
		{ LOG_INFO, LOG_FORMAT_JSON, NULL, 1000 },
		{ LOG_INFO, LOG_FORMAT_JSON, fx->path, 2 },
		{ (enum log_level)9, LOG_FORMAT_JSON, NULL, -1 },
		{ LOG_INFO, (enum log_format)9, NULL, -1 },
		{ LOG_INFO, LOG_FORMAT_JSON, NULL, -5 },
	};
	const int want[] = { -ENOENT, -EISDIR, -EBADF, -EINVAL, -EINVAL, -EINVAL, -EINVAL };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(log_open(&bad[i], &log), want[i]);
		assert_ptr_equal(log, (struct log *)0x1); /* untouched */
	}
	assert_int_equal(log_open(NULL, &log), -EINVAL);

	/* Nothing leaks: neither descriptors nor memory, failing or not. */
	fds = count_fds();
	before = mallinfo2();
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			assert_int_equal(log_open(&bad[i], &log), want[i]);
		assert_int_equal(log_open(&(struct log_config){ LOG_INFO, LOG_FORMAT_JSON, NULL, 2 },
					  &log),
				 0);
		log_close(log);
	}
	after = mallinfo2();
	assert_int_equal(count_fds(), fds);
	assert_int_equal(after.uordblks, before.uordblks);
}

static void test_fd_destination_and_epipe(void **state)
{
	int p[2];
	struct log *log;
	struct log_counts c;
	sigset_t pending;
	char buf[4096];
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(log_open(&(struct log_config){ LOG_INFO, LOG_FORMAT_AUTO, NULL, p[1] },
				  &log),
			 0);
	assert_true(log_is_json(log)); /* a pipe is not a terminal */
	assert_int_not_equal(log_fd(log), p[1]);
	assert_true(fcntl(log_fd(log), F_GETFD) & FD_CLOEXEC);
	close(p[1]); /* the log has its own copy */
	log_msg(log, LOG_INFO, NULL, "through the pipe");
	n = read(p[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "\"message\":\"through the pipe\""));
	assert_int_equal(buf[n - 1], '\n');

	/* The reader goes away: an error, not a SIGPIPE killing us. */
	close(p[0]);
	{
		struct log_event *ev = log_event_new(LOG_INFO, "event", "process", "info", "info", NULL);

		log_event_message(ev, "nobody listens");
		assert_int_equal(log_emit(log, ev), -EPIPE);
	}
	assert_int_equal(sigpending(&pending), 0);
	assert_false(sigismember(&pending, SIGPIPE));
	log_get_counts(log, &c);
	assert_int_equal(c.write_errors, 1);
	assert_int_equal(c.written[LOG_INFO], 1);
	log_close(log);
}

static void test_stderr_default(void **state)
{
	struct fx *fx = *state;
	int saved = dup(2), fd = open(fx->path, O_WRONLY | O_APPEND);
	struct log *log;
	char *all;

	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	assert_int_equal(log_open(&(struct log_config){ LOG_INFO, LOG_FORMAT_AUTO, NULL, -1 }, &log),
			 0);
	assert_int_equal(log_fd(log), 2);
	log_msg(log, LOG_WARN, NULL, "to stderr");
	log_close(log); /* must not close stderr */
	assert_true(fcntl(2, F_GETFD) >= 0);
	dup2(saved, 2);
	close(saved);
	all = slurp(fx->path);
	assert_true(all[0] == '{'); /* not a terminal: JSON */
	assert_non_null(strstr(all, "to stderr"));
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nested_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_remove_and_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_keys_still_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamped_fields_and_seq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_msg_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ignore_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_secrets_redacted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_and_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errno_and_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_null_event, setup, teardown),
		cmocka_unit_test(test_parse),
		cmocka_unit_test_setup_teardown(test_open_failures, setup, teardown),
		cmocka_unit_test(test_fd_destination_and_epipe),
		cmocka_unit_test_setup_teardown(test_stderr_default, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
