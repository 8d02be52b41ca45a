// SPDX-License-Identifier: MIT
/* srt's extract patterns (JavaScript) as POSIX EREs (cred_regex.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cred_regex.h"
#include "cred_subst.h"

struct tr {
	const char *p;		/* the next JS character */
	bool closed;		/* the last item was a group's ')' */
	struct cred_buf out;
	size_t groups;		/* ERE subexpressions opened so far */
	size_t js_groups;	/* JS capturing groups opened so far */
	size_t group1;
	char *why;
	size_t why_len;
};

static int refuse(struct tr *t, const char *what)
{
	snprintf(t->why, t->why_len, "%s is not supported in extract (no POSIX regex means the same)",
		 what);
	return -EINVAL;
}

static int put(struct tr *t, const char *s)
{
	return cred_buf_append(&t->out, s, strlen(s));
}

static int put_char(struct tr *t, char c)
{
	return cred_buf_append(&t->out, &c, 1);
}

static bool is_punct_escape(char c)
{
	return c && strchr("^$\\.*+?()[]{}|/-", c);
}

static int hex_byte(struct tr *t, const char *p, unsigned char *out)
{
	if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]))
		return refuse(t, "\\x without two hex digits");
	*out = (unsigned char)strtol((char[]){ p[0], p[1], 0 }, NULL, 16);
	if (!*out || *out >= 0x80)
		return refuse(t, "\\x00 or \\x above 7f");
	return 0;
}

static void add_range(bool *set, int from, int to)
{
	for (int c = from; c <= to; c++)
		set[c] = true;
}

/* A class escape's bytes (\d \w \s and single characters) into set. */
static int class_escape(struct tr *t, bool *set, int *single)
{
	char c = *t->p;
	unsigned char b;

	t->p += c != '\0';	/* never past the end */
	*single = -1;
	switch (c) {
	case 'd': add_range(set, '0', '9'); return 0;
	case 'w': add_range(set, '0', '9'); add_range(set, 'a', 'z'); add_range(set, 'A', 'Z');
		set['_'] = true; return 0;
	case 's': add_range(set, '\t', '\r'); set[' '] = true; return 0;
	case 'n': *single = '\n'; return 0;
	case 't': *single = '\t'; return 0;
	case 'r': *single = '\r'; return 0;
	case 'f': *single = '\f'; return 0;
	case 'v': *single = '\v'; return 0;
	case 'b': *single = '\b'; return 0;
	case 'x':
		if (hex_byte(t, t->p, &b))
			return -EINVAL;
		t->p += 2;
		*single = b;
		return 0;
	}
	if (is_punct_escape(c)) {
		*single = (unsigned char)c;
		return 0;
	}
	return refuse(t, c ? "this escape in a class" : "a trailing backslash");
}

/* A class element: its byte in *single, or a set of bytes added already. */
static int class_item(struct tr *t, bool *set, int *single)
{
	unsigned char c = (unsigned char)*t->p;

	if (!c)
		return refuse(t, "an unclosed class");
	if (c >= 0x80)
		return refuse(t, "a non-ASCII byte in a class");
	t->p++;
	if (c == '\\')
		return class_escape(t, set, single);
	*single = c;
	return 0;
}

/* One ERE bracket from set: ']' first, '-' last, '^' never first. */
static int emit_set(struct tr *t, const bool *set, bool negated)
{
	bool others = false;
	int ret;

	for (int c = 1; c < 128; c++)
		others |= set[c] && c != ']' && c != '-' && c != '^';
	if (!negated && !set[']'] && !others && set['^'])
		return put(t, set['-'] ? "[-^]" : "\\^");
	ret = put(t, negated ? "[^" : "[");
	if (!ret && set[']'])
		ret = put_char(t, ']');
	for (int c = 1; c < 128 && !ret; c++)
		if (set[c] && c != ']' && c != '-' && c != '^')
			ret = put_char(t, (char)c);
	if (!ret && set['^'])
		ret = put_char(t, '^');
	if (!ret && set['-'])
		ret = put_char(t, '-');
	return ret ? ret : put_char(t, ']');
}

/* A JS class [...] (t->p past the '['), as one ERE bracket. */
static int class(struct tr *t)
{
	bool set[128] = { false }, negated = *t->p == '^', any = false;
	int lo, hi, ret;

	t->p += negated;
	while (*t->p != ']') {
		ret = class_item(t, set, &lo);
		if (ret)
			return ret;
		if (lo >= 0 && t->p[0] == '-' && t->p[1] && t->p[1] != ']') {
			t->p++;
			ret = class_item(t, set, &hi);
			if (ret)
				return ret;
			if (hi < 0 || hi < lo)
				return refuse(t, "a class range out of order or to a class");
			add_range(set, lo, hi);
		} else if (lo >= 0) {
			set[lo] = true;
		}
	}
	t->p++;
	for (int c = 1; c < 128; c++)
		any |= set[c];
	if (!any)
		return refuse(t, "an empty class");
	return emit_set(t, set, negated);
}

