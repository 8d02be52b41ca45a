// SPDX-License-Identifier: MIT
/*
 * The schema as a contract: one event of every action in the taxonomy,
 * built through the API, validates; so do the examples in docs/events.md;
 * and the validator rejects what breaks the rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log/log.h"

struct fx {
	char dir[64];
	char path[128];
	struct log *log;
};

static const char *srcdir(void)
{
	return getenv("BPFBOX_SRCDIR") ? getenv("BPFBOX_SRCDIR") : ".";
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct log_config cfg = { LOG_DEBUG, LOG_FORMAT_JSON, NULL, -1 };

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

static int teardown(void **state)
{
	struct fx *fx = *state;

	log_close(fx->log);
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* Exit status of the validator on path (stderr shown unless quiet). */
static int validate(const char *path, bool quiet)
{
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd), "python3 %s/tests/tools/validate-events.py --check-seq '%s'%s",
		 srcdir(), path, quiet ? " 2>/dev/null" : "");
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void proc(struct log_event *ev)
{
	log_event_set_int(ev, "process.pid", 4301);
	log_event_set_int(ev, "process.thread.id", 4302);
	log_event_set_str(ev, "process.name", "tool");
	log_event_set_str(ev, "process.executable", "/usr/bin/tool");
	log_event_set_str(ev, "process.user.id", "1000");
}

static void emit_refusal(struct log *log, const char *category, const char *type,
			 const char *action, bool audit, void (*fields)(struct log_event *))
{
	struct log_event *ev = log_event_new(LOG_WARN, "event", category, type, action, "failure");

	proc(ev);
	log_event_set_str(ev, "rule.name", "test-rule");
	if (fields)
		fields(ev);
	log_event_violation(ev);
	if (audit) {
		log_event_audit(ev);
		log_event_message(ev, "would deny %s (audit mode)", action);
	} else {
		log_event_message(ev, "denied %s", action);
	}
	assert_int_equal(log_emit(log, ev), 0);
}

static void file_fields(struct log_event *ev)
{
	log_event_set_str(ev, "file.path", "/home/u/proj/x");
	log_event_set_str(ev, "file.target_path", "/home/u/proj/y");
	log_event_set_str(ev, "file.mode", "0644");
	log_event_set_str(ev, "file.uid", "0");
	log_event_set_str(ev, "file.gid", "0");
	log_event_set_str(ev, "file.type", "file");
	log_event_set_str(ev, "bpfbox.xattr.name", "security.evil");
	log_event_set_int(ev, "bpfbox.device.major", 7);
	log_event_set_int(ev, "bpfbox.device.minor", 0);
	log_event_set_str(ev, "error.code", "EACCES");
	log_event_set_int(ev, "bpfbox.count", 2);
}

static void process_fields(struct log_event *ev)
{
	log_event_set_int(ev, "bpfbox.target.pid", 1);
	log_event_set_int(ev, "bpfbox.bpf.cmd", 5);
	log_event_set_int(ev, "bpfbox.signal.number", 19);
	log_event_set_str(ev, "bpfbox.signal.name", "SIGSTOP");
	log_event_set_int(ev, "bpfbox.ioctl.cmd", 0x5412);
	log_event_set_str(ev, "bpfbox.ioctl.name", "TIOCSTI");
	log_event_set_str(ev, "user.id", "1000");
	log_event_set_str(ev, "user.name", "alice");
	log_event_set_str(ev, "file.path", "/mnt");
}

static void net_fields(struct log_event *ev)
{
	log_event_set_str(ev, "destination.address", "2001:db8::1");
	log_event_set_str(ev, "destination.ip", "2001:db8::1");
	log_event_set_int(ev, "destination.port", 53);
	log_event_set_str(ev, "network.transport", "udp");
	log_event_set_str(ev, "network.type", "ipv6");
}

static void bind_fields(struct log_event *ev)
{
	log_event_set_str(ev, "source.ip", "0.0.0.0");
	log_event_set_int(ev, "source.port", 8080);
	log_event_set_str(ev, "network.transport", "tcp");
}

