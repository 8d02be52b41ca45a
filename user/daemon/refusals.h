/* SPDX-License-Identifier: MIT */
/*
 * How many of the daemon's refusals reach the administrator's log. The
 * first REFUSALS_FIRST refusals of a uid in a window of REFUSALS_WINDOW_S
 * seconds are logged in full; the rest are only counted, and one summary per
 * uid says how many when the window ends (or the daemon stops). The table is
 * bounded: a uid that finds it full is counted in one bucket shared by every
 * such uid, which is summarised the same way. Nothing here refuses or
 * allows: every request it sees was refused already.
 *
 * Pure (time is passed in), for the unit tests.
 */
#ifndef BPFBOX_DAEMON_REFUSALS_H
#define BPFBOX_DAEMON_REFUSALS_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#define REFUSALS_FIRST 10 /* logged in full, per uid and window */
#define REFUSALS_WINDOW_S 60
#define REFUSALS_UIDS 64 /* uids with a window of their own */

struct refusal_window {
	bool used;
	uid_t uid;
	time_t start;
	unsigned logged; /* in full, at most REFUSALS_FIRST */
	unsigned long counted; /* refused but not logged: the summary's count */
};

struct refusals {
	struct refusal_window uids[REFUSALS_UIDS];
	struct refusal_window other; /* every uid that found the table full */
};

/* One window that ended with refusals it did not log: what its summary says. */
struct refusal_summary {
	bool other; /* the shared bucket: uid is meaningless */
	uid_t uid;
	unsigned long count;
	time_t seconds; /* how long the window was open */
};

void refusals_init(struct refusals *r);
/* Would the next refusal of uid be logged in full? */
bool refusals_would_log(const struct refusals *r, uid_t uid, time_t now);
/* Counts one refusal of uid, logged in full or not. */
void refusals_count(struct refusals *r, uid_t uid, time_t now, bool logged);
/* Counts one refusal of uid; true when it is to be logged in full. */
bool refusals_note(struct refusals *r, uid_t uid, time_t now);
/*
 * Closes every window over by now (all of them when stopping), calling
 * report for each that counted refusals it did not log; returns how many.
 */
size_t refusals_flush(struct refusals *r, time_t now, bool stopping,
		      void (*report)(void *ctx, const struct refusal_summary *s), void *ctx);

#endif
