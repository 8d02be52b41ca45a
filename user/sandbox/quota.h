/* SPDX-License-Identifier: MIT */
/*
 * Shares of the host-wide maps. Every sandbox on the host writes into the
 * same rule maps (inode_rules and name_rules) and the same learned map, so
 * each sandbox and each uid may hold at most a bounded number of entries,
 * and the uids other than 0 together leave one sandbox's share free for
 * root. A sandbox reserves before it writes: the ledger is the pinned
 * quotas map (one entry per sandbox: its uid and what it reserved), read and
 * updated under an exclusive lock on /run/bpfbox/quota.lock, so launchers in
 * any process count each other exactly. The entry goes with
 * sandbox_maps_remove, on every exit path and in gc after a crash.
 */
#ifndef BPFBOX_QUOTA_H
#define BPFBOX_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "bpf_state.h"
#include "lib/errmsg.h"

enum quota_kind {
	QUOTA_RULES, /* inode_rules and name_rules entries together */
	QUOTA_LEARNED, /* learned entries (addresses) */
};

struct quota_limits {
	uint32_t rules; /* per sandbox */
	uint32_t user_rules; /* per uid, all its sandboxes together */
	uint32_t learned;
	uint32_t user_learned;
	uint32_t learned_min_ttl_s; /* an answer's addresses stay learned at least this long */
	const char *option; /* where the administrator sets them, for messages */
};

#define QUOTA_DEFAULT_RULES 8192
#define QUOTA_DEFAULT_USER_RULES 16384
#define QUOTA_DEFAULT_LEARNED 1024
#define QUOTA_DEFAULT_USER_LEARNED 4096
#define QUOTA_DEFAULT_LEARNED_MIN_TTL_S 300

/*
 * A policy's abstract socket names (unix_names) and devices (device_allow)
 * are few: a fixed bound per sandbox, which the daemon's per-user sandbox
 * limit turns into a bound per uid, keeps one user from filling those maps.
 */
#define QUOTA_SANDBOX_UNIX_NAMES 32
#define QUOTA_SANDBOX_DEVICES 32

#define QUOTA_LOCK_PATH BPFBOX_RUN_DIR "/quota.lock"

void quota_limits_default(struct quota_limits *q, const char *option);
/*
 * "rules=N,user-rules=N,learned=N,user-learned=N,learned-min-ttl=S", any
 * subset, over what q holds. Each count is 1 up to its map's size, and a
 * sandbox's share at most its uid's.
 */
int quota_limits_parse(const char *spec, struct quota_limits *q, struct errmsg *em);
/* The limits as quota_limits_parse reads them. */
void quota_limits_format(const struct quota_limits *q, char *buf, size_t len);

/* What the ledger holds of one kind. */
struct quota_usage {
	uint64_t sandbox; /* the sandbox asking */
	uint64_t uid; /* all sandboxes of its uid, the asking one included */
	uint64_t non_root; /* all sandboxes of every uid but 0 */
	uint64_t all;
};

/* The map's size and how much of it the uids other than 0 leave to root. */
uint32_t quota_capacity(enum quota_kind kind);
uint32_t quota_root_reserve(const struct quota_limits *q, enum quota_kind kind);
/*
 * May a sandbox of uid, whose ledger stands at u, reserve need more entries?
 * 0, or -EDQUOT with em naming the limit, the count needed and how the
 * administrator raises it. Pure.
 */
int quota_decide(const struct quota_limits *q, enum quota_kind kind, uint32_t uid, const struct quota_usage *u,
		 uint64_t need, struct errmsg *em);

/* Reserves need more entries of kind for sandbox id of uid, or refuses (quota_decide). */
int quota_reserve(const struct bpf_state *st, const struct quota_limits *q, uint64_t id, uint32_t uid,
		  enum quota_kind kind, uint32_t need, struct errmsg *em);
/* Lowers the sandbox's reservation of kind to what it holds (never raises it). */
void quota_settle(const struct bpf_state *st, uint64_t id, enum quota_kind kind, uint32_t held);
/* Drops the sandbox's ledger entry (sandbox_maps_remove, once its entries are gone). */
void quota_release(const struct bpf_state *st, uint64_t id);

#endif
