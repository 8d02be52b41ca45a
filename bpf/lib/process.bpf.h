/* SPDX-License-Identifier: MIT */
/* What the process and signal hooks share: the refusal event and who is inside a sandbox. */
#ifndef BPFBOX_PROCESS_BPF_H
#define BPFBOX_PROCESS_BPF_H

#include "lib/sandbox.bpf.h"

static __always_inline int report_process(struct bb_sandbox *sb, __u64 sb_id, __u32 op, __u32 rule, __u32 target)
{
	struct bb_event *ev;
	__u32 count;

	if (rate_limit_pass(sb_id, op, rule, target, &count)) {
		ev = event_reserve(sb, sb_id, count);
		if (ev) {
			event_fill_task(ev, sb_id, BB_EV_PROCESS, op, rule, EPERM, count, sb->flags & BB_SB_AUDIT);
			ev->port = target;
			bpf_ringbuf_submit(ev, 0);
		}
	}
	return refusal(sb, EPERM);
}

static __always_inline bool task_in_sandbox(struct task_struct *task, __u64 sb_id)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id) == sb_id;
}

#endif
