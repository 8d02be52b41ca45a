/* SPDX-License-Identifier: MIT */
/* One line, one write(): what keeps concurrent writers of a file apart. */
#ifndef BPFBOX_LOG_WRITE_H
#define BPFBOX_LOG_WRITE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Writes len bytes with one write() (more only if the kernel took part); 0 or
 * -errno. hold_sigpipe: turn a vanished reader's SIGPIPE into -EPIPE.
 */
int log_write_line(int fd, const char *buf, size_t len, bool hold_sigpipe);

#endif
