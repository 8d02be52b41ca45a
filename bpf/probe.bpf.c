// SPDX-License-Identifier: GPL-2.0
/*
 * Programs `bpfbox doctor` loads to prove this host can enforce a sandbox:
 * an LSM program that refuses one throwaway child's opens and reports them
 * through a ring buffer, and a cgroup connect4 program that refuses connects.
 */
#include "lib/kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid = 0;
__u64 lsm_hits = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} probe_events SEC(".maps");

SEC("lsm/file_open")
int BPF_PROG(probe_file_open, struct file *file)
{
	__u32 *rec;

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	__sync_fetch_and_add(&lsm_hits, 1);
	rec = bpf_ringbuf_reserve(&probe_events, sizeof(*rec), 0);
	if (rec) {
		*rec = target_tgid;
		bpf_ringbuf_submit(rec, 0);
	}
	return -EPERM;
}

SEC("cgroup/connect4")
int probe_connect4(struct bpf_sock_addr *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
