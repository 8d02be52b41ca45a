// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>

#include "signals.h"

int signals_block_to_fd(const int *watch, const int *block_only, sigset_t *old_mask)
{
	sigset_t set, blocked;
	int fd;

	sigemptyset(&set);
	for (const int *s = watch; *s; s++)
		sigaddset(&set, *s);
	blocked = set;
	for (const int *s = block_only; s && *s; s++)
		sigaddset(&blocked, *s);
	if (sigprocmask(SIG_BLOCK, &blocked, old_mask))
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
