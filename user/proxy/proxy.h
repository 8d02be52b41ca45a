/* SPDX-License-Identifier: MIT */
/*
 * bpfbox egress proxy: one loopback TCP port speaking HTTP CONNECT,
 * absolute-form HTTP forwarding and SOCKS5/SOCKS4a. The sandbox can reach
 * nothing else; every destination is decided by the caller's callback and
 * every resolved address is checked by the addr_guard before it is dialled.
 * See docs/proxy.md.
 */
#ifndef BPFBOX_PROXY_H
#define BPFBOX_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct addr_guard;

struct proxy_decision {
	bool allow;
	const char *rule;	/* e.g. "allowedDomains:*.github.com" or "default:deny" */
	const char *reason;	/* reason phrase for 403, NULL = "Forbidden" */
};

/*
 * Called on the proxy thread with the canonical host (IPv6 without brackets)
 * and port. Must not block. The strings in *out are copied before return.
 */
typedef void (*proxy_decide_fn)(void *ctx, const char *canonical_host, unsigned port,
				struct proxy_decision *out);
/*
 * Lowercase, drop trailing dot, 127.1 -> 127.0.0.1, IPv4-mapped -> IPv4,
 * reject NUL/CR/LF/%; negative on malformed with *err set. host never has
 * brackets.
 */
typedef int (*proxy_canon_fn)(const char *host, char *out, size_t outlen, const char **err);

struct proxy_event {
	const char *protocol;	/* "http-connect", "http", "socks5", "socks4" */
	const char *method;
	const char *host;	/* canonical when known, else as requested, else NULL */
	unsigned port;
	bool allowed;
	const char *rule;
	const char *reason;
	const char *client_addr;
	int status;		/* HTTP status or SOCKS reply code; 0 = none sent */
	unsigned long long bytes_up, bytes_down;
	const char *error;	/* NULL when the request completed normally */
};

/*
 * One event per client connection that sent at least one byte (and for
 * connections refused for capacity), emitted when its outcome is final:
 * at once for refusals and malformed requests, at close for tunnels and
 * forwarded requests (so the byte counts are known). Called on the proxy
 * thread; strings are valid only during the call.
 */
typedef void (*proxy_event_fn)(void *ctx, const struct proxy_event *ev);

/*
 * Name resolution, called on a resolver thread (may block). Fills up to max
 * addresses (port ignored) and returns 0, or negative errno. NULL means
 * getaddrinfo(); tests inject their own.
 */
typedef int (*proxy_resolve_fn)(void *ctx, const char *host, struct sockaddr_storage *out,
				size_t max, size_t *n);

struct proxy_config {
	proxy_decide_fn decide;		/* required */
	proxy_canon_fn canonicalise;	/* NULL: proxy_canon_default */
	proxy_event_fn on_event;	/* optional */
	void *ctx;			/* passed to every callback */
	const struct addr_guard *guard;	/* NULL: built-ins + this host's addresses */
	unsigned header_limit;		/* default 16 KiB: request/response head size */
	unsigned idle_timeout_ms;	/* default 60000 */
	unsigned max_clients;		/* default 256 */
	proxy_resolve_fn resolve;	/* NULL: getaddrinfo */
	unsigned resolver_threads;	/* default 4 */
};

struct proxy;

/* Listens on 127.0.0.1:<kernel-chosen> and serves from its own threads. Negative errno. */
int proxy_start(const struct proxy_config *cfg, struct proxy **out, unsigned short *port);
/* Closes every connection (emitting their events), joins the threads, frees. */
void proxy_stop(struct proxy *p);

/* Minimal canonicaliser used when the config gives none. */
int proxy_canon_default(const char *host, char *out, size_t outlen, const char **err);

/*
 * ---------------------------------------------------------------------------
 * Below: interfaces between the proxy's own source files (user/proxy_*.c) and
 * its unit tests. Not for other modules.
 * ---------------------------------------------------------------------------
 */

#define PROXY_HOST_MAX 256		/* 255 bytes + NUL */
#define PROXY_MAX_HEADERS 100
#define PROXY_MAX_ADDRS 8

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

