// SPDX-License-Identifier: MIT
/* decode: "jwt": the strict parser, srt's fake token and maskClaims (user/cred/cred_jwt.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "cred/cred_jwt.h"
#include "cred/cred_subst.h"

#define LONG_EMAIL "a.very.long.address.for.testing.padding.of.claims@example.com"

/* base64url without padding, into out. */
static void b64url(const char *in, char *out)
{
	int n = EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)strlen(in));

	while (n > 0 && out[n - 1] == '=')
		n--;
	out[n] = '\0';
	for (char *p = out; *p; p++)
		*p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
}

static char *token(const char *header, const char *payload, const char *sig)
{
	char h[1024], p[1024], *t = malloc(2100);

	b64url(header, h);
	b64url(payload, p);
	snprintf(t, 2100, "%s.%s.%s", h, p, sig);
	return t;
}

static const char *HDR = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"k1\"}";
static const char *PAY = "{\"sub\":\"user-1234\",\"email\":\"" LONG_EMAIL "\",\"n\":1,\"exp\":2000000000}";

static void test_parse_valid(void **state)
{
	char *t = token(HDR, PAY, "c2ln");
	struct cred_jwt *j;

	assert_int_equal(cred_jwt_parse(t, strlen(t), &j), 0);
	assert_string_equal(cJSON_GetObjectItem(cred_jwt_header(j), "alg")->valuestring, "RS256");
	assert_string_equal(cJSON_GetObjectItem(cred_jwt_payload(j), "sub")->valuestring, "user-1234");
	cred_jwt_free(j);
	free(t);
	/* alg "none" has an empty signature. */
	t = token("{\"alg\":\"none\"}", "{}", "");
	assert_int_equal(cred_jwt_parse(t, strlen(t), &j), 0);
	cred_jwt_free(j);
	free(t);
}

static void test_parse_malformed(void **state)
{
	char h[256], p[256], bad[1024];
	const char *payloads[] = { "[1]", "\"s\"", "{\"a\":1", "{\"a\":1} x", "{\"a\":1,\"a\":2}", "" };
	const char *headers[] = { "{\"typ\":\"JWT\"}", "{\"alg\":1}", "[\"alg\"]",
				  "{\"alg\":\"x\",\"alg\":\"y\"}", "null" };
	struct cred_jwt *j = NULL;

	b64url(HDR, h);
	b64url(PAY, p);
	const char *shapes[] = { "%s.%s", "%s.%s.sig.x", "%s.%s.si+g", "%s.%s.sig=", "%s=.%s.sig",
				 ".%s%s.sig", "%s.%s.s/g", "%s..%s" };
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		snprintf(bad, sizeof(bad), shapes[i], h, p);
		if (cred_jwt_parse(bad, strlen(bad), &j) != -EINVAL)
			fail_msg("accepted %s", bad);
	}
	for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		char *t = token(HDR, payloads[i], "sig");

		assert_int_equal(cred_jwt_parse(t, strlen(t), &j), -EINVAL);
		free(t);
	}
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		char *t = token(headers[i], PAY, "sig");

		assert_int_equal(cred_jwt_parse(t, strlen(t), &j), -EINVAL);
		free(t);
	}
	/* "e30" is {}; "e31" has nonzero unused bits: not canonical. A 4n+1 length is no base64. */
	snprintf(bad, sizeof(bad), "%s.e31.sig", h);
	assert_int_equal(cred_jwt_parse(bad, strlen(bad), &j), -EINVAL);
	snprintf(bad, sizeof(bad), "%s.e30.sig", h);
	assert_int_equal(cred_jwt_parse(bad, strlen(bad), &j), 0);
	cred_jwt_free(j);
	snprintf(bad, sizeof(bad), "%s.e30ab.sig", h);
	assert_int_equal(cred_jwt_parse(bad, strlen(bad), &j), -EINVAL);
	/* A NUL inside the JSON: {"a":"x"} with the x a NUL byte. */
	snprintf(bad, sizeof(bad), "%s.eyJhIjoiACJ9.sig", h);
	assert_int_equal(cred_jwt_parse(bad, strlen(bad), &j), -EINVAL);
	assert_int_equal(cred_jwt_parse("", 0, &j), -EINVAL);
	assert_int_equal(cred_jwt_parse("..", 2, &j), -EINVAL);
}

/* What the stream makes of in: the real bytes the upstream would get. */
static char *restore(const struct cred_table *t, const char *in)
{
	struct cred_buf out = { 0 };

	assert_int_equal(cred_subst_once(t, NULL, in, strlen(in), &out, NULL), 0);
	assert_int_equal(cred_buf_append(&out, "", 1), 0);
	return out.data;
}

