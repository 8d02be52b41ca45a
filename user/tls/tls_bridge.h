/* SPDX-License-Identifier: MIT */
/*
 * One TLS session carried by a thread of its own: TLS on one socket,
 * plaintext on the end of a socket pair the proxy's loop reads and writes
 * like any client or upstream socket. The loop stays unaware of TLS; the
 * thread ends when both directions are closed, on an error or when idle.
 */
#ifndef BPFBOX_TLS_BRIDGE_H
#define BPFBOX_TLS_BRIDGE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

/* What the loop may learn of a bridge after it started: shared, counted. */
struct tls_bridge_status {
	atomic_int refs;
	atomic_int state;		/* TLS_BRIDGE_* */
	char error[160];		/* written before state becomes TLS_BRIDGE_FAILED */
	char alpn[16];			/* negotiated protocol, "" when none; valid once UP */
};

enum { TLS_BRIDGE_HANDSHAKE, TLS_BRIDGE_UP, TLS_BRIDGE_FAILED, TLS_BRIDGE_DONE };

struct tls_bridge_spec {
	int tls_fd;			/* the bridge takes it over (and closes it) */
	SSL *ssl;			/* the bridge takes it over; server or client side set */
	bool server;			/* accept (the sandbox's client) or connect (the upstream) */
	const void *preread;		/* bytes already read from tls_fd (a ClientHello) */
	size_t preread_len;
	const void *preface;		/* sent in the clear before the handshake (CONNECT's 200) */
	size_t preface_len;
	unsigned handshake_ms;
	unsigned idle_ms;
	/* Server side: the name the client must ask for in server_name when it names one. */
	const char *expect_sni;
};

/*
 * Starts the thread. *plain_fd: the plaintext end (non-blocking,
 * close-on-exec), the caller's to close; *status: a reference the caller
 * drops with tls_bridge_put. Negative errno; the spec's fd and SSL are
 * released on failure too.
 */
int tls_bridge_start(const struct tls_bridge_spec *spec, int *plain_fd,
		     struct tls_bridge_status **status);
void tls_bridge_put(struct tls_bridge_status *st);

/*
 * Bridge threads of this process still running. A thread can outlive its
 * connection (it ends when idle or its peer is gone): the proxy bounds
 * this, not only the connections it holds.
 */
unsigned tls_bridge_live(void);

#endif
