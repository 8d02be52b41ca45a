// SPDX-License-Identifier: MIT
/* Sentinels for masked credentials, with srt's shape (cred_sentinel.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/openssl_lazy.h"

#include "cred_sentinel.h"

static const char PAD_ALPHABET[] = "abcdefghijklmnopqrstuvwxyz0123456789_-";
/* Random tries before a real value is called one every sentinel contains. */
#define MAKE_TRIES 64

int cred_uuid4(char out[37])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	size_t o = 0;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -EIO;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (size_t i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 15];
	}
	out[o] = '\0';
	return 0;
}

/* Pads with unbiased random alphabet bytes (rejection sampling). */
static int pad(char *p, size_t n)
{
	const unsigned limit = 256 - 256 % (sizeof(PAD_ALPHABET) - 1);
	unsigned char r[64];

	while (n) {
		if (RAND_bytes(r, sizeof(r)) != 1)
			return -EIO;
		for (size_t i = 0; i < sizeof(r) && n; i++) {
			if (r[i] >= limit)
				continue;
			*p++ = PAD_ALPHABET[r[i] % (sizeof(PAD_ALPHABET) - 1)];
			n--;
		}
	}
	return 0;
}

static int make_once(char *s, size_t len)
{
	char uuid[37];
	int ret = cred_uuid4(uuid);

	if (ret)
		return ret;
	memcpy(s, CRED_SENTINEL_PREFIX, CRED_SENTINEL_PREFIX_LEN);
	memcpy(s + CRED_SENTINEL_PREFIX_LEN, uuid, 36);
	s[len] = '\0';
	return pad(s + CRED_SENTINEL_BASE_LEN, len - CRED_SENTINEL_BASE_LEN);
}

int cred_sentinel_make(const void *real, size_t real_len, char **out, size_t *out_len)
{
	size_t len = real_len > CRED_SENTINEL_BASE_LEN ? real_len : CRED_SENTINEL_BASE_LEN;
	char *s = malloc(len + 1);
	int ret = -EINVAL;

	if (!s)
		return -ENOMEM;
	for (int i = 0; i < MAKE_TRIES; i++) {
		ret = make_once(s, len);
		if (ret)
			break;
		/* Equal lengths make "contains" mean "equal". */
		if (!real_len || !memmem(s, len, real, real_len)) {
			*out = s;
			*out_len = len;
			return 0;
		}
		ret = -EINVAL;
	}
	free(s);
	return ret;
}
