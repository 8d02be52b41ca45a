// SPDX-License-Identifier: MIT
/*
 * A diagnostic's JSON path to a line and column of the policy's text. The
 * text is walked without building a tree: values that are not on the path
 * are skipped by counting brackets (no recursion, so no depth bound), keys
 * on the path are decoded and compared whole. Every read is bounded by the
 * text's length: the input may be any bytes (a fuzz target covers it).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy_locate.h"

#define KEY_MAX 4096

struct cursor {
	const char *s;
	size_t len, i;
};

struct segment {
	bool is_index;
	size_t index;
	char key[KEY_MAX];
	size_t key_len;
};

static bool is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static void skip_ws(struct cursor *c)
{
	while (c->i < c->len && is_ws(c->s[c->i]))
		c->i++;
}

static int hex4(const char *s, size_t avail, uint32_t *v)
{
	*v = 0;
	if (avail < 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		char h = s[k];

		*v <<= 4;
		if (h >= '0' && h <= '9')
			*v |= (uint32_t)(h - '0');
		else if (h >= 'a' && h <= 'f')
			*v |= (uint32_t)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			*v |= (uint32_t)(h - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

static int put_utf8(uint32_t cp, char *out, size_t cap, size_t *n)
{
	unsigned char b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	if (*n + k > cap)
		return -1;
	memcpy(out + *n, b, k);
	*n += k;
	return 0;
}

/*
 * Decodes the JSON string at c->i (its opening quote) into out, moving
 * past its closing quote. -1: not a string, malformed, or longer than cap.
 * With out NULL the string is only skipped.
 */
static int read_string(struct cursor *c, char *out, size_t cap, size_t *n)
{
	size_t len = 0;

	if (c->i >= c->len || c->s[c->i] != '"')
		return -1;
	c->i++;
	while (c->i < c->len) {
		char ch = c->s[c->i++];
		uint32_t cp, lo;

		if (ch == '"') {
			if (n)
				*n = len;
			return 0;
		}
		if (ch != '\\') {
			if (out && len == cap)
				return -1;
			if (out)
				out[len] = ch;
			len++;
			continue;
		}
		if (c->i >= c->len)
			return -1;
		ch = c->s[c->i++];
		if (!out) {
			continue;	/* skipping: the escaped byte cannot end the string */
		}
		switch (ch) {
		case '"': case '\\': case '/':
			cp = (unsigned char)ch;
			break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if (hex4(c->s + c->i, c->len - c->i, &cp))
				return -1;
			c->i += 4;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (c->len - c->i < 6 || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u' ||
				    hex4(c->s + c->i + 2, c->len - c->i - 2, &lo) ||
				    lo < 0xdc00 || lo >= 0xe000)
					return -1;
				c->i += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return -1;
			}
			break;
		default:
			return -1;
		}
		if (put_utf8(cp, out, cap, &len))
			return -1;
	}
	return -1;
}

/* Moves past the value at c->i, however deep. -1 when the text ends first or is not JSON. */
static int skip_value(struct cursor *c)
{
	size_t depth = 0;

	do {
		char ch;

		skip_ws(c);
		if (c->i >= c->len)
			return -1;
		ch = c->s[c->i];
		if (ch == '"') {
			if (read_string(c, NULL, 0, NULL))
				return -1;
		} else if (ch == '{' || ch == '[') {
			depth++;
			c->i++;
			continue;
		} else if (ch == '}' || ch == ']') {
			if (!depth)
				return -1;
			depth--;
			c->i++;
		} else if (ch == ',' || ch == ':') {
			if (!depth)
				return -1;
			c->i++;
			continue;
		} else {
			size_t start = c->i;

			while (c->i < c->len && !is_ws(c->s[c->i]) && !strchr(",:[]{}\"", c->s[c->i]))
				c->i++;
			if (c->i == start)
				return -1;	/* a NUL byte */
		}
	} while (depth);
	return 0;
}

