/* SPDX-License-Identifier: MIT */
/*
 * A sandbox's TCP connections to its proxy as the kernel filed them
 * (tconns, struct bb_tconn): where a redirected one was going, and the task
 * that connected, for the proxy's events; and how such a task goes into an
 * event (the proxy's and the DNS resolver's).
 */
#ifndef BPFBOX_SANDBOX_TCONN_H
#define BPFBOX_SANDBOX_TCONN_H

#include <stdint.h>
#include <sys/socket.h>

#include "bpfbox.h"
#include "log/log.h"
#include "proxy/proxy.h"

/*
 * Takes (looks up and deletes) the entry of the connection accepted from
 * client on the listener with port listener. 0; -ENOENT when the kernel
 * filed none; -EPERM when it is another sandbox's (never used).
 */
int sandbox_tconn_take(int map_fd, uint64_t sandbox, const struct sockaddr_storage *client,
		       unsigned short listener, struct bb_tconn *out);
/* The task the kernel filed (pid 0: none), as the proxy reports it. */
void sandbox_peer_from_kernel(const struct bb_peer *p, struct proxy_peer *out);
/* process.pid, process.thread.id, process.name (comm, at most 16 bytes) and process.user.id. */
void sandbox_peer_log(struct log_event *ev, int pid, int tid, unsigned uid, const char *comm);

#endif