/* proxy_http_build.c */
ssize_t proxy_build_upstream_head(const struct proxy_request *req, const struct proxy_url *url,
				  const char *canon_host, const struct proxy_body *body,
				  char *out, size_t cap);
ssize_t proxy_build_client_head(const struct proxy_response *resp, char *out, size_t cap);
ssize_t proxy_build_reply(char *out, size_t cap, unsigned status, const char *reason,
			  const char *proxy_error, const char *body);
void proxy_sanitise_reason(const char *in, char *out, size_t cap);
#define PROXY_BODY_ALLOWLIST "Connection blocked by network allowlist"
#define PROXY_BODY_GUARD "Connection blocked by sandbox runtime: destination address refused"
#define PROXY_XERR_ALLOWLIST "blocked-by-allowlist"
#define PROXY_XERR_GUARD "blocked-by-sandbox-runtime"

/* proxy_chunked.c: strict decoder; the proxy re-encodes what it decodes. */
struct proxy_chunked {
	int state;
	unsigned long long left;	/* data bytes left in this chunk */
	unsigned digits;
	size_t line;			/* bytes of the current ext/trailer line */
	size_t trailer;			/* bytes of trailers so far */
};
int proxy_chunked_decode(struct proxy_chunked *d, const char *in, size_t inlen, size_t *used,
			 char *out, size_t outcap, size_t *produced);

/* proxy_socks.c */
#define SOCKS5_REP_OK 0x00
#define SOCKS5_REP_FAIL 0x01
#define SOCKS5_REP_DENIED 0x02
#define SOCKS5_REP_NETUNREACH 0x03
#define SOCKS5_REP_HOSTUNREACH 0x04
#define SOCKS5_REP_REFUSED 0x05
#define SOCKS5_REP_CMD 0x07
#define SOCKS5_REP_ATYP 0x08
#define SOCKS4_REP_OK 0x5a
#define SOCKS4_REP_REJECT 0x5b

struct proxy_socks_req {
	unsigned char cmd;
	bool is_name;
	char host[PROXY_HOST_MAX];	/* name as sent, or numeric address */
	unsigned port;
};
ssize_t proxy_socks5_greeting(const unsigned char *buf, size_t len, bool *noauth);
ssize_t proxy_socks5_request(const unsigned char *buf, size_t len, struct proxy_socks_req *r,
			     unsigned char *rep);
size_t proxy_socks5_reply(unsigned char *out, unsigned char rep);
ssize_t proxy_socks4_request(const unsigned char *buf, size_t len, struct proxy_socks_req *r);
size_t proxy_socks4_reply(unsigned char *out, unsigned char rep);

/* proxy_canon.c */
bool proxy_host_literal(const char *canon, struct sockaddr_storage *ss);
void proxy_format_addr(const struct sockaddr *sa, char *out, size_t cap);

/* proxy_resolve.c: a small thread pool so getaddrinfo never blocks the loop. */
struct proxy_rjob {
	struct proxy_rjob *next;
	void *owner;			/* loop thread only; NULL once the client is gone */
	char host[PROXY_HOST_MAX];
	int err;
	size_t n;
	struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
};
struct proxy_resolver;
int proxy_resolver_start(struct proxy_resolver **out, unsigned nthreads, proxy_resolve_fn fn,
			 void *ctx, int notify_fd);
void proxy_resolver_submit(struct proxy_resolver *r, struct proxy_rjob *job);
struct proxy_rjob *proxy_resolver_take_done(struct proxy_resolver *r);
void proxy_resolver_stop(struct proxy_resolver *r);
int proxy_resolve_getaddrinfo(void *ctx, const char *host, struct sockaddr_storage *out,
			      size_t max, size_t *n);

/* proxy_dial.c */
int proxy_dial_start(const struct sockaddr_storage *ss, unsigned port);
int proxy_dial_result(int fd);

/* proxy_loop.c / proxy_session.c / proxy_relay.c: one client connection. */
struct proxy_buf {
	char *data;
	size_t off, len, cap;
};

/* A kernel pipe that relayed bytes pass through without a copy to user space. */
struct proxy_pipe {
	int rd, wr;
	size_t held;	/* bytes in the pipe not yet sent on */
	bool open;
};

