// SPDX-License-Identifier: MIT
/*
 * Writing HTTP heads: the request sent upstream is rebuilt from what we
 * parsed (never copied), the response head loses its hop-by-hop fields, and
 * the proxy's own answers have one fixed shape.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proxy_http.h"

struct out {
	char *p;
	size_t cap, len;
	bool full;
};

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->full = true;
		return;
	}
	o->len += (size_t)n;
}

static bool token_listed(const struct proxy_header *hdr, size_t nhdr, struct proxy_span name)
{
	for (size_t i = 0; i < nhdr; i++) {
		struct proxy_span v = hdr[i].value;
		size_t s = 0;

		if (!proxy_span_ieq(hdr[i].name, "connection"))
			continue;
		while (s < v.n) {
			size_t e = s, b, t;

			while (e < v.n && v.p[e] != ',')
				e++;
			b = s;
			t = e;
			while (b < t && (v.p[b] == ' ' || v.p[b] == '\t'))
				b++;
			while (t > b && (v.p[t - 1] == ' ' || v.p[t - 1] == '\t'))
				t--;
			if (name.n && t - b == name.n && !strncasecmp(v.p + b, name.p, name.n))
				return true;
			s = e + 1;
		}
	}
	return false;
}

static bool is_hop_by_hop(struct proxy_span name)
{
	static const char *const hop[] = {
		"connection", "proxy-connection", "keep-alive", "te", "trailer", "upgrade",
		"proxy-authorization", "proxy-authenticate",
	};

	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (proxy_span_ieq(name, hop[i]))
			return true;
	return false;
}

ssize_t proxy_build_upstream_head(const struct proxy_request *req, const struct proxy_url *url,
				  const char *canon_host, const struct proxy_body *body,
				  char *out, size_t cap)
{
	struct out o = { out, cap, 0, false };
	bool v6 = strchr(canon_host, ':') != NULL;
	struct proxy_span path = url->path;

	put(&o, "%.*s %s%.*s HTTP/1.%u\r\n", (int)req->method.n, req->method.p,
	    (!path.n || path.p[0] == '?') ? "/" : "", (int)path.n, path.p, req->minor);
	/* Host always names what we checked and will dial, never the client's Host. */
	put(&o, "Host: %s%s%s", v6 ? "[" : "", canon_host, v6 ? "]" : "");
	if (url->auth.port != (url->default_port ? url->default_port : 80))
		put(&o, ":%u", url->auth.port);
	put(&o, "\r\n");
	for (size_t i = 0; i < req->nhdr; i++) {
		const struct proxy_header *h = &req->hdr[i];

		/* Framing and Host are regenerated below; the rest is end-to-end. */
		if (is_hop_by_hop(h->name) || proxy_span_ieq(h->name, "host") ||
		    proxy_span_ieq(h->name, "content-length") ||
		    proxy_span_ieq(h->name, "transfer-encoding") ||
		    token_listed(req->hdr, req->nhdr, h->name))
			continue;
		put(&o, "%.*s: %.*s\r\n", (int)h->name.n, h->name.p, (int)h->value.n, h->value.p);
	}
	if (body->kind == PROXY_BODY_LENGTH)
		put(&o, "Content-Length: %llu\r\n", body->length);
	else if (body->kind == PROXY_BODY_CHUNKED)
		put(&o, "Transfer-Encoding: chunked\r\n");
	put(&o, "Connection: close\r\n\r\n");
	return o.full ? -ENOSPC : (ssize_t)o.len;
}

static bool listed(struct proxy_span name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (proxy_span_ieq(name, names[i]))
			return true;
	return false;
}

ssize_t proxy_build_client_head(const struct proxy_response *resp, const char *const *strip,
				size_t nstrip, char *out, size_t cap)
{
	struct out o = { out, cap, 0, false };
	bool interim = resp->status < 200;

	put(&o, "%.*s\r\n", (int)resp->status_line.n, resp->status_line.p);
	for (size_t i = 0; i < resp->nhdr; i++) {
		const struct proxy_header *h = &resp->hdr[i];
		bool framing = proxy_span_ieq(h->name, "content-length") ||
			       proxy_span_ieq(h->name, "transfer-encoding");

		/* Framing stays: the body is relayed as the server framed it. */
		if (!framing && (is_hop_by_hop(h->name) ||
				 token_listed(resp->hdr, resp->nhdr, h->name) ||
				 listed(h->name, strip, nstrip)))
			continue;
		put(&o, "%.*s: %.*s\r\n", (int)h->name.n, h->name.p, (int)h->value.n, h->value.p);
	}
	/* One request per connection: the client must not reuse it. */
	put(&o, interim ? "\r\n" : "Connection: close\r\n\r\n");
	return o.full ? -ENOSPC : (ssize_t)o.len;
}

void proxy_sanitise_reason(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	/* A policy-supplied reason must not be able to inject header lines. */
	for (; in && *in && n + 1 < cap; in++) {
		unsigned char c = (unsigned char)*in;

		out[n++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	if (!n)
		snprintf(out, cap, "Forbidden");
}

ssize_t proxy_build_reply(char *out, size_t cap, unsigned status, const char *reason,
			  const char *proxy_error, const char *body)
{
	struct out o = { out, cap, 0, false };

	put(&o, "HTTP/1.1 %u %s\r\nContent-Type: text/plain\r\n", status, reason);
	if (proxy_error)
		put(&o, "X-Proxy-Error: %s\r\n", proxy_error);
	put(&o, "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen(body), body);
	return o.full ? -ENOSPC : (ssize_t)o.len;
}
