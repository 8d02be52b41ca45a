/* SPDX-License-Identifier: MIT */
/* Host names and addresses in canonical form. */
#ifndef BPFBOX_PROXY_CANON_H
#define BPFBOX_PROXY_CANON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* proxy_canon.c */
bool proxy_host_literal(const char *canon, struct sockaddr_storage *ss);
/* "localhost", "*.localhost" or a loopback literal (canonical): never sent to a parent proxy. */
bool proxy_host_is_local(const char *canon);
void proxy_format_addr(const struct sockaddr *sa, char *out, size_t cap);

#endif
