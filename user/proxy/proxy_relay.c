// SPDX-License-Identifier: MIT
/*
 * Moving bytes once a connection is established: the tunnel (CONNECT,
 * SOCKS) is a byte pipe that passes each side's EOF on as a half-close;
 * HTTP forwarding frames the request body itself and rewrites the response
 * head, then relays until the server closes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy_conn.h"
#include "proxy_cred.h"
#include "proxy_relay.h"
#include "proxy_tls_wrap.h"
#include "proxy_reply.h"

#define RELAY_BUF (64 * 1024)
#define RESP_SLACK 1024		/* room to grow a response head while rewriting it */
#define CHUNK_TMP 8192
#define CHUNK_FRAME 32		/* "%zx\r\n" + "\r\n" + "0\r\n\r\n" */
#define LINGER_MAX (256 * 1024)

enum frame { FR_PROGRESS, FR_NEED_INPUT, FR_BLOCKED, FR_ERROR };

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

static int buf_alloc(struct proxy_buf *b, size_t cap)
{
	if (b->data)
		return 0;
	b->data = malloc(cap);
	if (!b->data)
		return -ENOMEM;
	b->cap = cap;
	b->off = b->len = 0;
	return 0;
}

int proxy_relay_alloc(struct proxy_conn *c)
{
	size_t cap = max_sz(RELAY_BUF, proxy_header_limit(c->p) + RESP_SLACK);

	return buf_alloc(&c->up, cap) ?: buf_alloc(&c->down, cap);
}

int proxy_relay_begin(struct proxy_conn *c)
{
	int ret = proxy_relay_alloc(c);

	if (ret)
		return ret;
	if (c->proto != PP_HTTP) {
		/* in.cap (header_limit) <= up.cap: early tunnel bytes always fit. */
		memcpy(c->up.data + c->up.len, c->in.data, c->in.len);
		c->up.len += c->in.len;
		c->in.len = 0;
		c->body_done = true;
	}
	return 0;
}

static void consume_in(struct proxy_conn *c, size_t n)
{
	memmove(c->in.data, c->in.data + n, c->in.len - n);
	c->in.len -= n;
}

