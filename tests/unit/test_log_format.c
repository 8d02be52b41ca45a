// SPDX-License-Identifier: MIT
/* Hostile strings: JSON escaping, UTF-8 replacement, truncation, and the text line. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
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
#include "log/log_utf8.h"

#define FFFD "\xef\xbf\xbd"
#define ELLIPSIS "\xe2\x80\xa6"

struct fx {
	char dir[64];
	char path[128];
	struct log *log;
	bool json;
};

static const char *srcdir(void)
{
	return getenv("BPFBOX_SRCDIR") ? getenv("BPFBOX_SRCDIR") : ".";
}

static int open_fx(void **state, enum log_format format)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct log_config cfg = { .min_level = LOG_DEBUG, .format = format, .fd = -1 };

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "%s/bpfbox-log-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/events", fx->dir);
	cfg.file_path = fx->path;
	fx->json = format == LOG_FORMAT_JSON;
	if (log_open(&cfg, &fx->log))
		return -1;
	*state = fx;
	return 0;
}

static int setup_json(void **state)
{
	return open_fx(state, LOG_FORMAT_JSON);
}

static int setup_text(void **state)
{
	return open_fx(state, LOG_FORMAT_TEXT);
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[1024];
	int rc = 0;

	log_close(fx->log);
	if (fx->json) {
		snprintf(cmd, sizeof(cmd), "python3 %s/tests/tools/validate-events.py --check-seq '%s'",
			 srcdir(), fx->path);
		rc = system(cmd) ? -1 : 0;
	}
	unlink(fx->path);
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

static void assert_sanitized(const char *in, size_t len, const char *want)
{
	bool cut = true;
	char *out = log_utf8_sanitize(in, len, &cut);

	assert_non_null(out);
	assert_string_equal(out, want);
	assert_false(cut);
	free(out);
}

static void test_utf8_cases(void **state)
{
	(void)state;
	assert_sanitized("plain/ascii", 11, "plain/ascii");
	assert_sanitized("caf\xc3\xa9 \xf0\x9f\x98\x80", 10, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	assert_sanitized("a\xff" "b", 3, "a" FFFD "b");
	assert_sanitized("\xc3\x28", 2, FFFD "(");
	assert_sanitized("\xe2\x82", 2, FFFD); /* one maximal subpart */
	assert_sanitized("\xf0\x9f\x98", 3, FFFD);
	assert_sanitized("\xe0\x80\xaf", 3, FFFD FFFD FFFD); /* overlong */
	assert_sanitized("\xc0\xaf", 2, FFFD FFFD); /* overlong '/' */
	assert_sanitized("\xed\xa0\x80", 3, FFFD FFFD FFFD); /* surrogate */
	assert_sanitized("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD); /* above U+10FFFF */
	assert_sanitized("\x80\xbf", 2, FFFD FFFD); /* lone continuations */
	assert_sanitized("/tmp/a\xff" "b\xc3", 9, "/tmp/a" FFFD "b" FFFD);
	assert_sanitized("stop\0here", 9, "stop"); /* NUL ends a kernel string */
	assert_sanitized("abcdef", 3, "abc"); /* no NUL needed */
}

