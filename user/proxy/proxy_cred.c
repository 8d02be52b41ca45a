// SPDX-License-Identifier: MIT
/* Masked credentials put back into a forwarded request (proxy_cred.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cred/cred_sigv4.h"
#include "cred/cred_subst.h"
#include "proxy_chunked.h"
#include "proxy_cred.h"
#include "proxy_reply.h"

#define CRED_CHUNK 8192
#define CHUNK_FRAME 32		/* "%zx\r\n" and "\r\n" around one chunk */
#define XERR_SIGV4 "blocked-by-sandbox-runtime"
/*
 * All bodies a proxy reads whole at once: each may reach 64 MiB, and
 * confined code could open maxTunnels of them to fill the supervisor's memory.
 */
#define HELD_TOTAL_MAX (256u << 20)

struct proxy_cred_req {
	bool *select;			/* per pair of the table: may it go to this host? */
	struct cred_stream *stream;	/* the body's replacer; NULL: the body passes as is */
	struct cred_buf out;		/* body bytes on their way into c->up */
	size_t out_off;
	bool frames;			/* the body goes through proxy_cred_frame */
	bool hold, released;		/* the whole body first, then the head */
	bool in_done, chunked_out;
	bool resign;
	size_t aws;			/* the AWS pair re-signing (proxy_cred.aws) */
	size_t held;			/* what this request counts in proxy.held_bytes */
	struct cred_sigv4_plan plan;
};

/* A request as the SigV4 code reads it: origin-form path and query, the fields. */
struct sigv4_view {
	struct cred_sigv4_request req;
	struct cred_header hdr[PROXY_MAX_HEADERS];
};

static const struct proxy_cred *cred_cfg(const struct proxy_conn *c)
{
	return proxy_cfg(c->p)->cred;
}

void proxy_cred_free(struct proxy_conn *c)
{
	struct proxy_cred_req *r = c->cred;

	if (!r)
		return;
	c->p->held_bytes -= r->held;
	/* What went upstream held real values. */
	if (c->up.data)
		explicit_bzero(c->up.data, c->up.cap);
	cred_stream_free(r->stream);
	cred_buf_wipe(&r->out);
	free(r->select);
	explicit_bzero(r, sizeof(*r));
	free(r);
	c->cred = NULL;
}

/* name added to the request's list of credentials put in, for its event. */
static void add_name(struct proxy_conn *c, const char *n)
{
	size_t have = strlen(c->cred_names), len = strlen(n);
	const char *hit = strstr(c->cred_names, n);

	if (hit && (hit == c->cred_names || hit[-1] == ',') && (hit[len] == ',' || !hit[len]))
		return;
	if (have + len + 2 > sizeof(c->cred_names))
		return;
	snprintf(c->cred_names + have, sizeof(c->cred_names) - have, "%s%s", have ? "," : "", n);
}

/* The names a replacer put in. */
static void add_names(struct proxy_conn *c, const struct cred_stream *s)
{
	char names[sizeof(c->cred_names)], *save = NULL;

	if (cred_stream_names(s, names, sizeof(names)))
		return;
	for (char *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save))
		add_name(c, n);
}

static void view_of(const struct proxy_request *pr, struct sigv4_view *v)
{
	const char *t = pr->target.p, *end = t + pr->target.n, *q;
	const char *scheme = pr->target.n && t[0] != '/' ? memmem(t, pr->target.n, "://", 3) : NULL;

	/* Absolute-form (plain HTTP through the proxy): the path is what the server sees. */
	if (scheme) {
		t = memchr(scheme + 3, '/', (size_t)(end - scheme - 3));
		if (!t) {
			t = "/";
			end = t + 1;
		}
	}
	q = memchr(t, '?', (size_t)(end - t));
	v->req.method = (struct cred_span){ pr->method.p, pr->method.n };
	v->req.path = (struct cred_span){ t, (size_t)((q ? q : end) - t) };
	v->req.query = q ? (struct cred_span){ q + 1, (size_t)(end - q - 1) } : (struct cred_span){ "", 0 };
	for (size_t i = 0; i < pr->nhdr; i++)
		v->hdr[i] = (struct cred_header){ { pr->hdr[i].name.p, pr->hdr[i].name.n },
						  { pr->hdr[i].value.p, pr->hdr[i].value.n } };
	v->req.hdr = v->hdr;
	v->req.nhdr = pr->nhdr;
}

