// SPDX-License-Identifier: MIT
/*
 * The chunked request-body decoder, fed as the relay feeds it: input in
 * pieces of varying size into output buffers of varying room. Whatever the
 * split, the decoded bytes, the verdict and where it stopped are the same
 * as decoding in one call with ample room.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proxy/proxy_chunked.h"

struct result {
	int verdict;		/* 1 done, 0 wants more, -EBADMSG */
	size_t used;		/* input bytes consumed in total */
	size_t produced;	/* output bytes in total */
};

static char whole_out[1 << 16], piece_out[1 << 16];

static struct result decode_whole(const char *in, size_t n)
{
	struct proxy_chunked d = { 0 };
	struct result r = { 0 };

	r.verdict = proxy_chunked_decode(&d, in, n, &r.used, whole_out, sizeof(whole_out),
					 &r.produced);
	return r;
}

static struct result decode_pieces(const char *in, size_t n, size_t in_step, size_t out_room)
{
	struct proxy_chunked d = { 0 };
	struct result r = { 0 };
	size_t have = 0;

	for (;;) {
		size_t used = 0, produced = 0, room = out_room;
		size_t avail = have - r.used;

		if (room > sizeof(piece_out) - r.produced)
			room = sizeof(piece_out) - r.produced;
		r.verdict = proxy_chunked_decode(&d, in + r.used, avail, &used,
						 piece_out + r.produced, room, &produced);
		FUZZ_CHECK(used <= avail && produced <= room);
		r.used += used;
		r.produced += produced;
		if (r.verdict)
			return r;
		if (used == avail) {
			if (have == n)
				return r;
			/* Like a socket read: whatever arrived next. */
			have = have + in_step > n ? n : have + in_step;
		}
		/* Otherwise the output was full: the relay drains it and calls again. */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result w, p;
	size_t in_step, out_room;

	if (size < 2 || size > sizeof(whole_out))
		return 0;
	in_step = data[0] % 13 + 1;
	out_room = data[1] % 29 + 1;
	data += 2;
	size -= 2;

	w = decode_whole((const char *)data, size);
	FUZZ_CHECK(w.verdict == 1 || w.verdict == 0 || w.verdict == -EBADMSG);
	FUZZ_CHECK(w.used <= size && w.produced <= w.used);
	p = decode_pieces((const char *)data, size, in_step, out_room);
	FUZZ_CHECK(p.verdict == w.verdict);
	FUZZ_CHECK(p.used == w.used);
	FUZZ_CHECK(p.produced == w.produced);
	FUZZ_CHECK(!memcmp(piece_out, whole_out, w.produced));
	return 0;
}
