// SPDX-License-Identifier: MIT
/*
 * SOCKS5 (RFC 1928, no-auth, CONNECT only) and SOCKS4/4a message parsing.
 * Parsers return bytes consumed, 0 when more bytes are needed, or negative
 * errno; they never read past len.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "proxy_socks.h"

ssize_t proxy_socks5_greeting(const unsigned char *buf, size_t len, bool *noauth)
{
	size_t n;

	if (len < 2)
		return 0;
	if (buf[0] != 5 || buf[1] == 0)
		return -EBADMSG;
	n = buf[1];
	if (len < 2 + n)
		return 0;
	*noauth = memchr(buf + 2, 0x00, n) != NULL;
	return (ssize_t)(2 + n);
}

ssize_t proxy_socks5_request(const unsigned char *buf, size_t len, struct proxy_socks_req *r,
			     unsigned char *rep)
{
	size_t need, alen;

	memset(r, 0, sizeof(*r));
	*rep = SOCKS5_REP_FAIL;
	if (len < 5)
		return 0;
	if (buf[0] != 5 || buf[2] != 0)
		return -EBADMSG;
	r->cmd = buf[1];
	switch (buf[3]) {
	case 1:
		alen = 4;
		need = 4 + 4 + 2;
		break;
	case 3:
		alen = buf[4];
		need = 5 + alen + 2;
		break;
	case 4:
		alen = 16;
		need = 4 + 16 + 2;
		break;
	default:
		/* Cannot even tell the message length: answer and hang up. */
		*rep = SOCKS5_REP_ATYP;
		return -EAFNOSUPPORT;
	}
	if (len < need)
		return 0;
	if (r->cmd != 1) {
		*rep = SOCKS5_REP_CMD;
		return -EOPNOTSUPP;
	}
	r->port = (unsigned)buf[need - 2] << 8 | buf[need - 1];
	if (buf[3] == 3) {
		r->is_name = true;
		memcpy(r->host, buf + 5, alen);
		r->host[alen] = '\0';
		/* A malformed destination is denied like any disallowed one. */
		if (!alen || memchr(buf + 5, '\0', alen)) {
			*rep = SOCKS5_REP_DENIED;
			return -EINVAL;
		}
	} else {
		inet_ntop(buf[3] == 1 ? AF_INET : AF_INET6, buf + 4, r->host, sizeof(r->host));
	}
	if (!r->port) {
		*rep = SOCKS5_REP_DENIED;
		return -EINVAL;
	}
	*rep = SOCKS5_REP_OK;
	return (ssize_t)need;
}

size_t proxy_socks5_reply(unsigned char *out, unsigned char rep)
{
	/* BND.ADDR 0.0.0.0:0: clients ignore it, and it need not reveal the host's address. */
	static const unsigned char tail[7] = { 0, 1, 0, 0, 0, 0, 0 };

	out[0] = 5;
	out[1] = rep;
	memcpy(out + 2, tail, sizeof(tail));
	out[9] = 0;
	return 10;
}

/* A NUL-terminated field of at most 255 bytes starting at off. */
static ssize_t cstr_end(const unsigned char *buf, size_t len, size_t off)
{
	const unsigned char *z;
	size_t avail = len > off ? len - off : 0;

	z = memchr(buf + off, '\0', avail < 256 ? avail : 256);
	if (!z)
		return avail >= 256 ? -EMSGSIZE : 0;
	return (ssize_t)(z - buf);
}

ssize_t proxy_socks4_request(const unsigned char *buf, size_t len, struct proxy_socks_req *r)
{
	ssize_t uz, hz;

	memset(r, 0, sizeof(*r));
	if (len < 9)
		return 0;
	if (buf[0] != 4)
		return -EBADMSG;
	r->cmd = buf[1];
	r->port = (unsigned)buf[2] << 8 | buf[3];
	uz = cstr_end(buf, len, 8);	/* USERID, ignored */
	if (uz <= 0)
		return uz;
	/* 0.0.0.x with x != 0 announces a SOCKS4a host name after the user id. */
	if (!buf[4] && !buf[5] && !buf[6] && buf[7]) {
		hz = cstr_end(buf, len, (size_t)uz + 1);
		if (hz <= 0)
			return hz;
		if (hz == uz + 1)
			return -EINVAL;
		r->is_name = true;
		memcpy(r->host, buf + uz + 1, (size_t)(hz - uz - 1));
		r->host[hz - uz - 1] = '\0';
		uz = hz;
	} else {
		inet_ntop(AF_INET, buf + 4, r->host, sizeof(r->host));
	}
	if (r->cmd != 1 || !r->port)
		return -EINVAL;
	return uz + 1;
}

size_t proxy_socks4_reply(unsigned char *out, unsigned char rep)
{
	memset(out, 0, 8);
	out[1] = rep;
	return 8;
}