/* A SigV4 request the policy refuses, or that cannot be re-signed: srt's 403. */
static void refuse_sigv4(struct proxy_conn *c, struct proxy_cred_req *r, const char *why)
{
	char body[512], error[160];

	if (why)
		snprintf(body, sizeof(body), "SigV4 re-signing with the real credentials failed: %s", why);
	else
		cred_sigv4_deny_message(&r->plan, body, sizeof(body));
	snprintf(error, sizeof(error), "SigV4 request refused: %s", body);
	c->allowed = false;
	snprintf(c->rule, sizeof(c->rule), "credentials.sigv4");
	proxy_reply_http(c, 403, "Forbidden", XERR_SIGV4, body, error);
}

/* The AWS pairs this host may receive, planned against the client's request. 0, or -1 answered. */
static int plan_sigv4(struct proxy_conn *c, struct proxy_cred_req *r, const struct proxy_request *req)
{
	const struct proxy_cred *pc = cred_cfg(c);
	struct cred_sigv4_policy modes = pc->sigv4;
	struct cred_sigv4_pair *pairs;
	struct sigv4_view *v;
	size_t *map, k = 0;
	int ret = 0;

	if (!pc->n_aws)
		return 0;
	/* The modes in force for this request (a live policy may have changed them). */
	if (pc->sigv4_modes)
		pc->sigv4_modes(proxy_cfg(c->p)->ctx, &modes);
	pairs = calloc(pc->n_aws, sizeof(*pairs));
	map = calloc(pc->n_aws, sizeof(*map));
	v = malloc(sizeof(*v));
	if (!pairs || !map || !v) {
		proxy_conn_close(c, "out of memory");
		ret = -1;
		goto out;
	}
	for (size_t j = 0; j < pc->n_aws; j++)
		if (r->select[pc->aws_secret[j]]) {
			pairs[k] = pc->aws[j];
			map[k++] = j;
		}
	if (!k)
		goto out;
	view_of(req, v);
	if (cred_sigv4_plan(&v->req, pairs, k, &modes, &r->plan)) {
		proxy_conn_close(c, "SigV4 planning failed");
		ret = -1;
	} else if (r->plan.action == CRED_SIGV4_DENY) {
		refuse_sigv4(c, r, NULL);
		ret = -1;
	} else if (r->plan.action == CRED_SIGV4_RESIGN) {
		r->resign = true;
		r->aws = map[r->plan.pair];
	}
out:
	free(pairs);
	free(map);
	free(v);
	return ret;
}

static bool encoded(const struct proxy_request *req)
{
	for (size_t i = 0; i < req->nhdr; i++)
		if (proxy_span_ieq(req->hdr[i].name, "content-encoding") &&
		    !proxy_span_ieq(req->hdr[i].value, "identity"))
			return true;
	return false;
}

static void too_large(struct proxy_conn *c, struct proxy_cred_req *r)
{
	if (r->resign) {
		r->plan.reason = CRED_SIGV4_DENY_BODY_TOO_LARGE;
		refuse_sigv4(c, r, NULL);
		return;
	}
	proxy_reply_http(c, 413, "Payload Too Large", NULL, "Payload Too Large",
			 "request body too large to put masked credentials back into (64 MiB)");
}

