// SPDX-License-Identifier: MIT
/*
 * credentials.*.extract is an ECMAScript regular expression, as srt reads
 * it (new RegExp(source), no flags: the lenient Annex B grammar, where a
 * lone "]", "}" or "{" is a literal). srt refuses a pattern that RegExp
 * refuses and one without a capturing group, since group 1 is the value
 * masked. This scanner finds those syntax errors (unbalanced groups and
 * classes, a quantifier with nothing to repeat, an unknown group kind, a
 * range out of order, a trailing backslash) and counts the capturing groups,
 * plain and named, as RegExp does. It does not match: the proxy runs the
 * pattern.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"

/* A class atom's code unit, or -1 for a class escape (\d, \w, ...) that is no single unit. */
static long class_atom(const char **sp)
{
	const char *s = *sp;
	long v;

	if (*s != '\\') {
		*sp = s + 1;
		return (unsigned char)*s;
	}
	s++;
	*sp = s + 1;
	switch (*s) {
	case 'd': case 'D': case 's': case 'S': case 'w': case 'W':
		return -1;
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'f': return '\f';
	case 'v': return '\v';
	case 'b': return '\b';
	case '0': return 0;
	case 'x': case 'u': {
		size_t want = *s == 'x' ? 2 : 4, k;
		char hex[5] = { 0 };

		for (k = 0; k < want && strchr("0123456789abcdefABCDEF", s[1 + k]) && s[1 + k]; k++)
			hex[k] = s[1 + k];
		if (k < want)	/* Annex B: not an escape, the letter itself */
			return (unsigned char)*s;
		*sp = s + 1 + want;
		v = strtol(hex, NULL, 16);
		return v;
	}
	default:
		return (unsigned char)*s;
	}
}

/* From just after "[" to just after its "]"; -EINVAL with *why. */
static int skip_class(const char **sp, const char **why)
{
	const char *s = *sp;

	if (*s == '^')
		s++;
	while (*s && *s != ']') {
		long lo, hi;

		if (*s == '\\' && !s[1])
			break;
		lo = class_atom(&s);
		if (s[0] != '-' || !s[1] || s[1] == ']')
			continue;
		s++;
		if (*s == '\\' && !s[1])
			break;
		hi = class_atom(&s);
		if (lo >= 0 && hi >= 0 && lo > hi) {
			*why = "Range out of order in character class";
			return -EINVAL;
		}
	}
	if (*s != ']') {
		*why = *s ? "\\ at end of pattern" : "Unterminated character class";
		return -EINVAL;
	}
	*sp = s + 1;
	return 0;
}

/* "{n}", "{n,}" or "{n,m}" at s: its length, or 0 when it is not one (then "{" is a literal). */
static size_t brace_quantifier(const char *s, const char **why)
{
	unsigned long long lo = 0, hi = 0;
	const char *q = s + 1;
	bool two = false;

	if (*q < '0' || *q > '9')
		return 0;
	for (; *q >= '0' && *q <= '9'; q++)
		lo = lo > 1000000000ULL ? lo : lo * 10 + (unsigned)(*q - '0');
	if (*q == ',') {
		q++;
		two = *q >= '0' && *q <= '9';
		for (; *q >= '0' && *q <= '9'; q++)
			hi = hi > 1000000000ULL ? hi : hi * 10 + (unsigned)(*q - '0');
	}
	if (*q != '}')
		return 0;
	if (two && lo > hi)
		*why = "numbers out of order in {} quantifier";
	return (size_t)(q + 1 - s);
}

enum group_kind { GROUP_PLAIN, GROUP_LOOKBEHIND };

/* After "(": the group's kind; counts a capturing one. -EINVAL on "(?" of no known kind. */
static int open_group(const char **sp, int *groups, enum group_kind *kind, const char **why)
{
	const char *s = *sp;

	*kind = GROUP_PLAIN;
	if (*s != '?') {
		(*groups)++;
		return 0;
	}
	s++;
	if (*s == ':' || *s == '=' || *s == '!') {
		*sp = s + 1;
		return 0;
	}
	if (*s == '<' && (s[1] == '=' || s[1] == '!')) {
		*kind = GROUP_LOOKBEHIND;
		*sp = s + 2;
		return 0;
	}
	if (*s == '<') {
		const char *n = ++s;

		while (*s == '_' || *s == '$' || (*s >= 'a' && *s <= 'z') ||
		       (*s >= 'A' && *s <= 'Z') || (s > n && *s >= '0' && *s <= '9'))
			s++;
		if (s == n || *s != '>') {
			*why = "Invalid capture group name";
			return -EINVAL;
		}
		(*groups)++;
		*sp = s + 1;
		return 0;
	}
	*why = "Invalid group";
	return -EINVAL;
}

#define REGEX_MAX_DEPTH 256

int policy_cred_regex_groups(const char *s, const char **why)
{
	enum group_kind stack[REGEX_MAX_DEPTH];
	bool repeatable = false;	/* may a quantifier follow what came last? */
	int groups = 0, depth = 0;
	size_t qlen;

	*why = NULL;
	while (*s) {
		switch (*s) {
		case '\\':
			if (!s[1]) {
				*why = "\\ at end of pattern";
				return -EINVAL;
			}
			repeatable = s[1] != 'b' && s[1] != 'B';
			s += 2;
			break;
		case '[':
			s++;
			if (skip_class(&s, why))
				return -EINVAL;
			repeatable = true;
			break;
		case '(':
			if (depth == REGEX_MAX_DEPTH) {
				*why = "groups nested too deeply";
				return -EINVAL;
			}
			s++;
			if (open_group(&s, &groups, &stack[depth++], why))
				return -EINVAL;
			repeatable = false;
			break;
		case ')':
			if (!depth) {
				*why = "Unmatched ')'";
				return -EINVAL;
			}
			/* A lookbehind cannot be repeated; a lookahead can (Annex B). */
			repeatable = stack[--depth] != GROUP_LOOKBEHIND;
			s++;
			break;
		case '|': case '^': case '$':
			repeatable = false;
			s++;
			break;
		case '*': case '+': case '?': case '{':
			qlen = *s == '{' ? brace_quantifier(s, why) : 1;
			if (*why)
				return -EINVAL;
			if (!qlen) {	/* a literal "{" */
				repeatable = true;
				s++;
				break;
			}
			if (!repeatable) {
				*why = "Nothing to repeat";
				return -EINVAL;
			}
			s += qlen;
			if (*s == '?')	/* lazy */
				s++;
			repeatable = false;
			break;
		default:
			repeatable = true;
			s++;
		}
	}
	if (depth) {
		*why = "Unterminated group";
		return -EINVAL;
	}
	return groups;
}
