// SPDX-License-Identifier: MIT
/*
 * Making arbitrary bytes (kernel paths, argv, hostile file names) safe for
 * the log: valid UTF-8 for JSON, and free of terminal controls for text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_utf8.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
static const char ellipsis[] = "\xe2\x80\xa6"; /* U+2026 */

/*
 * Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs,
 * surrogates or code points above U+10FFFF), or 0 with *bad set to the
 * length of the maximal invalid subpart, which becomes one U+FFFD (the
 * Unicode recommendation, as Python's errors="replace" and WHATWG do).
 */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

char *log_utf8_sanitize(const char *s, size_t len, bool *truncated)
{
	const unsigned char *in = (const unsigned char *)s;
	size_t n = strnlen(s, len), o = 0, i = 0;
	bool cut = n > LOG_VALUE_MAX;
	char *out;

	/* Output is never shorter than input, so more input cannot be kept. */
	if (cut)
		n = LOG_VALUE_MAX;
	out = malloc(3 * n + sizeof(ellipsis));
	if (!out)
		return NULL;
	while (i < n) {
		size_t bad = 0, k = utf8_seq(in + i, n - i, &bad);

		if (k) {
			memcpy(out + o, in + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, replacement, 3);
			o += 3;
			i += bad;
		}
	}
	if (cut || o > LOG_VALUE_MAX) {
		/* Back up to a character start leaving room for the ellipsis. */
		o = LOG_VALUE_MAX - 3;
		while (o && ((unsigned char)out[o] & 0xc0) == 0x80)
			o--;
		memcpy(out + o, ellipsis, 3);
		o += 3;
		cut = true;
	}
	out[o] = '\0';
	if (truncated)
		*truncated = cut;
	return out;
}

/* Code points a terminal could act on or that could mislead a reader. */
static bool needs_escape(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static unsigned int utf8_cp(const unsigned char *s, size_t k)
{
	if (k == 1)
		return s[0];
	if (k == 2)
		return (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu);
	if (k == 3)
		return (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
	return (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
}

/* Appends the text form of code point cp (k input bytes at in) to out; returns its length. */
static size_t escape_cp(char *out, const unsigned char *in, size_t k, unsigned int cp)
{
	if (!needs_escape(cp)) {
		memcpy(out, in, k);
		return k;
	}
	switch (cp) {
	case '\n':
		return (size_t)sprintf(out, "\\n");
	case '\t':
		return (size_t)sprintf(out, "\\t");
	case '\r':
		return (size_t)sprintf(out, "\\r");
	}
	if (cp < 0x80)
		return (size_t)sprintf(out, "\\x%02x", cp);
	return (size_t)sprintf(out, "\\u%04x", cp);
}

char *log_text_escape(const char *s)
{
	const unsigned char *in = (const unsigned char *)s;
	size_t n = strlen(s), o = 0, i = 0;
	/* Worst case: every byte becomes "\xHH", or 2-3 bytes become "\uHHHH". */
	char *out = malloc(4 * n + 1);

	if (!out)
		return NULL;
	while (i < n) {
		size_t bad = 0, k = utf8_seq(in + i, n - i, &bad);

		if (!k) {
			/* Callers pass sanitised strings; stay safe if not. */
			o += (size_t)sprintf(out + o, "\\x%02x", in[i]);
			i++;
			continue;
		}
		o += escape_cp(out + o, in + i, k, utf8_cp(in + i, k));
		i += k;
	}
	out[o] = '\0';
	return out;
}

char *log_terminal_text(const char *s)
{
	bool cut = false;
	char *clean = log_utf8_sanitize(s, strlen(s), &cut);
	char *text = clean ? log_text_escape(clean) : NULL;

	free(clean);
	return text;
}