/* The next segment of path at *pos. 1: one was read, 0: the path ended, -1: malformed. */
static int next_segment(const char *path, size_t *pos, struct segment *seg)
{
	size_t p = *pos, start;

	if (!path[p])
		return 0;
	if (path[p] == '[') {
		p++;
		if (path[p] == '"') {
			struct cursor c = { .s = path, .len = strlen(path), .i = p };

			seg->is_index = false;
			if (read_string(&c, seg->key, sizeof(seg->key), &seg->key_len))
				return -1;
			p = c.i;
		} else {
			seg->is_index = true;
			seg->index = 0;
			start = p;
			while (path[p] >= '0' && path[p] <= '9' && p - start < 9)
				seg->index = seg->index * 10 + (size_t)(path[p++] - '0');
			if (p == start)
				return -1;
		}
		if (path[p] != ']')
			return -1;
		*pos = p + 1;
		return 1;
	}
	if (p && path[p] == '.')
		p++;
	else if (p)
		return -1;
	start = p;
	while (path[p] && path[p] != '.' && path[p] != '[')
		p++;
	if (p == start || p - start > sizeof(seg->key))
		return -1;
	seg->is_index = false;
	seg->key_len = p - start;
	memcpy(seg->key, path + start, seg->key_len);
	*pos = p;
	return 1;
}

/* Moves c to the value of member seg of the object at c->i; false when it has none. */
static bool enter_member(struct cursor *c, const struct segment *seg, size_t *key_at)
{
	char *name = malloc(KEY_MAX);
	bool found = false;

	if (!name || c->i >= c->len || c->s[c->i] != '{')
		goto out;
	c->i++;
	for (;;) {
		size_t at, n = 0;
		int got;

		skip_ws(c);
		if (c->i >= c->len || c->s[c->i] != '"')
			break;
		at = c->i;
		got = read_string(c, name, KEY_MAX, &n);
		/* A key too long to hold is not the one asked for: skip it. */
		if (got) {
			c->i = at;
			if (read_string(c, NULL, 0, NULL))
				break;
		}
		skip_ws(c);
		if (c->i >= c->len || c->s[c->i] != ':')
			break;
		c->i++;
		skip_ws(c);
		if (!got && n == seg->key_len && !memcmp(name, seg->key, n)) {
			*key_at = at;
			found = true;
			break;
		}
		if (skip_value(c))
			break;
		skip_ws(c);
		if (c->i >= c->len || c->s[c->i] != ',')
			break;
		c->i++;
	}
out:
	free(name);
	return found;
}

/* Moves c to element seg->index of the array at c->i; false when it has none. */
static bool enter_element(struct cursor *c, const struct segment *seg)
{
	if (c->i >= c->len || c->s[c->i] != '[')
		return false;
	c->i++;
	for (size_t k = 0;; k++) {
		skip_ws(c);
		if (c->i >= c->len || c->s[c->i] == ']')
			return false;
		if (k == seg->index)
			return true;
		if (skip_value(c))
			return false;
		skip_ws(c);
		if (c->i >= c->len || c->s[c->i] != ',')
			return false;
		c->i++;
	}
}

int policy_locate(const char *json, size_t len, const char *path, struct policy_location *loc)
{
	struct cursor c = { .s = json, .len = len };
	struct segment *seg = malloc(sizeof(*seg));
	size_t pos = 0, best;
	int ret = -EINVAL, got;

	memset(loc, 0, sizeof(*loc));
	if (!seg)
		return -ENOMEM;
	skip_ws(&c);
	if (c.i >= c.len)
		goto out;
	best = c.i;
	loc->exact = 1;
	while ((got = next_segment(path, &pos, seg)) == 1) {
		size_t key_at = 0;

		skip_ws(&c);
		if (seg->is_index ? !enter_element(&c, seg) : !enter_member(&c, seg, &key_at)) {
			loc->exact = 0;
			break;
		}
		best = seg->is_index ? c.i : key_at;
	}
	if (got < 0 && loc->exact)
		goto out;	/* a malformed path, not a missing member */
	loc->offset = best;
	loc->line = 1;
	loc->column = 1;
	for (size_t k = 0; k < best; k++) {
		if (json[k] == '\n') {
			loc->line++;
			loc->column = 1;
		} else {
			loc->column++;
		}
	}
	ret = 0;
out:
	free(seg);
	if (ret)
		memset(loc, 0, sizeof(*loc));
	return ret;
}