/* Random bytes against Python's decode(errors="replace"), the documented reference. */
static void test_utf8_matches_python(void **state)
{
	static const unsigned char interesting[] = { 0x41, 0x2f, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
						     0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
						     0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1,
						     0xf3, 0xf4, 0xf5, 0xf8, 0xfe, 0xff };
	char dir[64], data[128], script[128], cmd[512];
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/bpfbox-utf8-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(data, sizeof(data), "%s/cases", dir);
	snprintf(script, sizeof(script), "%s/check.py", dir);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs("import sys\n"
	      "bad = 0\n"
	      "for n, line in enumerate(open(sys.argv[1]), 1):\n"
	      "    a, b = (line.split() + [''])[:2]\n"
	      "    want = bytes.fromhex(a).decode('utf-8', 'replace').encode()\n"
	      "    if want != bytes.fromhex(b):\n"
	      "        bad += 1\n"
	      "        print(f'case {n}: {a}: got {b}, want {want.hex()}', file=sys.stderr)\n"
	      "sys.exit(1 if bad else 0)\n",
	      f);
	fclose(f);
	f = fopen(data, "w");
	assert_non_null(f);
	srand(12345);
	for (int i = 0; i < 5000; i++) {
		unsigned char in[24];
		size_t n = (size_t)(rand() % 24) + 1;
		char *out;

		for (size_t k = 0; k < n; k++)
			in[k] = rand() % 3 ? interesting[rand() % sizeof(interesting)] :
					     (unsigned char)(rand() % 255 + 1);
		out = log_utf8_sanitize((const char *)in, n, NULL);
		assert_non_null(out);
		for (size_t k = 0; k < n; k++)
			fprintf(f, "%02x", in[k]);
		fputc(' ', f);
		for (char *p = out; *p; p++)
			fprintf(f, "%02x", (unsigned char)*p);
		fputc('\n', f);
		free(out);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s'", script, data);
	assert_int_equal(system(cmd), 0);
	unlink(data);
	unlink(script);
	rmdir(dir);
}

static void test_truncation(void **state)
{
	size_t n = 20000;
	char *big = malloc(n + 1), *out;
	bool cut = false;

	(void)state;
	/* Four-byte characters: the cut must land on a character boundary. */
	for (size_t i = 0; i < n; i += 4)
		memcpy(big + i, "\xf0\x9f\x98\x80", 4);
	big[n] = '\0';
	out = log_utf8_sanitize(big, n, &cut);
	assert_true(cut);
	assert_true(strlen(out) <= LOG_VALUE_MAX);
	assert_int_equal((strlen(out) - 3) % 4, 0);
	assert_string_equal(out + strlen(out) - 3, ELLIPSIS);
	free(out);

	/* Exactly at the limit is kept whole; one more byte is not. */
	memset(big, 'x', LOG_VALUE_MAX);
	big[LOG_VALUE_MAX] = '\0';
	out = log_utf8_sanitize(big, n, &cut);
	assert_false(cut);
	assert_int_equal(strlen(out), LOG_VALUE_MAX);
	free(out);
	big[LOG_VALUE_MAX - 1] = '\xff'; /* replacement makes it too long */
	out = log_utf8_sanitize(big, n, &cut);
	assert_true(cut);
	assert_true(strlen(out) <= LOG_VALUE_MAX);
	free(out);
	free(big);
}

static void test_truncated_event(void **state)
{
	struct fx *fx = *state;
	char *long_path = malloc(LOG_VALUE_MAX * 2), *argv[11], *all;
	struct log_event *ev;
	cJSON *j;

	memset(long_path, 'p', LOG_VALUE_MAX * 2 - 1);
	long_path[0] = '/';
	long_path[LOG_VALUE_MAX * 2 - 1] = '\0';
	for (int i = 0; i < 10; i++)
		argv[i] = long_path + LOG_VALUE_MAX; /* 16 KiB each */
	argv[10] = NULL;
	ev = log_event_new(LOG_WARN, "event", "file", "access,denied", "open-read", "failure");
	log_event_set_str(ev, "file.path", long_path);
	log_event_set_strv(ev, "process.args", argv);
	log_event_message(ev, "denied open-read of a long path");
	assert_int_equal(log_emit(fx->log, ev), 0);

	all = slurp(fx->path);
	j = cJSON_Parse(all);
	assert_non_null(j);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bpfbox"), "truncated")));
	assert_true(strlen(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "file"), "path")->valuestring) <=
		    LOG_VALUE_MAX);
	/* The array budget (64 KiB) keeps argv from making a megabyte line. */
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "process"),
							   "args")) < 10);
	assert_true(strlen(all) < 6 * LOG_VALUE_MAX);
	cJSON_Delete(j);
	free(all);
	free(long_path);
}

static void test_json_escaping(void **state)
{
	struct fx *fx = *state;
	const char *hostile = "/tmp/evil\n{\"fake\":1}\r\t\\\"\x01\x1b[31mred\x7f\xff\xfe"
			      "\xc2\x9b\xe2\x80\xae.txt";
	const char *want = "/tmp/evil\n{\"fake\":1}\r\t\\\"\x01\x1b[31mred\x7f" FFFD FFFD
			   "\xc2\x9b\xe2\x80\xae.txt";
	struct log_event *ev;
	char *all;
	cJSON *j;

	log_set_sandbox(fx->log, "sb\n2", "sh -c 'touch \"$(printf \"\\n\")\"'\n");
	ev = log_event_new(LOG_WARN, "event", "file", "creation,denied", "create", "failure");
	log_event_set_str(ev, "file.path", hostile);
	log_event_set_str(ev, "process.name", "\x1b]0;pwned\x07");
	log_event_message(ev, "denied create of %s", hostile);
	log_event_violation(ev);
	assert_int_equal(log_emit(fx->log, ev), 0);

	all = slurp(fx->path);
	/* Exactly one line, no raw control byte in it. */
	assert_non_null(strchr(all, '\n'));
	assert_int_equal(strchr(all, '\n') - all + 1, (long)strlen(all));
	for (const unsigned char *p = (const unsigned char *)all; *p != '\n'; p++)
		assert_true(*p >= 0x20);
	j = cJSON_Parse(all);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "file"), "path")->valuestring,
			    want);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "process"), "name")->valuestring,
			    "\x1b]0;pwned\x07");
	assert_null(cJSON_GetObjectItem(j, "fake"));
	cJSON_Delete(j);
	free(all);
}

static void test_default_message(void **state)
{
	struct fx *fx = *state;
	char *all;
	/* A proxy decision without destination would not validate: give one. */
	struct log_event *ev = log_event_new(LOG_INFO, "event", "network", "connection,allowed",
					     "proxy-connect", "success");

	log_event_set_str(ev, "destination.domain", "example.org");
	assert_int_equal(log_emit(fx->log, ev), 0);
	all = slurp(fx->path);
	assert_non_null(strstr(all, "\"message\":\"proxy-connect (success)\""));
	free(all);
}

