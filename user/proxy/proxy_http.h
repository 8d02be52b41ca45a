/* SPDX-License-Identifier: MIT */
/* HTTP/1.x heads: strict parsing of what clients and upstreams send, and building what the proxy sends on. */
#ifndef BPFBOX_PROXY_HTTP_H
#define BPFBOX_PROXY_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proxy.h"

struct proxy_span {
	const char *p;
	size_t n;
};

struct proxy_header {
	struct proxy_span name, value;	/* value without surrounding whitespace */
};

struct proxy_request {
	struct proxy_span method, target;
	unsigned minor;			/* HTTP/1.<minor> */
	size_t nhdr;
	struct proxy_header hdr[PROXY_MAX_HEADERS];
};

struct proxy_response {
	unsigned status;
	unsigned minor;
	struct proxy_span status_line;	/* without CRLF */
	size_t nhdr;
	struct proxy_header hdr[PROXY_MAX_HEADERS];
};

struct proxy_authority {
	char host[PROXY_HOST_MAX];	/* as written, IPv6 without brackets */
	unsigned port;
	bool bracketed;
};

struct proxy_url {
	struct proxy_authority auth;
	struct proxy_span path;		/* path and query; may be empty or start with '?' */
	unsigned default_port;		/* Host omits the port when it is this; 0: 80 */
};

enum proxy_body_kind { PROXY_BODY_NONE, PROXY_BODY_LENGTH, PROXY_BODY_CHUNKED };

struct proxy_body {
	enum proxy_body_kind kind;
	unsigned long long length;
};

/* proxy_http_parse.c */
ssize_t proxy_head_end(const char *buf, size_t len, size_t *scan);
int proxy_parse_request(const char *head, size_t len, struct proxy_request *req);
int proxy_parse_response(const char *head, size_t len, struct proxy_response *resp);
int proxy_parse_port(const char *s, size_t len, unsigned *port);
int proxy_parse_authority(const char *s, size_t len, unsigned default_port,
			  struct proxy_authority *out);
int proxy_parse_absolute_url(struct proxy_span target, struct proxy_url *url);
int proxy_request_framing(const struct proxy_request *req, struct proxy_body *body);
bool proxy_span_ieq(struct proxy_span s, const char *lit);
/* The request's Host field: 1 found, 0 none, -EINVAL repeated. */
int proxy_request_host(const struct proxy_request *req, struct proxy_span *host);

/* proxy_http_build.c */
ssize_t proxy_build_upstream_head(const struct proxy_request *req, const struct proxy_url *url,
				  const char *canon_host, const struct proxy_body *body,
				  char *out, size_t cap);
/* strip: response fields removed as well (lower case; stripResponseHeaders). */
ssize_t proxy_build_client_head(const struct proxy_response *resp, const char *const *strip,
				size_t nstrip, char *out, size_t cap);
ssize_t proxy_build_reply(char *out, size_t cap, unsigned status, const char *reason,
			  const char *proxy_error, const char *body);
void proxy_sanitise_reason(const char *in, char *out, size_t cap);
#define PROXY_BODY_ALLOWLIST "Connection blocked by network allowlist"
#define PROXY_BODY_GUARD "Connection blocked by sandbox runtime: destination address refused"
#define PROXY_XERR_ALLOWLIST "blocked-by-allowlist"
#define PROXY_XERR_GUARD "blocked-by-sandbox-runtime"

#endif
