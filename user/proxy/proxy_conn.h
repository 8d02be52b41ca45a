/* SPDX-License-Identifier: MIT */
/*
 * One client connection and the proxy it lives in: what the event loop,
 * the session (negotiation, decision), the way upstream (dial, parent) and
 * the relay all touch. The loop drives sessions, sessions drive the way
 * upstream and the relay; the services below are what all may ask of the
 * proxy, so none calls back up into the loop.
 */
#ifndef BPFBOX_PROXY_CONN_H
#define BPFBOX_PROXY_CONN_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "addr_guard.h"
#include "proxy.h"
#include "proxy_chunked.h"
#include "proxy_http.h"
#include "proxy_resolve.h"
#include "proxy_splice.h"

struct tls_bridge_status;
struct proxy_cred_req;

/* The low bit of a conn pointer in an epoll tag: the event is the upstream socket's. */
#define PROXY_TAG_UPSTREAM 1ULL

/* The proxy: owned by its loop thread (proxy_loop.c), which alone touches it. */
struct proxy {
	struct proxy_config cfg;
	struct addr_guard own_guard;
	const struct addr_guard *guard;
	int lfd, epfd, wakefd;
	int tlfd[2];			/* transparent listeners: 127.0.0.1, ::1; -1 = none */
	unsigned short tport[2];
	struct sockaddr_in self;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	atomic_bool recheck;		/* proxy_recheck asked; the loop takes it with wakefd */
	struct proxy_resolver *res;
	struct proxy_conn *conns;
	unsigned nconns;
	struct proxy_conn *ready, *dead;
	unsigned long long now, next_tick, accept_resume;
	unsigned ntunnels;		/* terminated TLS connections open */
	size_t held_bytes;		/* request bodies read whole for masked credentials (proxy_cred.c) */
	unsigned tick_ms;
	bool accept_paused;
};

struct proxy_buf {
	char *data;
	size_t off, len, cap;
};

enum proxy_state {
	PS_SNIFF, PS_HTTP_HEAD, PS_SOCKS5_GREET, PS_SOCKS5_REQ, PS_SOCKS4,
	PS_TSNIFF,			/* transparent: reading the first bytes for a name */
	PS_THEAD,			/* terminated TLS: reading a request head inside it */
	PS_RESOLVE, PS_CONNECT,
	PS_PARENT,			/* the parent proxy's handshake (proxy_parent.c) */
	PS_RELAY, PS_REPLY, PS_LINGER, PS_DEAD,
};

/* PP_TRANSPARENT: a redirected connection relayed as a byte pipe (TLS or no name). */
enum proxy_proto { PP_NONE, PP_CONNECT, PP_HTTP, PP_SOCKS5, PP_SOCKS4, PP_TRANSPARENT };

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
	/*
	 * The name and port the connection was allowed for, which a recheck
	 * decides again (proxy_session_recheck): the request's host, a
	 * transparent connection's name or the name its address was learned
	 * for; empty: none (a nameless transparent one is decided again whole).
	 */
	char decided[PROXY_HOST_MAX];
	unsigned decided_port;
	bool revoked;			/* closed by a recheck: the policy no longer allows it */
	struct proxy_peer peer;		/* the client's task, for the event */
	unsigned long long bytes_up, bytes_down, lingered;
	struct proxy_rjob *job;
	struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
	size_t naddrs, next_addr;
	int dial_err;
	/* HTTP forwarding */
	struct proxy_body body;
	struct proxy_chunked chunk;
	bool body_done, resp_done;
	struct proxy_cred_req *cred;	/* masked credentials of this request (proxy_cred.c) */
	char cred_names[128];		/* the credentials put into it, for its event */
	size_t resp_base, resp_scan;	/* start of the response head being parsed */
	bool resp_sent;			/* some response byte reached the client */
	/* Once a direction is a plain byte pipe and its buffer is empty, splice(2) moves it. */
	struct proxy_pipe to_up, to_down;
	bool up_spliced, down_spliced;
	/* Transparent: where the client was going, and what its first bytes said. */
	bool transparent;
	struct sockaddr_storage orig;
	char orig_addr[64];
	const char *kind;		/* "tls", "http", "tcp" */
	/*
	 * Decided in silence (no first bytes within the sniff time): the client's
	 * first bytes, when they come, are held in up and passed to this check
	 * (proxy_transparent.c) before the relay sends any; it clears itself once
	 * they carry no name. False: the connection was refused or decided again.
	 */
	bool (*late_check)(struct proxy_conn *c);
	/*
	 * TLS termination (proxy_terminate.c): cfd, and ufd once connected,
	 * are the plaintext ends of bridges (tls/tls_bridge.c) that carry
	 * the TLS sessions; tunnel is the name the client's TLS is for.
	 */
	bool terminated, tunnel_counted;
	char tunnel[PROXY_HOST_MAX];
	unsigned tunnel_port;
	struct tls_bridge_status *cbridge, *ubridge;
	/*
	 * Through a parent proxy (the policy's, or mitmProxy's for this name):
	 * which, the handshake's next message out, the parent's answer in.
	 */
	bool via_parent;
	const struct proxy_parent *parent;
	int pstep;
	unsigned char hs[1400];
	size_t hs_off, hs_len;
	unsigned char hr[2048];
	size_t hr_len;
};

/* The client speaks SOCKS (5 or 4): its answers are SOCKS replies. */
static inline bool proxy_conn_is_socks(const struct proxy_conn *c)
{
	return c->proto == PP_SOCKS5 || c->proto == PP_SOCKS4;
}

/* proxy_conn.c: what a connection may ask of its proxy. */
unsigned long long proxy_now(const struct proxy *p);
unsigned proxy_idle_ms(const struct proxy *p);
unsigned proxy_header_limit(const struct proxy *p);
const struct proxy_config *proxy_cfg(const struct proxy *p);
const struct addr_guard *proxy_guard(const struct proxy *p);
const struct sockaddr_in *proxy_self(const struct proxy *p);
/* Adds the upstream socket to the loop's epoll set; negative errno. */
int proxy_watch_upstream(struct proxy_conn *c);
/* Closes the upstream socket and forgets a pending resolution. */
void proxy_drop_upstream(struct proxy_conn *c);
void proxy_submit_resolve(struct proxy_conn *c, struct proxy_rjob *job);
/*
 * Moves a buffer's unsent bytes to the front once its free tail gets short
 * (not on every call: that would copy on every partial send); base moves too.
 */
void proxy_buf_compact(struct proxy_buf *b, size_t *base);
/*
 * Emits the connection's event, closes its sockets and unlinks it; the
 * loop frees it after the current round (later events may still name it).
 */
void proxy_conn_close(struct proxy_conn *c, const char *error);

#endif
