/* SPDX-License-Identifier: MIT */
/*
 * How many bytes of requests the daemon reads for one uid: a token bucket per
 * uid, READ_BUDGET_RATE bytes a second after a burst of one whole request of
 * the largest size. A user who streams garbage at the socket (4 MiB frames,
 * one after another) would otherwise have root's daemon read, allocate and
 * drop tens of megabytes a second on its behalf, outside that user's own CPU
 * share; past the bucket its connections are not read until it refills (the
 * request deadline still ends them), and other users' requests are read as
 * before. The table is bounded: a uid that finds no slot takes the one whose
 * bucket is fullest (a full bucket holds nothing a fresh one would not).
 *
 * Pure (time is passed in), for the unit tests.
 */
#ifndef BPFBOX_DAEMON_READ_BUDGET_H
#define BPFBOX_DAEMON_READ_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "wire.h"

#define READ_BUDGET_RATE (1u << 20) /* bytes a second, per uid */
#define READ_BUDGET_BURST ((unsigned long long)WIRE_MAX_REQUEST + WIRE_HEADER_LEN)
#define READ_BUDGET_UIDS 64 /* as many as the connections in flight */

struct read_budget_slot {
	bool used;
	uid_t uid;
	unsigned long long tokens; /* bytes it may read now */
	long long at_ms; /* when tokens was last brought up to date */
};

struct read_budget {
	struct read_budget_slot uids[READ_BUDGET_UIDS];
};

/* The bytes uid's requests may be read for at now_ms (0: wait for the refill). */
unsigned long long read_budget_left(struct read_budget *b, uid_t uid, long long now_ms);
/* n bytes were read for uid (after read_budget_left at the same time). */
void read_budget_spend(struct read_budget *b, uid_t uid, unsigned long long n);

#endif
