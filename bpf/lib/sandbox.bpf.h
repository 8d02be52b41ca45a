/* SPDX-License-Identifier: MIT */
/* Finding the sandbox of the current task and reporting refusals. */
#ifndef BPFBOX_SANDBOX_BPF_H
#define BPFBOX_SANDBOX_BPF_H

#include <bpf/bpf_core_read.h>
#include "lib/maps.bpf.h"

/* How long identical refusals are folded into one event. */
#define BB_RATE_WINDOW_NS 1000000000ULL

/*
 * A sandbox's tasks cannot write to cgroupfs (see the write rules), so they
 * cannot leave the sandbox cgroup or make sub-cgroups: the task's own cgroup
 * id is its sandbox id. One helper call and one lookup is all outsiders pay.
 */
static __always_inline struct bb_sandbox *current_sandbox(__u64 *id)
{
	*id = bpf_get_current_cgroup_id();
	return bpf_map_lookup_elem(&sandboxes, id);
}

/*
 * The key of the rule set in force for a sandbox (BB_RULES_KEY): one lookup,
 * paid by sandboxed tasks only, where a rule is looked up.
 */
static __always_inline __u64 rules_key(__u64 sb_id)
{
	__u64 *k = bpf_map_lookup_elem(&rule_keys, &sb_id);

	return k ? *k : sb_id;
}

/*
 * Returns true when an event should be sent now; count receives the refusals
 * it stands for. Refusals folded in the window wait in the entry's pending
 * count for the next event or for the exit report. A full map folds
 * nothing: every refusal is sent.
 */
static __always_inline bool rate_limit_pass(__u64 sb_id, __u32 op, __u32 rule, __u64 object, __u32 *count)
{
	struct bb_rate_key key = { .sandbox = sb_id, .object = object, .op = op, .rule = rule };
	struct bb_rate *r, fresh = {};
	__u64 now = bpf_ktime_get_ns();

	*count = 1;
	r = bpf_map_lookup_elem(&rate_limit, &key);
	if (!r) {
		fresh.last_ns = now;
		bpf_map_update_elem(&rate_limit, &key, &fresh, BPF_NOEXIST);
		return true;
	}
	if (now - r->last_ns < BB_RATE_WINDOW_NS) {
		__sync_fetch_and_add(&r->pending, 1);
		return false;
	}
	*count = 1 + __sync_lock_test_and_set(&r->pending, 0);
	r->last_ns = now;
	return true;
}

/*
 * The rate-limit object of a file refusal: its directory and name. Not the
 * dentry's address: a refused create frees its dentry and the next create
 * gets the same address, which would fold refusals of different names.
 */
static __always_inline __u64 file_object(struct dentry *d)
{
	__u64 parent = (__u64)BPF_CORE_READ(d, d_parent);

	return bb_mix64(bb_mix64(0x9e3779b97f4a7c15ULL, parent), BPF_CORE_READ(d, d_name.hash_len));
}

/*
 * Space for an event standing for count refusals (rate_limit_pass). When the
 * ring buffer is full all of them count as lost: their folded count was
 * taken out of the rate-limit entry and exists nowhere else.
 */
static __always_inline struct bb_event *event_reserve(struct bb_sandbox *sb, __u64 sb_id, __u32 count)
{
	__u32 slot = sb->ring_slot;
	struct bb_event *ev;
	void *rb;

	rb = bpf_map_lookup_elem(&sandbox_events, &slot);
	if (!rb) {
		__sync_fetch_and_add(&sb->lost, count);
		return NULL;
	}
	ev = bpf_ringbuf_reserve(rb, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&sb->lost, count);
		return NULL;
	}
	return ev;
}

/* Fills what every event carries; the caller adds the object and submits. */
static __always_inline void event_fill_task(struct bb_event *ev, __u64 sb_id, __u32 kind, __u32 op,
					    __u32 rule, int error, __u32 count, bool audit)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct file *exe;
	const unsigned char *name;

	ev->ts_ns = bpf_ktime_get_ns();
	ev->sandbox = sb_id;
	ev->kind = kind;
	ev->op = op;
	ev->pid = pid_tgid >> 32;
	ev->tid = (__u32)pid_tgid;
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->error = audit ? 0 : error;
	ev->rule = rule;
	ev->flags = audit ? BB_EVF_AUDIT : 0;
	ev->count = count;
	ev->path_len = 0;
	ev->path[0] = 0;
	ev->family = 0;
	ev->port = 0;
	ev->proto = 0;
	ev->rdev = 0;
	__builtin_memset(ev->addr, 0, sizeof(ev->addr));
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->exe[0] = 0;
	exe = BPF_CORE_READ(task, mm, exe_file);
	if (exe) {
		name = BPF_CORE_READ(exe, f_path.dentry, d_name.name);
		bpf_probe_read_kernel_str(ev->exe, sizeof(ev->exe), name);
	}
}

/* The return value of a refused operation: the error, or 0 in audit mode. */
static __always_inline int refusal(struct bb_sandbox *sb, int error)
{
	__sync_fetch_and_add(&sb->denied, 1);
	return (sb->flags & BB_SB_AUDIT) ? 0 : -error;
}

#endif
