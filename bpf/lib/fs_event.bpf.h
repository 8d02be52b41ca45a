/* SPDX-License-Identifier: MIT */
/*
 * A file refusal's event: the refused object's path, built backwards up the
 * dentry chain (crossing mounts) into per-CPU scratch, sent at most once per
 * rate-limit window.
 */
#ifndef BPFBOX_FS_EVENT_BPF_H
#define BPFBOX_FS_EVENT_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/fs_walk.bpf.h" /* real_mount */

struct path_ctx {
	__u64 d;
	__u64 mnt;
	__u64 mnt_root;
	__u32 pos; /* the path so far is scratch[pos, BB_EVENT_PATH - 1) */
	__u32 truncated;
	__u32 done;
	__u32 pad;
};

__noinline int bb_path_level(struct path_ctx *p)
{
	struct dentry *d, *parent;
	struct mount *mnt;
	const unsigned char *name;
	struct path_scratch *s;
	__u32 zero = 0, len, pos;

	if (!p)
		return 1;
	d = (struct dentry *)p->d;
	mnt = (struct mount *)p->mnt;
	pos = p->pos;

	if (mnt && p->d == p->mnt_root) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

		if (up == mnt) {
			p->done = 1;
			return 1;
		}
		p->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		p->mnt = (__u64)up;
		p->mnt_root = (__u64)BPF_CORE_READ(up, mnt.mnt_root);
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d) {
		p->done = 1;
		return 1;
	}
	s = bpf_map_lookup_elem(&path_scratch_map, &zero);
	if (!s)
		return 1;
	name = BPF_CORE_READ(d, d_name.name);
	len = BPF_CORE_READ(d, d_name.len);
	if (len > 255)
		len = 255;
	if (pos > BB_EVENT_PATH - 1 || len + 1 > pos) {
		p->truncated = 1;
		return 1;
	}
	/* Masks keep the verifier's bounds; the checks above keep the values exact. */
	pos = (pos - len) & (BB_EVENT_PATH - 1);
	bpf_probe_read_kernel(&s->buf[pos], len, name);
	pos = (pos - 1) & (BB_EVENT_PATH - 1);
	s->buf[pos] = '/';
	p->pos = pos;
	p->d = (__u64)parent;
	return 0;
}

static long path_step(__u32 i, void *data)
{
	return bb_path_level(data) ? 1 : 0;
}

/* Builds the path of d for an event, backwards into per-CPU scratch. Denials only. */
static __always_inline void event_set_path(struct bb_event *ev, struct dentry *d, struct vfsmount *vmnt)
{
	struct path_ctx p = { .d = (__u64)d, .pos = BB_EVENT_PATH - 1 };
	struct path_scratch *s;
	__u32 zero = 0, n;

	if (vmnt) {
		p.mnt = (__u64)real_mount(vmnt);
		p.mnt_root = (__u64)BPF_CORE_READ(vmnt, mnt_root);
	}
	bpf_loop(BB_MAX_DEPTH, path_step, &p, 0);
	if (p.truncated || !p.done)
		ev->flags |= BB_EVF_PATH_TRUNCATED;
	if (p.pos >= BB_EVENT_PATH - 1) {
		ev->path[0] = '/';
		ev->path[1] = 0;
		ev->path_len = 1;
		return;
	}
	s = bpf_map_lookup_elem(&path_scratch_map, &zero);
	if (!s)
		return;
	n = BB_EVENT_PATH - 1 - p.pos;
	if (n > BB_EVENT_PATH - 1 || p.pos > BB_EVENT_PATH - 1)
		return;
	bpf_probe_read_kernel(ev->path, n, &s->buf[p.pos]);
	ev->path[n & (BB_EVENT_PATH - 1)] = 0;
	ev->path_len = n;
}

/*
 * Sends a file refusal event unless an identical one went out within the
 * window. A function of its own: its stack (event path, rate-limit key) is
 * then not added to the hook's, which the walk's call chain shares.
 */
static __noinline int report_file(struct bb_sandbox *sb, __u32 op, __u32 rule, struct dentry *d,
				  struct vfsmount *vmnt)
{
	struct bb_event *ev;
	__u64 sb_id;
	__u32 count;

	if (!sb)
		return 0;
	sb_id = sb->id;
	/* An audited op keeps its mark in the rate-limit key: folded repeats are reported as audited. */
	if (!rate_limit_pass(sb_id, op, rule, file_object(d), &count))
		return 0;
	ev = event_reserve(sb, sb_id, count);
	if (!ev)
		return 0;
	event_fill_task(ev, sb_id, BB_EV_FILE, op & ~BB_OP_AUDITED, rule, EPERM, count,
			(sb->flags & BB_SB_AUDIT) || (op & BB_OP_AUDITED));
	event_set_path(ev, d, vmnt);
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

#endif
