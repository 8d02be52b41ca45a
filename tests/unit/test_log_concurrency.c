// SPDX-License-Identifier: MIT
/*
 * Many writers, one file: threads sharing a log, processes each with their
 * own log, children inheriting one. Every line must come out whole and
 * parse, and each writer's bpfbox.seq must rise in file order.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "log/log.h"

#define WRITERS 8
#define LINES 2000
/* Long enough that a line spans several pages of a pipe and many cache lines. */
#define PAYLOAD 1500

struct fx {
	char dir[64];
	char path[128];
	char payload[PAYLOAD + 1];
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "%s/bpfbox-log-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/shared.ndjson", fx->dir);
	memset(fx->payload, 'x', PAYLOAD);
	fx->payload[0] = '/';
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	const char *src = getenv("BPFBOX_SRCDIR") ? getenv("BPFBOX_SRCDIR") : ".";
	char cmd[1024];
	int rc;

	/* The built-in validator only: the optional cross-check is slow on 16000 lines. */
	snprintf(cmd, sizeof(cmd),
		 "BPFBOX_NO_JSONSCHEMA=1 python3 %s/tests/tools/validate-events.py --check-seq '%s'",
		 src, fx->path);
	rc = system(cmd) ? -1 : 0;
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return rc;
}

static struct log *open_log(struct fx *fx)
{
	struct log_config cfg = { LOG_INFO, LOG_FORMAT_JSON, fx->path, -1 };
	struct log *log = NULL;

	assert_int_equal(log_open(&cfg, &log), 0);
	return log;
}

static void emit_one(struct log *log, const char *payload, int writer, int i)
{
	struct log_event *ev =
		log_event_new(LOG_WARN, "event", "file", "access,denied", "open-read", "failure");

	log_event_set_str(ev, "file.path", payload);
	log_event_set_int(ev, "process.pid", writer + 1);
	log_event_set_int(ev, "process.thread.id", i);
	log_event_message(ev, "denied open-read by writer %d, line %d", writer, i);
	log_event_violation(ev);
	assert_int_equal(log_emit(log, ev), 0);
}

/* Parses every line; tallies lines per writer (process.pid - 1) and checks seq per bpfbox writer. */
static void check_file(struct fx *fx, size_t want_lines, int writers, int per_writer,
		       bool consecutive_seq)
{
	FILE *f = fopen(fx->path, "r");
	char *line = NULL;
	size_t cap = 0, lines = 0;
	ssize_t n;
	int count[WRITERS] = { 0 };
	struct {
		double key[2];
		double seq;
	} last[64];
	int n_last = 0;

	assert_non_null(f);
	while ((n = getline(&line, &cap, f)) > 0) {
		cJSON *j, *bb, *sb;
		double key[2], seq;
		int w, k;

		assert_int_equal(line[n - 1], '\n');
		j = cJSON_Parse(line);
		if (!j)
			fail_msg("line %zu does not parse: %.120s", lines + 1, line);
		w = (int)cJSON_GetObjectItem(cJSON_GetObjectItem(j, "process"), "pid")->valuedouble - 1;
		assert_true(w >= 0 && w < writers);
		count[w]++;
		assert_int_equal(strlen(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "file"), "path")
						->valuestring),
				 PAYLOAD);
		bb = cJSON_GetObjectItem(j, "bpfbox");
		sb = cJSON_GetObjectItem(cJSON_GetObjectItem(bb, "sandbox"), "id");
		key[0] = cJSON_GetObjectItem(bb, "pid")->valuedouble;
		key[1] = sb ? atof(sb->valuestring) : 0;
		seq = cJSON_GetObjectItem(bb, "seq")->valuedouble;
		for (k = 0; k < n_last; k++)
			if (last[k].key[0] == key[0] && last[k].key[1] == key[1])
				break;
		if (k == n_last) {
			assert_true(n_last < 64);
			last[n_last].key[0] = key[0];
			last[n_last].key[1] = key[1];
			last[n_last++].seq = 0;
		}
		if (consecutive_seq)
			assert_true(seq == last[k].seq + 1);
		else
			assert_true(seq > last[k].seq);
		last[k].seq = seq;
		cJSON_Delete(j);
		lines++;
	}
	free(line);
	fclose(f);
	assert_int_equal(lines, want_lines);
	for (int w = 0; w < writers; w++)
		assert_int_equal(count[w], per_writer);
}

struct thread_arg {
	struct log *log;
	const char *payload;
	int writer;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	for (int i = 0; i < LINES; i++) {
		emit_one(a->log, a->payload, a->writer, i);
		if (i % 500 == 0)
			(void)log_count(a->log, LOG_WARN); /* readers contend too */
	}
	return NULL;
}

static void test_threads_share_a_log(void **state)
{
	struct fx *fx = *state;
	struct log *log = open_log(fx);
	pthread_t t[WRITERS];
	struct thread_arg args[WRITERS];
	struct log_counts c;

	for (int i = 0; i < WRITERS; i++) {
		args[i] = (struct thread_arg){ log, fx->payload, i };
		assert_int_equal(pthread_create(&t[i], NULL, thread_main, &args[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	log_get_counts(log, &c);
	assert_int_equal(c.written[LOG_WARN], WRITERS * LINES);
	assert_int_equal(c.violations, WRITERS * LINES);
	log_close(log);
	/* One log: seq is 1..16000 in file order, since the lock covers the write. */
	check_file(fx, WRITERS * LINES, WRITERS, LINES, true);
}

static void wait_children(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void test_processes_append_to_one_file(void **state)
{
	struct fx *fx = *state;
	pid_t pids[WRITERS];

	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			/* Like separate sandboxes: each opens the file itself. */
			struct log *log = open_log(fx);
			char id[16];

			snprintf(id, sizeof(id), "%d", w + 1);
			log_set_sandbox(log, id, "writer");
			for (int i = 0; i < LINES; i++)
				emit_one(log, fx->payload, w, i);
			log_close(log);
			_exit(0);
		}
	}
	wait_children(pids, WRITERS);
	check_file(fx, WRITERS * LINES, WRITERS, LINES, true);
}

static void test_children_inherit_a_log(void **state)
{
	struct fx *fx = *state;
	struct log *log = open_log(fx);
	pid_t pids[WRITERS];

	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			/* One open file description, shared offset: O_APPEND still wins. */
			log_child_after_fork(log);
			for (int i = 0; i < LINES / 4; i++)
				emit_one(log, fx->payload, w, i);
			_exit(0);
		}
	}
	wait_children(pids, WRITERS);
	log_close(log);
	check_file(fx, WRITERS * (LINES / 4), WRITERS, LINES / 4, true);
}

struct spammer {
	struct log *log;
	const char *payload;
	atomic_int stop;
};

static void *spam(void *p)
{
	struct spammer *s = p;

	while (!atomic_load(&s->stop))
		emit_one(s->log, s->payload, 0, 0);
	return NULL;
}

/* fork() while another thread may hold the lock: the child must not hang. */
static void test_fork_while_locked(void **state)
{
	struct fx *fx = *state;
	struct spammer s = { open_log(fx), fx->payload, 0 };
	pid_t pids[20];
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, spam, &s), 0);
	for (int i = 0; i < 20; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			alarm(10); /* a deadlock fails the test instead of hanging it */
			log_child_after_fork(s.log);
			emit_one(s.log, fx->payload, 1, i);
			_exit(0);
		}
	}
	wait_children(pids, 20);
	atomic_store(&s.stop, 1);
	pthread_join(t, NULL);
	log_close(s.log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_threads_share_a_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_processes_append_to_one_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_children_inherit_a_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_while_locked, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
