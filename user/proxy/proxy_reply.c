// SPDX-License-Identifier: MIT
/* The proxy's own answers: queued in the connection, sent before anything else. */
#include <stdio.h>
#include <string.h>

#include "proxy_reply.h"
#include "proxy_socks.h"

static void set_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

void proxy_reply_bytes(struct proxy_conn *c, const void *b, size_t n, int status,
		       const char *error, bool then_close)
{
	if (c->cout_off == c->cout_len)
		c->cout_off = c->cout_len = 0;
	if (n > sizeof(c->cout) - c->cout_len)
		n = sizeof(c->cout) - c->cout_len;	/* cannot happen: replies are small */
	memcpy(c->cout + c->cout_len, b, n);
	c->cout_len += n;
	c->status = status;
	if (error && !c->error[0])
		set_str(c->error, sizeof(c->error), error);
	if (then_close) {
		proxy_drop_upstream(c);
		c->down.off = c->down.len = 0;
		c->st = PS_REPLY;
		c->deadline = proxy_now(c->p) + proxy_idle_ms(c->p);
	}
}

void proxy_reply_http(struct proxy_conn *c, unsigned status, const char *reason,
		      const char *proxy_error, const char *body, const char *error)
{
	char buf[sizeof(c->cout)];
	ssize_t n = proxy_build_reply(buf, sizeof(buf), status, reason, proxy_error, body);

	if (n < 0)
		n = snprintf(buf, sizeof(buf), "HTTP/1.1 %u %s\r\nConnection: close\r\n\r\n",
			     status, "Error");
	proxy_reply_bytes(c, buf, (size_t)n, (int)status, error, true);
}

void proxy_reply_socks(struct proxy_conn *c, unsigned char rep, const char *error, bool then_close)
{
	unsigned char b[10];
	size_t n;

	if (c->proto == PP_SOCKS4)
		n = proxy_socks4_reply(b, rep == SOCKS5_REP_OK ? SOCKS4_REP_OK : SOCKS4_REP_REJECT);
	else
		n = proxy_socks5_reply(b, rep);
	proxy_reply_bytes(c, b, n, c->proto == PP_SOCKS4 ? b[1] : rep, error, then_close);
}
