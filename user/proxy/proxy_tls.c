// SPDX-License-Identifier: MIT
/* The server_name of a TLS ClientHello, from records that may split it. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "proxy_tls.h"

#define REC_HANDSHAKE 22
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define NAME_HOST 0
#define RECORD_MAX 16384

struct rd {
	const unsigned char *p;
	size_t n;
};

static bool take(struct rd *r, size_t n, const unsigned char **out)
{
	if (r->n < n)
		return false;
	if (out)
		*out = r->p;
	r->p += n;
	r->n -= n;
	return true;
}

static bool u8(struct rd *r, unsigned *v)
{
	const unsigned char *p;

	if (!take(r, 1, &p))
		return false;
	*v = p[0];
	return true;
}

static bool u16(struct rd *r, unsigned *v)
{
	const unsigned char *p;

	if (!take(r, 2, &p))
		return false;
	*v = (unsigned)p[0] << 8 | p[1];
	return true;
}

/* A vector with a length prefix of 1 or 2 bytes, as a sub-reader. */
static bool vec(struct rd *r, int prefix, struct rd *out)
{
	unsigned n;

	if (!(prefix == 1 ? u8(r, &n) : u16(r, &n)))
		return false;
	out->p = r->p;
	out->n = n;
	return take(r, n, NULL);
}

static int copy_name(const unsigned char *p, size_t n, char *name, size_t cap)
{
	size_t label = 0;

	if (n && p[n - 1] == '.')
		n--;
	if (!n || n > 253)
		return -EINVAL;
	if (n + 1 > cap)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];

		if (c == '.') {
			if (!label)
				return -EINVAL;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
			label++;
		} else if (c >= 'A' && c <= 'Z') {
			c += 32;
			label++;
		} else {
			return -EINVAL;
		}
		if (label > 63)
			return -EINVAL;
		name[i] = (char)c;
	}
	name[n] = 0;
	return 0;
}

static int parse_hello(const unsigned char *hs, size_t len, char *name, size_t cap)
{
	struct rd r = { hs, len }, v, exts, e, list, host;
	unsigned version, type;
	bool seen_sni = false;
	int rc;

	name[0] = 0;
	if (!u16(&r, &version) || (version >> 8) != 3 || !take(&r, 32, NULL))
		return -EINVAL;
	if (!vec(&r, 1, &v) || v.n > 32)		/* session id */
		return -EINVAL;
	if (!vec(&r, 2, &v) || v.n < 2 || v.n % 2)	/* cipher suites */
		return -EINVAL;
	if (!vec(&r, 1, &v) || v.n < 1)		/* compression methods */
		return -EINVAL;
	if (!r.n)
		return 1;				/* no extensions, no name */
	if (!vec(&r, 2, &exts) || r.n)
		return -EINVAL;
	while (exts.n) {
		if (!u16(&exts, &type) || !vec(&exts, 2, &e))
			return -EINVAL;
		if (type != EXT_SERVER_NAME)
			continue;
		/* One server_name extension, holding one host_name. */
		if (seen_sni || !vec(&e, 2, &list) || e.n)
			return -EINVAL;
		seen_sni = true;
		while (list.n) {
			unsigned nt;

			if (!u8(&list, &nt) || !vec(&list, 2, &host))
				return -EINVAL;
			if (nt != NAME_HOST)
				continue;
			if (name[0])
				return -EINVAL;
			rc = copy_name(host.p, host.n, name, cap);
			if (rc)
				return rc;
		}
	}
	return 1;
}

int proxy_tls_sni(const unsigned char *b, size_t len, char *name, size_t cap)
{
	unsigned char hs[PROXY_TLS_HELLO_MAX + 4];
	size_t have = 0, off = 0, need = 4;

	if (!cap)
		return -ENAMETOOLONG;
	/* Handshake bytes from as many records as the message spans. */
	while (have < need) {
		size_t rlen, n;

		if (len - off < 5)
			return len > off && b[off] != REC_HANDSHAKE ? -EINVAL : 0;
		if (b[off] != REC_HANDSHAKE || b[off + 1] != 3)
			return -EINVAL;
		rlen = (size_t)b[off + 3] << 8 | b[off + 4];
		if (!rlen || rlen > RECORD_MAX)
			return -EINVAL;
		if (len - off - 5 < rlen)
			return 0;
		n = rlen;
		if (have + n > sizeof(hs))
			return -EINVAL;
		memcpy(hs + have, b + off + 5, n);
		have += n;
		off += 5 + rlen;
		if (have >= 4) {
			if (hs[0] != HS_CLIENT_HELLO)
				return -EINVAL;
			need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
			if (need > sizeof(hs))
				return -EINVAL;
		}
	}
	/* Another handshake message in the same flight would be out of place. */
	if (have != need)
		return -EINVAL;
	return parse_hello(hs + 4, need - 4, name, cap);
}

int proxy_tls_fuzz_one(const unsigned char *b, size_t len)
{
	char name[256];

	proxy_tls_sni(b, len, name, sizeof(name));
	return 0;
}
