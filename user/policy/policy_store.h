/* SPDX-License-Identifier: MIT */
/*
 * The administrator's policy and its kept versions (`bpfbox policy apply`,
 * `history`, `rollback`): each version's bytes and who applied it, when and
 * why, in a root-only directory; the policy file replaced atomically.
 */
#ifndef BPFBOX_POLICY_STORE_H
#define BPFBOX_POLICY_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#define POLICY_HISTORY_DIR "/var/lib/bpfbox/policy-history"
/* Versions kept; the oldest beyond it are removed when one is added. */
#define POLICY_HISTORY_KEEP 100
#define POLICY_MESSAGE_MAX 256

struct policy_version {
	unsigned number;
	char sha256[65];
	char applied_at[32];		/* RFC 3339, UTC, seconds */
	long long uid;			/* who ran the command */
	long long login_uid;		/* the kernel's login uid (survives sudo); -1: none */
	char login_name[64];		/* its name, or "" */
	char source[16];		/* "apply", "rollback", "found" (the file before the first apply) */
	char message[POLICY_MESSAGE_MAX];
};

/*
 * The history directory (with create, made 0700 when missing, its parent
 * too; without, -ENOENT), opened without following a link and locked for this
 * process until it is closed. Refused (-EPERM) when it is not the caller's
 * own or others may write it. Returns a directory descriptor or a negative errno.
 */
int policy_store_open(const char *dir, bool create);
/* Every kept version, oldest first. Returns 0 or a negative errno. */
int policy_store_list(int dirfd, struct policy_version **out, size_t *n);
/* Version number's bytes (at most the policy's size limit). */
int policy_store_read(int dirfd, unsigned number, char **text, size_t *len);
/*
 * Keeps text as the next version with meta (its number and sha256 filled in);
 * then removes the oldest beyond POLICY_HISTORY_KEEP. Returns 0 or a negative errno.
 */
int policy_store_add(int dirfd, const char *text, size_t len, struct policy_version *meta);
/*
 * Replaces target with text: a new file beside it (0644), synced, renamed over
 * it, the directory synced; a reader sees the old file or the new one whole.
 */
int policy_store_replace(const char *target, const char *text, size_t len);
/* A version's metadata as the history keeps it (and `history --json` prints it); NULL: no memory. */
cJSON *policy_version_json(const struct policy_version *meta);
/* Who runs this command: uid, the kernel's login uid and its name; now, in UTC. */
void policy_store_who(struct policy_version *meta);

#endif
