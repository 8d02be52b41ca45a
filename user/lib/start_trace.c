// SPDX-License-Identifier: MIT
/* The start trace: one stderr line per step (start_trace.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "start_trace.h"

/* -1 until the environment was read; the previous mark of this process. */
static int trace_on = -1;
static double trace_prev_ms;
static pid_t trace_pid;

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void start_trace(const char *step)
{
	double now;
	pid_t pid;

	if (trace_on < 0) {
		const char *v = getenv("BPFBOX_TRACE_START");

		trace_on = v && !strcmp(v, "1");
	}
	if (!trace_on)
		return;
	now = mono_ms();
	pid = getpid();
	/* A forked child starts its own chain: its first step counts from the fork's mark. */
	if (pid != trace_pid) {
		if (!trace_pid)
			trace_prev_ms = now;
		trace_pid = pid;
	}
	fprintf(stderr, "bpfbox: start-trace pid=%d t=%.3f step=%.3f %s\n", (int)pid, now, now - trace_prev_ms, step);
	trace_prev_ms = now;
}