/* An escape outside a class (t->p past the backslash), as a one-byte or class bracket. */
static int escape(struct tr *t)
{
	bool set[128] = { false };
	int single, ret;
	char c = *t->p;

	if (c >= '1' && c <= '9')
		return refuse(t, "a backreference");
	if (c == 'b' || c == 'B')
		return refuse(t, "\\b and \\B");
	ret = class_escape(t, set, &single);
	if (ret)
		return ret;
	if (single >= 0)
		set[single] = true;
	return emit_set(t, set, false);
}

/*
 * {n}, {n,}, {n,m} copied; any other '{' is a literal JS accepts and POSIX
 * does not. Counts stay at most 255 and never apply to a group: regcomp
 * expands them, and the supervisor must not be made to build a huge regex.
 */
static int brace(struct tr *t, bool after_group)
{
	const char *p = t->p + 1;
	char *end;
	int ret;

	if (!isdigit((unsigned char)*p))
		return refuse(t, "a '{' that is not a quantifier");
	for (int i = 0; i < 2; i++) {
		if (strtoul(p, &end, 10) > 255 || end - p > 3)
			return refuse(t, "a count over 255");
		p = end;
		if (i || *p != ',')
			break;
		p++;
		if (!isdigit((unsigned char)*p))
			break;
	}
	if (*p != '}')
		return refuse(t, "a '{' that is not a quantifier");
	if (after_group)
		return refuse(t, "a counted group (a bound on the regex's size)");
	p++;
	ret = cred_buf_append(&t->out, t->p, (size_t)(p - t->p));
	t->p = p;
	return ret;
}

static int quantifier(struct tr *t, bool atom, bool after_group)
{
	int ret;

	/* JS repeats one UTF-16 unit, a byte regex one byte of it. */
	if (!atom)
		return refuse(t, "a quantifier with nothing (or a non-ASCII byte) to repeat");
	ret = *t->p == '{' ? brace(t, after_group) : put_char(t, *t->p++);
	if (!ret && *t->p == '?')
		return refuse(t, "a lazy quantifier");
	if (!ret && *t->p && strchr("*+?{", *t->p))
		return refuse(t, "a quantifier after a quantifier");
	return ret;
}

static int group(struct tr *t)
{
	if (t->p[1] == '?' && t->p[2] != ':')
		return refuse(t, "lookaround, a named group or inline flags");
	t->groups++;
	if (t->p[1] == '?') {
		t->p += 3;
	} else {
		t->p++;
		if (++t->js_groups == 1)
			t->group1 = t->groups;
	}
	return put_char(t, '(');
}

/* One JS item; *atom says whether a quantifier may follow it. */
static int item(struct tr *t, bool *atom)
{
	unsigned char c = (unsigned char)*t->p;

	switch (c) {
	case '(': *atom = false; return group(t);
	case ')': *atom = true; t->p++; return put_char(t, ')');
	case '[': *atom = true; t->p++; return class(t);
	case '\\': *atom = true; t->p++; return escape(t);
	case '.': *atom = true; t->p++; return put(t, "[^\n\r]");
	case '*': case '+': case '?': case '{': {
		int ret = quantifier(t, *atom, t->closed);

		*atom = false;
		return ret;
	}
	case ']': case '}': {
		bool set[128] = { false };

		set[c] = true;
		*atom = true;
		t->p++;
		return emit_set(t, set, false);
	}
	case '|': case '^': case '$':
		*atom = false;
		t->p++;
		return put_char(t, (char)c);
	}
	*atom = c < 0x80;
	t->p++;
	return put_char(t, (char)c);
}

int cred_regex_from_js(const char *js, char **ere, size_t *group1, char *why, size_t why_len)
{
	struct tr t = { .p = js, .why = why, .why_len = why_len };
	bool atom = false;
	int ret = 0;

	if (why_len)
		why[0] = '\0';
	if (strlen(js) > CRED_REGEX_MAX)
		return refuse(&t, "a pattern over 1024 bytes");
	while (!ret && *t.p) {
		bool closing = *t.p == ')';

		ret = item(&t, &atom);
		t.closed = closing;
	}
	if (!ret && !t.js_groups)
		ret = refuse(&t, "a pattern without a capturing group");
	if (!ret)
		ret = put_char(&t, '\0');
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(why, why_len, "out of memory");
		cred_buf_wipe(&t.out);
		return ret;
	}
	*ere = t.out.data;
	*group1 = t.group1;
	return 0;
}
