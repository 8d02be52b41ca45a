/* SPDX-License-Identifier: MIT */
/*
 * The daemon's side of live policy: a caller's update relayed to its
 * sandbox, and the administrator's policy reloaded and sent to every
 * running sandbox (relay.c). Each runs in a child counted in d->relays.
 */
#ifndef BPFBOX_DAEMON_RELAY_H
#define BPFBOX_DAEMON_RELAY_H

#include <stdbool.h>
#include <sys/types.h>

#include "server_state.h"

/*
 * A caller's update to its own sandbox, relayed by a child that answers on
 * conn: 0 (the child has it), -EBUSY when the caller has as many in flight
 * as it may, -EAGAIN when the daemon has, -errno when fork failed.
 */
int daemon_relay_update(struct daemon *d, int conn, const struct peer *p, const struct wire_request *req);
/* Was pid a relay child (now reaped)? */
bool daemon_relay_reaped(struct daemon *d, pid_t pid);
/*
 * SIGHUP: the administrator's policy re-read; kept for new sandboxes only
 * when it is valid (else logged, the old one stays), then sent to every
 * running sandbox of the daemon's by a child, which logs what each did.
 */
void daemon_ceiling_reload(struct daemon *d);
/* At start: the sandboxes an earlier daemon left under the same file are told the policy read now. */
void daemon_ceiling_push_orphans(struct daemon *d);

#endif
