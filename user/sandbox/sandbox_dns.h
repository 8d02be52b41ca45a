/* SPDX-License-Identifier: MIT */
/* The sandbox's own DNS resolver, deciding names with its policy and reporting to its log. */
#ifndef BPFBOX_SANDBOX_DNS_H
#define BPFBOX_SANDBOX_DNS_H

#include <stdint.h>
#include <time.h>

#include "dns/dns_server.h"
#include "lib/errmsg.h"
#include "log/log.h"
#include "policy/policy.h"
#include "sandbox/sandbox_learned.h"

struct sandbox_dns {
	struct dns_server *server;
	const struct policy *policy;
	struct log *log;
	struct sandbox_learned *learned; /* the answers' addresses go there before the client sees them */
	unsigned short port4, port6; /* where the kernel sends the sandbox's port-53 traffic */
	int peers_fd; /* dns_peers: who sent each query, as the kernel filed it */
	uint64_t sandbox;
	unsigned long long unlogged_refusals; /* addresses not learned since the last line saying so */
	time_t refusal_logged; /* when that line was written (0: never) */
	/* The query lines' budget (a datagram each must not make a line each): tokens, and what was held. */
	double line_tokens;
	long long line_refilled_ms;
	unsigned long long held_denied, held_answered;
};

int sandbox_dns_start(struct sandbox_dns *sd, const struct policy *p, struct log *log,
		      struct sandbox_learned *learned, int peers_fd, uint64_t sandbox, struct errmsg *em);
/*
 * Live policy (issue 32): the resolver decides from p from now on, each
 * query from one policy, and its answer cache is emptied. Any thread; the
 * caller keeps the old policy until the run ends (rules and reasons of
 * events point into it).
 */
void sandbox_dns_set_policy(struct sandbox_dns *sd, const struct policy *p);
/* Stops the resolver and writes the query lines it held back; again, nothing. */
void sandbox_dns_stop(struct sandbox_dns *sd);

#endif