static void unix_fields(struct log_event *ev)
{
	log_event_set_str(ev, "destination.address", "@/tmp/.X11-unix/X0");
	log_event_set_str(ev, "network.type", "unix");
}

static void proxy_fields(struct log_event *ev)
{
	log_event_set_str(ev, "destination.domain", "example.org");
	log_event_set_int(ev, "destination.port", 443);
	log_event_set_str(ev, "url.full", "http://example.org/x");
	log_event_set_str(ev, "http.request.method", "GET");
	log_event_set_int(ev, "http.response.status_code", 403);
	log_event_set_str(ev, "network.protocol", "http");
}

static void lifecycle(struct log *log)
{
	char *argv[] = { "bash", "-c", "make test", NULL };
	struct log_event *ev;

	ev = log_event_new(LOG_INFO, "event", "process", "start", "sandbox-start", "success");
	log_event_set_int(ev, "process.pid", 100);
	log_event_set_strv(ev, "process.args", argv);
	log_event_set_str(ev, "process.command_line", "bash -c 'make test'");
	log_event_set_str(ev, "bpfbox.policy.digest",
			  "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	log_event_set_int(ev, "bpfbox.proxy.port", 40123);
	log_event_set_bool(ev, "bpfbox.audit", true); /* on start: the sandbox audits */
	log_event_set_str(ev, "bpfbox.audit_scope", "caller");
	log_event_message(ev, "sandbox started");
	assert_int_equal(log_emit(log, ev), 0);
	/* Under exec --ceiling: both policies named. */
	ev = log_event_new(LOG_INFO, "event", "process", "start", "sandbox-start", "success");
	log_event_set_int(ev, "process.pid", 101);
	log_event_set_strv(ev, "process.args", argv);
	log_event_set_str(ev, "bpfbox.policy.path", "/home/u/p.json");
	log_event_set_str(ev, "bpfbox.policy.digest",
			  "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	log_event_set_str(ev, "bpfbox.policy.ceiling.path", "/etc/bpfbox/policy.json");
	log_event_set_str(ev, "bpfbox.policy.ceiling.digest",
			  "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
	log_event_set_int(ev, "bpfbox.proxy.port", 40124);
	log_event_message(ev, "sandbox started under a ceiling");
	assert_int_equal(log_emit(log, ev), 0);
	/* Through the daemon: the caller's name for its file is a claim; a grant cut for its links. */
	ev = log_event_new(LOG_INFO, "event", "process", "start", "sandbox-start", "success");
	log_event_set_int(ev, "process.pid", 102);
	log_event_set_strv(ev, "process.args", argv);
	log_event_set_str(ev, "bpfbox.caller.policy_name", "/etc/bpfbox/policy.json");
	log_event_set_strv(ev, "bpfbox.policy.grant_cuts",
			   (char *[]){ "filesystem.allowWrite[0] \"~/work\" (/home/u/work)", NULL });
	log_event_set_str(ev, "bpfbox.policy.digest",
			  "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	log_event_set_str(ev, "bpfbox.policy.ceiling.path", "/etc/bpfbox/policy.json");
	log_event_set_str(ev, "bpfbox.policy.ceiling.digest",
			  "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
	log_event_set_int(ev, "bpfbox.proxy.port", 40125);
	log_event_message(ev, "sandbox started for a daemon's caller");
	assert_int_equal(log_emit(log, ev), 0);
	for (int status = 0; status < 3; status++) {
		bool ok = status == 0;

		ev = log_event_new(ok ? LOG_INFO : LOG_ERROR, "event", "process", "end",
				   "sandbox-exit", ok ? "success" : "failure");
		log_event_set_int(ev, "process.pid", 100);
		if (status < 2) {
			log_event_set_int(ev, "process.exit_code", status);
		} else {
			log_event_set_int(ev, "bpfbox.exit.signal", 9);
			log_event_set_str(ev, "bpfbox.exit.signal_name", "SIGKILL");
			log_event_set_bool(ev, "bpfbox.exit.core_dumped", false);
			log_event_set_str(ev, "bpfbox.exit.ended_by", "timeout");
		}
		log_event_set_int(ev, "event.duration", 1500000000);
		log_event_set_str(ev, "event.start", "2026-01-01T12:00:00.000000Z");
		log_event_set_str(ev, "event.end", "2026-01-01T12:00:01.500000Z");
		log_event_set_int(ev, "bpfbox.counts.denied", 3);
		log_event_set_int(ev, "bpfbox.counts.audited", 0);
		log_event_set_int(ev, "bpfbox.counts.ignored", 1);
		log_event_set_int(ev, "bpfbox.counts.lost", 0);
		log_event_set_int(ev, "bpfbox.counts.warnings", 4);
		log_event_set_int(ev, "bpfbox.counts.errors", 0);
		log_event_message(ev, "sandbox exited (%d)", status);
		assert_int_equal(log_emit(log, ev), 0);
	}
}

static void test_every_action_validates(void **state)
{
	static const char *const file_ops[][2] = {
		{ "open-read", "access,denied" },    { "exec", "access,denied" },
		{ "open-write", "change,denied" },   { "truncate", "change,denied" },
		{ "rename", "change,denied" },	     { "chmod", "change,denied" },
		{ "chown", "change,denied" },	     { "setxattr", "change,denied" },
		{ "removexattr", "change,denied" },  { "setattr", "change,denied" },
		{ "create", "creation,denied" },     { "mkdir", "creation,denied" },
		{ "mknod", "creation,denied" },	     { "symlink", "creation,denied" },
		{ "link", "creation,denied" },	     { "unlink", "deletion,denied" },
		{ "rmdir", "deletion,denied" },
	};
	static const char *const process_ops[] = { "mount",  "umount", "chroot",       "pivot-root",
						   "ptrace", "bpf",    "userns-create", "signal", "tty-ioctl" };
	struct fx *fx = *state;
	struct log_event *ev;

	log_set_sandbox(fx->log, "sb-all", "bash -c 'make test'");
	lifecycle(fx->log);
	for (int audit = 0; audit < 2; audit++) {
		for (size_t i = 0; i < sizeof(file_ops) / sizeof(file_ops[0]); i++)
			emit_refusal(fx->log, "file", file_ops[i][1], file_ops[i][0], audit,
				     file_fields);
		for (size_t i = 0; i < sizeof(process_ops) / sizeof(process_ops[0]); i++)
			emit_refusal(fx->log, "process", "access,denied", process_ops[i], audit,
				     process_fields);
		emit_refusal(fx->log, "network", "connection,denied", "connect", audit, net_fields);
		emit_refusal(fx->log, "network", "connection,denied", "sendmsg", audit, net_fields);
		emit_refusal(fx->log, "network", "access,denied", "bind", audit, bind_fields);
		emit_refusal(fx->log, "network", "access,denied", "listen", audit, bind_fields);
		emit_refusal(fx->log, "network", "access,denied", "socket-create", audit, NULL);
		emit_refusal(fx->log, "network", "connection,denied", "unix-connect", audit,
			     unix_fields);
		emit_refusal(fx->log, "network", "connection,denied", "unix-send", audit,
			     unix_fields);
		emit_refusal(fx->log, "network", "connection,denied", "proxy-connect", audit,
			     proxy_fields);
		emit_refusal(fx->log, "network", "connection,denied", "proxy-http", audit,
			     proxy_fields);
		emit_refusal(fx->log, "network", "connection,denied", "proxy-socks", audit,
			     proxy_fields);
	}
	/* Folded refusals of several paths need not name one. */
	ev = log_event_new(LOG_WARN, "event", "file", "access,denied", "open-read", "failure");
	log_event_set_str(ev, "rule.name", "denyRead:/home/u/.ssh");
	log_event_set_int(ev, "bpfbox.count", 12);
	log_event_message(ev, "denied open-read 12 more times (identical refusals folded)");
	log_event_violation(ev);
	assert_int_equal(log_emit(fx->log, ev), 0);
	/* A proxy request too malformed to name a destination. */
	ev = log_event_new(LOG_WARN, "event", "network", "connection,denied", "proxy-http",
			   "failure");
	log_event_set_str(ev, "source.address", "127.0.0.1:40000");
	log_event_set_int(ev, "source.bytes", 17);
	log_event_set_int(ev, "destination.bytes", 0);
	log_event_set_str(ev, "rule.name", "malformed");
	log_event_message(ev, "proxy denied a malformed request");
	log_event_violation(ev);
	assert_int_equal(log_emit(fx->log, ev), 0);
	/* Proxy allowed and proxy error. */
	ev = log_event_new(LOG_INFO, "event", "network", "connection,allowed", "proxy-connect",
			   "success");
	proxy_fields(ev);
	log_event_message(ev, "proxy allowed CONNECT example.org:443");
	assert_int_equal(log_emit(fx->log, ev), 0);
	ev = log_event_new(LOG_WARN, "event", "network", "connection,error", "proxy-http",
			   "failure");
	proxy_fields(ev);
	log_event_set_errno(ev, ECONNREFUSED);
	log_event_message(ev, "proxy: upstream example.org:443 refused the connection");
	assert_int_equal(log_emit(fx->log, ev), 0);
	/* Loss and bpfbox's own. */
	ev = log_event_new(LOG_WARN, "event", "process", "info", "events-lost", "unknown");
	log_event_set_int(ev, "bpfbox.lost", 3);
	log_event_message(ev, "lost 3 kernel events");
	assert_int_equal(log_emit(fx->log, ev), 0);
	ev = log_event_new(LOG_ERROR, "event", "configuration", "error", "setup-failed",
			   "failure");
	log_event_set_str(ev, "bpfbox.policy.path", "/p.json");
	log_event_set_errno(ev, EINVAL);
	log_event_message(ev, "bad policy");
	assert_int_equal(log_emit(fx->log, ev), 0);
	/* A live update of the running sandbox's policy. */
	ev = log_event_new(LOG_INFO, "event", "configuration", "change", "policy-updated", "success");
	log_event_set_str(ev, "bpfbox.policy.digest",
			  "sha256:1111111111111111111111111111111111111111111111111111111111111111");
	log_event_set_str(ev, "bpfbox.policy.previous_digest",
			  "sha256:2222222222222222222222222222222222222222222222222222222222222222");
	log_event_set_str(ev, "bpfbox.policy.update.source", "control-fd");
	log_event_set_int(ev, "bpfbox.policy.update.generation", 1);
	log_event_set_strv(ev, "bpfbox.policy.update.added", (char *const[]){ "allowedDomains:example.org", NULL });
	log_event_set_strv(ev, "bpfbox.policy.update.removed", (char *const[]){ "allowRead:/srv/data", NULL });
	log_event_message(ev, "policy updated (control-fd): 1 grant(s) added, 1 removed");
	assert_int_equal(log_emit(fx->log, ev), 0);
	/* The command could not be executed. */
	ev = log_event_new(LOG_ERROR, "event", "process", "start,error", "exec-failed", "failure");
	log_event_set_str(ev, "process.executable", "no-such-command");
	log_event_set_errno(ev, ENOENT);
	log_event_set_int(ev, "process.exit_code", 127);
	log_event_message(ev, "cannot execute no-such-command: No such file or directory");
	assert_int_equal(log_emit(fx->log, ev), 0);
	log_msg(fx->log, LOG_ERROR, "setup-failed", "cannot attach");
	log_msg(fx->log, LOG_ERROR, NULL, "error");
	log_msg(fx->log, LOG_WARN, NULL, "warning");
	log_msg(fx->log, LOG_INFO, NULL, "info");
	log_msg(fx->log, LOG_DEBUG, NULL, "debug");

	assert_int_equal(validate(fx->path, false), 0);
}

static void test_docs_examples_validate(void **state)
{
	struct fx *fx = *state;
	char cmd[1024];
	FILE *f;
	int n = 0, c;

	/* Every one-line JSON example in a ```json block of the docs. */
	snprintf(cmd, sizeof(cmd),
		 "sed -n '/^```json$/,/^```$/p' %s/docs/events.md | grep '^{\"@timestamp\"' > '%s'",
		 srcdir(), fx->path);
	assert_int_equal(system(cmd), 0);
	f = fopen(fx->path, "r");
	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	assert_true(n >= 15);
	assert_int_equal(validate(fx->path, false), 0);
}

/* A valid refusal line that each case breaks in one way. */
static const char base[] =
	"{\"@timestamp\":\"2026-01-01T12:00:00.125456Z\",\"log\":{\"level\":\"warn\"},"
	"\"message\":\"denied open-read of /home/u/.ssh/id_rsa\",\"ecs\":{\"version\":\"8.11.0\"},"
	"\"event\":{\"kind\":\"event\",\"category\":[\"file\"],\"type\":[\"access\",\"denied\"],"
	"\"action\":\"open-read\",\"outcome\":\"failure\"},"
	"\"file\":{\"path\":\"/home/u/.ssh/id_rsa\"},\"host\":{\"name\":\"devbox\"},"
	"\"bpfbox\":{\"pid\":4240,\"seq\":1}}";

static char *replace(const char *from, const char *to)
{
	const char *at = strstr(base, from);
	char *out;

	assert_non_null(at);
	assert_true(asprintf(&out, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from)) > 0);
	return out;
}

static int check_bytes(struct fx *fx, const char *bytes, size_t len)
{
	FILE *f = fopen(fx->path, "wb");

	assert_non_null(f);
	fwrite(bytes, 1, len, f);
	fclose(f);
	return validate(fx->path, true);
}

static int check_line(struct fx *fx, char *line)
{
	char *nl;
	int rc;

	assert_true(asprintf(&nl, "%s\n", line) > 0);
	rc = check_bytes(fx, nl, strlen(nl));
	free(nl);
	free(line);
	return rc;
}

static void test_validator_rejects(void **state)
{
	static const char *const breaks[][2] = {
		{ "\"level\":\"warn\"", "\"level\":\"info\"" }, /* refusal at info */
		{ "\"outcome\":\"failure\"", "\"outcome\":\"success\"" }, /* refusal succeeded */
		{ "\"action\":\"open-read\"", "\"action\":\"open-reed\"" }, /* not in the taxonomy */
		{ "\"kind\":\"event\"", "\"kind\":\"alert\"" },
		{ "\"category\":[\"file\"]", "\"category\":[\"network\"]" }, /* file op, not file */
		{ "\"category\":[\"file\"]", "\"category\":\"file\"" }, /* ECS arrays */
		{ "\"file\":{\"path\":\"/home/u/.ssh/id_rsa\"},", "" }, /* file op without path */
		{ "\"file\":{\"path\":\"/home/u/.ssh/id_rsa\"},\"host\":{\"name\":\"devbox\"},\"bpfbox\":{",
		  "\"host\":{\"name\":\"devbox\"},\"bpfbox\":{\"count\":1," }, /* one refusal: path */
		{ "\"host\":{\"name\":\"devbox\"},", "\"host\":{\"name\":\"devbox\"},\"extra\":1," },
		{ "\"file\":{", "\"file\":{\"owner\":\"u\"," }, /* closed objects */
		{ "\"event\":{\"kind\":\"event\",", "\"event.kind\":\"event\",\"event\":{" }, /* dotted */
		{ "\"seq\":1", "\"seq\":0" },
		{ "\"seq\":1", "\"seq\":1.5" },
		{ "\"seq\":1", "\"seq\":\"1\"" },
		{ ".125456Z", "Z" }, /* microseconds */
		{ "\"message\":\"denied open-read of /home/u/.ssh/id_rsa\"", "\"message\":\"\"" },
		{ "\"pid\":4240,", "\"pid\":4240,\"pid\":4241," }, /* duplicate key */
		{ "\"pid\":4240", "\"pid\":NaN" },
		{ "\"type\":[\"access\",\"denied\"]", "\"type\":[\"access\",\"allowed\"]" }, /* allowed yet failed */
	};
	struct fx *fx = *state;
	char *line;

	/* The control: the unbroken line passes, else the cases prove nothing. */
	assert_int_equal(check_line(fx, strdup(base)), 0);
	for (size_t i = 0; i < sizeof(breaks) / sizeof(breaks[0]); i++) {
		int rc = check_line(fx, replace(breaks[i][0], breaks[i][1]));

		if (rc != 1)
			fail_msg("case %zu (%s -> %s): validator exit %d, want 1", i, breaks[i][0],
				 breaks[i][1], rc);
	}
	/* Audit mode: allowed, success, flagged; failure with the flag is not. */
	line = replace("\"type\":[\"access\",\"denied\"],\"action\":\"open-read\",\"outcome\":\"failure\"",
		       "\"type\":[\"access\",\"allowed\"],\"action\":\"open-read\",\"outcome\":\"success\"");
	{
		char *audit;

		assert_true(asprintf(&audit, "%.*s,\"audit\":true}}", (int)strlen(line) - 2, line) > 0);
		free(line);
		assert_int_equal(check_line(fx, strdup(audit)), 0);
		line = strdup(audit);
		free(audit);
	}
	{
		char *bad = strstr(line, "\"outcome\":\"success\"");

		memcpy(bad, "\"outcome\":\"unknown\"", 19);
		assert_int_equal(check_line(fx, line), 1);
	}
	/* Framing: newline required, strict UTF-8, one object per line, seq order. */
	assert_int_equal(check_bytes(fx, base, strlen(base)), 1);
	line = replace("id_rsa\"}", "id_rsa\xff\"}");
	assert_int_equal(check_line(fx, line), 1);
	assert_int_equal(check_bytes(fx, "[]\n", 3), 1);
	assert_int_equal(check_bytes(fx, "\n", 1), 1);
	{
		char *two;

		assert_true(asprintf(&two, "%s\n%s\n", base, base) > 0);
		assert_int_equal(check_bytes(fx, two, strlen(two)), 1); /* seq 1 twice */
		free(two);
	}
}

/* The exit pairings: status 0 is info/success, anything else error/failure. */
static void test_exit_levels(void **state)
{
	static const char exit_line[] =
		"{\"@timestamp\":\"2026-01-01T12:00:00.125456Z\",\"log\":{\"level\":\"%s\"},"
		"\"message\":\"sandbox exited\",\"ecs\":{\"version\":\"8.11.0\"},"
		"\"event\":{\"kind\":\"event\",\"category\":[\"process\"],\"type\":[\"end\"],"
		"\"action\":\"sandbox-exit\",\"outcome\":\"%s\",\"duration\":5},"
		"\"process\":{\"pid\":9%s},\"host\":{\"name\":\"devbox\"},"
		"\"bpfbox\":{\"pid\":4240,\"seq\":1,\"counts\":{\"denied\":0}%s}}";
	static const struct {
		const char *level, *outcome, *code, *signal;
		int want;
	} cases[] = {
		{ "info", "success", ",\"exit_code\":0", "", 0 },
		{ "error", "success", ",\"exit_code\":0", "", 1 },
		{ "error", "failure", ",\"exit_code\":2", "", 0 },
		{ "info", "success", ",\"exit_code\":2", "", 1 },
		{ "error", "failure", "", ",\"exit\":{\"signal\":9}", 0 },
		{ "info", "success", "", ",\"exit\":{\"signal\":9}", 1 },
		{ "info", "success", "", "", 1 }, /* neither status nor signal */
	};
	struct fx *fx = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *line;

		assert_true(asprintf(&line, exit_line, cases[i].level, cases[i].outcome,
				     cases[i].code, cases[i].signal) > 0);
		if (check_line(fx, line) != cases[i].want)
			fail_msg("exit case %zu: want %d", i, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_action_validates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_docs_examples_validate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_validator_rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_levels, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
