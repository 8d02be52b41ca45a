// SPDX-License-Identifier: MIT
/* Refusals per uid and window: the first ones in full, the rest counted (refusals.h). */
#include <string.h>

#include "refusals.h"

void refusals_init(struct refusals *r)
{
	memset(r, 0, sizeof(*r));
}

/* The uid's window, else a free slot for it, else the shared bucket; NULL only for a lookup. */
static struct refusal_window *window_of(struct refusals *r, uid_t uid, bool take)
{
	struct refusal_window *free_slot = NULL;

	for (size_t i = 0; i < REFUSALS_UIDS; i++) {
		if (r->uids[i].used && r->uids[i].uid == uid)
			return &r->uids[i];
		if (!r->uids[i].used && !free_slot)
			free_slot = &r->uids[i];
	}
	if (!free_slot)
		return &r->other;
	if (!take)
		return NULL;
	free_slot->used = true;
	free_slot->uid = uid;
	return free_slot;
}

/*
 * A window opens at its first refusal. One that is over but not flushed yet
 * (the daemon flushes once a second) still takes refusals: its summary comes
 * at most a tick late, and nothing is counted twice or lost.
 */
bool refusals_would_log(const struct refusals *r, uid_t uid, time_t now)
{
	struct refusal_window *w = window_of((struct refusals *)r, uid, false);

	(void)now;
	return !w || !w->used || w->logged < REFUSALS_FIRST;
}

void refusals_count(struct refusals *r, uid_t uid, time_t now, bool logged)
{
	struct refusal_window *w = window_of(r, uid, true);

	/* A fresh slot, the shared bucket's first refusal, or a window flushed since. */
	if (!w->used || (!w->logged && !w->counted)) {
		w->used = true;
		w->start = now;
	}
	if (logged && w->logged < REFUSALS_FIRST)
		w->logged++;
	else
		w->counted++;
}

bool refusals_note(struct refusals *r, uid_t uid, time_t now)
{
	bool log = refusals_would_log(r, uid, now);

	refusals_count(r, uid, now, log);
	return log;
}

static bool flush_one(struct refusal_window *w, time_t now, bool stopping, bool other,
		      void (*report)(void *ctx, const struct refusal_summary *s), void *ctx)
{
	struct refusal_summary s = { .other = other, .uid = w->uid, .count = w->counted };

	if (!w->used || (!stopping && now - w->start < REFUSALS_WINDOW_S))
		return false;
	s.seconds = now - w->start;
	memset(w, 0, sizeof(*w));
	if (!s.count)
		return false;
	report(ctx, &s);
	return true;
}

size_t refusals_flush(struct refusals *r, time_t now, bool stopping,
		      void (*report)(void *ctx, const struct refusal_summary *s), void *ctx)
{
	size_t n = 0;

	for (size_t i = 0; i < REFUSALS_UIDS; i++)
		n += flush_one(&r->uids[i], now, stopping, false, report, ctx);
	n += flush_one(&r->other, now, stopping, true, report, ctx);
	return n;
}