int proxy_cred_begin(struct proxy_conn *c, const struct proxy_request *req, const char *host, bool plaintext,
		     const struct proxy_body *body, struct proxy_body *fwd)
{
	const struct proxy_cred *pc = cred_cfg(c);
	struct proxy_cred_req *r;
	bool any = false, has_body;

	*fwd = *body;
	if (!pc || !pc->n_pairs)
		return 0;
	r = calloc(1, sizeof(*r));
	if (r)
		r->select = calloc(pc->n_pairs, sizeof(*r->select));
	c->cred = r;
	if (!r || !r->select) {
		proxy_conn_close(c, "out of memory");
		return -1;
	}
	pc->select(proxy_cfg(c->p)->ctx, host, plaintext, r->select);
	for (size_t i = 0; i < pc->n_pairs; i++)
		any |= r->select[i];
	if (!any) {
		proxy_cred_free(c);
		return 0;
	}
	if (plan_sigv4(c, r, req))
		return -1;
	/*
	 * An AWS secret key only signs: no AWS API takes it in clear, so its
	 * sentinel is never replaced in the request's bytes (a body or a header
	 * sent to a bucket the command can read would hand it over).
	 */
	any = false;
	for (size_t j = 0; j < pc->n_aws; j++)
		r->select[pc->aws_secret[j]] = false;
	for (size_t i = 0; i < pc->n_pairs; i++)
		any |= r->select[i];
	if (!any && !r->resign) {
		proxy_cred_free(c);
		return 0;
	}
	has_body = body->kind == PROXY_BODY_CHUNKED || (body->kind == PROXY_BODY_LENGTH && body->length);
	if (!has_body)
		return 0;
	if (!encoded(req) && cred_stream_new(pc->table, r->select, &r->stream)) {
		proxy_conn_close(c, "out of memory");
		return -1;
	}
	/* A signed payload's hash, or a length that changes, needs the whole body first. */
	r->hold = (r->resign && !r->plan.unsigned_payload) ||
		  (r->stream && body->kind == PROXY_BODY_LENGTH &&
		   !cred_table_length_matched(pc->table, r->select));
	if (r->hold && body->kind == PROXY_BODY_LENGTH && body->length > CRED_SIGV4_MAX_BODY) {
		too_large(c, r);
		return -1;
	}
	r->frames = r->hold || r->stream;
	r->chunked_out = !r->hold && body->kind == PROXY_BODY_CHUNKED;
	if (r->hold)
		*fwd = (struct proxy_body){ PROXY_BODY_NONE, 0 };
	return 0;
}

/*
 * Sets field name of the head at up[0..n) to value: the first such line's
 * value replaced, or a line added before the blank one. The new length,
 * or -ENOSPC.
 */
static ssize_t head_set(struct proxy_conn *c, size_t n, const char *name, const char *value, size_t vlen)
{
	char *h = c->up.data, *line = memmem(h, n, "\r\n", 2);
	size_t nl = strlen(name), at, old_end, need;

	while (line && (size_t)(line - h) + 4 <= n) {
		char *start = line + 2, *eol = memmem(start, n - (size_t)(start - h), "\r\n", 2);

		if (!eol || eol == start)
			break;
		if ((size_t)(eol - start) > nl && start[nl] == ':' && !strncasecmp(start, name, nl)) {
			at = (size_t)(start - h) + nl + 1;
			old_end = (size_t)(eol - h);
			need = n - (old_end - at) + 1 + vlen;
			if (need > c->up.cap)
				return -ENOSPC;
			memmove(h + at + 1 + vlen, h + old_end, n - old_end);
			h[at] = ' ';
			memcpy(h + at + 1, value, vlen);
			return (ssize_t)need;
		}
		line = eol;
	}
	/* Not there: "Name: value\r\n" before the final CRLF. */
	need = n + nl + 2 + vlen + 2;
	if (n < 4 || need > c->up.cap)
		return -ENOSPC;
	at = n - 2;
	memmove(h + at + nl + 2 + vlen + 2, h + at, 2);
	memcpy(h + at, name, nl);
	memcpy(h + at + nl, ": ", 2);
	memcpy(h + at + nl + 2, value, vlen);
	memcpy(h + at + nl + 2 + vlen, "\r\n", 2);
	return (ssize_t)need;
}

static bool head_has(const struct proxy_request *req, const char *name)
{
	for (size_t i = 0; i < req->nhdr; i++)
		if (proxy_span_ieq(req->hdr[i].name, name))
			return true;
	return false;
}

