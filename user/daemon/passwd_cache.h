/* SPDX-License-Identifier: MIT */
/*
 * Does a peer's uid have a passwd entry, and what is its name? Asked at
 * every accept, so the answers are kept (positive and negative) for
 * PASSWD_CACHE_TTL_S in a table of PASSWD_CACHE_SIZE, and the lookups the
 * daemon makes (NSS: a file, or LDAP/sssd over the network) are bounded to
 * PASSWD_LOOKUPS_PER_S a second: a flood of distinct uids (a subordinate uid
 * range) cannot turn the accept loop into an NSS storm. A full table evicts
 * a uid without an entry before a user's.
 */
#ifndef BPFBOX_DAEMON_PASSWD_CACHE_H
#define BPFBOX_DAEMON_PASSWD_CACHE_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#define PASSWD_CACHE_SIZE 128
#define PASSWD_CACHE_TTL_S 60
#define PASSWD_LOOKUPS_PER_S 32

struct passwd_cached {
	bool used, exists;
	uid_t uid;
	time_t at;
	char name[33];
};

struct passwd_cache {
	struct passwd_cached e[PASSWD_CACHE_SIZE];
	time_t second; /* the second the lookup budget counts ... */
	unsigned lookups; /* ... and the lookups made in it */
	unsigned long total; /* every lookup made, for the tests */
};

void passwd_cache_init(struct passwd_cache *c);
/*
 * 1: uid has a passwd entry (*name is its name, valid until the next call),
 * 0: it has none, -EAGAIN: unknown and this second's lookups are spent,
 * another -errno: the lookup failed (nothing cached).
 */
int passwd_cache_lookup(struct passwd_cache *c, uid_t uid, time_t now, const char **name);
/* The cached name, or "?" (no lookup: for log lines). */
const char *passwd_cache_name(const struct passwd_cache *c, uid_t uid);

#endif
