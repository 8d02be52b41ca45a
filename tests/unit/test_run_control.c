// SPDX-License-Identifier: MIT
/* A running sandbox's control socket protocol: the strict request decoder, the encoders, ids. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox/run_control.h"

static int decode(const char *json, struct run_control_request *q, struct errmsg *em)
{
	memset(em, 0, sizeof(*em));
	return run_control_request_decode(json, strlen(json), q, em);
}

/* Every request the decoder takes encodes back to one that decodes the same. */
static void round_trip(void **state)
{
	const char *ok[] = {
		"{\"v\":1,\"op\":\"update\",\"policy\":\"{\\\"network\\\":{}}\"}",
		"{\"v\":1,\"op\":\"update\",\"for_uid\":1000,\"allow\":[\"a.test\",\"*.b.test\"],\"deny\":[\"c.test\"]}",
		"{\"v\":1,\"op\":\"update\",\"deny\":[\"c.test\"]}",
		"{\"v\":1,\"op\":\"ceiling\",\"ceiling\":\"{}\"}",
		"{\"v\":1,\"op\":\"preview\",\"ceiling\":\"{\\\"network\\\":{}}\"}",
		"{\"v\":1,\"op\":\"status\"}",
	};
	struct run_control_request q, back;
	struct errmsg em;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char *text;

		assert_int_equal(decode(ok[i], &q, &em), 0);
		text = run_control_request_encode(&q);
		assert_non_null(text);
		assert_int_equal(decode(text, &back, &em), 0);
		assert_int_equal(q.op, back.op);
		assert_int_equal(q.for_caller, back.for_caller);
		assert_int_equal(q.for_uid, back.for_uid);
		assert_int_equal(q.n_allow, back.n_allow);
		assert_int_equal(q.n_deny, back.n_deny);
		for (size_t j = 0; j < q.n_allow; j++)
			assert_string_equal(q.allow[j], back.allow[j]);
		if (q.policy)
			assert_string_equal(q.policy, back.policy);
		if (q.ceiling)
			assert_string_equal(q.ceiling, back.ceiling);
		free(text);
		run_control_request_free(&q);
		run_control_request_free(&back);
	}
	assert_int_equal(decode(ok[1], &q, &em), 0);
	assert_true(q.for_caller);
	assert_int_equal(q.for_uid, 1000);
	assert_int_equal(q.n_allow, 2);
	assert_string_equal(q.allow[1], "*.b.test");
	run_control_request_free(&q);
}

/* Each malformed request is refused with the field named. */
static void refused(void **state)
{
	static const struct {
		const char *json, *field;
	} bad[] = {
		{ "[]", "object" },
		{ "{\"op\":\"update\",\"policy\":\"{}\"}", "v" },
		{ "{\"v\":2,\"op\":\"update\",\"policy\":\"{}\"}", "v" },
		{ "{\"v\":1,\"op\":\"reload\"}", "op" },
		{ "{\"v\":1,\"op\":\"update\"}", "policy" },
		{ "{\"v\":1,\"op\":\"update\",\"policy\":\"{}\",\"allow\":[\"a.test\"]}", "not both" },
		{ "{\"v\":1,\"op\":\"update\",\"policy\":\"{}\",\"policy\":\"{}\"}", "repeated" },
		{ "{\"v\":1,\"op\":\"update\",\"policy\":\"{}\",\"extra\":1}", "extra" },
		{ "{\"v\":1,\"op\":\"update\",\"policy\":7}", "policy" },
		{ "{\"v\":1,\"op\":\"update\",\"allow\":\"a.test\"}", "allow" },
		{ "{\"v\":1,\"op\":\"update\",\"allow\":[\"\"]}", "allow[0]" },
		{ "{\"v\":1,\"op\":\"update\",\"deny\":[7]}", "deny[0]" },
		{ "{\"v\":1,\"op\":\"update\",\"policy\":\"{}\",\"for_uid\":-1}", "for_uid" },
		{ "{\"v\":1,\"op\":\"update\",\"policy\":\"{}\",\"for_uid\":1.5}", "for_uid" },
		{ "{\"v\":1,\"op\":\"update\",\"policy\":\"{}\",\"for_uid\":1e300}", "for_uid" },
		{ "{\"v\":1,\"op\":\"ceiling\"}", "ceiling" },
		{ "{\"v\":1,\"op\":\"ceiling\",\"ceiling\":\"{}\",\"for_uid\":5}", "for_uid" },
		{ "{\"v\":1,\"op\":\"ceiling\",\"ceiling\":\"{}\",\"policy\":\"{}\"}", "policy" },
		{ "{\"v\":1,\"op\":\"preview\"}", "ceiling" },
		{ "{\"v\":1,\"op\":\"preview\",\"ceiling\":\"{}\",\"for_uid\":5}", "for_uid" },
		{ "{\"v\":1,\"op\":\"status\",\"ceiling\":\"{}\"}", "ceiling" },
		{ "{\"v\":1,\"op\":\"stop\"}", "op" },
	};
	struct run_control_request q;
	struct errmsg em;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_true(decode(bad[i].json, &q, &em) < 0);
		if (!strstr(em.text, bad[i].field))
			fail_msg("%s: the message \"%s\" does not name %s", bad[i].json, em.text, bad[i].field);
		run_control_request_free(&q);
	}
}

