// SPDX-License-Identifier: MIT
/*
 * The handshake with the host's proxy, its messages, and the rewrite of a
 * forwarded HTTP head for an HTTP parent. Every connection reaching this point
 * was decided by name (and its literal, if any, guarded) exactly as without
 * a parent; the parent is only asked to reach that name, so it resolves it
 * and the sandbox's DNS never asks upstream for it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proxy_parent.h"
#include "proxy_reply.h"
#include "proxy_upstream.h"

enum { PSTEP_HTTP_CONNECT = 1, PSTEP_SOCKS_GREET, PSTEP_SOCKS_AUTH, PSTEP_SOCKS_CONNECT };

int proxy_parent_basic(const char *user, const char *pass, char *out, size_t cap)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char raw[512];
	int n = snprintf(raw, sizeof(raw), "%s:%s", user, pass ? pass : "");
	size_t o = 6;

	if (n < 0 || (size_t)n >= sizeof(raw) || cap < 6 + ((size_t)n + 2) / 3 * 4 + 1)
		return -ENOSPC;
	memcpy(out, "Basic ", 6);
	for (int i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)raw[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)raw[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)raw[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

ssize_t proxy_parent_connect_request(const char *host, unsigned port, const char *authorization, char *out,
				     size_t cap)
{
	bool v6 = strchr(host, ':') != NULL;
	int n = snprintf(out, cap, "CONNECT %s%s%s:%u HTTP/1.1\r\nHost: %s%s%s:%u\r\n%s%s%s\r\n", v6 ? "[" : "",
			 host, v6 ? "]" : "", port, v6 ? "[" : "", host, v6 ? "]" : "", port,
			 authorization ? "Proxy-Authorization: " : "", authorization ? authorization : "",
			 authorization ? "\r\n" : "");

	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

ssize_t proxy_parent_http_reply(const char *buf, size_t len, unsigned *status)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	size_t i = 9;

	/* Enough of the status line to refuse a non-HTTP answer early. */
	if (len >= 9 && (memcmp(buf, "HTTP/1.", 7) || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' '))
		return -EINVAL;
	if (!end)
		return 0;
	*status = 0;
	for (; i < 12 && i < len && buf[i] >= '0' && buf[i] <= '9'; i++)
		*status = *status * 10 + (unsigned)(buf[i] - '0');
	if (i != 12 || *status < 100 || (buf[12] != ' ' && buf[12] != '\r'))
		return -EINVAL;
	return end - buf + 4;
}

ssize_t proxy_parent_socks5_connect(const char *host, unsigned port, unsigned char *out, size_t cap)
{
	unsigned char a[16];
	size_t n = 4, hl = strlen(host);

	if (cap < 4 + 1 + 255 + 2)
		return -ENOSPC;
	out[0] = 5;
	out[1] = 1;	/* CONNECT */
	out[2] = 0;
	if (inet_pton(AF_INET, host, a) == 1) {
		out[3] = 1;
		memcpy(out + n, a, 4);
		n += 4;
	} else if (inet_pton(AF_INET6, host, a) == 1) {
		out[3] = 4;
		memcpy(out + n, a, 16);
		n += 16;
	} else {
		if (!hl || hl > 255)
			return -EINVAL;
		out[3] = 3;
		out[n++] = (unsigned char)hl;
		memcpy(out + n, host, hl);
		n += hl;
	}
	out[n++] = (unsigned char)(port >> 8);
	out[n++] = (unsigned char)port;
	return (ssize_t)n;
}

ssize_t proxy_parent_socks5_reply(const unsigned char *buf, size_t len, unsigned *rep)
{
	size_t need;

	if (len >= 1 && buf[0] != 5)
		return -EINVAL;
	if (len >= 3 && buf[2] != 0)
		return -EINVAL;
	if (len < 5)
		return 0;
	switch (buf[3]) {
	case 1: need = 4 + 4 + 2; break;
	case 4: need = 4 + 16 + 2; break;
	case 3: need = 4 + 1 + (size_t)buf[4] + 2; break;
	default: return -EINVAL;
	}
	if (len < need)
		return 0;
	*rep = buf[1];
	return (ssize_t)need;
}

