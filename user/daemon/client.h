/* SPDX-License-Identifier: MIT */
/*
 * A client's side of one request to the daemon (a non-root exec, ps or stop): the connection,
 * the request sent as one frame, then (ps, stop) the answer read to its end, the text
 * frames written out as they come.
 */
#ifndef BPFBOX_DAEMON_CLIENT_H
#define BPFBOX_DAEMON_CLIENT_H

#include <stddef.h>
#include <stdio.h>

#include "lib/errmsg.h"
#include "wire.h"

/* The daemon's socket: $BPFBOX_SOCKET, else this. */
#define BPFBOX_SOCKET_PATH "/run/bpfbox/bpfbox.sock"
const char *daemon_socket_path(void);
/* Connects to the daemon; -errno, with em saying how to start it. */
int daemon_connect(struct errmsg *em);
/* Sends req with n_fds descriptors attached; 0, or -errno (out of memory, a socket error). */
int daemon_request_send(int sock, const struct wire_request *req, const int *fds, size_t n_fds);
/*
 * Reads the daemon's answer: the message of each "text" frame goes to out;
 * returns 0 with the closing "exit" or "error" frame in *end (wire_msg_free
 * it), or -errno with em saying why there was no answer (em stays empty
 * when waiting on the socket itself failed).
 */
int daemon_answer_read(int sock, FILE *out, struct wire_msg *end, struct errmsg *em);

#endif
