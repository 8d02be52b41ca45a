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

/* One byte of the framing around the data (every state but CH_DATA); -EBADMSG. */
static int frame_byte(struct proxy_chunked *d, char c)
{
	switch (d->state) {
	case CH_SIZE:
		if (hexval(c) >= 0) {
			if (++d->digits > CH_MAX_DIGITS)
				return -EBADMSG;
			d->left = d->left * 16 + (unsigned long long)hexval(c);
		} else if (!d->digits) {
			return -EBADMSG;
		} else if (c == ';' || c == ' ' || c == '\t') {
			d->state = CH_EXT;
		} else if (c == '\r') {
			d->state = CH_SIZE_LF;
		} else {
			return -EBADMSG;
		}
		return 0;
	case CH_EXT:
		if (c == '\r')
			d->state = CH_SIZE_LF;
		else if (!line_char((unsigned char)c) || ++d->line > CH_MAX_EXT)
			return -EBADMSG;
		return 0;
	case CH_SIZE_LF:
		if (c != '\n')
			return -EBADMSG;
		d->state = d->left ? CH_DATA : CH_TRAILER_START;
		return 0;
	case CH_DATA_CR:
		if (c != '\r')
			return -EBADMSG;
		d->state = CH_DATA_LF;
		return 0;
	case CH_DATA_LF:
		if (c != '\n')
			return -EBADMSG;
		d->state = CH_SIZE;
		d->digits = 0;
		d->line = 0;
		return 0;
	case CH_TRAILER_START:
		if (c == '\r') {
			d->state = CH_END_LF;
		} else if (c == ' ' || c == '\t' || !line_char((unsigned char)c)) {
			return -EBADMSG;	/* obs-fold or control byte */
		} else {
			d->state = CH_TRAILER;
			if (++d->trailer > CH_MAX_TRAILERS)
				return -EBADMSG;
		}
		return 0;
	case CH_TRAILER:
		if (c == '\r')
			d->state = CH_TRAILER_LF;
		else if (!line_char((unsigned char)c) || ++d->trailer > CH_MAX_TRAILERS)
			return -EBADMSG;
		return 0;
	case CH_TRAILER_LF:
		if (c != '\n')
			return -EBADMSG;
		d->state = CH_TRAILER_START;
		return 0;
	case CH_END_LF:
		if (c != '\n')
			return -EBADMSG;
		d->state = CH_DONE;
		return 0;
	}
	return 0;
}

/* Copies what fits of the current chunk's data; 0 when out is full. */
static size_t data_bytes(struct proxy_chunked *d, const char *in, size_t inlen, char *out, size_t outcap,
			 size_t *produced)
{
	size_t n = inlen;

	if (n > d->left)
		n = (size_t)d->left;
	if (n > outcap - *produced)
		n = outcap - *produced;
	if (!n)
		return 0;
	memcpy(out + *produced, in, n);
	*produced += n;
	d->left -= n;
	if (!d->left)
		d->state = CH_DATA_CR;
	return n;
}

int proxy_chunked_decode(struct proxy_chunked *d, const char *in, size_t inlen, size_t *used,
			 char *out, size_t outcap, size_t *produced)
{
	size_t i = 0, n;

	*produced = 0;
	while (i < inlen && d->state != CH_DONE) {
		if (d->state == CH_DATA) {
			n = data_bytes(d, in + i, inlen - i, out, outcap, produced);
			if (!n)
				break;	/* output full */
			i += n;
		} else if (frame_byte(d, in[i])) {
			*used = i;
			return -EBADMSG;
		} else {
			i++;
		}
	}
	*used = i;
	return d->state == CH_DONE;
}