ssize_t proxy_parent_absolute(char *head, size_t len, size_t cap, const char *host, unsigned port,
			      const char *authorization)
{
	char prefix[PROXY_HOST_MAX + 24], auth[640];
	char *sp = memchr(head, ' ', len), *eol = memmem(head, len, "\r\n", 2);
	bool v6 = strchr(host, ':') != NULL;
	int pn, an = 0;

	if (!sp || !eol || sp > eol)
		return -EINVAL;
	pn = port == 80 ? snprintf(prefix, sizeof(prefix), "http://%s%s%s", v6 ? "[" : "", host, v6 ? "]" : "")
			: snprintf(prefix, sizeof(prefix), "http://%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
	if (pn < 0 || (size_t)pn >= sizeof(prefix))
		return -ENOSPC;
	if (authorization) {
		an = snprintf(auth, sizeof(auth), "Proxy-Authorization: %s\r\n", authorization);
		if (an < 0 || (size_t)an >= sizeof(auth))
			return -ENOSPC;
	}
	if (len + (size_t)pn + (size_t)an > cap)
		return -ENOSPC;
	/* Credentials after the request line, the scheme and authority before the path. */
	memmove(eol + 2 + an, eol + 2, len - (size_t)(eol + 2 - head));
	memcpy(eol + 2, auth, (size_t)an);
	memmove(sp + 1 + pn, sp + 1, len + (size_t)an - (size_t)(sp + 1 - head));
	memcpy(sp + 1, prefix, (size_t)pn);
	explicit_bzero(auth, sizeof(auth));
	return (ssize_t)(len + (size_t)pn + (size_t)an);
}

ssize_t proxy_parent_head(struct proxy_conn *c, ssize_t n)
{
	const struct proxy_parent *pp = proxy_parent_for(c->p, c->host, c->port);

	if (!pp || pp->kind != PROXY_PARENT_HTTP)
		return n;
	n = proxy_parent_absolute(c->up.data, (size_t)n, c->up.cap, c->host, c->port, pp->authorization);
	if (n < 0)
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL,
				 "Request Header Fields Too Large", "rebuilt request too large");
	return n;
}

__attribute__((format(printf, 2, 3))) static void fail(struct proxy_conn *c, const char *fmt, ...)
{
	char msg[120];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	proxy_upstream_failed(c, 0, msg);
}

static void queue(struct proxy_conn *c, const void *b, size_t n, int step)
{
	memcpy(c->hs, b, n);
	c->hs_off = 0;
	c->hs_len = n;
	c->hr_len = 0;
	c->pstep = step;
}

bool proxy_parent_begin(struct proxy_conn *c)
{
	const struct proxy_parent *pp = c->parent;
	ssize_t n;

	if (pp->kind == PROXY_PARENT_HTTP && c->proto == PP_HTTP && !c->terminated)
		return true;	/* already rewritten into absolute-form */
	c->st = PS_PARENT;
	c->deadline = proxy_now(c->p) + proxy_idle_ms(c->p);
	if (pp->kind == PROXY_PARENT_HTTP) {
		n = proxy_parent_connect_request(c->host, c->port, pp->authorization, (char *)c->hs, sizeof(c->hs));
		if (n < 0) {
			fail(c, "parent proxy: CONNECT request too large");
			return false;
		}
		c->hs_off = 0;
		c->hs_len = (size_t)n;
		c->hr_len = 0;
		c->pstep = PSTEP_HTTP_CONNECT;
		return false;
	}
	/* SOCKS5: offer username/password only when there are credentials. */
	queue(c, pp->user ? "\x05\x01\x02" : "\x05\x01\x00", 3, PSTEP_SOCKS_GREET);
	return false;
}

static int socks_next(struct proxy_conn *c)
{
	unsigned char b[sizeof(c->hs)];
	ssize_t n = proxy_parent_socks5_connect(c->host, c->port, b, sizeof(b));

	if (n < 0)
		return -EINVAL;
	queue(c, b, (size_t)n, PSTEP_SOCKS_CONNECT);
	return 0;
}

