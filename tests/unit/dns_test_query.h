/* SPDX-License-Identifier: MIT */
/* What the DNS unit tests share: a query built byte by byte, as a client sends it. */
#ifndef BPFBOX_TEST_DNS_QUERY_H
#define BPFBOX_TEST_DNS_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A query for NAME (dotted, in the letter case given) with type T, optional EDNS OPT record. */
static inline size_t make_query(uint8_t *b, uint16_t id, const char *name, uint16_t type, bool edns)
{
	size_t o = 12;
	const char *p = name;

	memset(b, 0, 12);
	b[0] = id >> 8;
	b[1] = id & 0xff;
	b[2] = 0x01; /* RD */
	b[5] = 1;
	b[11] = edns ? 1 : 0;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);

		b[o++] = (uint8_t)l;
		memcpy(b + o, p, l);
		o += l;
		p += l + (dot ? 1 : 0);
	}
	b[o++] = 0;
	b[o++] = type >> 8;
	b[o++] = type & 0xff;
	b[o++] = 0;
	b[o++] = 1;
	if (edns) {
		static const uint8_t opt[] = { 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0 };

		memcpy(b + o, opt, sizeof(opt));
		o += sizeof(opt);
	}
	return o;
}

#endif
