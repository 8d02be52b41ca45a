// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy suggest` on a hostile log: the input's lines go through the
 * suggester, and whatever it proposes, merged into the empty policy, must load
 * (every entry was checked alone, and none conflicts); a second merge adds
 * nothing; the report prints. Nothing may crash, leak or read out of bounds.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "log/log_utf8.h"
#include "policy/policy.h"
#include "policy/policy_suggest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_load_opts lo = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy_suggest s;
	struct policy *p = NULL;
	const char *at = (const char *)data, *end = at + size;
	FILE *sink = fopen("/dev/null", "w");
	cJSON *doc;
	char *text;
	int added;

	/* The first byte picks the collapse threshold: 0 (exact), 1, 2 or 8. */
	policy_suggest_init(&s, size && (data[0] & 4) ? "s1" : NULL,
			    size ? (unsigned[]){ 0, 1, 2, 8 }[data[0] & 3] : 8);
	while (at < end) {
		const char *nl = memchr(at, '\n', end - at);
		size_t len = nl ? (size_t)(nl - at) : (size_t)(end - at);

		FUZZ_CHECK(policy_suggest_line(&s, at, len) == 0);
		at += len + 1;
	}
	FUZZ_CHECK(policy_suggest_finish(&s) == 0);
	doc = policy_suggest_skeleton();
	FUZZ_CHECK(doc);
	added = policy_suggest_merge(&s, doc);
	FUZZ_CHECK(added >= 0);
	FUZZ_CHECK(policy_suggest_merge(&s, doc) == 0);
	text = cJSON_Print(doc);
	FUZZ_CHECK(text);
	if (policy_load_buffer(NULL, text, strlen(text), &lo, &p, &d)) {
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "%s: %s\n", d.items[i].path ? d.items[i].path : "",
				d.items[i].message);
		FUZZ_CHECK(!"the proposal loads");
	}
	if (sink) {
		policy_suggest_report(&s, sink, log_terminal_text);
		fclose(sink);
	}
	policy_free(p);
	diag_list_free(&d);
	free(text);
	cJSON_Delete(doc);
	policy_suggest_free(&s);
	return 0;
}
