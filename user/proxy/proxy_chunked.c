// SPDX-License-Identifier: MIT
/*
 * Strict chunked request-body decoder. The proxy forwards only the decoded
 * data, re-chunked by itself, so extensions, trailers and odd spellings
 * never reach a server that might read them differently.
 */
#include <errno.h>
#include <string.h>

#include "proxy_chunked.h"

enum {
	CH_SIZE, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF,
	CH_TRAILER_START, CH_TRAILER, CH_TRAILER_LF, CH_END_LF, CH_DONE,
};

#define CH_MAX_DIGITS 15	/* < 2^60 bytes: no overflow, no silly sizes */
#define CH_MAX_EXT 4096
#define CH_MAX_TRAILERS 8192

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool line_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

int proxy_chunked_decode(struct proxy_chunked *d, const char *in, size_t inlen, size_t *used,
			 char *out, size_t outcap, size_t *produced)
{
	size_t i = 0;

	*produced = 0;
	while (i < inlen && d->state != CH_DONE) {
		char c = in[i];

		switch (d->state) {
		case CH_SIZE:
			if (hexval(c) >= 0) {
				if (++d->digits > CH_MAX_DIGITS)
					goto bad;
				d->left = d->left * 16 + (unsigned long long)hexval(c);
			} else if (!d->digits) {
				goto bad;
			} else if (c == ';' || c == ' ' || c == '\t') {
				d->state = CH_EXT;
			} else if (c == '\r') {
				d->state = CH_SIZE_LF;
			} else {
				goto bad;
			}
			i++;
			break;
		case CH_EXT:
			if (c == '\r')
				d->state = CH_SIZE_LF;
			else if (!line_char((unsigned char)c) || ++d->line > CH_MAX_EXT)
				goto bad;
			i++;
			break;
		case CH_SIZE_LF:
			if (c != '\n')
				goto bad;
			d->state = d->left ? CH_DATA : CH_TRAILER_START;
			i++;
			break;
		case CH_DATA: {
			size_t n = inlen - i;

			if (n > d->left)
				n = (size_t)d->left;
			if (n > outcap - *produced)
				n = outcap - *produced;
			if (!n)
				goto out;	/* output full */
			memcpy(out + *produced, in + i, n);
			*produced += n;
			i += n;
			d->left -= n;
			if (!d->left)
				d->state = CH_DATA_CR;
			break;
		}
		case CH_DATA_CR:
			if (c != '\r')
				goto bad;
			d->state = CH_DATA_LF;
			i++;
			break;
		case CH_DATA_LF:
			if (c != '\n')
				goto bad;
			d->state = CH_SIZE;
			d->digits = 0;
			d->line = 0;
			i++;
			break;
		case CH_TRAILER_START:
			if (c == '\r') {
				d->state = CH_END_LF;
			} else if (c == ' ' || c == '\t' || !line_char((unsigned char)c)) {
				goto bad;	/* obs-fold or control byte */
			} else {
				d->state = CH_TRAILER;
				if (++d->trailer > CH_MAX_TRAILERS)
					goto bad;
			}
			i++;
			break;
		case CH_TRAILER:
			if (c == '\r')
				d->state = CH_TRAILER_LF;
			else if (!line_char((unsigned char)c) || ++d->trailer > CH_MAX_TRAILERS)
				goto bad;
			i++;
			break;
		case CH_TRAILER_LF:
			if (c != '\n')
				goto bad;
			d->state = CH_TRAILER_START;
			i++;
			break;
		case CH_END_LF:
			if (c != '\n')
				goto bad;
			d->state = CH_DONE;
			i++;
			break;
		}
	}
out:
	*used = i;
	return d->state == CH_DONE;
bad:
	*used = i;
	return -EBADMSG;
}
