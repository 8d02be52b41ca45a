// SPDX-License-Identifier: MIT
/* decode: "jwt": the strict parser and the masking of claims (cred_jwt.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cred_jwt.h"
#include "cred_sentinel.h"
#include "cred_subst.h"
#include "lib/json_keys.h"

/* base64url("srt-fake"): never a valid signature. */
#define FAKE_SIGNATURE "c3J0LWZha2U"
#define FAKE_EXP 9999999999.0

struct cred_jwt {
	cJSON *header;
	cJSON *payload;
	size_t header_seg_len;	/* the first part, kept verbatim by masking */
};

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int b64url_value(char c)
{
	const char *p = c ? strchr(B64URL, c) : NULL;

	return p ? (int)(p - B64URL) : -1;
}

/* Canonical unpadded base64url only: unused low bits of the last character are zero. */
static int b64url_decode(const char *s, size_t n, char **out, size_t *out_len)
{
	char *d;
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;

	if (n % 4 == 1)
		return -EINVAL;
	d = malloc(n / 4 * 3 + 3);
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int v = b64url_value(s[i]);

		if (v < 0)
			goto bad;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			d[o++] = (char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (acc)
		goto bad;
	d[o] = '\0';
	*out = d;
	*out_len = o;
	return 0;
bad:
	free(d);
	return -EINVAL;
}

static char *b64url_encode(const char *p, size_t n)
{
	char *e = malloc(n / 3 * 4 + 5);
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;

	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8) | (unsigned char)p[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			e[o++] = B64URL[(acc >> bits) & 63];
		}
		acc &= (1u << bits) - 1;
	}
	if (bits)
		e[o++] = B64URL[(acc << (6 - bits)) & 63];
	e[o] = '\0';
	return e;
}

/* One part decoded as a JSON object without a NUL or a repeated top-level key. */
static int part_object(const char *s, size_t n, cJSON **out)
{
	char *text;
	size_t len;
	cJSON *obj;
	int ret = b64url_decode(s, n, &text, &len);

	if (ret)
		return ret;
	obj = memchr(text, '\0', len) ? NULL : cJSON_ParseWithOpts(text, NULL, 1);
	explicit_bzero(text, len);
	free(text);
	if (!cJSON_IsObject(obj))
		goto bad;
	for (const cJSON *m = obj->child; m; m = m->next)
		if (json_key_repeated(m))
			goto bad;
	*out = obj;
	return 0;
bad:
	cJSON_Delete(obj);
	return -EINVAL;
}

int cred_jwt_parse(const char *token, size_t len, struct cred_jwt **out)
{
	const char *dot1, *dot2;
	struct cred_jwt *j;
	int ret;

	if (!token || len > CRED_JWT_MAX)
		return -EINVAL;
	dot1 = memchr(token, '.', len);
	dot2 = dot1 ? memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token)) : NULL;
	if (!dot2 || memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)))
		return -EINVAL;
	/* The signature: base64url characters, possibly none (alg "none"). */
	for (const char *p = dot2 + 1; p < token + len; p++)
		if (b64url_value(*p) < 0)
			return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	ret = part_object(token, (size_t)(dot1 - token), &j->header);
	if (!ret)
		ret = part_object(dot1 + 1, (size_t)(dot2 - dot1 - 1), &j->payload);
	if (!ret && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j->header, "alg")))
		ret = -EINVAL;
	if (ret) {
		cred_jwt_free(j);
		return ret;
	}
	j->header_seg_len = (size_t)(dot1 - token);
	*out = j;
	return 0;
}

/* Claims may be secrets: their copies are wiped before cJSON frees them. */
static void wipe_json(cJSON *v)
{
	for (; v; v = v->next) {
		if (v->valuestring)
			explicit_bzero(v->valuestring, strlen(v->valuestring));
		wipe_json(v->child);
	}
}

void cred_jwt_free(struct cred_jwt *j)
{
	if (!j)
		return;
	wipe_json(j->header);
	wipe_json(j->payload);
	cJSON_Delete(j->header);
	cJSON_Delete(j->payload);
	free(j);
}

const cJSON *cred_jwt_header(const struct cred_jwt *j)
{
	return j->header;
}

const cJSON *cred_jwt_payload(const struct cred_jwt *j)
{
	return j->payload;
}

