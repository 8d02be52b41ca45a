// SPDX-License-Identifier: MIT
/*
 * extract (cred_extract, cred_regex): srt's JavaScript pattern becomes a
 * POSIX ERE or a refusal with a reason; a value masked with it comes back
 * whole through the table, with every sentinel gone. Input: the pattern up
 * to the first NUL, then a flag byte (maskDuplicates), then the value.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "cred/cred_extract.h"
#include "cred/cred_sentinel.h"
#include "cred/cred_subst.h"

static void check_mask(const struct cred_extract *x, const char *value, size_t len, bool dup)
{
	struct cred_table *t = cred_table_new();
	struct cred_buf back = { 0 };
	char *fake = NULL;
	size_t flen, caps;
	int ret;

	FUZZ_CHECK(t);
	ret = cred_extract_mask(x, t, "V", value, len, dup, &fake, &flen, &caps);
	FUZZ_CHECK(ret == 0 || ret == -ENOENT || ret == -EINVAL);
	if (ret == -ENOENT)
		FUZZ_CHECK(cred_table_count(t) == 0);
	if (!ret) {
		FUZZ_CHECK(caps >= 1 && caps == cred_table_count(t) && strlen(fake) == flen);
		FUZZ_CHECK(memmem(fake, flen, CRED_SENTINEL_PREFIX, CRED_SENTINEL_PREFIX_LEN));
		FUZZ_CHECK(!cred_subst_once(t, NULL, fake, flen, &back, NULL));
		FUZZ_CHECK(back.len == len && !memcmp(back.data, value, len));
	}
	cred_buf_wipe(&back);
	free(fake);
	cred_table_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t plen = nul ? (size_t)(nul - data) : size, vlen;
	char *pattern = malloc(plen + 1), *value = NULL, why[256];
	struct cred_extract *x = NULL;
	bool dup = false;
	int ret;

	FUZZ_CHECK(pattern);
	memcpy(pattern, data, plen);
	pattern[plen] = '\0';
	ret = cred_extract_compile(pattern, &x, why, sizeof(why));
	FUZZ_CHECK(ret == 0 || ret == -EINVAL);
	if (ret) {
		FUZZ_CHECK(why[0] != '\0');
		goto out;
	}
	if (nul && nul + 1 < data + size) {
		dup = nul[1] & 1;
		data = nul + 2;
		size -= plen + 2;
	} else {
		size = 0;
	}
	/* regexec is not linear: a bounded value keeps each run short. */
	vlen = size > 2048 ? 2048 : size;
	value = malloc(vlen + 1);
	FUZZ_CHECK(value);
	memcpy(value, data, vlen);
	value[vlen] = '\0';
	if (memchr(value, '\0', vlen)) {
		FUZZ_CHECK(cred_extract_mask(x, NULL, "V", value, vlen, dup, NULL, NULL, NULL) ==
			   -EINVAL);
		goto out;
	}
	check_mask(x, value, vlen, dup);
out:
	cred_extract_free(x);
	free(pattern);
	free(value);
	return 0;
}
