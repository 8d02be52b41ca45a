/* SPDX-License-Identifier: MIT */
/*
 * Nothing outside the sandbox can be signalled from inside it, and nothing
 * can be typed into the terminal it shares with its caller.
 */
#ifndef BPFBOX_SIGNAL_HOOKS_BPF_H
#define BPFBOX_SIGNAL_HOOKS_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/process.bpf.h"
#include <bpf/bpf_tracing.h> /* BPF_PROG */

#define BB_SIGIO 29

/* no_task: raised by I/O of a task outside the sandbox (or an interrupt): not the sender. */
static __always_inline int report_signal(struct bb_sandbox *sb, __u64 sb_id, __u32 target, int sig, bool no_task)
{
	struct bb_event *ev;
	__u32 count;

	if (rate_limit_pass(sb_id, BB_OP_SIGNAL, BB_RULE_SIGNAL, ((__u64)target << 8) | (sig & 0xff), &count)) {
		ev = event_reserve(sb, sb_id, count);
		if (ev) {
			event_fill_task(ev, sb_id, BB_EV_PROCESS, BB_OP_SIGNAL, BB_RULE_SIGNAL, EPERM, count,
					sb->flags & BB_SB_AUDIT);
			ev->port = target;
			ev->proto = sig;
			if (no_task) {
				ev->flags |= BB_EVF_NO_TASK;
				ev->pid = 0;
				ev->tid = 0;
				ev->comm[0] = 0;
				ev->exe[0] = 0;
			}
			bpf_ringbuf_submit(ev, 0);
		}
	}
	return refusal(sb, EPERM);
}

/*
 * kill, tgkill, tkill, rt_sigqueueinfo, pidfd_send_signal, and each target of
 * kill(-pgrp) and kill(-1). Signals the kernel raises itself (job control,
 * SIGCHLD, SIGPIPE, the terminal's ^C) do not come here.
 */
SEC("lsm/task_kill")
int BPF_PROG(bb_task_kill, struct task_struct *p, void *info, int sig, const struct cred *cred)
{
	struct bb_sandbox *sb;
	__u64 id, cred_arg = 0;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	/*
	 * cred is set only for a USB completion signalling its own submitter,
	 * from interrupt context where current is whoever ran. 6.12's verifier
	 * takes typed pointer arguments for non-NULL and drops a test of cred
	 * against NULL as dead code, so the raw argument slot is read instead.
	 */
	bpf_probe_read_kernel(&cred_arg, sizeof(cred_arg), &ctx[3]);
	/* Signal 0 only probes that the pid exists, which /proc shows anyway. */
	if (cred_arg || !sig || task_in_sandbox(p, id))
		return 0;
	return report_signal(sb, id, BPF_CORE_READ(p, tgid), sig, false);
}

static __always_inline __u64 fown_file(struct fown_struct *fown)
{
	if (bpf_core_field_exists(struct fown_struct, file))
		return (__u64)BPF_CORE_READ(fown, file);
	return (__u64)fown - bpf_core_field_offset(struct file___owner_embedded, f_owner);
}

/* SIGIO and SIGURG to a file's owner, decided by who set the owner. */
SEC("lsm/file_send_sigiotask")
int BPF_PROG(bb_file_send_sigiotask, struct task_struct *tsk, struct fown_struct *fown, int sig)
{
	__u64 file = fown_file(fown), sb_id, *owner;
	struct bb_sandbox *sb;

	owner = bpf_map_lookup_elem(&sigio_owners, &file);
	if (!owner)
		return 0;
	sb_id = *owner;
	sb = bpf_map_lookup_elem(&sandboxes, &sb_id);
	/* Set by a sandbox whose supervisor died before removing the entry: fail closed. */
	if (!sb)
		return -EPERM;
	if (sb->state != BB_STATE_ENFORCING || task_in_sandbox(tsk, sb_id))
		return 0;
	return report_signal(sb, sb_id, BPF_CORE_READ(tsk, tgid), sig ? sig : BB_SIGIO,
			     bpf_get_current_cgroup_id() != sb_id);
}

SEC("lsm/file_set_fowner")
int BPF_PROG(bb_file_set_fowner, struct file *file)
{
	struct bb_sandbox *sb;
	__u64 key = (__u64)file, id;

	sb = current_sandbox(&id);
	if (sb && sb->state == BB_STATE_ENFORCING)
		bpf_map_update_elem(&sigio_owners, &key, &id, BPF_ANY);
	else
		bpf_map_delete_elem(&sigio_owners, &key);
	return 0;
}

/*
 * file_set_fowner cannot refuse: the entry is made here first, where a full
 * map can still refuse the owner change (fail closed).
 */
static __always_inline int track_owner(struct bb_sandbox *sb, __u64 id, struct file *file)
{
	__u64 key = (__u64)file;

	if (!bpf_map_update_elem(&sigio_owners, &key, &id, BPF_ANY))
		return 0;
	return report_signal(sb, id, 0, BB_SIGIO, false);
}

SEC("lsm/file_fcntl")
int BPF_PROG(bb_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING || (cmd != F_SETOWN && cmd != F_SETOWN_EX))
		return 0;
	return track_owner(sb, id, file);
}

/*
 * TIOCSTI pushes bytes into the terminal's input; TIOCLINUX pastes the
 * console selection. TIOCLINUX is refused whatever its subcode: the subcode
 * is read from the caller's memory after this hook, so a check of it could
 * be raced; it only serves Linux virtual consoles (gpm, setterm).
 */
static __always_inline int ioctl_check(struct file *file, unsigned int cmd)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	if ((cmd == TIOCSTI || cmd == TIOCLINUX) && S_ISCHR(BPF_CORE_READ(file, f_inode, i_mode)))
		return report_process(sb, id, BB_OP_TTY_IOCTL, BB_RULE_TTY_INJECT, cmd);
	if (cmd == FIOSETOWN || cmd == SIOCSPGRP)
		return track_owner(sb, id, file);
	return 0;
}

SEC("lsm/file_ioctl")
int BPF_PROG(bb_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg)
{
	return ioctl_check(file, cmd);
}

/* 32-bit callers' ioctls have their own hook since 6.8 (and in stable kernels that took it). */
SEC("lsm/file_ioctl_compat")
int BPF_PROG(bb_file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg)
{
	return ioctl_check(file, cmd);
}

#endif