static void test_text_escape(void **state)
{
	static const char *const cases[][2] = {
		{ "a\nb", "a\\nb" },
		{ "tab\there", "tab\\there" },
		{ "\r", "\\r" },
		{ "\x1b[31mred", "\\x1b[31mred" },
		{ "del\x7f", "del\\x7f" },
		{ "csi\xc2\x9b", "csi\\u009b" },
		{ "rlo\xe2\x80\xae" "cod.exe", "rlo\\u202ecod.exe" },
		{ "lri\xe2\x81\xa6", "lri\\u2066" },
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80" },
		{ "raw\xff", "raw\\xff" },
		{ "back\\slash \"q\"", "back\\slash \"q\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = log_text_escape(cases[i][0]);

		assert_non_null(out);
		assert_string_equal(out, cases[i][1]);
		free(out);
	}
}

/* Any bytes, invalid UTF-8 included (a caller's path printed by policy apply's preview). */
static void test_terminal_text(void **state)
{
	char *out = log_terminal_text("/p/a\x1b[2K\r\xe2\x80\xae" "b\xff c");

	(void)state;
	assert_non_null(out);
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\r'));
	assert_null(strstr(out, "\xe2\x80\xae"));
	assert_null(strchr(out, '\xff'));
	assert_non_null(strstr(out, "/p/a\\x1b[2K\\r\\u202eb"));
	free(out);
}

static struct log_event *refusal(const char *path, const char *comm)
{
	struct log_event *ev =
		log_event_new(LOG_WARN, "event", "file", "access,denied", "open-read", "failure");

	log_event_set_str(ev, "file.path", path);
	log_event_set_int(ev, "process.pid", 123);
	log_event_set_str(ev, "process.name", comm);
	log_event_set_str(ev, "rule.name", "denyRead:/home/u/.ssh");
	log_event_message(ev, "denied open-read of %s", path);
	log_event_violation(ev);
	return ev;
}

static void test_text_lines(void **state)
{
	struct fx *fx = *state;
	struct log_event *ev;
	char *all;

	assert_false(log_is_json(fx->log));
	assert_int_equal(log_emit(fx->log, refusal("/home/u/.ssh/id_rsa", "cat")), 0);
	ev = refusal("/home/u/.bashrc", "node");
	log_event_set_int(ev, "bpfbox.count", 3);
	log_event_audit(ev);
	log_event_message(ev, "would deny open-write of /home/u/.bashrc (audit mode)");
	assert_int_equal(log_emit(fx->log, ev), 0);
	assert_int_equal(log_emit(fx->log, refusal("/x\n\x1b[2J\xe2\x80\xae", "e\x1bvil")), 0);
	log_msg(fx->log, LOG_ERROR, "setup-failed", "cannot attach: %s", "Operation not permitted");
	log_msg(fx->log, LOG_INFO, NULL, "sandbox exited with status 0 after %.1f s", 1.5);

	all = slurp(fx->path);
	assert_string_equal(
		all,
		"bpfbox: WARN denied open-read of /home/u/.ssh/id_rsa [rule denyRead:/home/u/.ssh] [pid 123 cat]\n"
		"bpfbox: WARN would deny open-write of /home/u/.bashrc (audit mode) [rule denyRead:/home/u/.ssh] [pid 123 node] [audit: allowed] [3 times]\n"
		"bpfbox: WARN denied open-read of /x\\n\\x1b[2J\\u202e [rule denyRead:/home/u/.ssh] [pid 123 e\\x1bvil]\n"
		"bpfbox: ERROR cannot attach: Operation not permitted\n"
		"bpfbox: INFO sandbox exited with status 0 after 1.5 s\n");
	free(all);
}

/* AUTO picks text for a terminal: checked on a pseudo-terminal. */
static void test_auto_on_tty(void **state)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
	struct log *log;
	char buf[512] = "";
	ssize_t n;

	(void)state;
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		skip();
		return;
	}
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	assert_int_equal(log_open(&(struct log_config){ LOG_INFO, LOG_FORMAT_AUTO, NULL, slave },
				  &log),
			 0);
	assert_false(log_is_json(log));
	log_msg(log, LOG_WARN, NULL, "on a terminal");
	n = read(master, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	assert_memory_equal(buf, "bpfbox: WARN on a terminal", 26);
	log_close(log);
	/* Forced JSON on the same terminal. */
	assert_int_equal(log_open(&(struct log_config){ LOG_INFO, LOG_FORMAT_JSON, NULL, slave },
				  &log),
			 0);
	assert_true(log_is_json(log));
	log_close(log);
	close(slave);
	close(master);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_cases),
		cmocka_unit_test(test_utf8_matches_python),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test_setup_teardown(test_truncated_event, setup_json, teardown),
		cmocka_unit_test_setup_teardown(test_json_escaping, setup_json, teardown),
		cmocka_unit_test_setup_teardown(test_default_message, setup_json, teardown),
		cmocka_unit_test(test_text_escape),
		cmocka_unit_test(test_terminal_text),
		cmocka_unit_test_setup_teardown(test_text_lines, setup_text, teardown),
		cmocka_unit_test(test_auto_on_tty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
