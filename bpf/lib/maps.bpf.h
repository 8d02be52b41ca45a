/* SPDX-License-Identifier: MIT */
/*
 * Maps shared by every bpfbox program. They are pinned by name under the
 * bpffs directory of this build, so every launcher on the host uses one set.
 */
#ifndef BPFBOX_MAPS_BPF_H
#define BPFBOX_MAPS_BPF_H

#include "lib/kernel_types.h"
#include <bpf/bpf_helpers.h>
#include "bpfbox.h"

/* Sandboxes by cgroup id: the first, and for outsiders the only, lookup of every hook. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct bb_sandbox);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sandboxes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_RULES);
	__type(key, struct bb_inode_key);
	__type(value, struct bb_rule);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inode_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_RULES);
	__type(key, struct bb_name_key);
	__type(value, struct bb_rule);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} name_rules SEC(".maps");

/* Mandatory deny names, host-wide; which apply depends on sandbox flags. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, struct bb_mandatory);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} mandatory_names SEC(".maps");

/* A sandbox's rules key (BB_RULES_KEY) once a live update moved it past generation 0. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} rule_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct bb_resolve);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} resolve_slots SEC(".maps");

/*
 * Each sandbox has a ring buffer of its own, so launchers never read each
 * other's events. The buffers form a pool indexed by slot, kept across
 * sandboxes: updating a map of maps waits for an RCU grace period (milliseconds),
 * which a sandbox start and end should not pay. A slot is claimed in
 * ring_owners (insert-if-absent) and named in struct bb_sandbox.ring_slot.
 */
struct sandbox_ringbuf {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, BB_RINGBUF_BYTES);
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, BB_MAX_SANDBOXES);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct sandbox_ringbuf);
} sandbox_events SEC(".maps");

/* Ring slot -> the sandbox using it (user space only). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ring_owners SEC(".maps");

struct bb_rate_key {
	__u64 sandbox;
	__u64 object; /* inode number, address or target pid */
	__u32 op;
	__u32 rule;
};

struct bb_rate {
	__u64 last_ns;
	__u64 pending; /* refusals folded since the last event */
};

/* Not LRU: an evicted entry would lose its pending count; when full, every refusal is sent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct bb_rate_key);
	__type(value, struct bb_rate);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} rate_limit SEC(".maps");

/*
 * The sandbox that bound a loopback socket (allowLocalBinding). A connect to
 * loopback is let through when the socket listening there is the sandbox's
 * own; the mark goes with the socket, so a port the sandbox let go and
 * somebody else bound later is not reachable.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sock_owner SEC(".maps");

/* Addresses a sandbox learned for allowed names (user space writes, connect reads). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_LEARNED);
	__type(key, struct bb_learned_key);
	__type(value, struct bb_learned);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} learned SEC(".maps");

/* Each sandbox's share of the rule maps and of learned, and its uid (user space only: struct bb_quota). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct bb_quota);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} quotas SEC(".maps");

/* Redirected connections waiting for the proxy's accept; LRU: one the proxy never takes ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BB_MAX_TCONNS);
	__type(key, struct bb_tconn_key);
	__type(value, struct bb_tconn);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} tconns SEC(".maps");

/* Senders of the sandboxes' DNS queries (struct bb_dns_peer_key); LRU: a busy resolver's oldest age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BB_MAX_DNS_PEERS);
	__type(key, struct bb_dns_peer_key);
	__type(value, struct bb_dns_peer);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} dns_peers SEC(".maps");

/* Original destinations of sockets the kernel redirected (struct bb_redirect); they go with the socket. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bb_redirect);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sock_redirect SEC(".maps");

/* Abstract Unix socket names a sandbox may reach (allowUnixSockets "@name"). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_UNIX_NAMES);
	__type(key, struct bb_unix_name_key);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} unix_names SEC(".maps");

/* Devices a sandbox may open beyond the built-in set: the policy's and its terminal. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_DEVICES);
	__type(key, struct bb_device_key);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} device_allow SEC(".maps");

/*
 * The sandbox that made a pseudo-terminal: stored on the devpts inode of its
 * pts/N when ptmx creates it, and freed with the inode when the pty goes, so
 * a later pty of the same number (the host's, another sandbox's) carries no
 * stale owner.
 */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} pty_owner SEC(".maps");

/*
 * Directories private to one sandbox (each sandbox's TMPDIR), by identity:
 * (dev, ino) -> owning sandbox, keyed like inode_rules with sandbox 0. Looked up for every directory a sandboxed
 * walk passes; outsiders never walk.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_SANDBOXES);
	__type(key, struct bb_inode_key); /* sandbox 0, dir 1 */
	__type(value, __u64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} private_dirs SEC(".maps");

/*
 * The .git directories and files a sandbox made during its life, by
 * identity: (sandbox, dev, ino, dir) -> 1. git builds its own files in them
 * (config, the hooks/ samples); hooks git would run stay out of reach, and the
 * launcher checks each one's config when the sandbox ends and then removes
 * the entries. The directory holding each is kept too (dir BB_GIT_WORKTREE):
 * its .gitmodules is git's to write. Two entries for each of at most
 * BB_MAX_NEW_GIT per sandbox; a full map leaves a .git unrecorded, so fully
 * protected.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_SANDBOXES * BB_MAX_NEW_GIT * 2);
	__type(key, struct bb_inode_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} git_made SEC(".maps");

/* The sandbox that created an object in /dev/shm; goes away with the inode. */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bb_owner);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} shm_owner SEC(".maps");

/*
 * Keys created inside a sandbox, by the address of their struct key: the
 * serial is assigned after the key_alloc hook runs. Every key_alloc rewrites
 * the entry of its address, and the supervisor drops its sandbox's entries
 * when it ends.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct bb_owner);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} key_owner SEC(".maps");

/*
 * A create refused before the kernel looked its name up (open with O_CREAT
 * of a name the dentry cache did not hold): logged only once the open shows
 * that the name was missing, so the refusal took effect.
 */
struct pending_create {
	__u64 sandbox;
	__u64 dentry;
	__u64 mnt;
	__u32 op;
	__u32 rule;
	/* A .git directory mkdir let through, until its inode is bound (d_instantiate). */
	__u64 git_dentry;
	__u64 git_parent;
	__u64 git_mnt;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending_create);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pending_creates SEC(".maps");

/*
 * Files whose signal owner (F_SETOWN, FIOSETOWN, fasync) a sandboxed task set:
 * file address -> sandbox id. SIGIO is raised by whoever causes the I/O, even
 * from interrupts, so the decision follows the setter, not the current task.
 * Any later owner change by someone else deletes the entry; the launcher
 * removes a sandbox's entries when it ends.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BB_MAX_RULES);
	__type(key, __u64);
	__type(value, __u64);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sigio_owners SEC(".maps");

/* Per-CPU scratch for building an event's path backwards. */
struct path_scratch {
	char buf[2 * BB_EVENT_PATH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} path_scratch_map SEC(".maps");

#endif
