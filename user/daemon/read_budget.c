// SPDX-License-Identifier: MIT
/* The daemon's per-uid budget of request bytes (read_budget.h). */
#include "read_budget.h"

static struct read_budget_slot *slot_of(struct read_budget *b, uid_t uid)
{
	struct read_budget_slot *fullest = NULL;

	for (size_t i = 0; i < READ_BUDGET_UIDS; i++) {
		struct read_budget_slot *s = &b->uids[i];

		if (s->used && s->uid == uid)
			return s;
		if (!fullest || !s->used || (fullest->used && s->tokens > fullest->tokens))
			fullest = s;
	}
	/* A new uid: a free slot, else the fullest one, given a full bucket. */
	*fullest = (struct read_budget_slot){ .used = true, .uid = uid, .tokens = READ_BUDGET_BURST, .at_ms = -1 };
	return fullest;
}

unsigned long long read_budget_left(struct read_budget *b, uid_t uid, long long now_ms)
{
	struct read_budget_slot *s = slot_of(b, uid);

	if (s->at_ms >= 0 && now_ms > s->at_ms) {
		unsigned long long add = (unsigned long long)(now_ms - s->at_ms) * READ_BUDGET_RATE / 1000;

		s->tokens = s->tokens + add > READ_BUDGET_BURST ? READ_BUDGET_BURST : s->tokens + add;
	}
	if (s->at_ms < 0 || now_ms > s->at_ms)
		s->at_ms = now_ms;
	return s->tokens;
}

void read_budget_spend(struct read_budget *b, uid_t uid, unsigned long long n)
{
	for (size_t i = 0; i < READ_BUDGET_UIDS; i++) {
		struct read_budget_slot *s = &b->uids[i];

		if (s->used && s->uid == uid) {
			s->tokens = n > s->tokens ? 0 : s->tokens - n;
			return;
		}
	}
}
