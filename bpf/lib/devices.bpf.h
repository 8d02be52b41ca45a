/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's device set. An open of a character or block device node is
 * decided by the node's type and device number, never by its path, so a copy
 * or a bind mount of a node elsewhere is judged the same as the original.
 */
#ifndef BPFBOX_DEVICES_BPF_H
#define BPFBOX_DEVICES_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/fs_event.bpf.h" /* event_set_path */

/* Unix98 pty slaves (pts/N): majors 136 to 143. */
#define PTS_MAJOR_FIRST 136
#define PTS_MAJOR_LAST 143

/* What every program may need, as bubblewrap's --dev gives it. */
static __always_inline bool device_builtin(__u32 rdev)
{
	switch (rdev) {
	case BB_KDEV(1, 3): /* null */
	case BB_KDEV(1, 5): /* zero */
	case BB_KDEV(1, 7): /* full */
	case BB_KDEV(1, 8): /* random */
	case BB_KDEV(1, 9): /* urandom */
	case BB_KDEV(5, 0): /* tty: the opener's controlling terminal, whatever it is */
	case BB_KDEV(5, 2): /* ptmx: a new pty, owned by this sandbox (below) */
		return true;
	}
	return false;
}

/* A pts/N whose pty a task of this sandbox made through ptmx. */
static __always_inline bool device_own_pty(__u64 sb_id, struct inode *inode, __u32 rdev)
{
	__u64 *owner;

	if (BB_KDEV_MAJOR(rdev) < PTS_MAJOR_FIRST || BB_KDEV_MAJOR(rdev) > PTS_MAJOR_LAST)
		return false;
	owner = bpf_inode_storage_get(&pty_owner, inode, 0, 0);
	return owner && *owner == sb_id;
}

static __always_inline void report_device(struct bb_sandbox *sb, __u64 sb_id, __u32 op, struct file *file,
					  __u32 rdev, bool block)
{
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	struct vfsmount *mnt = BPF_CORE_READ(file, f_path.mnt);
	struct bb_event *ev;
	__u32 count;

	if (!rate_limit_pass(sb_id, op, BB_RULE_DEVICE, file_object(d), &count))
		return;
	ev = event_reserve(sb, sb_id, count);
	if (!ev)
		return;
	event_fill_task(ev, sb_id, BB_EV_FILE, op, BB_RULE_DEVICE, EPERM, count, sb->flags & BB_SB_AUDIT);
	ev->rdev = rdev;
	if (block)
		ev->flags |= BB_EVF_BLOCK_DEVICE;
	event_set_path(ev, d, mnt);
	bpf_ringbuf_submit(ev, 0);
}

/*
 * Returns 0 when the sandbox may open this device node (read and write,
 * whatever allowWrite says), else the refusal, reported as builtin:device.
 * Not inlined: its stack frame then never adds to the path walk's.
 */
static __noinline int device_check(struct bb_sandbox *sb, __u64 sb_id, struct file *file, struct inode *inode)
{
	struct bb_device_key key = { .sandbox = rules_key(sb_id) };
	bool block = S_ISBLK(BPF_CORE_READ(inode, i_mode));
	__u32 rdev = BPF_CORE_READ(inode, i_rdev);
	fmode_t fmode = BPF_CORE_READ(file, f_mode);

	if (!block && (device_builtin(rdev) || device_own_pty(sb_id, inode, rdev)))
		return 0;
	key.rdev = rdev;
	key.type = block ? BB_DEV_BLOCK : BB_DEV_CHAR;
	if (bpf_map_lookup_elem(&device_allow, &key))
		return 0;
	report_device(sb, sb_id, (fmode & FMODE_WRITE) ? BB_OP_OPEN_WRITE : BB_OP_OPEN_READ, file, rdev, block);
	return refusal(sb, EPERM);
}

/*
 * ptmx_open makes the pty's pts/N node with d_add, from the opening task:
 * the only way a devpts character inode is instantiated (devpts looks up
 * nothing else), so a sandbox task here is making a pty of its own.
 * Called from the d_instantiate hook (fs_hooks.bpf.h) for sandboxed tasks.
 */
static __always_inline void pty_record_owner(__u64 id, struct inode *inode)
{
	__u64 *owner;

	if (!S_ISCHR(BPF_CORE_READ(inode, i_mode)))
		return;
	owner = bpf_inode_storage_get(&pty_owner, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (owner)
		*owner = id;
}

#endif
