/* SPDX-License-Identifier: MIT */
/* Milliseconds of CLOCK_MONOTONIC: for deadlines, timeouts and rates, never for wall time. */
#ifndef BPFBOX_MONO_CLOCK_H
#define BPFBOX_MONO_CLOCK_H

#include <time.h>

static inline long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
