// SPDX-License-Identifier: MIT
/* Real values out of log lines (cred_redact.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cred_redact.h"
#include "cred_subst.h"

/*
 * For each position, the longest real value starting there (0: none) and
 * its pair; every occurrence, overlapping ones included.
 */
static void mark(const struct cred_table *t, const char *in, size_t len, size_t *span,
		size_t *who)
{
	size_t n = t ? cred_table_count(t) : 0;

	for (size_t i = 0; i < n; i++) {
		size_t rlen;
		const char *real = cred_table_real(t, i, &rlen);
		const char *p = in;

		if (!rlen)
			continue;
		while ((size_t)(p - in) < len) {
			p = memmem(p, len - (size_t)(p - in), real, rlen);
			if (!p)
				break;
			if (rlen > span[p - in]) {
				span[p - in] = rlen;
				who[p - in] = i;
			}
			p++;
		}
	}
}

static int emit_mask(struct cred_buf *b, const char *name)
{
	int ret = cred_buf_append(b, "[masked:", 8);

	if (!ret)
		ret = cred_buf_append(b, name, strlen(name));
	if (!ret)
		ret = cred_buf_append(b, "]", 1);
	return ret;
}

static int build(const struct cred_table *t, const char *in, size_t len, const size_t *span,
		 const size_t *who, struct cred_buf *b, size_t *count)
{
	size_t i = 0, plain = 0;
	int ret;

	while (i < len) {
		size_t end;

		if (!span[i]) {
			i++;
			continue;
		}
		ret = cred_buf_append(b, in + plain, i - plain);
		if (ret)
			return ret;
		/* Extend over every occurrence that starts inside the span. */
		end = i + span[i];
		for (size_t j = i + 1; j < end; j++)
			if (span[j] && j + span[j] > end)
				end = j + span[j];
		ret = emit_mask(b, cred_table_name(t, who[i]));
		if (ret)
			return ret;
		(*count)++;
		i = plain = end;
	}
	return cred_buf_append(b, in + plain, len - plain);
}

int cred_redact(const struct cred_table *t, const char *in, size_t len, char **out,
		size_t *out_len, size_t *count)
{
	struct cred_buf b = { 0 };
	size_t *span = NULL, *who = NULL, n = 0;
	int ret = -ENOMEM;

	if (len && len < SIZE_MAX / sizeof(size_t)) {
		span = calloc(len, sizeof(*span));
		who = calloc(len, sizeof(*who));
		if (!span || !who)
			goto cleanup;
	} else if (len) {
		goto cleanup;
	}
	if (len)
		mark(t, in, len, span, who);
	ret = build(t, in, len, span, who, &b, &n);
	if (!ret)
		ret = cred_buf_append(&b, "", 1);
	if (ret)
		goto cleanup;
	*out = b.data;
	if (out_len)
		*out_len = b.len - 1;
	if (count)
		*count = n;
	b.data = NULL;
cleanup:
	cred_buf_wipe(&b);
	free(span);
	free(who);
	return ret;
}