static void test_whole_token(void **state)
{
	char *t = token(HDR, PAY, "c2lnbmF0dXJl"), *fake, *back;
	struct cred_table *tab = cred_table_new();
	struct cred_jwt *j;
	size_t flen;
	const cJSON *sub;

	assert_int_equal(cred_jwt_mask(tab, "ID_TOKEN", t, strlen(t), NULL, 0, &fake, &flen, NULL),
			 0);
	assert_int_equal(strlen(fake), flen);
	assert_int_equal(cred_jwt_parse(fake, flen, &j), 0);
	assert_string_equal(cJSON_GetObjectItem(cred_jwt_header(j), "alg")->valuestring, "HS256");
	sub = cJSON_GetObjectItem(cred_jwt_payload(j), "sub");
	assert_int_equal(strlen(sub->valuestring), 47);
	assert_int_equal(strncmp(sub->valuestring, "fake_value_", 11), 0);
	assert_true(cJSON_GetObjectItem(cred_jwt_payload(j), "exp")->valuedouble == 9999999999.0);
	assert_string_equal(strrchr(fake, '.'), ".c3J0LWZha2U");
	cred_jwt_free(j);
	assert_int_equal(cred_table_count(tab), 1);
	back = restore(tab, fake);
	assert_string_equal(back, t);
	free(back);
	free(fake);
	cred_table_free(tab);
	free(t);
}

static void test_mask_claims(void **state)
{
	char *t = token(HDR, PAY, "c2ln"), *fake, *back, *header_end, buf[4096];
	const char *claims[] = { "sub", "missing", "n", "email", "sub" };
	struct cred_table *tab = cred_table_new();
	struct cred_jwt *j;
	size_t masked, flen;
	const char *sub, *email;

	assert_int_equal(cred_jwt_mask(tab, "ID_TOKEN", t, strlen(t), claims, 5, &fake, &flen,
				       &masked), 0);
	assert_int_equal(masked, 2);
	/* Two claim sentinels and the rebuilt token. */
	assert_int_equal(cred_table_count(tab), 3);
	header_end = strchr(t, '.');
	assert_memory_equal(fake, t, (size_t)(header_end - t + 1));
	assert_string_equal(strrchr(fake, '.'), ".c3J0LWZha2U");
	assert_int_equal(cred_jwt_parse(fake, flen, &j), 0);
	sub = cJSON_GetObjectItem(cred_jwt_payload(j), "sub")->valuestring;
	email = cJSON_GetObjectItem(cred_jwt_payload(j), "email")->valuestring;
	assert_int_equal(strncmp(sub, "fake_value_", 11), 0);
	assert_int_equal(strlen(sub), 47);
	/* A claim longer than 47 bytes gets a sentinel of its length. */
	assert_int_equal(strlen(email), strlen(LONG_EMAIL));
	assert_int_equal(cJSON_GetObjectItem(cred_jwt_payload(j), "n")->valueint, 1);
	/* Sent verbatim, the fake token becomes the real one. */
	back = restore(tab, fake);
	assert_string_equal(back, t);
	free(back);
	/* A claim taken out of it becomes the claim. */
	snprintf(buf, sizeof(buf), "{\"user\":\"%s\",\"mail\":\"%s\"}", sub, email);
	back = restore(tab, buf);
	assert_string_equal(back, "{\"user\":\"user-1234\",\"mail\":\"" LONG_EMAIL "\"}");
	free(back);
	cred_jwt_free(j);
	free(fake);
	cred_table_free(tab);
	free(t);
}

static void test_mask_claims_none_present(void **state)
{
	char *t = token(HDR, PAY, "c2ln"), *fake = NULL;
	const char *claims[] = { "n", "missing" };
	struct cred_table *tab = cred_table_new();

	assert_int_equal(cred_jwt_mask(tab, "T", t, strlen(t), claims, 2, &fake, NULL, NULL),
			 -ENOENT);
	assert_int_equal(cred_table_count(tab), 0);
	assert_null(fake);
	assert_int_equal(cred_jwt_mask(tab, "T", "not.a.jwt", 9, claims, 2, &fake, NULL, NULL),
			 -EINVAL);
	assert_int_equal(cred_jwt_mask(tab, "T", "not.a.jwt", 9, NULL, 0, &fake, NULL, NULL),
			 -EINVAL);
	assert_int_equal(cred_table_count(tab), 0);
	cred_table_free(tab);
	free(t);
}

static void test_fake_unique(void **state)
{
	char *a, *b;
	size_t la, lb;

	assert_int_equal(cred_jwt_fake(&a, &la), 0);
	assert_int_equal(cred_jwt_fake(&b, &lb), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(strncmp(a, "eyJ", 3), 0);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_whole_token),
		cmocka_unit_test(test_mask_claims),
		cmocka_unit_test(test_mask_claims_none_present),
		cmocka_unit_test(test_fake_unique),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
