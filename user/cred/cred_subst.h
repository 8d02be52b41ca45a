/* SPDX-License-Identifier: MIT */
/*
 * Masked credentials' table (sentinel -> real value, under the credential's
 * name) and the replacement of sentinels by real values in what a request
 * sends: a header value at once, a body as a stream of chunks.
 *
 * Matching is srt's: the earliest sentinel in the bytes wins, on a tie the
 * first added; after a replacement the scan resumes behind the sentinel, so
 * a real value put in is never scanned again. No sentinel may be a
 * substring of another (cred_table_add refuses it, as srt does), which makes
 * the result independent of where chunk boundaries fall.
 *
 * The table owns copies of every value and wipes them when freed. It is
 * read-only once built, so any number of streams may share it.
 */
#ifndef BPFBOX_CRED_SUBST_H
#define BPFBOX_CRED_SUBST_H

#include <stdbool.h>
#include <stddef.h>

struct cred_table;
struct cred_stream;

/* A growing byte buffer the replacers append to (the caller frees it). */
struct cred_buf {
	char *data;
	size_t len, cap;
};

int cred_buf_append(struct cred_buf *b, const void *p, size_t n);
/* Wipes the bytes (they may hold real values) and frees them. */
void cred_buf_wipe(struct cred_buf *b);

struct cred_table *cred_table_new(void);
/* Wipes every value. NULL is fine. */
void cred_table_free(struct cred_table *t);
/*
 * Adds sentinel -> real for the credential called name (a name may have
 * several pairs: an extract's captures, a JWT and its claims). Returns the
 * pair's index, or -EINVAL (empty sentinel, no name, a sentinel equal to,
 * inside or around one already added), -ENOMEM.
 */
int cred_table_add(struct cred_table *t, const char *name, const void *sentinel,
		   size_t sentinel_len, const void *real, size_t real_len);
/*
 * A new srt sentinel for real (cred_sentinel_make) added under name; the
 * sentinel in *sentinel (malloc'd) when sentinel is not NULL. The pair's
 * index or a negative errno.
 */
int cred_table_mask(struct cred_table *t, const char *name, const void *real, size_t real_len,
		    char **sentinel, size_t *sentinel_len);

size_t cred_table_count(const struct cred_table *t);
const char *cred_table_name(const struct cred_table *t, size_t i);
const char *cred_table_sentinel(const struct cred_table *t, size_t i, size_t *len);
/* The real value: for the replacers and the redactor, never for a log. */
const char *cred_table_real(const struct cred_table *t, size_t i, size_t *len);
/*
 * Does every selected pair (select[i], or all when select is NULL) have a
 * sentinel as long as its real value? Then a body keeps its length, and a
 * Content-Length stays right (srt's allLengthMatched).
 */
bool cred_table_length_matched(const struct cred_table *t, const bool *select);

/*
 * A stream replacing the selected pairs' sentinels (select[i] for pair i,
 * copied; NULL selects all; the proxy selects the pairs whose injectHosts
 * cover the request's host). It holds back at most the longest selected
 * sentinel's length - 1 bytes between feeds.
 */
int cred_stream_new(const struct cred_table *t, const bool *select, struct cred_stream **out);
void cred_stream_free(struct cred_stream *s);
/* Appends to out every byte of in that can no longer change. */
int cred_stream_feed(struct cred_stream *s, const void *in, size_t len, struct cred_buf *out);
/* The end of the input: appends the held-back bytes (no sentinel is in them). */
int cred_stream_finish(struct cred_stream *s, struct cred_buf *out);
/* Bytes held back now. */
size_t cred_stream_held(const struct cred_stream *s);
/* Replacements so far, in all and of pair i. */
size_t cred_stream_replaced(const struct cred_stream *s);
size_t cred_stream_pair_replaced(const struct cred_stream *s, size_t i);
/*
 * The distinct names of the pairs replaced so far, joined by ',' into
 * buf[cap] (NUL-terminated). 0, or -ENOSPC when they do not fit.
 */
int cred_stream_names(const struct cred_stream *s, char *buf, size_t cap);

/*
 * One-shot replacement (a header value, a URL): in[0..len) with the
 * selected sentinels replaced, appended to out; *replaced (when not NULL)
 * says how many. Same matching as a stream.
 */
int cred_subst_once(const struct cred_table *t, const bool *select, const void *in, size_t len,
		    struct cred_buf *out, size_t *replaced);

#endif
