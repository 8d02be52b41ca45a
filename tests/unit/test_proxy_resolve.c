// SPDX-License-Identifier: MIT
/*
 * The proxy's resolver pool (issue 35: nothing on the start path that can
 * wait): no worker until a name is asked, one more only while every worker
 * is busy, never more than the bound, every job answered through the done
 * list and the eventfd, and stop joins whatever started. The lookups are a
 * stand-in that blocks until the test releases it, so "busy" is certain.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "proxy/proxy_resolve.h"

#define WAIT_MS 5000

/* Lookups block until released; started counts those under way. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned started, released;
};

static struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

static int gated_lookup(void *ctx, const char *host, struct sockaddr_storage *out, size_t max, size_t *n)
{
	struct gate *g = ctx;

	pthread_mutex_lock(&g->lock);
	g->started++;
	pthread_cond_broadcast(&g->cond);
	while (!g->released)
		pthread_cond_wait(&g->cond, &g->lock);
	g->released--;
	pthread_mutex_unlock(&g->lock);
	if (!strcmp(host, "missing.test"))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->ss_family = AF_INET;
	*n = max ? 1 : 0;
	return 0;
}

static void gate_release(struct gate *g, unsigned k)
{
	pthread_mutex_lock(&g->lock);
	g->released += k;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/* True once `want` lookups are under way (bounded wait). */
static int gate_wait_started(struct gate *g, unsigned want)
{
	struct timespec dl;
	int ok;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&g->lock);
	while (g->started < want)
		if (pthread_cond_timedwait(&g->cond, &g->lock, &dl) == ETIMEDOUT)
			break;
	ok = g->started >= want;
	pthread_mutex_unlock(&g->lock);
	return ok;
}

static struct proxy_rjob *job_for(const char *host)
{
	struct proxy_rjob *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	snprintf(j->host, sizeof(j->host), "%s", host);
	return j;
}

/* Collects done jobs until `want` came back (bounded); returns how many, counting errors in *errs. */
static unsigned collect(struct proxy_resolver *r, int efd, unsigned want, unsigned *errs)
{
	unsigned got = 0;

	*errs = 0;
	while (got < want) {
		struct pollfd p = { .fd = efd, .events = POLLIN };
		uint64_t v;

		if (poll(&p, 1, WAIT_MS) != 1)
			break;
		if (read(efd, &v, sizeof(v)) < 0)
			break;
		for (struct proxy_rjob *j = proxy_resolver_take_done(r), *next; j; j = next) {
			next = j->next;
			got++;
			*errs += j->err != 0;
			free(j);
		}
	}
	return got;
}

static void test_no_worker_until_asked(void **state)
{
	struct proxy_resolver *r = NULL;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	unsigned errs;

	(void)state;
	gate.started = gate.released = 0;
	assert_true(efd >= 0);
	assert_int_equal(proxy_resolver_start(&r, 4, gated_lookup, &gate, efd), 0);
	assert_int_equal(proxy_resolver_threads(r), 0);
	proxy_resolver_submit(r, job_for("a.test"));
	assert_true(gate_wait_started(&gate, 1));
	assert_int_equal(proxy_resolver_threads(r), 1);
	gate_release(&gate, 1);
	assert_int_equal(collect(r, efd, 1, &errs), 1);
	assert_int_equal(errs, 0);
	/* The idle worker takes the next job: no second thread. */
	proxy_resolver_submit(r, job_for("missing.test"));
	assert_true(gate_wait_started(&gate, 2));
	assert_int_equal(proxy_resolver_threads(r), 1);
	gate_release(&gate, 1);
	assert_int_equal(collect(r, efd, 1, &errs), 1);
	assert_int_equal(errs, 1);
	proxy_resolver_stop(r);
	close(efd);
}

static void test_grows_to_the_bound_and_answers_all(void **state)
{
	struct proxy_resolver *r = NULL;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	unsigned errs;

	(void)state;
	gate.started = gate.released = 0;
	assert_true(efd >= 0);
	assert_int_equal(proxy_resolver_start(&r, 3, gated_lookup, &gate, efd), 0);
	for (int i = 0; i < 7; i++)
		proxy_resolver_submit(r, job_for("busy.test"));
	/* Three lookups under way, all blocked: the bound, and the other four wait in the queue. */
	assert_true(gate_wait_started(&gate, 3));
	usleep(100 * 1000);
	assert_int_equal(proxy_resolver_threads(r), 3);
	pthread_mutex_lock(&gate.lock);
	assert_int_equal(gate.started, 3);
	pthread_mutex_unlock(&gate.lock);
	gate_release(&gate, 7);
	assert_int_equal(collect(r, efd, 7, &errs), 7);
	assert_int_equal(errs, 0);
	assert_int_equal(proxy_resolver_threads(r), 3);
	proxy_resolver_stop(r);
	close(efd);
}

static void test_stop_with_none_started(void **state)
{
	struct proxy_resolver *r = NULL;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	(void)state;
	assert_int_equal(proxy_resolver_start(&r, 4, gated_lookup, &gate, efd), 0);
	proxy_resolver_stop(r);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_worker_until_asked),
		cmocka_unit_test(test_grows_to_the_bound_and_answers_all),
		cmocka_unit_test(test_stop_with_none_started),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
