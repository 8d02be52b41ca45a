/* SPDX-License-Identifier: MIT */
/*
 * The descriptor table grown to its working size while the process has one
 * thread. The kernel grows it when a descriptor beyond its size is asked
 * for; in a process whose threads share the table that waits for an RCU
 * grace period (expand_fdtable), milliseconds on a busy or emulated host,
 * on the sandbox's start path once the proxy's threads run.
 */
#ifndef BPFBOX_FD_TABLE_H
#define BPFBOX_FD_TABLE_H

#include <fcntl.h>
#include <unistd.h>

/* Best effort: a table that cannot grow now grows later, as before. */
static inline void fd_table_reserve(int slots)
{
	int base = open("/", O_PATH | O_CLOEXEC), high;

	if (base < 0)
		return;
	high = fcntl(base, F_DUPFD_CLOEXEC, slots - 1);
	if (high >= 0)
		close(high);
	close(base);
}

#endif
