/* SPDX-License-Identifier: MIT */
/* Non-blocking connects to upstreams. */
#ifndef BPFBOX_PROXY_DIAL_H
#define BPFBOX_PROXY_DIAL_H

#include <sys/socket.h>

/* proxy_dial.c */
int proxy_dial_start(const struct sockaddr_storage *ss, unsigned port);
int proxy_dial_result(int fd);

#endif
