/* SPDX-License-Identifier: MIT */
/*
 * The cgroup programs (socket addresses, sockops, socket release): attached
 * once to the cgroup that holds every sandbox, by links pinned with the
 * build's other pins, so a start attaches nothing; per sandbox only where a
 * foreign program on that cgroup forbids the shared attachment.
 */
#ifndef BPFBOX_CGROUP_ATTACH_H
#define BPFBOX_CGROUP_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf_state.h"
#include "lib/errmsg.h"

/* A program's name in the object and in its pin. */
const char *cgroup_prog_name(int prog);
/*
 * Under the host-wide lock: this build's programs attached to the parent
 * cgroup, each by a link pinned as <pin_dir>/links/cgroup_<name> (a link
 * whose cgroup is gone, or is not the parent, is replaced). Sets
 * st->attach_per_sandbox, with st->attach_note saying why, when the
 * parent carries a foreign program that allows only overriding it.
 */
int cgroup_attach_parent(struct bpf_state *st, struct errmsg *em);
/* Per-sandbox attachment: nothing to do when the parent carries the programs. */
int cgroup_attach_sandbox(struct bpf_state *st, int cgroup_fd, struct errmsg *em);
/*
 * How sandboxes on this host get the programs, for doctor: 1 once on the
 * parent (attached now or at the first start), 0 per sandbox, with why.
 */
int cgroup_attach_mode(const char *pin_dir, char *why, size_t len);

#endif
