/* SPDX-License-Identifier: MIT */
/* Chunked transfer coding. */
#ifndef BPFBOX_PROXY_CHUNKED_H
#define BPFBOX_PROXY_CHUNKED_H

#include <stdbool.h>
#include <stddef.h>

/* proxy_chunked.c: strict decoder; the proxy re-encodes what it decodes. */
struct proxy_chunked {
	int state;
	unsigned long long left;	/* data bytes left in this chunk */
	unsigned digits;
	size_t line;			/* bytes of the current ext/trailer line */
	size_t trailer;			/* bytes of trailers so far */
};
int proxy_chunked_decode(struct proxy_chunked *d, const char *in, size_t inlen, size_t *used,
			 char *out, size_t outcap, size_t *produced);

#endif