/* What the parent said; true when the handshake is over (relay, or failed and answered). */
static bool on_reply(struct proxy_conn *c)
{
	const struct proxy_parent *pp = c->parent;
	unsigned status = 0, rep = 0;
	size_t ul, pl, used = 0;
	ssize_t n;

	switch (c->pstep) {
	case PSTEP_HTTP_CONNECT:
		n = proxy_parent_http_reply((const char *)c->hr, c->hr_len, &status);
		if (!n)
			return false;
		if (n < 0) {
			fail(c, "parent proxy: malformed answer to CONNECT");
			return true;
		}
		if (status / 100 != 2) {
			fail(c, "parent proxy answered %u to CONNECT", status);
			return true;
		}
		used = (size_t)n;
		break;
	case PSTEP_SOCKS_GREET:
		if (c->hr_len < 2)
			return false;
		if (c->hr[0] != 5 || c->hr[1] != (pp->user ? 2 : 0)) {
			fail(c, "parent proxy: SOCKS5 method %u not offered", c->hr[1]);
			return true;
		}
		if (!pp->user) {
			if (!socks_next(c))
				return false;
			fail(c, "parent proxy: name too long for SOCKS5");
			return true;
		}
		/* RFC 1929: VER 1, ULEN, UNAME, PLEN, PASSWD. */
		ul = strlen(pp->user);
		pl = strlen(pp->pass ? pp->pass : "");
		c->hs[0] = 1;
		c->hs[1] = (unsigned char)ul;
		memcpy(c->hs + 2, pp->user, ul);
		c->hs[2 + ul] = (unsigned char)pl;
		memcpy(c->hs + 3 + ul, pp->pass ? pp->pass : "", pl);
		c->hs_off = 0;
		c->hs_len = 3 + ul + pl;
		c->hr_len = 0;
		c->pstep = PSTEP_SOCKS_AUTH;
		return false;
	case PSTEP_SOCKS_AUTH:
		if (c->hr_len < 2)
			return false;
		explicit_bzero(c->hs, sizeof(c->hs));
		if (c->hr[1] != 0) {
			fail(c, "parent proxy refused the SOCKS5 credentials (status %u)", c->hr[1]);
			return true;
		}
		if (!socks_next(c))
			return false;
		fail(c, "parent proxy: name too long for SOCKS5");
		return true;
	case PSTEP_SOCKS_CONNECT:
		n = proxy_parent_socks5_reply(c->hr, c->hr_len, &rep);
		if (!n)
			return false;
		if (n < 0) {
			fail(c, "parent proxy: malformed SOCKS5 reply");
			return true;
		}
		if (rep) {
			fail(c, "parent proxy: SOCKS5 CONNECT failed with reply %u", rep);
			return true;
		}
		used = (size_t)n;
		break;
	default:
		return false;
	}
	/* The tunnel is up: what the parent sent past its answer is the destination's. */
	proxy_upstream_established(c, c->hr + used, c->hr_len - used);
	return true;
}

bool proxy_parent_step(struct proxy_conn *c)
{
	bool progress = false;

	while (c->uwr && c->hs_off < c->hs_len) {
		ssize_t n = send(c->ufd, c->hs + c->hs_off, c->hs_len - c->hs_off, MSG_NOSIGNAL);

		if (n > 0) {
			c->hs_off += (size_t)n;
			progress = true;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			c->uwr = false;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			proxy_upstream_failed(c, -errno, "parent proxy: send failed");
			return true;
		}
	}
	if (c->hs_off < c->hs_len)
		return progress;
	while (c->urd && c->st == PS_PARENT) {
		ssize_t n;

		if (c->hr_len == sizeof(c->hr)) {
			fail(c, "parent proxy: answer longer than %u bytes", (unsigned)sizeof(c->hr));
			return true;
		}
		n = recv(c->ufd, c->hr + c->hr_len, sizeof(c->hr) - c->hr_len, 0);
		if (n > 0) {
			c->hr_len += (size_t)n;
			progress = true;
			if (on_reply(c))
				return true;
			if (c->hs_off < c->hs_len) {	/* the next message of the exchange */
				proxy_parent_step(c);
				return true;
			}
		} else if (n == 0) {
			fail(c, "parent proxy closed the connection during the handshake");
			return true;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			c->urd = false;
		} else if (errno != EINTR) {
			proxy_upstream_failed(c, -errno, "parent proxy: read failed");
			return true;
		}
	}
	return progress;
}