/* header_seg "." base64url(payload) "." filler, in *out. */
static int assemble(const char *header_seg, size_t header_len, const cJSON *payload, char **out,
		    size_t *out_len)
{
	char *json = cJSON_PrintUnformatted(payload), *enc = NULL, *t = NULL;
	size_t elen, len;
	int ret = -ENOMEM;

	if (!json)
		return -ENOMEM;
	enc = b64url_encode(json, strlen(json));
	if (!enc)
		goto cleanup;
	elen = strlen(enc);
	len = header_len + 1 + elen + 1 + strlen(FAKE_SIGNATURE);
	t = malloc(len + 1);
	if (!t)
		goto cleanup;
	memcpy(t, header_seg, header_len);
	t[header_len] = '.';
	memcpy(t + header_len + 1, enc, elen);
	t[header_len + 1 + elen] = '.';
	strcpy(t + header_len + 2 + elen, FAKE_SIGNATURE);
	*out = t;
	*out_len = len;
	ret = 0;
cleanup:
	explicit_bzero(json, strlen(json));
	free(json);
	free(enc);
	return ret;
}

int cred_jwt_fake(char **out, size_t *out_len)
{
	static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
	char uuid[37], sub[CRED_SENTINEL_BASE_LEN + 1], *hseg;
	cJSON *payload = cJSON_CreateObject();
	int ret = cred_uuid4(uuid);

	if (!payload)
		return -ENOMEM;
	if (ret)
		goto cleanup;
	strcpy(sub, CRED_SENTINEL_PREFIX);
	strcat(sub, uuid);
	ret = -ENOMEM;
	if (!cJSON_AddStringToObject(payload, "sub", sub) ||
	    !cJSON_AddNumberToObject(payload, "exp", FAKE_EXP))
		goto cleanup;
	hseg = b64url_encode(header, strlen(header));
	if (!hseg)
		goto cleanup;
	ret = assemble(hseg, strlen(hseg), payload, out, out_len);
	free(hseg);
cleanup:
	cJSON_Delete(payload);
	return ret;
}

/* The whole token for a new fake, as srt does without maskClaims. */
static int mask_whole(struct cred_table *t, const char *name, const char *token, size_t len,
		      char **fake, size_t *fake_len)
{
	int ret = cred_jwt_fake(fake, fake_len);

	if (ret)
		return ret;
	ret = cred_table_add(t, name, *fake, *fake_len, token, len);
	if (ret < 0) {
		free(*fake);
		return ret;
	}
	return 0;
}

static bool listed_before(const char *const *claims, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(claims[k], claims[i]))
			return true;
	return false;
}

/* Each named string claim for a sentinel, in the payload and in t. */
static int mask_claims(struct cred_table *t, const char *name, cJSON *payload,
		       const char *const *claims, size_t n, size_t *masked)
{
	for (size_t i = 0; i < n; i++) {
		cJSON *c = cJSON_GetObjectItemCaseSensitive(payload, claims[i]), *s;
		char *sentinel;
		int ret;

		if (!cJSON_IsString(c) || listed_before(claims, i))
			continue;
		ret = cred_table_mask(t, name, c->valuestring, strlen(c->valuestring), &sentinel,
				      NULL);
		if (ret < 0)
			return ret;
		s = cJSON_CreateString(sentinel);
		free(sentinel);
		if (!s || !cJSON_ReplaceItemInObjectCaseSensitive(payload, claims[i], s)) {
			cJSON_Delete(s);
			return -ENOMEM;
		}
		(*masked)++;
	}
	return 0;
}

static bool any_string_claim(const cJSON *payload, const char *const *claims, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(payload, claims[i])))
			return true;
	return false;
}

int cred_jwt_mask(struct cred_table *t, const char *name, const char *token, size_t len,
		  const char *const *claims, size_t n, char **fake, size_t *fake_len,
		  size_t *masked)
{
	struct cred_jwt *j;
	size_t count = 0, flen;
	char *f = NULL;
	int ret = cred_jwt_parse(token, len, &j);

	if (ret)
		return ret;
	if (!n) {
		ret = mask_whole(t, name, token, len, &f, &flen);
		goto cleanup;
	}
	/* Checked before any sentinel is made, so -ENOENT leaves t as it was. */
	ret = -ENOENT;
	if (!any_string_claim(j->payload, claims, n))
		goto cleanup;
	ret = mask_claims(t, name, j->payload, claims, n, &count);
	if (!ret)
		ret = assemble(token, j->header_seg_len, j->payload, &f, &flen);
	if (!ret)
		ret = cred_table_add(t, name, f, flen, token, len);
	if (ret > 0)
		ret = 0;
	if (ret) {
		free(f);
		f = NULL;
	}
cleanup:
	cred_jwt_free(j);
	if (!ret) {
		*fake = f;
		if (fake_len)
			*fake_len = flen;
		if (masked)
			*masked = count;
	}
	return ret;
}
