/* SPDX-License-Identifier: MIT */
/*
 * The host-wide set of bpfbox programs and maps, pinned under
 * /sys/fs/bpf/bpfbox/<build>/: loaded and attached by the first launcher,
 * reused by every later one.
 */
#ifndef BPFBOX_BPF_STATE_H
#define BPFBOX_BPF_STATE_H

#include <limits.h>
#include <stdbool.h>

#include "lib/errmsg.h"

#define BPFBOX_PIN_ROOT "/sys/fs/bpf/bpfbox"
#define BPFBOX_RUN_DIR "/run/bpfbox"

enum net_prog {
	NET_CONNECT4,
	NET_CONNECT6,
	NET_SENDMSG4,
	NET_SENDMSG6,
	NET_BIND4,
	NET_BIND6,
	NET_POST_BIND4,
	NET_POST_BIND6,
	NET_RECVMSG4,
	NET_RECVMSG6,
	NET_GETPEERNAME4,
	NET_GETPEERNAME6,
	NET_SOCKOPS,
	NET_SOCK_RELEASE,
	NET_PROG_COUNT,
};

/* Descriptors of the shared, pinned maps. */
struct bpf_state_maps {
	int sandboxes;
	int inode_rules;
	int name_rules;
	int mandatory_names;
	int resolve_slots;
	int sandbox_events;
	int ring_owners;
	int rate_limit;
	int sock_owner;
	int unix_names;
	int device_allow;
	int private_dirs;
	int shm_owner;
	int key_owner;
	int sigio_owners;
	int learned;
	int tconns;
	int dns_peers;
	int quotas;
	int git_made;
	int rule_keys;
};

struct bpf_state {
	struct bpfbox_bpf *skel; /* only when this launcher loaded the programs */
	struct bpf_state_maps maps;
	int net_prog_fd[NET_PROG_COUNT];
	char pin_dir[PATH_MAX];
	bool loaded_here; /* this launcher loaded and attached the programs */
	bool attach_per_sandbox; /* the cgroup programs go on each sandbox's cgroup (cgroup_attach.h) */
	char attach_note[512];	 /* why */
	int user_lock_fd; /* shared lock on this build's set, held while in use */
};

/* Loads or reuses the pinned set; negative errno with em filled on failure. */
int bpf_state_open(struct bpf_state **out, struct errmsg *em);
void bpf_state_close(struct bpf_state *st);
/*
 * Removes other builds' program sets that no launcher holds and no sandbox
 * uses: every attached set costs outsiders a lookup per hook. Returns how many.
 */
int bpf_state_remove_stale(const char *keep_pin_dir);
/* The directory of this build's pins, for gc. */
int bpf_state_pin_dir(char *out, size_t len);

#endif
