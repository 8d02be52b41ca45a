// SPDX-License-Identifier: GPL-2.0
/*
 * bpfbox's kernel side: one set of programs for the whole host. Every hook
 * first asks whether the current task is in a sandbox (one map lookup) and
 * only then applies that sandbox's policy from the maps.
 *
 * Each program file includes the lib/ helpers it uses; they are listed here
 * too, in dependency order, so this list is the order of the whole object.
 */
#include "lib/kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "lib/maps.bpf.h"
#include "lib/sandbox.bpf.h"
#include "lib/fs_walk.bpf.h"
#include "lib/fs_event.bpf.h"
#include "lib/fs_decide.bpf.h"
#include "lib/devices.bpf.h"
#include "lib/process.bpf.h"
#include "lib/net.bpf.h"

#include "fs_hooks.bpf.h"
#include "proc_hooks.bpf.h"
#include "signal_hooks.bpf.h"
#include "net_sock_addr.bpf.h"
#include "net_redirect.bpf.h"
#include "net_socket_hooks.bpf.h"
#include "key_hooks.bpf.h"

char LICENSE[] SEC("license") = "GPL";
