// SPDX-License-Identifier: MIT
/*
 * The proxy's HTTP/1.x head parser, the way the session drives it: find the
 * head (in one piece and byte by byte), parse the request, its target and
 * framing, canonicalise the host and rebuild the upstream head. What the
 * proxy sends on must parse back, with our parser, to the host it checked
 * and the framing it decided; a response head is parsed and rebuilt too.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "policy/domain.h"
#include "proxy/proxy.h"
#include "proxy/proxy_http.h"
#include "proxy/proxy_http_sniff.h"

#define OUT_CAP (16384 + 1024)

static char rebuilt[OUT_CAP];

static size_t count_host_headers(const struct proxy_request *req, struct proxy_span *value)
{
	size_t n = 0;

	for (size_t i = 0; i < req->nhdr; i++)
		if (proxy_span_ieq(req->hdr[i].name, "host")) {
			*value = req->hdr[i].value;
			n++;
		}
	return n;
}

static void check_forward(const struct proxy_request *req)
{
	static struct proxy_request again;
	struct proxy_url url;
	struct proxy_body body, body2;
	struct proxy_span host_value = { 0 };
	char canon[DOMAIN_HOST_MAX], want[DOMAIN_HOST_MAX + 16];
	const char *err;
	size_t scan = 0;
	ssize_t n;
	int rc;

	if (proxy_parse_absolute_url(req->target, &url))
		return;
	FUZZ_CHECK(url.auth.port >= 1 && url.auth.port <= 65535);
	FUZZ_CHECK(memchr(url.auth.host, 0, sizeof(url.auth.host)) != NULL);
	if (proxy_request_framing(req, &body))
		return;
	if (host_canonicalise(url.auth.host, canon, sizeof(canon), &err))
		return;
	n = proxy_build_upstream_head(req, &url, canon, &body, rebuilt, sizeof(rebuilt));
	if (n < 0)
		return;
	FUZZ_CHECK((size_t)n < sizeof(rebuilt));

	/* The rebuilt head is one complete head, nothing after it. */
	FUZZ_CHECK(proxy_head_end(rebuilt, (size_t)n, &scan) == n);
	rc = proxy_parse_request(rebuilt, (size_t)n, &again);
	if (rc == -E2BIG)
		return;	/* the three headers the proxy adds went past the count */
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(again.method.n == req->method.n &&
		   !memcmp(again.method.p, req->method.p, req->method.n));
	FUZZ_CHECK(again.target.n && again.target.p[0] == '/');
	FUZZ_CHECK(again.minor == req->minor);
	/* Exactly one Host, naming what was checked. */
	FUZZ_CHECK(count_host_headers(&again, &host_value) == 1);
	if (strchr(canon, ':'))
		snprintf(want, sizeof(want), "[%s]", canon);
	else
		snprintf(want, sizeof(want), "%s", canon);
	if (url.auth.port != 80)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), ":%u", url.auth.port);
	FUZZ_CHECK(host_value.n == strlen(want) && !memcmp(host_value.p, want, host_value.n));
	/* The server frames the body exactly as the proxy decided. */
	FUZZ_CHECK(proxy_request_framing(&again, &body2) == 0);
	FUZZ_CHECK(body2.kind == body.kind && body2.length == body.length);
}

static void check_connect(const struct proxy_request *req)
{
	struct proxy_authority auth;
	char canon[DOMAIN_HOST_MAX];
	const char *err;

	if (proxy_parse_authority(req->target.p, req->target.n, 0, &auth))
		return;
	FUZZ_CHECK(auth.port >= 1 && auth.port <= 65535);
	FUZZ_CHECK(memchr(auth.host, 0, sizeof(auth.host)) != NULL);
	(void)host_canonicalise(auth.host, canon, sizeof(canon), &err);
}

static void check_response(const char *head, size_t len)
{
	static struct proxy_response resp, again;
	size_t scan = 0;
	ssize_t n;

	if (proxy_parse_response(head, len, &resp))
		return;
	FUZZ_CHECK(resp.status >= 100 && resp.status <= 999);
	n = proxy_build_client_head(&resp, NULL, 0, rebuilt, sizeof(rebuilt));
	if (n < 0)
		return;
	FUZZ_CHECK(proxy_head_end(rebuilt, (size_t)n, &scan) == n);
	if (proxy_parse_response(rebuilt, (size_t)n, &again) == 0)
		FUZZ_CHECK(again.status == resp.status);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct proxy_request req;
	const char *buf = (const char *)data;
	size_t scan = 0, step = size ? (size_t)data[0] % 7 + 1 : 1;
	ssize_t whole, piece = 0;

	/* The transparent path's classifier and its rewrite (invariants checked inside). */
	proxy_http_sniff_fuzz_one(data, size);
	whole = proxy_head_end(buf, size, &scan);
	FUZZ_CHECK(whole >= -EBADMSG && whole <= (ssize_t)size);
	FUZZ_CHECK(scan <= size);
	/* Arriving in pieces gives the same answer as arriving at once. */
	scan = 0;
	for (size_t have = 0; have < size && !piece;) {
		have = have + step > size ? size : have + step;
		piece = proxy_head_end(buf, have, &scan);
	}
	FUZZ_CHECK(piece == whole);
	if (whole <= 0)
		return 0;

	if (!proxy_parse_request(buf, (size_t)whole, &req)) {
		FUZZ_CHECK(req.nhdr <= PROXY_MAX_HEADERS);
		FUZZ_CHECK(req.method.n && req.target.n);
		if (proxy_span_ieq(req.method, "CONNECT"))
			check_connect(&req);
		else
			check_forward(&req);
	}
	check_response(buf, (size_t)whole);
	return 0;
}
