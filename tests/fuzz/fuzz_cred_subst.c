// SPDX-License-Identifier: MIT
/*
 * The sentinel replacer (cred_subst): a body fed in chunks must come out as
 * one shot of the whole body makes it, and as a naive reference makes it;
 * the hold-back never passes the longest sentinel less one byte; a redacted
 * line keeps no real value. Input: a byte n (pairs, 1..4), then n times a
 * selection bit, a sentinel and a real value (each a length byte and its
 * bytes), then a byte of chunking seed, then the body.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "cred/cred_redact.h"
#include "cred/cred_subst.h"

struct in {
	const uint8_t *p;
	size_t n;
};

static int take(struct in *in, size_t len, const uint8_t **out)
{
	if (in->n < len)
		return -1;
	*out = in->p;
	in->p += len;
	in->n -= len;
	return 0;
}

/* Earliest position, then the first pair added; resume behind the sentinel. */
static void reference(const struct cred_table *t, const bool *sel, const uint8_t *b, size_t n,
		      struct cred_buf *out, size_t *replaced)
{
	size_t i = 0;

	*replaced = 0;
	while (i < n) {
		size_t k, sl, rl;
		const char *s = NULL;

		for (k = 0; k < cred_table_count(t); k++) {
			s = cred_table_sentinel(t, k, &sl);
			if (sel[k] && sl <= n - i && !memcmp(b + i, s, sl))
				break;
		}
		if (k == cred_table_count(t)) {
			FUZZ_CHECK(!cred_buf_append(out, b + i, 1));
			i++;
			continue;
		}
		s = cred_table_real(t, k, &rl);
		FUZZ_CHECK(!cred_buf_append(out, s, rl));
		i += sl;
		(*replaced)++;
	}
}

static void check_stream(const struct cred_table *t, const bool *sel, uint8_t seed,
			 const uint8_t *body, size_t n)
{
	struct cred_buf chunked = { 0 }, once = { 0 }, ref = { 0 };
	struct cred_stream *s;
	size_t max = 0, off = 0, n_once, n_ref, sl;

	for (size_t k = 0; k < cred_table_count(t); k++)
		if (sel[k] && cred_table_sentinel(t, k, &sl) && sl > max)
			max = sl;
	FUZZ_CHECK(!cred_stream_new(t, sel, &s));
	while (off < n) {
		size_t c = (size_t)(seed = (uint8_t)(seed * 37 + 11)) % 9;

		c = c > n - off ? n - off : c;
		FUZZ_CHECK(!cred_stream_feed(s, body + off, c, &chunked));
		FUZZ_CHECK(cred_stream_held(s) <= (max ? max - 1 : 0));
		off += c;
	}
	FUZZ_CHECK(!cred_stream_finish(s, &chunked));
	FUZZ_CHECK(!cred_subst_once(t, sel, body, n, &once, &n_once));
	reference(t, sel, body, n, &ref, &n_ref);
	FUZZ_CHECK(chunked.len == once.len && (!once.len || !memcmp(chunked.data, once.data, once.len)));
	FUZZ_CHECK(ref.len == once.len && (!once.len || !memcmp(ref.data, once.data, once.len)));
	FUZZ_CHECK(cred_stream_replaced(s) == n_once && n_once == n_ref);
	cred_stream_free(s);
	cred_buf_wipe(&chunked);
	cred_buf_wipe(&once);
	cred_buf_wipe(&ref);
}

/* A real value made of bytes the mask text never has cannot reappear in a redacted line. */
static void check_redact(const struct cred_table *t, const uint8_t *body, size_t n)
{
	char *out;
	size_t olen, rl;

	FUZZ_CHECK(!cred_redact(t, (const char *)body, n, &out, &olen, NULL));
	for (size_t k = 0; k < cred_table_count(t); k++) {
		const char *r = cred_table_real(t, k, &rl);

		if (rl && strcspn(r, "[masked:ABCD]") == rl)
			FUZZ_CHECK(!memmem(out, olen, r, rl));
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	const uint8_t *b, *sent, *real, *seed;
	struct cred_table *t = cred_table_new();
	bool sel[4];
	size_t npairs;
	static const char *const names[] = { "A", "B", "C", "D" };

	FUZZ_CHECK(t);
	if (take(&in, 1, &b))
		goto out;
	npairs = (size_t)b[0] % 4 + 1;
	for (size_t i = 0; i < npairs; i++) {
		const uint8_t *sel_b, *sl, *rl;
		int ret;

		if (take(&in, 1, &sel_b) || take(&in, 1, &sl) || take(&in, *sl % 16, &sent) ||
		    take(&in, 1, &rl) || take(&in, *rl % 16, &real))
			goto out;
		ret = cred_table_add(t, names[i], sent, *sl % 16, real, *rl % 16);
		FUZZ_CHECK(ret == -EINVAL || ret == (int)cred_table_count(t) - 1);
		if (ret >= 0)
			sel[ret] = *sel_b & 1;
	}
	if (take(&in, 1, &seed))
		goto out;
	check_stream(t, sel, *seed, in.p, in.n);
	memset(sel, 1, sizeof(sel));
	check_stream(t, sel, *seed, in.p, in.n);
	check_redact(t, in.p, in.n);
out:
	cred_table_free(t);
	return 0;
}
