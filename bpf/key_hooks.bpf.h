/* SPDX-License-Identifier: MIT */
/*
 * Kernel key rings: the command starts with a new, empty session key ring
 * (the launcher joins one before exec); any key it did not create (the uid's
 * user and user-session key rings, other sessions' keys) is out of reach.
 */
#ifndef BPFBOX_KEY_HOOKS_BPF_H
#define BPFBOX_KEY_HOOKS_BPF_H

#include "lib/sandbox.bpf.h"
#include <bpf/bpf_tracing.h> /* BPF_PROG */

/*
 * Remembers the keys a sandbox creates, by address (the serial is assigned
 * after this hook). The uid's own key rings are made on first use by
 * whichever task asks first: they never belong to a sandbox. Any other new
 * key clears what its address said before: a freed key's entry must not pass
 * to the next key at that address (6.12 has no key_free hook to drop it
 * earlier). Key creation is rare, so outsiders pay this one update here.
 */
SEC("lsm/key_alloc")
int BPF_PROG(bb_key_alloc, struct key *key, const struct cred *cred, unsigned long flags)
{
	struct bb_owner owner;
	struct bb_sandbox *sb;
	__u64 id, addr = (__u64)key;

	sb = current_sandbox(&id);
	if (!sb || (flags & KEY_ALLOC_UID_KEYRING)) {
		bpf_map_delete_elem(&key_owner, &addr);
		return 0;
	}
	owner.sandbox = id;
	/* A full map leaves the key unrecorded: the sandbox cannot use it (fail closed). */
	if (bpf_map_update_elem(&key_owner, &addr, &owner, BPF_ANY))
		bpf_map_delete_elem(&key_owner, &addr);
	return 0;
}

static __always_inline void report_key(struct bb_sandbox *sb, __u64 sb_id, struct key *key, __u32 perm)
{
	struct bb_event *ev;
	const char *desc;
	__u32 count;

	if (!rate_limit_pass(sb_id, BB_OP_KEY, BB_RULE_KEY_OTHER, (__u64)key ^ perm, &count))
		return;
	ev = event_reserve(sb, sb_id, count);
	if (!ev)
		return;
	event_fill_task(ev, sb_id, BB_EV_KEY, BB_OP_KEY, BB_RULE_KEY_OTHER, EACCES, count, sb->flags & BB_SB_AUDIT);
	ev->port = (__u32)BPF_CORE_READ(key, serial);
	ev->proto = perm;
	desc = BPF_CORE_READ(key, description);
	if (desc) {
		int n = bpf_probe_read_kernel_str(ev->path, 256, desc);

		ev->path_len = n > 0 ? n - 1 : 0;
	}
	bpf_ringbuf_submit(ev, 0);
}

/*
 * Every use of a key by a task: view, read, write, search, link, setattr,
 * unlink (key_task_permission after the permission bits). EACCES, as the
 * key permission bits would say: key searches skip what they may not see.
 */
SEC("lsm/key_permission")
int bb_key_permission(unsigned long long *ctx)
{
	struct bb_sandbox *sb;
	struct bb_owner *o;
	__u64 id, key_ref = 0, perm = 0, addr;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	/*
	 * key_ref_t points to a struct the kernel never defines, so the
	 * verifier refuses the argument as a typed pointer: take it raw. Its
	 * low bit says "possessed".
	 */
	if (bpf_get_func_arg(ctx, 0, &key_ref) || bpf_get_func_arg(ctx, 2, &perm))
		return refusal(sb, EACCES);
	addr = key_ref & ~1ULL;
	o = bpf_map_lookup_elem(&key_owner, &addr);
	if (o && o->sandbox == id)
		return 0;
	report_key(sb, id, (struct key *)addr, (__u32)perm);
	return refusal(sb, EACCES);
}

#endif
