/* SPDX-License-Identifier: MIT */
/*
 * decode: "jwt" as srt does it. Without maskClaims the whole token becomes
 * a JWT-shaped fake (header {"alg":"HS256","typ":"JWT"}, payload
 * {"sub":"fake_value_<uuid4>","exp":9999999999}, signature
 * base64url("srt-fake")), and the proxy swaps that fake for the whole real
 * token. With maskClaims each named top-level claim present as a string
 * gets its own sentinel (cred_sentinel_make: 47 bytes, or the claim's
 * length when longer), and the token the command sees is the real header
 * segment verbatim, the payload re-encoded with those sentinels, and the
 * same filler signature (never the real one: with RS/ES keys it would let
 * the sandbox test guesses of a masked claim offline). Both the claim
 * sentinels and the rebuilt token are restored: the rebuilt token as the
 * whole real token (a client sending it verbatim), each claim sentinel as
 * its claim (a client that took the claim out).
 *
 * The parser is stricter than srt's (which takes anything Node's lenient
 * base64url decoder and JSON.parse accept): three parts of canonical
 * base64url without padding, header and payload JSON objects without a NUL
 * or a repeated top-level key, the header's "alg" a string.
 */
#ifndef BPFBOX_CRED_JWT_H
#define BPFBOX_CRED_JWT_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct cred_table;
struct cred_jwt;

/* The longest token parsed. */
#define CRED_JWT_MAX (1024 * 1024)

/* 0, -EINVAL (not a JWT by the rules above), -ENOMEM. */
int cred_jwt_parse(const char *token, size_t len, struct cred_jwt **out);
void cred_jwt_free(struct cred_jwt *j);
const cJSON *cred_jwt_header(const struct cred_jwt *j);
const cJSON *cred_jwt_payload(const struct cred_jwt *j);

/* srt's fake token for a new uuid4, in *out (malloc'd, NUL-terminated). */
int cred_jwt_fake(char **out, size_t *out_len);

/*
 * Masks token[0..len) for the credential name: the pairs go into t, the
 * token the command sees into *fake (malloc'd, NUL-terminated), and
 * *masked (when not NULL) says how many claims were masked. claims[0..n)
 * are maskClaims (n = 0: the whole token). Returns 0; -EINVAL when token
 * is not a JWT; -ENOENT when none of the claims is present as a string
 * (nothing added: srt warns and leaves the variable as it was);
 * -ENOMEM; or cred_table_add's error. After an error other than -EINVAL
 * and -ENOENT the table may hold some of the pairs: stop the run.
 */
int cred_jwt_mask(struct cred_table *t, const char *name, const char *token, size_t len,
		  const char *const *claims, size_t n, char **fake, size_t *fake_len,
		  size_t *masked);

#endif
