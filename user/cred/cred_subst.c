// SPDX-License-Identifier: MIT
/* The masked credentials' table and the sentinel replacers (cred_subst.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cred_sentinel.h"
#include "cred_subst.h"

struct cred_pair {
	char *name;
	char *sentinel;
	size_t sentinel_len;
	char *real;
	size_t real_len;
};

struct cred_table {
	struct cred_pair *pairs;
	size_t count, cap;
};

struct cred_stream {
	const struct cred_table *table;
	bool *select;
	size_t max_len;		/* the longest selected sentinel */
	char *hold;		/* at most max_len - 1 bytes */
	size_t hold_len;
	char *work;		/* hold + the chunk being fed */
	size_t work_cap;
	size_t *next;		/* per pair: its next match in work, SIZE_MAX for none */
	size_t *hits;
	size_t replaced;
};

int cred_buf_append(struct cred_buf *b, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (n > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *d;

		while (cap < b->len + n)
			cap *= 2;
		d = malloc(cap);
		if (!d)
			return -ENOMEM;
		/* Copied, not realloc'd: the old bytes are wiped, never left behind. */
		if (b->len)
			memcpy(d, b->data, b->len);
		cred_buf_wipe(&(struct cred_buf){ b->data, b->len, b->cap });
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

void cred_buf_wipe(struct cred_buf *b)
{
	if (b->data)
		explicit_bzero(b->data, b->cap);
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

struct cred_table *cred_table_new(void)
{
	return calloc(1, sizeof(struct cred_table));
}

static size_t secret_span(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + 1 + page - 1) / page * page;
}

/*
 * A real value gets pages of its own, left out of core dumps
 * (MADV_DONTDUMP) and, where RLIMIT_MEMLOCK allows, out of swap: the
 * supervisor is not dumpable either, this holds if that is ever undone.
 */
static char *secret_dup(const void *p, size_t len)
{
	size_t span = secret_span(len);
	char *d = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (d == MAP_FAILED)
		return NULL;
	if (madvise(d, span, MADV_DONTDUMP)) {
		munmap(d, span);
		return NULL;
	}
	(void)mlock(d, span);
	if (len)
		memcpy(d, p, len);
	d[len] = '\0';
	return d;
}

static void secret_free(char *p, size_t len)
{
	if (!p)
		return;
	explicit_bzero(p, len);
	munmap(p, secret_span(len));
}

static void pair_free(struct cred_pair *p)
{
	free(p->name);
	if (p->sentinel)
		explicit_bzero(p->sentinel, p->sentinel_len);
	free(p->sentinel);
	secret_free(p->real, p->real_len);
}

void cred_table_free(struct cred_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->count; i++)
		pair_free(&t->pairs[i]);
	free(t->pairs);
	free(t);
}

static bool nests(const struct cred_pair *p, const void *s, size_t len)
{
	return memmem(p->sentinel, p->sentinel_len, s, len) ||
	       memmem(s, len, p->sentinel, p->sentinel_len);
}

static char *dup_bytes(const void *p, size_t len)
{
	char *d = malloc(len + 1);

	if (d) {
		if (len)
			memcpy(d, p, len);
		d[len] = '\0';
	}
	return d;
}

int cred_table_add(struct cred_table *t, const char *name, const void *sentinel,
		   size_t sentinel_len, const void *real, size_t real_len)
{
	struct cred_pair p = { 0 };

	if (!name || !sentinel || !sentinel_len || (!real && real_len) || t->count >= INT32_MAX)
		return -EINVAL;
	/* Nested sentinels would make the replaced span depend on chunking. */
	for (size_t i = 0; i < t->count; i++)
		if (nests(&t->pairs[i], sentinel, sentinel_len))
			return -EINVAL;
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct cred_pair *n = realloc(t->pairs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->pairs = n;
		t->cap = cap;
	}
	p.name = strdup(name);
	p.sentinel = dup_bytes(sentinel, sentinel_len);
	p.real = secret_dup(real, real_len);
	p.sentinel_len = sentinel_len;
	p.real_len = real_len;
	if (!p.name || !p.sentinel || !p.real) {
		pair_free(&p);
		return -ENOMEM;
	}
	t->pairs[t->count] = p;
	return (int)t->count++;
}

int cred_table_mask(struct cred_table *t, const char *name, const void *real, size_t real_len,
		    char **sentinel, size_t *sentinel_len)
{
	char *s;
	size_t len;
	int ret = cred_sentinel_make(real, real_len, &s, &len);

	if (ret)
		return ret;
	ret = cred_table_add(t, name, s, len, real, real_len);
	if (ret >= 0 && sentinel) {
		*sentinel = s;
		if (sentinel_len)
			*sentinel_len = len;
		return ret;
	}
	free(s);
	return ret;
}

size_t cred_table_count(const struct cred_table *t)
{
	return t->count;
}

const char *cred_table_name(const struct cred_table *t, size_t i)
{
	return i < t->count ? t->pairs[i].name : NULL;
}

const char *cred_table_sentinel(const struct cred_table *t, size_t i, size_t *len)
{
	if (i >= t->count)
		return NULL;
	*len = t->pairs[i].sentinel_len;
	return t->pairs[i].sentinel;
}

const char *cred_table_real(const struct cred_table *t, size_t i, size_t *len)
{
	if (i >= t->count)
		return NULL;
	*len = t->pairs[i].real_len;
	return t->pairs[i].real;
}

bool cred_table_length_matched(const struct cred_table *t, const bool *select)
{
	for (size_t i = 0; i < t->count; i++)
		if ((!select || select[i]) && t->pairs[i].sentinel_len != t->pairs[i].real_len)
			return false;
	return true;
}

int cred_stream_new(const struct cred_table *t, const bool *select, struct cred_stream **out)
{
	struct cred_stream *s = calloc(1, sizeof(*s));
	size_t n = t->count ? t->count : 1;

	if (!s)
		return -ENOMEM;
	s->table = t;
	s->select = calloc(n, sizeof(*s->select));
	s->next = calloc(n, sizeof(*s->next));
	s->hits = calloc(n, sizeof(*s->hits));
	if (!s->select || !s->next || !s->hits) {
		cred_stream_free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->count; i++) {
		s->select[i] = !select || select[i];
		if (s->select[i] && t->pairs[i].sentinel_len > s->max_len)
			s->max_len = t->pairs[i].sentinel_len;
	}
	if (s->max_len > 1) {
		s->hold = malloc(s->max_len - 1);
		if (!s->hold) {
			cred_stream_free(s);
			return -ENOMEM;
		}
	}
	*out = s;
	return 0;
}

void cred_stream_free(struct cred_stream *s)
{
	if (!s)
		return;
	/* Work holds what the client sent; the real values went to out. */
	if (s->work)
		explicit_bzero(s->work, s->work_cap);
	free(s->work);
	free(s->hold);
	free(s->select);
	free(s->next);
	free(s->hits);
	free(s);
}

static size_t find(const struct cred_pair *p, const char *w, size_t n, size_t from)
{
	const char *hit = from < n ? memmem(w + from, n - from, p->sentinel, p->sentinel_len) : NULL;

	return hit ? (size_t)(hit - w) : SIZE_MAX;
}

/* Replaces every whole sentinel in w[0..n); returns where unreplaced bytes start. */
static int replace_all(struct cred_stream *s, const char *w, size_t n, struct cred_buf *out,
		       size_t *pos_out)
{
	const struct cred_table *t = s->table;
	size_t pos = 0;
	int ret;

	for (size_t i = 0; i < t->count; i++)
		s->next[i] = s->select[i] ? find(&t->pairs[i], w, n, 0) : SIZE_MAX;
	for (;;) {
		size_t best = SIZE_MAX, at = SIZE_MAX;

		for (size_t i = 0; i < t->count; i++)
			if (s->next[i] < at) {
				at = s->next[i];
				best = i;
			}
		if (best == SIZE_MAX)
			break;
		ret = cred_buf_append(out, w + pos, at - pos);
		if (!ret)
			ret = cred_buf_append(out, t->pairs[best].real, t->pairs[best].real_len);
		if (ret)
			return ret;
		pos = at + t->pairs[best].sentinel_len;
		s->hits[best]++;
		s->replaced++;
		/* Matches behind pos were overlapped by this one: look again from pos. */
		for (size_t i = 0; i < t->count; i++)
			if (s->next[i] < pos)
				s->next[i] = find(&t->pairs[i], w, n, pos);
	}
	*pos_out = pos;
	return 0;
}

int cred_stream_feed(struct cred_stream *s, const void *in, size_t len, struct cred_buf *out)
{
	size_t n = s->hold_len + len, pos, tail;
	int ret;

	if (!s->max_len || !n)
		return cred_buf_append(out, in, len);
	if (len > SIZE_MAX - s->hold_len)
		return -ENOMEM;
	if (n > s->work_cap) {
		char *w = malloc(n);

		if (!w)
			return -ENOMEM;
		if (s->work)
			explicit_bzero(s->work, s->work_cap);
		free(s->work);
		s->work = w;
		s->work_cap = n;
	}
	if (s->hold_len)
		memcpy(s->work, s->hold, s->hold_len);
	if (len)
		memcpy(s->work + s->hold_len, in, len);
	ret = replace_all(s, s->work, n, out, &pos);
	if (ret)
		return ret;
	/* A sentinel the next chunk completes starts in the last max_len - 1 bytes. */
	tail = n > s->max_len - 1 ? n - (s->max_len - 1) : 0;
	if (tail < pos)
		tail = pos;
	ret = cred_buf_append(out, s->work + pos, tail - pos);
	if (ret)
		return ret;
	s->hold_len = n - tail;
	if (s->hold_len)
		memcpy(s->hold, s->work + tail, s->hold_len);
	return 0;
}

int cred_stream_finish(struct cred_stream *s, struct cred_buf *out)
{
	int ret = cred_buf_append(out, s->hold, s->hold_len);

	if (!ret)
		s->hold_len = 0;
	return ret;
}

size_t cred_stream_held(const struct cred_stream *s)
{
	return s->hold_len;
}

size_t cred_stream_replaced(const struct cred_stream *s)
{
	return s->replaced;
}

size_t cred_stream_pair_replaced(const struct cred_stream *s, size_t i)
{
	return i < s->table->count ? s->hits[i] : 0;
}

static bool named_before(const struct cred_stream *s, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (s->hits[j] && !strcmp(s->table->pairs[j].name, s->table->pairs[i].name))
			return true;
	return false;
}

int cred_stream_names(const struct cred_stream *s, char *buf, size_t cap)
{
	size_t used = 0;

	if (!cap)
		return -ENOSPC;
	buf[0] = '\0';
	for (size_t i = 0; i < s->table->count; i++) {
		const char *name = s->table->pairs[i].name;
		size_t len = strlen(name);

		if (!s->hits[i] || named_before(s, i))
			continue;
		if (used + !!used + len + 1 > cap)
			return -ENOSPC;
		if (used)
			buf[used++] = ',';
		memcpy(buf + used, name, len + 1);
		used += len;
	}
	return 0;
}

int cred_subst_once(const struct cred_table *t, const bool *select, const void *in, size_t len,
		    struct cred_buf *out, size_t *replaced)
{
	struct cred_stream *s;
	int ret = cred_stream_new(t, select, &s);

	if (ret)
		return ret;
	ret = cred_stream_feed(s, in, len, out);
	if (!ret)
		ret = cred_stream_finish(s, out);
	if (!ret && replaced)
		*replaced = s->replaced;
	cred_stream_free(s);
	return ret;
}
