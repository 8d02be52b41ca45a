/* SPDX-License-Identifier: MIT */
/* Name resolution off the loop thread. */
#ifndef BPFBOX_PROXY_RESOLVE_H
#define BPFBOX_PROXY_RESOLVE_H

#include <stddef.h>
#include <sys/socket.h>

#include "proxy.h"

/* proxy_resolve.c: a small thread pool so getaddrinfo never blocks the loop. */
struct proxy_rjob {
	struct proxy_rjob *next;
	void *owner;			/* loop thread only; NULL once the client is gone */
	char host[PROXY_HOST_MAX];
	int err;
	size_t n;
	struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
};
struct proxy_resolver;
int proxy_resolver_start(struct proxy_resolver **out, unsigned nthreads, proxy_resolve_fn fn,
			 void *ctx, int notify_fd);
void proxy_resolver_submit(struct proxy_resolver *r, struct proxy_rjob *job);
struct proxy_rjob *proxy_resolver_take_done(struct proxy_resolver *r);
void proxy_resolver_stop(struct proxy_resolver *r);
/* Workers started so far: none until a job finds none idle, at most nthreads. */
unsigned proxy_resolver_threads(struct proxy_resolver *r);
int proxy_resolve_getaddrinfo(void *ctx, const char *host, struct sockaddr_storage *out,
			      size_t max, size_t *n);

#endif
