/* SPDX-License-Identifier: MIT */
/*
 * A masked credential's sentinel, made as srt makes it: "fake_value_" and a
 * random uuid4 (47 bytes), padded with random [a-z0-9_-] up to the real
 * value's length when the real value is longer, so a body that carries it
 * keeps its Content-Length once the real value is put back. A shorter real
 * value keeps the 47 bytes (the uuid4's 122 random bits are never cut).
 * Every byte is in [a-z0-9_-]: it survives shells, JSON, URLs and forms.
 */
#ifndef BPFBOX_CRED_SENTINEL_H
#define BPFBOX_CRED_SENTINEL_H

#include <stddef.h>

#define CRED_SENTINEL_PREFIX "fake_value_"
#define CRED_SENTINEL_PREFIX_LEN (sizeof(CRED_SENTINEL_PREFIX) - 1)
#define CRED_SENTINEL_BASE_LEN (CRED_SENTINEL_PREFIX_LEN + 36)

/* A random uuid4, lowercase, 36 characters and a NUL into out[37]. */
int cred_uuid4(char out[37]);

/*
 * A new sentinel for real[0..real_len) in *out (malloc'd, NUL-terminated,
 * *out_len = max(47, real_len)); never equal to nor containing the real
 * value. 0, -ENOMEM, -EIO (no randomness), or -EINVAL for a non-empty real
 * value every sentinel would contain (a piece of the fixed prefix such as
 * "a" or "_val": no secret, and no sentinel can hide it).
 */
int cred_sentinel_make(const void *real, size_t real_len, char **out, size_t *out_len);

#endif