/* The head at up[0..n) signed with the real pair: token, payload hash, Authorization. */
static ssize_t resign(struct proxy_conn *c, struct proxy_cred_req *r, size_t n, const char *payload)
{
	const struct cred_sigv4_pair *pair = &cred_cfg(c)->aws[r->aws];
	struct proxy_request *req = malloc(sizeof(*req));
	struct sigv4_view *v = malloc(sizeof(*v));
	char auth[CRED_SIGV4_AUTH_MAX];
	size_t alen = 0;
	ssize_t m = (ssize_t)n;
	int err = -ENOMEM;

	if (!req || !v)
		goto out;
	if (r->plan.add_token)
		m = head_set(c, (size_t)m, "x-amz-security-token", pair->real_token.p, pair->real_token.n);
	err = m < 0 ? (int)m : proxy_parse_request(c->up.data, (size_t)m, req);
	if (!err && payload && head_has(req, "x-amz-content-sha256")) {
		m = head_set(c, (size_t)m, "x-amz-content-sha256", payload, strlen(payload));
		err = m < 0 ? (int)m : proxy_parse_request(c->up.data, (size_t)m, req);
	}
	if (err)
		goto out;
	view_of(req, v);
	err = cred_sigv4_resign(&r->plan, &v->req, pair,
				(struct cred_span){ payload ? payload : "", payload ? strlen(payload) : 0 },
				auth, sizeof(auth), &alen);
	if (!err) {
		m = head_set(c, (size_t)m, "Authorization", auth, alen);
		err = m < 0 ? (int)m : 0;
	}
	/* The real secret went in as the signature. */
	if (!err)
		add_name(c, cred_table_name(cred_cfg(c)->table, cred_cfg(c)->aws_secret[r->aws]));
out:
	free(req);
	free(v);
	explicit_bzero(auth, sizeof(auth));
	if (!err)
		return m;
	if (err == -ENOSPC)
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL, "Request Header Fields Too Large",
				 "request too large once re-signed");
	else
		refuse_sigv4(c, r, strerror(-err));
	return -1;
}

ssize_t proxy_cred_head(struct proxy_conn *c, ssize_t n)
{
	struct proxy_cred_req *r = c->cred;
	struct cred_stream *s = NULL;
	struct cred_buf out = { 0 };
	char empty[CRED_SIGV4_HEX + 1];
	int err;

	if (!r || n < 0)
		return n;
	err = cred_stream_new(cred_cfg(c)->table, r->select, &s);
	if (!err)
		err = cred_stream_feed(s, c->up.data, (size_t)n, &out) ?: cred_stream_finish(s, &out);
	if (!err)
		add_names(c, s);
	cred_stream_free(s);
	if (!err && out.len > c->up.cap)
		err = -ENOSPC;
	if (!err) {
		memcpy(c->up.data, out.data, out.len);
		n = (ssize_t)out.len;
	}
	cred_buf_wipe(&out);
	if (err == -ENOSPC) {
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL, "Request Header Fields Too Large",
				 "request too large once credentials were put back");
		return -1;
	} else if (err) {
		proxy_conn_close(c, "out of memory");
		return -1;
	}
	if (!r->resign || r->hold)
		return n;
	/* No body, or one the signature does not cover. */
	cred_sigv4_sha256_hex("", 0, empty);
	return resign(c, r, (size_t)n, r->plan.unsigned_payload ? NULL : empty);
}

bool proxy_cred_frames(const struct proxy_conn *c)
{
	return c->cred && c->cred->frames;
}

bool proxy_cred_holding(const struct proxy_conn *c)
{
	return c->cred && c->cred->hold && !c->cred->released;
}

static void consume(struct proxy_conn *c, size_t n)
{
	memmove(c->in.data, c->in.data + n, c->in.len - n);
	c->in.len -= n;
}

/* Decoded body bytes from c->in through the replacer into r->out. 1 taken, 0 needs input, -1 answered. */
static int take(struct proxy_conn *c, struct proxy_cred_req *r)
{
	char tmp[CRED_CHUNK];
	size_t used, n = 0;
	int last = 0, err = 0;

	if (!c->in.len)
		return 0;
	if (c->body.kind == PROXY_BODY_CHUNKED) {
		last = proxy_chunked_decode(&c->chunk, c->in.data, c->in.len, &used, tmp, sizeof(tmp), &n);
		if (last < 0) {
			proxy_reply_http(c, 400, "Bad Request", NULL, "Bad Request", "malformed chunked request body");
			return -1;
		}
	} else {
		n = used = c->in.len < c->body.length ? c->in.len : (size_t)c->body.length;
		if (n > sizeof(tmp))
			n = used = sizeof(tmp);
		memcpy(tmp, c->in.data, n);
		c->body.length -= n;
		last = !c->body.length;
	}
	consume(c, used);
	if (n)
		err = r->stream ? cred_stream_feed(r->stream, tmp, n, &r->out) : cred_buf_append(&r->out, tmp, n);
	if (!err && last) {
		err = r->stream ? cred_stream_finish(r->stream, &r->out) : 0;
		if (r->stream)
			add_names(c, r->stream);
		r->in_done = true;
		c->in.len = 0;	/* anything after the body is not forwarded */
	}
	if (err) {
		proxy_conn_close(c, "out of memory");
		return -1;
	}
	if (r->hold && r->out.len > CRED_SIGV4_MAX_BODY) {
		too_large(c, r);
		return -1;
	}
	/* What is allocated counts, not what is used: the buffer grows by doubling. */
	if (r->hold && r->out.cap > r->held) {
		if (c->p->held_bytes + (r->out.cap - r->held) > HELD_TOTAL_MAX) {
			proxy_reply_http(c, 503, "Service Unavailable", NULL, "Service Unavailable",
					 "too many request bodies held for masked credentials at once (256 MiB)");
			return -1;
		}
		c->p->held_bytes += r->out.cap - r->held;
		r->held = r->out.cap;
	}
	return used || n ? 1 : 0;
}

