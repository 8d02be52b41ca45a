// SPDX-License-Identifier: MIT
/*
 * Strict HTTP/1.x head parsing for the proxy. Anything a lenient server and
 * a strict one could read differently (bare CR/LF, obs-fold, whitespace
 * before a colon, duplicate framing) is refused, so the request we rebuild
 * means exactly what we checked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "proxy_http.h"

static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

static bool is_value_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

bool proxy_span_ieq(struct proxy_span s, const char *lit)
{
	return strlen(lit) == s.n && !strncasecmp(s.p, lit, s.n);
}

ssize_t proxy_head_end(const char *buf, size_t len, size_t *scan)
{
	size_t i;

	for (i = *scan; i < len; i++) {
		char c = buf[i];

		if (c == '\0')
			return -EBADMSG;
		if (c == '\r') {
			if (i + 1 == len)
				break;	/* decide when the next byte arrives */
			if (buf[i + 1] != '\n')
				return -EBADMSG;
		} else if (c == '\n') {
			if (i == 0 || buf[i - 1] != '\r')
				return -EBADMSG;
			if (i >= 3 && buf[i - 2] == '\n')
				return (ssize_t)(i + 1);
		}
	}
	*scan = i;
	return 0;
}

/* The line starting at *pos, without CRLF; advances *pos past the CRLF. */
static int next_line(const char *head, size_t len, size_t *pos, struct proxy_span *line)
{
	const char *start = head + *pos;
	const char *cr = memchr(start, '\r', len - *pos);

	if (!cr || cr + 1 >= head + len || cr[1] != '\n')
		return -EBADMSG;
	line->p = start;
	line->n = (size_t)(cr - start);
	*pos = (size_t)(cr - head) + 2;
	return 0;
}

static int parse_version(const char *p, size_t n, unsigned *minor)
{
	if (n != 8 || memcmp(p, "HTTP/1.", 7) || (p[7] != '0' && p[7] != '1'))
		return -EBADMSG;
	*minor = (unsigned)(p[7] - '0');
	return 0;
}

static int parse_headers(const char *head, size_t len, size_t pos, struct proxy_header *hdr,
			 size_t *nhdr)
{
	struct proxy_span line;

	*nhdr = 0;
	for (;;) {
		size_t i = 0, vs, ve;

		if (next_line(head, len, &pos, &line))
			return -EBADMSG;
		if (!line.n)
			return pos == len ? 0 : -EBADMSG;
		/* obs-fold (a continuation line) is refused, not unfolded. */
		if (line.p[0] == ' ' || line.p[0] == '\t')
			return -EBADMSG;
		while (i < line.n && is_tchar((unsigned char)line.p[i]))
			i++;
		/* No whitespace allowed between name and colon. */
		if (!i || i == line.n || line.p[i] != ':')
			return -EBADMSG;
		vs = i + 1;
		while (vs < line.n && (line.p[vs] == ' ' || line.p[vs] == '\t'))
			vs++;
		ve = line.n;
		while (ve > vs && (line.p[ve - 1] == ' ' || line.p[ve - 1] == '\t'))
			ve--;
		for (size_t k = vs; k < ve; k++)
			if (!is_value_char((unsigned char)line.p[k]))
				return -EBADMSG;
		if (*nhdr == PROXY_MAX_HEADERS)
			return -E2BIG;
		hdr[*nhdr].name = (struct proxy_span){ line.p, i };
		hdr[*nhdr].value = (struct proxy_span){ line.p + vs, ve - vs };
		(*nhdr)++;
	}
}

int proxy_parse_request(const char *head, size_t len, struct proxy_request *req)
{
	struct proxy_span line;
	size_t pos = 0, i = 0, ts;

	memset(req, 0, sizeof(*req));
	if (next_line(head, len, &pos, &line))
		return -EBADMSG;
	while (i < line.n && is_tchar((unsigned char)line.p[i]))
		i++;
	if (!i || i >= 24 || i == line.n || line.p[i] != ' ')
		return -EBADMSG;
	req->method = (struct proxy_span){ line.p, i };
	ts = ++i;
	/* Target: visible ASCII only; one single space on each side. */
	while (i < line.n && line.p[i] > 0x20 && line.p[i] < 0x7f)
		i++;
	if (i == ts || i == line.n || line.p[i] != ' ')
		return -EBADMSG;
	req->target = (struct proxy_span){ line.p + ts, i - ts };
	i++;
	if (parse_version(line.p + i, line.n - i, &req->minor))
		return -EBADMSG;
	return parse_headers(head, len, pos, req->hdr, &req->nhdr);
}

int proxy_parse_response(const char *head, size_t len, struct proxy_response *resp)
{
	struct proxy_span line;
	size_t pos = 0;
	const char *p;

	memset(resp, 0, sizeof(*resp));
	if (next_line(head, len, &pos, &line) || line.n < 12)
		return -EBADMSG;
	p = line.p;
	if (parse_version(p, 8, &resp->minor) || p[8] != ' ')
		return -EBADMSG;
	for (int k = 9; k < 12; k++) {
		if (p[k] < '0' || p[k] > '9')
			return -EBADMSG;
		resp->status = resp->status * 10 + (unsigned)(p[k] - '0');
	}
	if (resp->status < 100 || (line.n > 12 && p[12] != ' '))
		return -EBADMSG;
	for (size_t k = 12; k < line.n; k++)
		if (!is_value_char((unsigned char)p[k]))
			return -EBADMSG;
	resp->status_line = line;
	return parse_headers(head, len, pos, resp->hdr, &resp->nhdr);
}