/* recv into [b->len, limit): >0 read, 0 EOF, -EAGAIN, or another -errno. */
static ssize_t read_into(int fd, struct proxy_buf *b, size_t limit)
{
	ssize_t n;

	do
		n = recv(fd, b->data + b->len, limit - b->len, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		b->len += (size_t)n;
	return n < 0 ? (errno == EWOULDBLOCK ? -EAGAIN : -errno) : n;
}

static ssize_t send_from(int fd, struct proxy_buf *b, size_t end)
{
	ssize_t n;

	/* MSG_NOSIGNAL: a vanished peer is an error return, never a SIGPIPE. */
	do
		n = send(fd, b->data + b->off, end - b->off, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		b->off += (size_t)n;
	return n < 0 ? (errno == EWOULDBLOCK ? -EAGAIN : -errno) : n;
}

static void append(struct proxy_buf *b, const void *p, size_t n)
{
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static enum frame frame_length(struct proxy_conn *c)
{
	size_t n = c->in.len;

	if (!n)
		return FR_NEED_INPUT;
	proxy_buf_compact(&c->up, NULL);
	if (n > c->body.length)
		n = (size_t)c->body.length;
	if (n > c->up.cap - c->up.len)
		n = c->up.cap - c->up.len;
	if (!n)
		return FR_BLOCKED;
	append(&c->up, c->in.data, n);
	c->body.length -= n;
	consume_in(c, n);
	if (!c->body.length) {
		c->body_done = true;
		c->in.len = 0;	/* anything after the body is not forwarded */
	}
	return FR_PROGRESS;
}

static enum frame frame_chunked(struct proxy_conn *c)
{
	char tmp[CHUNK_TMP], hdr[24];
	size_t used, produced, space, outcap;
	int rc;

	if (!c->in.len)
		return FR_NEED_INPUT;
	proxy_buf_compact(&c->up, NULL);
	space = c->up.cap - c->up.len;
	if (space < 2 * CHUNK_FRAME)
		return FR_BLOCKED;
	outcap = space - CHUNK_FRAME < sizeof(tmp) ? space - CHUNK_FRAME : sizeof(tmp);
	rc = proxy_chunked_decode(&c->chunk, c->in.data, c->in.len, &used, tmp, outcap, &produced);
	if (rc < 0)
		return FR_ERROR;
	consume_in(c, used);
	if (produced) {
		int hl = snprintf(hdr, sizeof(hdr), "%zx\r\n", produced);

		append(&c->up, hdr, (size_t)hl);
		append(&c->up, tmp, produced);
		append(&c->up, "\r\n", 2);
	}
	if (rc == 1) {
		append(&c->up, "0\r\n\r\n", 5);
		c->body_done = true;
		c->in.len = 0;
		return FR_PROGRESS;
	}
	return used ? FR_PROGRESS : FR_NEED_INPUT;
}

/* 502 while the client has seen nothing yet; otherwise all we can do is close. */
static void bad_gateway(struct proxy_conn *c, const char *why)
{
	const char *tls = proxy_tls_wrap_error(c, true);

	if (tls)
		why = tls;	/* the upstream's TLS failed: its own reason, not the EOF it left */
	if (c->resp_sent) {
		proxy_conn_close(c, why);
		return;
	}
	c->resp_base = 0;
	proxy_reply_http(c, 502, "Bad Gateway", NULL, "Bad Gateway", why);
}

static bool http_client_in(struct proxy_conn *c)
{
	bool progress = false;
	enum frame fr;

	if (c->body_done)
		return false;
	if (c->crd && !c->up_eof && c->in.len < c->in.cap) {
		ssize_t n = read_into(c->cfd, &c->in, c->in.cap);

		if (n > 0) {
			progress = true;
		} else if (n == 0) {
			c->up_eof = true;
			c->crd = false;
		} else if (n == -EAGAIN) {
			c->crd = false;
		} else {
			proxy_conn_close(c, "client read failed");
			return false;
		}
	}
	if (proxy_cred_frames(c)) {
		int rc = proxy_cred_frame(c);

		if (rc < 0)
			return false;	/* answered or closed */
		fr = rc == 1 ? FR_PROGRESS : rc == 2 ? FR_BLOCKED : FR_NEED_INPUT;
	} else {
		fr = c->body.kind == PROXY_BODY_CHUNKED ? frame_chunked(c) : frame_length(c);
	}
	if (fr == FR_ERROR) {
		if (c->resp_sent)
			proxy_conn_close(c, "malformed chunked request body");
		else
			proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request",
					 "malformed chunked request body");
		return false;
	}
	if (fr == FR_NEED_INPUT && c->up_eof && !c->body_done) {
		proxy_conn_close(c, "client closed before the request body was complete");
		return false;
	}
	return progress || fr == FR_PROGRESS;
}

static bool tunnel_client_in(struct proxy_conn *c)
{
	size_t limit = c->up.cap;
	ssize_t n;

	if (!c->crd || c->up_eof)
		return false;
	/* Held first bytes are read no further than a timely sniff would have read them. */
	if (c->late_check && c->in.cap < limit)
		limit = c->in.cap;
	proxy_buf_compact(&c->up, NULL);
	if (c->up.len >= limit)
		return false;
	n = read_into(c->cfd, &c->up, limit);
	if (n > 0)
		return true;
	if (n == 0) {
		c->up_eof = true;
		c->crd = false;
		return true;
	}
	if (n == -EAGAIN) {
		c->crd = false;
		return false;
	}
	proxy_conn_close(c, "client read failed");
	return false;
}

static bool send_upstream(struct proxy_conn *c)
{
	bool progress = false;

	/* Its head waits for the whole body (a new Content-Length, a SigV4 signature). */
	if (proxy_cred_holding(c))
		return false;

	while (c->uwr && c->up.off < c->up.len) {
		ssize_t n = send_from(c->ufd, &c->up, c->up.len);

		if (n == -EAGAIN) {
			c->uwr = false;
		} else if (n < 0 && c->proto == PP_HTTP) {
			/*
			 * A server may answer early (413) and stop reading: drop
			 * the rest of the body and still relay its answer; if none
			 * comes, the client gets a 502 from the response path.
			 */
			c->body_done = true;
			c->in.len = 0;
			c->up.off = c->up.len = 0;
			c->urd = true;
			return true;
		} else if (n < 0) {
			proxy_conn_close(c, "upstream write failed");
			return false;
		} else {
			c->bytes_up += (unsigned long long)n;
			progress = true;
		}
	}
	if (c->up.off == c->up.len)
		c->up.off = c->up.len = 0;
	return progress;
}

/* Parses and rewrites response heads in place; 1xx heads are passed on as they come. */
static void response_heads(struct proxy_conn *c)
{
	size_t limit = c->down.cap - RESP_SLACK;

	while (!c->resp_done) {
		char *head = c->down.data + c->resp_base;
		size_t avail = c->down.len - c->resp_base;
		struct proxy_response *resp;
		ssize_t r = proxy_head_end(head, avail, &c->resp_scan), n;
		char *tmp;

		if (r < 0) {
			bad_gateway(c, "malformed response head");
			return;
		}
		if (!r) {
			if (c->down_eof)
				bad_gateway(c, "upstream closed before a complete response");
			else if (c->down.len >= limit)
				bad_gateway(c, "response head too large");
			return;
		}
		resp = malloc(sizeof(*resp));
		tmp = malloc((size_t)r + RESP_SLACK);
		if (!resp || !tmp) {
			free(resp);
			free(tmp);
			proxy_conn_close(c, "out of memory");
			return;
		}
		n = -EBADMSG;
		if (!proxy_parse_response(head, (size_t)r, resp))
			n = proxy_build_client_head(resp, proxy_cfg(c->p)->rules.strip_response_headers,
						    proxy_cfg(c->p)->rules.n_strip_response_headers,
						    tmp, (size_t)r + RESP_SLACK);
		if (n >= 0) {
			memmove(head + n, head + r, avail - (size_t)r);
			memcpy(head, tmp, (size_t)n);
			c->down.len = c->down.len - (size_t)r + (size_t)n;
			c->status = (int)resp->status;
			c->resp_scan = 0;
			/* An interim answer (100 Continue): the final one follows it. */
			if (resp->status < 200 && resp->status != 101)
				c->resp_base += (size_t)n;
			else
				c->resp_done = true;
		}
		free(resp);
		free(tmp);
		if (n < 0) {
			bad_gateway(c, "malformed response head");
			return;
		}
	}
}

static bool upstream_in(struct proxy_conn *c)
{
	bool http = c->proto == PP_HTTP;
	size_t limit;
	ssize_t n;

	if (!c->urd || c->down_eof)
		return false;
	proxy_buf_compact(&c->down, &c->resp_base);
	/* While a head is incomplete, keep RESP_SLACK free for its rewrite. */
	limit = http && !c->resp_done ? c->down.cap - RESP_SLACK : c->down.cap;
	if (c->down.len >= limit)
		return false;
	n = read_into(c->ufd, &c->down, limit);
	if (n == 0) {
		c->down_eof = true;
		c->urd = false;
	} else if (n == -EAGAIN) {
		c->urd = false;
		return false;
	} else if (n < 0) {
		if (http)
			bad_gateway(c, "upstream read failed");
		else
			proxy_conn_close(c, "upstream read failed");
		return false;
	}
	if (http && !c->resp_done)
		response_heads(c);
	return true;
}

bool proxy_flush_client(struct proxy_conn *c)
{
	bool progress = false;

	while (c->cwr && c->cout_off < c->cout_len) {
		ssize_t n = send(c->cfd, c->cout + c->cout_off, c->cout_len - c->cout_off,
				 MSG_NOSIGNAL);

		if (n > 0) {
			c->cout_off += (size_t)n;
			progress = true;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			c->cwr = false;
		} else if (n < 0 && errno != EINTR) {
			proxy_conn_close(c, "client write failed");
			return false;
		}
	}
	if (c->cout_off < c->cout_len || c->st != PS_RELAY || !c->down.data)
		return progress;
	for (;;) {
		/* Until the final response head is rewritten, only earlier heads may go. */
		size_t end = c->proto == PP_HTTP && !c->resp_done ? c->resp_base : c->down.len;
		ssize_t n;

		if (!c->cwr || c->down.off >= end)
			break;
		n = send_from(c->cfd, &c->down, end);
		if (n == -EAGAIN) {
			c->cwr = false;
		} else if (n < 0) {
			proxy_conn_close(c, "client write failed");
			return false;
		} else {
			c->bytes_down += (unsigned long long)n;
			c->resp_sent = true;
			progress = true;
		}
	}
	if (c->down.off == c->down.len && c->down.off) {
		c->down.off = c->down.len = 0;
		c->resp_base = 0;
	}
	return progress;
}

/* A tunnel's client side, once its early bytes are sent on, is a plain byte pipe. */
static bool pump_up(struct proxy_conn *c)
{
	bool read_failed = false;
	int ret;

	if (!c->up_spliced) {
		if (c->proto == PP_HTTP || c->late_check || c->up.off != c->up.len || !proxy_pipe_open(&c->to_up))
			return false;
		c->up_spliced = true;
	}
	ret = proxy_pipe_pump(&c->to_up, c->cfd, c->ufd, &c->crd, &c->uwr, &c->up_eof, &c->bytes_up, &read_failed);
	if (ret < 0) {
		proxy_conn_close(c, read_failed ? "client read failed" : "upstream write failed");
		return false;
	}
	return ret > 0;
}

/* The answer side: a tunnel's at once, an HTTP response's once its head is rewritten and sent. */
static bool pump_down(struct proxy_conn *c)
{
	unsigned long long before = c->bytes_down;
	bool read_failed = false;
	int ret;

	if (!c->down_spliced) {
		if ((c->proto == PP_HTTP && !c->resp_done) || c->down.off != c->down.len ||
		    c->cout_off != c->cout_len || !proxy_pipe_open(&c->to_down))
			return false;
		c->down_spliced = true;
	}
	ret = proxy_pipe_pump(&c->to_down, c->ufd, c->cfd, &c->urd, &c->cwr, &c->down_eof, &c->bytes_down,
			      &read_failed);
	if (ret < 0) {
		proxy_conn_close(c, read_failed ? "upstream read failed" : "client write failed");
		return false;
	}
	if (c->bytes_down != before)
		c->resp_sent = true;
	return ret > 0;
}

bool proxy_relay_step(struct proxy_conn *c)
{
	bool http = c->proto == PP_HTTP, progress = false;

	if (c->up_spliced || !http)
		progress = pump_up(c);
	if (c->st != PS_RELAY)
		return progress;
	if (!c->up_spliced)
		progress |= http ? http_client_in(c) : tunnel_client_in(c);
	if (c->st != PS_RELAY)
		return progress;
	/* Client bytes of a silent decision are held until known to carry no name (proxy_transparent.c). */
	if (c->late_check && !c->late_check(c))
		return true;	/* refused, or being decided again by its name */
	if (!c->late_check) {
		progress |= send_upstream(c);
		if (c->st != PS_RELAY)
			return progress;
		if (!http && c->up_eof && c->up.off == c->up.len && !c->to_up.held && !c->up_shut) {
			shutdown(c->ufd, SHUT_WR);	/* pass the client's EOF on */
			c->up_shut = true;
			progress = true;
		}
	}
	if (!c->down_spliced) {
		progress |= upstream_in(c);
		if (c->st != PS_RELAY)
			return progress;
		progress |= proxy_flush_client(c);
		if (c->st != PS_RELAY)
			return progress;
	}
	progress |= pump_down(c);
	if (c->st != PS_RELAY)
		return progress;
	if (c->down_eof && c->down.off == c->down.len && !c->to_down.held && !c->down_shut &&
	    c->cout_off == c->cout_len) {
		c->down_shut = true;
		progress = true;
		if (http) {
			/* Response complete: same orderly close as the proxy's own answers. */
			c->st = PS_REPLY;
			close(c->ufd);
			c->ufd = -1;
			c->urd = c->uwr = false;
			return true;
		}
		shutdown(c->cfd, SHUT_WR);
	}
	if (!http && c->up_shut && c->down_shut) {
		proxy_conn_close(c, NULL);
		return false;
	}
	if (progress)
		c->deadline = proxy_now(c->p) + proxy_idle_ms(c->p);
	return progress;
}

bool proxy_linger_step(struct proxy_conn *c)
{
	char sink[4096];
	ssize_t n;

	if (!c->crd)
		return false;
	n = recv(c->cfd, sink, sizeof(sink), 0);
	if (n > 0) {
		c->lingered += (unsigned long long)n;
		if (c->lingered <= LINGER_MAX)
			return true;
		proxy_conn_close(c, NULL);	/* a flood: enough courtesy */
		return false;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		c->crd = false;
		return false;
	}
	if (n < 0 && errno == EINTR)
		return true;
	proxy_conn_close(c, NULL);	/* EOF or error: the client has our answer */
	return false;
}
