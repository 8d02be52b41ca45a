/* SPDX-License-Identifier: MIT */
/* Kernel refusal records (struct bb_event) turned into log events. */
#ifndef BPFBOX_KEVENT_H
#define BPFBOX_KEVENT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/log.h"

struct sandbox_git;

struct kevent_ctx {
	struct log *log;
	struct sandbox_git *git; /* where BB_EV_GIT records go (NULL: dropped) */
	uint64_t sandbox_id; /* records of another sandbox (a pooled ring's previous owner) are dropped */
	/* Indexed by policy rule id, without BB_RULE_GEN_BIT, which picks the table (even, odd generations). */
	const char *const *rule_names[2];
	size_t n_rules[2];
	bool audit; /* the sandbox runs in audit mode (for the exit-time pending report) */
	unsigned long long received; /* records read from the ring buffer */
	unsigned long long refusals; /* refusals they stand for (folded repeats included) */
	/* The last executable looked up, so a flood from one process costs one readlink. */
	uint32_t exe_pid;
	char exe_path[PATH_MAX];
};

/* ring_buffer__new() callback. */
int kevent_handle(void *ctx, void *data, size_t size);
/* event.action of an operation (BB_OP_*). */
const char *kevent_action(uint32_t op);
const char *kevent_rule_name(const struct kevent_ctx *k, uint32_t rule);
/*
 * Reports refusals folded by the kernel's rate limit and not yet sent (at
 * exit): one line with bpfbox.count = count and bpfbox.folded, since the
 * object was named by an earlier line.
 */
void kevent_report_pending(void *ctx, uint32_t op, uint32_t rule, uint64_t count);

#endif