int proxy_parse_port(const char *s, size_t len, unsigned *port)
{
	unsigned v = 0;

	/* One spelling per port: no sign, no leading zero, 1..65535. */
	if (!len || len > 5 || s[0] == '0')
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 65535)
		return -EBADMSG;
	*port = v;
	return 0;
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

int proxy_parse_authority(const char *s, size_t len, unsigned default_port,
			  struct proxy_authority *out)
{
	const char *hs = s, *rest;
	size_t hl, restlen;

	memset(out, 0, sizeof(*out));
	if (len && s[0] == '[') {
		const char *rb = memchr(s, ']', len);
		unsigned char a6[16];

		if (!rb)
			return -EBADMSG;
		hs = s + 1;
		hl = (size_t)(rb - hs);
		if (!hl || hl >= INET6_ADDRSTRLEN)
			return -EBADMSG;
		memcpy(out->host, hs, hl);
		out->host[hl] = '\0';
		/* Also refuses zone ids ("%eth0") and IPvFuture. */
		if (inet_pton(AF_INET6, out->host, a6) != 1)
			return -EBADMSG;
		out->bracketed = true;
		rest = rb + 1;
	} else {
		const char *colon = memchr(s, ':', len);

		hl = colon ? (size_t)(colon - s) : len;
		if (!hl || hl >= PROXY_HOST_MAX)
			return -EBADMSG;
		for (size_t i = 0; i < hl; i++)
			if (!is_name_char(s[i]))
				return -EBADMSG;
		memcpy(out->host, s, hl);
		out->host[hl] = '\0';
		rest = s + hl;
	}
	restlen = len - (size_t)(rest - s);
	if (!restlen) {
		if (!default_port)
			return -EBADMSG;
		out->port = default_port;
		return 0;
	}
	/* A second colon (unbracketed IPv6) fails the digit check. */
	if (rest[0] != ':')
		return -EBADMSG;
	return proxy_parse_port(rest + 1, restlen - 1, &out->port);
}

int proxy_parse_absolute_url(struct proxy_span t, struct proxy_url *url)
{
	static const char scheme[] = "http://";
	const size_t sl = sizeof(scheme) - 1;
	size_t ae, pe;

	memset(url, 0, sizeof(*url));
	if (t.n < sl || strncasecmp(t.p, scheme, sl)) {
		/* Another scheme (https://, ftp://) is well-formed but not ours. */
		const char *sep = memmem(t.p, t.n, "://", 3);

		return sep ? -EPROTONOSUPPORT : -EBADMSG;
	}
	ae = sl;
	while (ae < t.n && t.p[ae] != '/' && t.p[ae] != '?' && t.p[ae] != '#')
		ae++;
	/* Userinfo is where URL parsers disagree most; nobody needs it here. */
	if (memchr(t.p + sl, '@', ae - sl))
		return -EBADMSG;
	if (proxy_parse_authority(t.p + sl, ae - sl, 80, &url->auth))
		return -EBADMSG;
	pe = ae;
	while (pe < t.n && t.p[pe] != '#')
		pe++;	/* a fragment never goes on the wire */
	url->path = (struct proxy_span){ t.p + ae, pe - ae };
	return 0;
}

/* Comma-separated list of decimal lengths; all must agree. */
static int parse_content_length(struct proxy_span v, bool *seen, unsigned long long *len)
{
	size_t i = 0;

	for (;;) {
		unsigned long long x = 0;
		size_t digits = 0;

		while (i < v.n && (v.p[i] == ' ' || v.p[i] == '\t'))
			i++;
		while (i < v.n && v.p[i] >= '0' && v.p[i] <= '9') {
			if (++digits > 18)
				return -EBADMSG;
			x = x * 10 + (unsigned long long)(v.p[i++] - '0');
		}
		if (!digits)
			return -EBADMSG;
		if (*seen && x != *len)
			return -EBADMSG;
		*seen = true;
		*len = x;
		while (i < v.n && (v.p[i] == ' ' || v.p[i] == '\t'))
			i++;
		if (i == v.n)
			return 0;
		if (v.p[i++] != ',')
			return -EBADMSG;
	}
}

int proxy_request_framing(const struct proxy_request *req, struct proxy_body *body)
{
	bool cl = false;
	size_t te = 0;
	bool chunked = false;

	memset(body, 0, sizeof(*body));
	for (size_t i = 0; i < req->nhdr; i++) {
		const struct proxy_header *h = &req->hdr[i];

		if (proxy_span_ieq(h->name, "content-length")) {
			if (parse_content_length(h->value, &cl, &body->length))
				return -EBADMSG;
		} else if (proxy_span_ieq(h->name, "transfer-encoding")) {
			te++;
			chunked = proxy_span_ieq(h->value, "chunked");
		}
	}
	if (te) {
		/*
		 * Only a single "chunked" is unambiguous; with Content-Length,
		 * in HTTP/1.0, or stacked codings, two parsers may disagree.
		 */
		if (te > 1 || !chunked || cl || req->minor == 0)
			return -EBADMSG;
		body->kind = PROXY_BODY_CHUNKED;
		return 0;
	}
	body->kind = cl ? PROXY_BODY_LENGTH : PROXY_BODY_NONE;
	return 0;
}

int proxy_request_host(const struct proxy_request *req, struct proxy_span *host)
{
	int found = 0;

	for (size_t i = 0; i < req->nhdr; i++) {
		if (!proxy_span_ieq(req->hdr[i].name, "host"))
			continue;
		if (found)
			return -EINVAL;
		*host = req->hdr[i].value;
		found = 1;
	}
	return found;
}
