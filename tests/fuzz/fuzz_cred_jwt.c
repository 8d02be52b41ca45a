// SPDX-License-Identifier: MIT
/*
 * decode: "jwt" (cred_jwt): a token the strict parser takes is masked for
 * every top-level claim; the token the command would see parses again,
 * keeps the header part byte for byte, and the table turns it back into the
 * very token. A token the parser refuses is refused by the masking too.
 * Input: the token.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "cred/cred_jwt.h"
#include "cred/cred_subst.h"

static void check_masked(const char *tok, size_t len, const char *fake, size_t flen,
			 const struct cred_table *t, bool same_header)
{
	struct cred_jwt *j;
	struct cred_buf back = { 0 };
	const char *dot = memchr(tok, '.', len);

	FUZZ_CHECK(cred_jwt_parse(fake, flen, &j) == 0);
	cred_jwt_free(j);
	FUZZ_CHECK(dot);
	if (same_header)
		FUZZ_CHECK(flen > (size_t)(dot - tok) && !memcmp(fake, tok, (size_t)(dot - tok) + 1));
	FUZZ_CHECK(!cred_subst_once(t, NULL, fake, flen, &back, NULL));
	FUZZ_CHECK(back.len == len && !memcmp(back.data, tok, len));
	cred_buf_wipe(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tok = malloc(size + 1), *fake = NULL;
	const char *claims[8];
	size_t n = 0, flen, masked;
	struct cred_table *t = cred_table_new();
	struct cred_jwt *j = NULL;
	int ret;

	FUZZ_CHECK(tok && t);
	memcpy(tok, data, size);
	tok[size] = '\0';
	ret = cred_jwt_parse(tok, size, &j);
	FUZZ_CHECK(ret == 0 || ret == -EINVAL);
	if (ret) {
		FUZZ_CHECK(cred_jwt_mask(t, "T", tok, size, NULL, 0, &fake, &flen, NULL) == -EINVAL);
		goto out;
	}
	FUZZ_CHECK(cJSON_IsObject(cred_jwt_header(j)) && cJSON_IsObject(cred_jwt_payload(j)));
	for (const cJSON *m = cred_jwt_payload(j)->child; m && n < 8; m = m->next)
		claims[n++] = m->string;
	/* n = 0 would mean the whole token, checked below. */
	ret = n ? cred_jwt_mask(t, "T", tok, size, claims, n, &fake, &flen, &masked) : -ENOENT;
	/* -EINVAL: a claim too short for any sentinel to hide (cred_sentinel_make). */
	FUZZ_CHECK(ret == 0 || ret == -ENOENT || ret == -EINVAL);
	if (!ret) {
		FUZZ_CHECK(masked >= 1 && masked <= n);
		check_masked(tok, size, fake, flen, t, true);
		free(fake);
		fake = NULL;
	}
	cred_table_free(t);
	t = cred_table_new();
	FUZZ_CHECK(t && cred_jwt_mask(t, "T", tok, size, NULL, 0, &fake, &flen, NULL) == 0);
	/* srt's fake has its own header: only the round trip holds. */
	check_masked(tok, size, fake, flen, t, false);
out:
	free(fake);
	cred_jwt_free(j);
	cred_table_free(t);
	free(tok);
	return 0;
}
