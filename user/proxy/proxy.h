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

#include "cred/cred_sigv4.h"

/* Longest host name kept, and addresses tried per name. */
#define PROXY_HOST_MAX 256		/* 255 bytes + NUL */
#define PROXY_MAX_HEADERS 100
#define PROXY_MAX_ADDRS 8

struct addr_guard;

struct proxy_decision {
	bool allow;
	const char *rule;	/* e.g. "allowedDomains:*.github.com" or "default:deny" */
	const char *reason;	/* reason phrase for 403, NULL = "Forbidden" */
	/*
	 * Transparent, no name in the first bytes: the name the address was
	 * learned for, which a parent proxy is asked to reach. NULL: none.
	 */
	const char *name;
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

/* Who opened a client connection, as the kernel saw it when the task connected. */
struct proxy_peer {
	bool known;
	int pid, tid;
	unsigned uid;
	char comm[16];		/* NUL-terminated */
};

struct proxy_event {
	const char *protocol;	/* "http-connect", "http", "socks5", "socks4"; "transparent" */
	const char *transparent; /* a redirected connection: "tls", "http" or "tcp" (no name); else NULL */
	const char *orig_addr;	/* a redirected connection's original destination address (port: port) */
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
	const char *parent;	/* the parent proxy it went through (redacted URL); NULL: none */
	const char *tls;	/* "terminated": the request was read inside the client's TLS; NULL: not */
	const char *credentials; /* masked credentials put into the request ("A,B"); NULL: none */
	const struct proxy_peer *peer; /* the client's task; NULL: not known */
	/* "policy-revoked": an established connection closed by proxy_recheck; NULL: not */
	const char *closed;
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

/*
 * Connections the kernel redirected to the proxy (bpfbox.network.transparent):
 * the proxy listens for them apart, finds where each was going, reads its
 * first bytes for a name (TLS server_name, HTTP Host) and asks decide.
 */
struct proxy_transparent {
	/*
	 * The original destination of a connection accepted from client on the
	 * transparent listener with port listener, and the task that connected
	 * (peer->known false when not). 0, or negative errno when unknown.
	 */
	int (*orig_dst)(void *ctx, const struct sockaddr_storage *client, unsigned short listener,
			struct sockaddr_storage *orig, struct proxy_peer *peer);
	/*
	 * name: canonical (or NULL when the first bytes carry none); orig: where
	 * the connection was going, with its port. Loop thread, must not block.
	 */
	void (*decide)(void *ctx, const char *name, const struct sockaddr_storage *orig,
		       struct proxy_decision *out);
	/* How long to wait for a client's first byte before deciding without a name; 0 = 1000 ms. */
	unsigned sniff_ms;
};

/*
 * The host's proxy every allowed connection goes through
 * (bpfbox.network.parentProxy): decisions stay the proxy's, the parent
 * is only asked to reach the decided name and port.
 */
enum proxy_parent_kind { PROXY_PARENT_HTTP = 1, PROXY_PARENT_SOCKS5 };

struct proxy_parent {
	enum proxy_parent_kind kind;
	/* the parent's addresses, with its port; or one AF_UNIX address (mitmProxy) */
	struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
	size_t naddrs;
	const char *authorization;	/* HTTP: "Basic ..." for Proxy-Authorization; NULL = none */
	const char *user, *pass;	/* SOCKS5 username/password (RFC 1929); user NULL = none */
	const char *shown;		/* the URL without credentials, for events */
};

/* "Basic base64(user:pass)" for proxy_parent.authorization; -ENOSPC. */
int proxy_parent_basic(const char *user, const char *pass, char *out, size_t cap);

/*
 * TLS termination (network.tlsTerminate): for an allowed name the proxy
 * completes the client's handshake with a leaf from the sandbox's CA,
 * verifies the upstream itself, and decides each request inside.
 */
struct tls_leaf_cache;
struct ssl_ctx_st;

struct proxy_tls {
	struct tls_leaf_cache *leaves;	/* leaf certificates signed by the sandbox's CA */
	struct ssl_ctx_st *upstream;	/* verifies upstream servers (system store + extra CAs) */
	/* An allowed name to terminate (false: tunnelled, excludeDomains). Loop thread. */
	bool (*terminates)(void *ctx, const char *canonical_host, unsigned port);
	unsigned max_tunnels;		/* terminated connections at once; 503 beyond */
	unsigned handshake_ms;
	/*
	 * The bounds in force, when they may change while the proxy runs (a
	 * live policy): asked for each new tunnel and handshake; NULL: the
	 * two fields above. Loop thread.
	 */
	void (*bounds)(void *ctx, unsigned *max_tunnels, unsigned *handshake_ms);
};

/* Request-level rules (srt's network.requireHostMatch and the rest). */
struct proxy_rules {
	bool require_host_match;	/* plain HTTP: Host must name the URL's authority (421) */
	bool refuse_opaque_tunnels;	/* a tunnel that is not terminated is refused */
	const char *const *strip_response_headers; /* lower case; removed from responses */
	size_t n_strip_response_headers;
};

struct cred_table;

/*
 * Masked credentials (srt's credentials): the table of sentinel -> real
 * value (cred/cred_subst.h), which pairs may go to a host, and the AWS
 * pairs a SigV4 request signed with sentinels is re-signed with.
 */
struct proxy_cred {
	const struct cred_table *table;
	size_t n_pairs;
	/*
	 * select[i] (n_pairs entries, false on entry): may pair i's real value
	 * go to canonical_host? plaintext: not inside TLS the proxy terminated.
	 * Loop thread.
	 */
	void (*select)(void *ctx, const char *canonical_host, bool plaintext, bool *select);
	const struct cred_sigv4_pair *aws;
	const size_t *aws_secret;	/* per AWS pair: the table pair of its secret (its selection) */
	size_t n_aws;
	struct cred_sigv4_policy sigv4;
	/* The SigV4 modes in force, asked for each request (a live policy); NULL: sigv4 above. Loop thread. */
	void (*sigv4_modes)(void *ctx, struct cred_sigv4_policy *out);
};

struct proxy_config {
	proxy_decide_fn decide;		/* required */
	proxy_canon_fn canonicalise;	/* NULL: proxy_canon_default */
	proxy_event_fn on_event;	/* optional */
	void *ctx;			/* passed to every callback */
	const struct addr_guard *guard;	/* NULL: built-ins + this host's addresses */
	unsigned header_limit;		/* default 16 KiB: request/response head size */
	unsigned idle_timeout_ms;	/* default 60000 */
	unsigned max_clients;		/* default 256; fewer where the descriptor limit holds fewer */
	proxy_resolve_fn resolve;	/* NULL: getaddrinfo */
	unsigned resolver_threads;	/* default 4 */
	const struct proxy_transparent *transparent; /* NULL: no transparent listeners */
	const struct proxy_parent *parent; /* NULL: dial destinations directly */
	/*
	 * network.mitmProxy: the HTTP proxy on a Unix socket (kind HTTP, one
	 * AF_UNIX address) a decided name goes to, before the parent, or NULL
	 * when it goes on as without it; asked for each new connection (a live
	 * policy may change it). The parent returned must stay valid until
	 * proxy_stop. NULL: no mitmProxy. Loop thread.
	 */
	const struct proxy_parent *(*mitm)(void *ctx, const char *canonical_host, unsigned port);
	const struct proxy_cred *cred;	/* masked credentials put back; NULL: none */
	const struct proxy_tls *tls;	/* NULL: every TLS connection is tunnelled */
	struct proxy_rules rules;
	/*
	 * The task that opened a connection accepted from client on the
	 * explicit listener (port listener), for its event; NULL or an error:
	 * not known. Loop thread, must not block.
	 */
	int (*peer)(void *ctx, const struct sockaddr_storage *client, unsigned short listener,
		    struct proxy_peer *out);
};

struct proxy;

/* Listens on 127.0.0.1:<kernel-chosen> and serves from its own threads. Negative errno. */
int proxy_start(const struct proxy_config *cfg, struct proxy **out, unsigned short *port);
/* The transparent listeners' ports (127.0.0.1, ::1); 0 when there is none. */
void proxy_transparent_ports(const struct proxy *p, unsigned short *port4, unsigned short *port6);
/*
 * The decisions changed (a live policy update): the loop thread asks decide
 * again, with each decided connection's name and port, and closes those now
 * denied, both sides, one event each (closed "policy-revoked"). Callable
 * from any thread; returns at once, the closing happens on the loop.
 */
void proxy_recheck(struct proxy *p);
/* Closes every connection (emitting their events), joins the threads, frees. */
void proxy_stop(struct proxy *p);

/* Minimal canonicaliser used when the config gives none. */
int proxy_canon_default(const char *host, char *out, size_t outlen, const char **err);

#endif
