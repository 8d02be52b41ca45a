// SPDX-License-Identifier: MIT
/*
 * Lenient classing, strict deciding (docs/network.md, "The transparent
 * path"). A request a server would read with a Host we never saw is a way
 * to a denied virtual host on an allowed address, so the classifier errs
 * towards HTTP: the strict parser then decides it by its Host or refuses it.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "proxy_http_sniff.h"

/* RFC 9110 tchar: what a method is made of for nginx, Apache, Go and llhttp. */
static bool tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/*
 * Whitespace between the words of a request line for the most lenient
 * server at hand: Python's str.split() on the latin-1 line (which has SP,
 * HTAB, VT, FF, bare CR, 0x1c-0x1f, 0x85 and 0xa0).
 */
static bool line_space(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r' || (ch >= 0x1c && ch <= 0x1f) ||
	       ch == 0x85 || ch == 0xa0;
}

struct line_words {
	size_t n;
	size_t start[3], len[3]; /* the first two words and the last */
};

/* Splits b[0..len) into words; keeps the first two and the last. */
static void split_words(const char *b, size_t len, struct line_words *w)
{
	size_t i = 0;

	memset(w, 0, sizeof(*w));
	while (i < len) {
		size_t s;

		while (i < len && line_space((unsigned char)b[i]))
			i++;
		if (i == len)
			break;
		for (s = i; i < len && !line_space((unsigned char)b[i]); i++)
			;
		if (w->n < 2) {
			w->start[w->n] = s;
			w->len[w->n] = i - s;
		}
		w->start[2] = s;
		w->len[2] = i - s;
		w->n++;
	}
}

static size_t skip_empty_lines(const char *b, size_t len)
{
	size_t i = 0;

	while (i < len && (b[i] == '\r' || b[i] == '\n'))
		i++;
	return i;
}

/* The request line from b (its first byte not CR or LF): its length without trailing CRs, or -1 without LF. */
static long line_end(const char *b, size_t len, size_t *lf)
{
	const char *nl = memchr(b, '\n', len);
	size_t e;

	if (!nl)
		return -1;
	*lf = (size_t)(nl - b);
	for (e = *lf; e && b[e - 1] == '\r'; e--)
		;
	return (long)e;
}

enum proxy_sniff proxy_http_sniff(const char *b, size_t len, size_t cap)
{
	size_t i, tok, lf;
	struct line_words w;
	bool full = len >= cap;
	long e;

	if (!len)
		return PROXY_SNIFF_MORE;
	if ((unsigned char)b[0] == 0x16)
		return PROXY_SNIFF_TLS;
	/* Empty lines before the request line (RFC 9112 2.2: servers skip them). */
	i = skip_empty_lines(b, len);
	if (i == len)
		return full ? PROXY_SNIFF_HTTP : PROXY_SNIFF_MORE;
	for (tok = i; i < len && tchar((unsigned char)b[i]); i++)
		;
	if (i == tok)
		return PROXY_SNIFF_OTHER; /* no method: binary protocols go on at once */
	if (i == len)
		return full ? PROXY_SNIFF_HTTP : PROXY_SNIFF_MORE;
	if (b[i] == '\r' && i + 1 == len)
		return full ? PROXY_SNIFF_HTTP : PROXY_SNIFF_MORE;
	if (!line_space((unsigned char)b[i]) || (b[i] == '\r' && b[i + 1] == '\n'))
		return PROXY_SNIFF_OTHER; /* one word, or a method followed by what no server reads */
	e = line_end(b + tok, len - tok, &lf);
	if (e < 0)
		return full ? PROXY_SNIFF_HTTP : PROXY_SNIFF_MORE; /* a request line past the buffer may be HTTP */
	split_words(b + tok, (size_t)e, &w);
	if (w.n >= 2 && w.len[2] >= 5 && !strncasecmp(b + tok + w.start[2], "HTTP/", 5))
		return PROXY_SNIFF_HTTP;
	/* HTTP/0.9 ("GET /path"): a request to servers that still read it. */
	if (w.n == 2 && w.len[0] == 3 && !strncasecmp(b + tok + w.start[0], "GET", 3))
		return PROXY_SNIFF_HTTP;
	return PROXY_SNIFF_OTHER;
}

size_t proxy_http_sniff_normalize(char *b, size_t len)
{
	size_t skip = skip_empty_lines(b, len), lf, out;
	struct line_words w;
	long e;

	if (skip) {
		memmove(b, b + skip, len - skip);
		len -= skip;
	}
	e = line_end(b, len, &lf);
	if (e < 0 || !lf || b[lf - 1] != '\r')
		return len; /* no line yet, or a bare LF: the strict parser refuses it */
	split_words(b, (size_t)e, &w);
	if (w.n != 3 || w.len[2] < 5 || memcmp(b + w.start[2], "HTTP/", 5))
		return len;
	/* Each word moves left or stays: separators of one byte or more become one SP. */
	out = 0;
	for (int k = 0; k < 3; k++) {
		memmove(b + out, b + w.start[k], w.len[k]);
		out += w.len[k];
		b[out++] = k < 2 ? ' ' : '\r';
	}
	b[out++] = '\n';
	memmove(b + out, b + lf + 1, len - lf - 1);
	return out + len - lf - 1;
}

int proxy_http_sniff_fuzz_one(const unsigned char *b, size_t len)
{
	char buf[4096];
	enum proxy_sniff s, again;
	size_t n;

	if (len > sizeof(buf))
		len = sizeof(buf);
	memcpy(buf, b, len);
	s = proxy_http_sniff(buf, len, sizeof(buf));
	if (len == sizeof(buf) && s == PROXY_SNIFF_MORE)
		__builtin_trap(); /* a full buffer is always decided */
	if (s != PROXY_SNIFF_HTTP)
		return 0;
	n = proxy_http_sniff_normalize(buf, len);
	if (n > len)
		__builtin_trap();
	/* Normalising is idempotent and keeps the class (or, emptied, waits for more). */
	if (proxy_http_sniff_normalize(buf, n) != n)
		__builtin_trap();
	again = proxy_http_sniff(buf, n, sizeof(buf));
	if (n && again != PROXY_SNIFF_HTTP && again != PROXY_SNIFF_MORE)
		__builtin_trap();
	return 0;
}