enum proxy_state {
	PS_SNIFF, PS_HTTP_HEAD, PS_SOCKS5_GREET, PS_SOCKS5_REQ, PS_SOCKS4,
	PS_RESOLVE, PS_CONNECT, PS_RELAY, PS_REPLY, PS_LINGER, PS_DEAD,
};

enum proxy_proto { PP_NONE, PP_CONNECT, PP_HTTP, PP_SOCKS5, PP_SOCKS4 };

struct proxy_conn {
	struct proxy *p;
	struct proxy_conn *prev, *next;	/* all live connections */
	struct proxy_conn *ready_next;	/* has work left after its budget */
	bool in_ready;
	int cfd, ufd;
	bool crd, cwr, urd, uwr;	/* edge-triggered readiness not yet used up */
	enum proxy_state st;
	enum proxy_proto proto;
	unsigned long long deadline;	/* ms, CLOCK_MONOTONIC */
	struct proxy_buf in;		/* client bytes not yet parsed or framed */
	struct proxy_buf up, down;	/* to upstream / to client */
	char cout[640];			/* the proxy's own answer to the client */
	size_t cout_off, cout_len;
	size_t head_scan;
	bool saw_bytes, allowed, up_eof, up_shut, down_eof, down_shut;
	int status;
	char method[24];
	char host[PROXY_HOST_MAX];
	unsigned port;
	char rule[160], reason[128], error[160], client_addr[64];
	unsigned long long bytes_up, bytes_down, lingered;
	struct proxy_rjob *job;
	struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
	size_t naddrs, next_addr;
	int dial_err;
	/* HTTP forwarding */
	struct proxy_body body;
	struct proxy_chunked chunk;
	bool body_done, resp_done;
	size_t resp_base, resp_scan;	/* start of the response head being parsed */
	bool resp_sent;			/* some response byte reached the client */
	/* Once a direction is a plain byte pipe and its buffer is empty, splice(2) moves it. */
	struct proxy_pipe to_up, to_down;
	bool up_spliced, down_spliced;
};

/* proxy_loop.c: services for the session code. */
unsigned long long proxy_now(const struct proxy *p);
unsigned proxy_idle_ms(const struct proxy *p);
unsigned proxy_header_limit(const struct proxy *p);
const struct proxy_config *proxy_cfg(const struct proxy *p);
const struct addr_guard *proxy_guard(const struct proxy *p);
const struct sockaddr_in *proxy_self(const struct proxy *p);
int proxy_watch_upstream(struct proxy_conn *c);
void proxy_submit_resolve(struct proxy_conn *c, struct proxy_rjob *job);
void proxy_conn_close(struct proxy_conn *c, const char *error);

/* proxy_session.c: protocol negotiation, decision, dialling. */
void proxy_session_pump(struct proxy_conn *c);
bool proxy_session_step(struct proxy_conn *c);
void proxy_session_resolved(struct proxy_conn *c, struct proxy_rjob *job);
void proxy_session_timeout(struct proxy_conn *c);
void proxy_reply_http(struct proxy_conn *c, unsigned status, const char *reason,
		      const char *proxy_error, const char *body, const char *error);
void proxy_reply_bytes(struct proxy_conn *c, const void *b, size_t n, int status,
		       const char *error, bool then_close);

/* proxy_relay.c: byte pipes with half-close, HTTP body framing. */
int proxy_relay_alloc(struct proxy_conn *c);
int proxy_relay_begin(struct proxy_conn *c);
bool proxy_relay_step(struct proxy_conn *c);
bool proxy_flush_client(struct proxy_conn *c);
bool proxy_linger_step(struct proxy_conn *c);

/* proxy_splice.c: zero-copy relay of one direction. */
bool proxy_pipe_open(struct proxy_pipe *pp);
void proxy_pipe_close(struct proxy_pipe *pp);
/*
 * Moves bytes from -> pipe -> to while the edge-triggered readiness flags
 * allow; *eof on the source's end of stream, -errno on a failed read (-EIO
 * side flag via *read_failed) or write. Returns 1 on progress, 0 without.
 */
int proxy_pipe_pump(struct proxy_pipe *pp, int from, int to, bool *rd, bool *wr, bool *eof,
		    unsigned long long *moved, bool *read_failed);

#endif
