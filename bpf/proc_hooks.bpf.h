/* SPDX-License-Identifier: MIT */
/*
 * Self-protection: a sandbox may not change its view of the filesystem, reach
 * into processes outside it, load BPF or make user namespaces.
 */
#ifndef BPFBOX_PROC_HOOKS_BPF_H
#define BPFBOX_PROC_HOOKS_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/process.bpf.h"
#include <bpf/bpf_tracing.h> /* BPF_PROG */

#define DENY_IN_SANDBOX_HOOK(hook, op, rule, ...)                                      \
	SEC("lsm/" #hook)                                                              \
	int BPF_PROG(bb_##hook, ##__VA_ARGS__)                                         \
	{                                                                              \
		struct bb_sandbox *sb;                                                 \
		__u64 id;                                                              \
		sb = current_sandbox(&id);                                             \
		if (!sb || sb->state != BB_STATE_ENFORCING)                            \
			return 0;                                                      \
		return report_process(sb, id, op, rule, 0);                            \
	}

DENY_IN_SANDBOX_HOOK(sb_mount, BB_OP_MOUNT, BB_RULE_MOUNT, const char *dev_name, const struct path *path)
DENY_IN_SANDBOX_HOOK(sb_umount, BB_OP_UMOUNT, BB_RULE_MOUNT, struct vfsmount *mnt, int flags)
DENY_IN_SANDBOX_HOOK(move_mount, BB_OP_MOUNT, BB_RULE_MOUNT, const struct path *from, const struct path *to)
DENY_IN_SANDBOX_HOOK(sb_pivotroot, BB_OP_PIVOT_ROOT, BB_RULE_MOUNT, const struct path *old_path,
		     const struct path *new_path)
DENY_IN_SANDBOX_HOOK(path_chroot, BB_OP_CHROOT, BB_RULE_MOUNT, const struct path *path)

SEC("lsm/bpf")
int BPF_PROG(bb_bpf, int cmd)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	/* The launcher's own child reads the resolution slot before it becomes the command. */
	if (!sb || sb->state == BB_STATE_RESOLVING)
		return 0;
	return report_process(sb, id, BB_OP_BPF, BB_RULE_BPF, cmd);
}

SEC("lsm/userns_create")
int BPF_PROG(bb_userns_create, const struct cred *cred)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING || (sb->flags & BB_SB_ALLOW_USERNS))
		return 0;
	return report_process(sb, id, BB_OP_USERNS, BB_RULE_USERNS, 0);
}

#define PTRACE_MODE_NOAUDIT 0x04

/* Covers ptrace attach and /proc/PID/{mem,environ,...} of tasks outside the sandbox. */
SEC("lsm/ptrace_access_check")
int BPF_PROG(bb_ptrace_access_check, struct task_struct *child, unsigned int mode)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING || task_in_sandbox(child, id))
		return 0;
	/* ps(1) probes every process this way; the kernel itself does not audit these. */
	if (mode & PTRACE_MODE_NOAUDIT)
		return refusal(sb, EPERM);
	return report_process(sb, id, BB_OP_PTRACE, BB_RULE_PTRACE, BPF_CORE_READ(child, tgid));
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(bb_ptrace_traceme, struct task_struct *parent)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING || task_in_sandbox(parent, id))
		return 0;
	return report_process(sb, id, BB_OP_PTRACE, BB_RULE_PTRACE, BPF_CORE_READ(parent, tgid));
}

#endif