/* The whole body is read: the head gets its length and, for SigV4, its signature. */
static int release(struct proxy_conn *c, struct proxy_cred_req *r)
{
	char num[24], hex[CRED_SIGV4_HEX + 1];
	ssize_t n;
	int len = snprintf(num, sizeof(num), "%zu", r->out.len);

	n = head_set(c, c->up.len, "Content-Length", num, (size_t)len);
	if (n < 0) {
		proxy_reply_http(c, 431, "Request Header Fields Too Large", NULL, "Request Header Fields Too Large",
				 "request too large once credentials were put back");
		return -1;
	}
	if (r->resign) {
		if (!r->plan.unsigned_payload)
			cred_sigv4_sha256_hex(r->out.data ? r->out.data : "", r->out.len, hex);
		n = resign(c, r, (size_t)n, r->plan.unsigned_payload ? NULL : hex);
		if (n < 0)
			return -1;
	}
	c->up.len = (size_t)n;
	r->released = true;
	return 0;
}

/* Moves what r->out holds into c->up, as chunks when the upstream reads chunked. */
static bool drain(struct proxy_conn *c, struct proxy_cred_req *r)
{
	size_t n = r->out.len - r->out_off, space;
	char hdr[24];

	if (!n)
		return false;
	proxy_buf_compact(&c->up, NULL);
	space = c->up.cap - c->up.len;
	if (r->chunked_out) {
		int hl;

		if (space <= CHUNK_FRAME)
			return false;
		if (n > space - CHUNK_FRAME)
			n = space - CHUNK_FRAME;
		hl = snprintf(hdr, sizeof(hdr), "%zx\r\n", n);
		memcpy(c->up.data + c->up.len, hdr, (size_t)hl);
		c->up.len += (size_t)hl;
	} else if (n > space) {
		n = space;
	}
	if (!n)
		return false;
	memcpy(c->up.data + c->up.len, r->out.data + r->out_off, n);
	c->up.len += n;
	r->out_off += n;
	if (r->chunked_out) {
		memcpy(c->up.data + c->up.len, "\r\n", 2);
		c->up.len += 2;
	}
	if (r->out_off == r->out.len) {
		explicit_bzero(r->out.data, r->out.len);
		r->out.len = r->out_off = 0;
		c->p->held_bytes -= r->held;
		r->held = 0;
	}
	return true;
}

int proxy_cred_frame(struct proxy_conn *c)
{
	struct proxy_cred_req *r = c->cred;
	bool progress = false;
	int rc;

	/* Streaming takes input only once the last of it went on: the memory stays bounded. */
	while (!r->in_done && (r->hold || r->out_off == r->out.len)) {
		rc = take(c, r);
		if (rc < 0)
			return -1;
		if (!rc)
			break;
		progress = true;
	}
	if (r->hold && !r->released) {
		if (!r->in_done)
			return progress ? 1 : 0;
		if (release(c, r))
			return -1;
		progress = true;
	}
	progress |= drain(c, r);
	if (r->out_off < r->out.len)
		return progress ? 1 : 2;
	if (!r->in_done)
		return progress ? 1 : 0;
	if (r->chunked_out) {
		if (c->up.cap - c->up.len < 5)
			return progress ? 1 : 2;
		memcpy(c->up.data + c->up.len, "0\r\n\r\n", 5);
		c->up.len += 5;
	}
	c->body_done = true;
	return 1;
}
