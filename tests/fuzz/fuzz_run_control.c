// SPDX-License-Identifier: MIT
/*
 * What arrives on a sandbox's control socket (sandbox/run_control_json.c):
 * the decoder never crashes, a request it takes keeps to its bounds and
 * encodes to one that decodes the same; the answer decoder likewise.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sandbox/run_control.h"

static void same(const struct run_control_request *a, const struct run_control_request *b)
{
	FUZZ_CHECK(a->op == b->op && a->for_caller == b->for_caller && a->for_uid == b->for_uid);
	FUZZ_CHECK(a->n_allow == b->n_allow && a->n_deny == b->n_deny);
	for (size_t i = 0; i < a->n_allow; i++)
		FUZZ_CHECK(!strcmp(a->allow[i], b->allow[i]));
	for (size_t i = 0; i < a->n_deny; i++)
		FUZZ_CHECK(!strcmp(a->deny[i], b->deny[i]));
	FUZZ_CHECK(!a->policy == !b->policy && (!a->policy || !strcmp(a->policy, b->policy)));
	FUZZ_CHECK(!a->ceiling == !b->ceiling && (!a->ceiling || !strcmp(a->ceiling, b->ceiling)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_control_request q, back;
	struct errmsg em = { { 0 } };
	char *text, *msg = NULL;
	bool ok;

	if (!run_control_request_decode((const char *)data, size, &q, &em)) {
		FUZZ_CHECK(q.op >= RUN_CONTROL_UPDATE && q.op <= RUN_CONTROL_STATUS);
		FUZZ_CHECK((q.op == RUN_CONTROL_CEILING || q.op == RUN_CONTROL_PREVIEW) == !!q.ceiling);
		FUZZ_CHECK(q.n_allow <= RUN_CONTROL_NAMES_MAX && q.n_deny <= RUN_CONTROL_NAMES_MAX);
		FUZZ_CHECK(!q.policy || q.policy_len <= RUN_CONTROL_POLICY_MAX);
		FUZZ_CHECK(q.op != RUN_CONTROL_UPDATE || !!q.policy != !!(q.n_allow + q.n_deny));
		text = run_control_request_encode(&q);
		FUZZ_CHECK(text != NULL);
		FUZZ_CHECK(!run_control_request_decode(text, strlen(text), &back, &em));
		same(&q, &back);
		run_control_request_free(&back);
		free(text);
	} else {
		FUZZ_CHECK(em.text[0]);
	}
	run_control_request_free(&q);
	if (!run_control_answer_decode((const char *)data, size, &ok, &msg, &em))
		FUZZ_CHECK(msg != NULL);
	free(msg);
	return 0;
}
