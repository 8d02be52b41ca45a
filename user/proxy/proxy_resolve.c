// SPDX-License-Identifier: MIT
/*
 * Name resolution off the event loop: getaddrinfo blocks for seconds on a
 * slow DNS server, so a few worker threads run it and hand results back
 * through a done list plus a write to the loop's eventfd. Workers start when
 * a job finds none idle, not with the proxy: a command that never asks the
 * proxy for a name (most do not) pays no thread at its start or its end.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proxy_resolve.h"

#define RESOLVER_MAX_THREADS 16

struct proxy_resolver {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct proxy_rjob *queue, **queue_tail;
	struct proxy_rjob *done;
	bool stop;
	proxy_resolve_fn fn;
	void *ctx;
	int notify_fd;
	unsigned nthreads, max_threads;
	unsigned idle;	 /* workers waiting for a job */
	unsigned queued; /* jobs no worker took yet */
	pthread_t threads[RESOLVER_MAX_THREADS];
};

int proxy_resolve_getaddrinfo(void *ctx, const char *host, struct sockaddr_storage *out,
			      size_t max, size_t *n)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	int rc;

	*n = 0;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc)
		return rc == EAI_NONAME || rc == EAI_NODATA ? -ENOENT :
		       rc == EAI_AGAIN ? -EAGAIN : rc == EAI_MEMORY ? -ENOMEM : -EIO;
	for (ai = res; ai && *n < max; ai = ai->ai_next) {
		bool dup = false;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		for (size_t i = 0; i < *n && !dup; i++)
			dup = !memcmp(&out[i], ai->ai_addr, ai->ai_addrlen);
		if (dup)
			continue;
		memset(&out[*n], 0, sizeof(out[*n]));
		memcpy(&out[*n], ai->ai_addr, ai->ai_addrlen);
		(*n)++;
	}
	freeaddrinfo(res);
	return *n ? 0 : -ENOENT;
}

static void *worker(void *arg)
{
	struct proxy_resolver *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct proxy_rjob *job;
		uint64_t one = 1;

		r->idle++;
		while (!r->stop && !r->queue)
			pthread_cond_wait(&r->cond, &r->lock);
		r->idle--;
		if (r->stop)
			break;
		job = r->queue;
		r->queue = job->next;
		r->queued--;
		if (!r->queue)
			r->queue_tail = &r->queue;
		pthread_mutex_unlock(&r->lock);

		/* job->owner belongs to the loop thread; only results are written here. */
		job->err = r->fn(r->ctx, job->host, job->addrs, PROXY_MAX_ADDRS, &job->n);
		if (job->n > PROXY_MAX_ADDRS)
			job->n = PROXY_MAX_ADDRS;
		if (!job->err && !job->n)
			job->err = -ENOENT;

		pthread_mutex_lock(&r->lock);
		job->next = r->done;
		r->done = job;
		if (write(r->notify_fd, &one, sizeof(one)) < 0) {
			/* eventfd counter cannot overflow here; nothing to do. */
		}
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int proxy_resolver_start(struct proxy_resolver **out, unsigned nthreads, proxy_resolve_fn fn,
			 void *ctx, int notify_fd)
{
	struct proxy_resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (!nthreads)
		nthreads = 1;
	if (nthreads > RESOLVER_MAX_THREADS)
		nthreads = RESOLVER_MAX_THREADS;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->queue_tail = &r->queue;
	r->fn = fn ? fn : proxy_resolve_getaddrinfo;
	r->ctx = ctx;
	r->notify_fd = notify_fd;
	r->max_threads = nthreads;
	*out = r;
	return 0;
}

/* Called locked: one more worker, when every one is busy and there is room. */
static int add_worker(struct proxy_resolver *r)
{
	sigset_t all, old;
	int err;

	if (r->queued <= r->idle || r->nthreads >= r->max_threads)
		return 0;
	/* Workers must never take the supervisor's signals: they start with all blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&r->threads[r->nthreads], NULL, worker, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		r->nthreads++;
	return err;
}

void proxy_resolver_submit(struct proxy_resolver *r, struct proxy_rjob *job)
{
	uint64_t one = 1;

	job->next = NULL;
	pthread_mutex_lock(&r->lock);
	*r->queue_tail = job;
	r->queue_tail = &job->next;
	r->queued++;
	if (add_worker(r) && !r->nthreads) {
		/* No worker at all and none can start: the job fails now rather than wait for ever. */
		r->queue = NULL;
		r->queue_tail = &r->queue;
		r->queued = 0;
		job->err = -EAGAIN;
		job->n = 0;
		job->next = r->done;
		r->done = job;
		if (write(r->notify_fd, &one, sizeof(one)) < 0) {
			/* eventfd counter cannot overflow here; nothing to do. */
		}
	}
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

struct proxy_rjob *proxy_resolver_take_done(struct proxy_resolver *r)
{
	struct proxy_rjob *list;

	pthread_mutex_lock(&r->lock);
	list = r->done;
	r->done = NULL;
	pthread_mutex_unlock(&r->lock);
	return list;
}

static void free_list(struct proxy_rjob *j)
{
	while (j) {
		struct proxy_rjob *next = j->next;

		free(j);
		j = next;
	}
}

unsigned proxy_resolver_threads(struct proxy_resolver *r)
{
	unsigned n;

	pthread_mutex_lock(&r->lock);
	n = r->nthreads;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void proxy_resolver_stop(struct proxy_resolver *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	/* A worker inside getaddrinfo finishes its lookup first (bounded by resolv.conf). */
	for (unsigned i = 0; i < r->nthreads; i++)
		pthread_join(r->threads[i], NULL);
	free_list(r->queue);
	free_list(r->done);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}