/* More names than a request may carry, a name too long, a document too long. */
static void bounds(void **state)
{
	size_t cap = 64 + (RUN_CONTROL_NAMES_MAX + 1) * 8 + RUN_CONTROL_POLICY_MAX + 64;
	char *json = malloc(cap), *p;
	struct run_control_request q;
	struct errmsg em;

	assert_non_null(json);
	p = json + sprintf(json, "{\"v\":1,\"op\":\"update\",\"allow\":[");
	for (int i = 0; i <= RUN_CONTROL_NAMES_MAX; i++)
		p += sprintf(p, "%s\"n%d.t\"", i ? "," : "", i);
	strcpy(p, "]}");
	assert_int_equal(decode(json, &q, &em), -E2BIG);
	run_control_request_free(&q);

	p = json + sprintf(json, "{\"v\":1,\"op\":\"update\",\"allow\":[\"");
	memset(p, 'a', RUN_CONTROL_NAME_MAX + 1);
	strcpy(p + RUN_CONTROL_NAME_MAX + 1, "\"]}");
	assert_int_equal(decode(json, &q, &em), -EINVAL);
	run_control_request_free(&q);

	p = json + sprintf(json, "{\"v\":1,\"op\":\"update\",\"policy\":\"");
	memset(p, ' ', RUN_CONTROL_POLICY_MAX + 1);
	strcpy(p + RUN_CONTROL_POLICY_MAX + 1, "\"}");
	assert_int_equal(decode(json, &q, &em), -E2BIG);
	run_control_request_free(&q);
	free(json);
}

static void answers(void **state)
{
	char *text = run_control_answer_encode(false, "a \"quoted\"\nmessage"), *msg = NULL;
	struct errmsg em = { { 0 } };
	bool ok = true;

	assert_non_null(text);
	assert_int_equal(run_control_answer_decode(text, strlen(text), &ok, &msg, &em), 0);
	assert_false(ok);
	assert_string_equal(msg, "a \"quoted\"\nmessage");
	free(msg);
	free(text);
	assert_true(run_control_answer_decode("{\"ok\":true}", 11, &ok, &msg, &em) < 0);
	assert_null(msg);
	assert_true(run_control_answer_decode("{\"v\":1,\"ok\":1,\"message\":\"\"}", 27, &ok, &msg, &em) < 0);
	assert_null(msg);
}

/* An id names a registry entry and nothing else. */
static void ids(void **state)
{
	assert_true(run_control_id_valid("bb-0123456789abcdef"));
	assert_false(run_control_id_valid("bb-"));
	assert_false(run_control_id_valid("bb-../../etc"));
	assert_false(run_control_id_valid("bb-ABC"));
	assert_false(run_control_id_valid("xx-0123"));
	assert_false(run_control_id_valid("bb-0123456789abcdef0123456789abcdef"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip), cmocka_unit_test(refused), cmocka_unit_test(bounds),
		cmocka_unit_test(answers),    cmocka_unit_test(ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
