/* SPDX-License-Identifier: MIT */
/* The sandbox's own egress proxy, deciding with its policy and reporting to its log. */
#ifndef BPFBOX_SANDBOX_PROXY_H
#define BPFBOX_SANDBOX_PROXY_H

#include <stdint.h>

#include "lib/errmsg.h"
#include "log/log.h"
#include "policy/policy.h"
#include "proxy/addr_guard.h"
#include "proxy/proxy.h"
#include "sandbox/sandbox_learned.h"

struct sandbox_mitm;

struct sandbox_proxy {
	struct proxy *proxy;
	struct addr_guard guard;
	const struct policy *policy;
	struct log *log;
	unsigned short port;
	/* The kernel's tconns map and this sandbox's id: who opened each connection (-1: not known). */
	int tconn_fd;
	uint64_t sandbox;
	/* With transparent: connections the kernel redirected, decided with what was learned. */
	struct sandbox_learned *learned;
	struct proxy_transparent transparent;
	unsigned short tport4, tport6;
	char tname[256];	/* the name decide_transparent last found for an address (proxy thread) */
	/* bpfbox.network.parentProxy: its addresses and the Proxy-Authorization value */
	struct proxy_parent parent;
	char authorization[720];
	/*
	 * network.mitmProxy: its sockets as parents, one per path any policy
	 * in force named (newest first), kept until the proxy stops; with
	 * tls, none (exclusive, sandbox_proxy_prepare)
	 */
	struct sandbox_mitm *mitms;
	bool tls;
	/* Masked credentials: the run's, and the proxy's view of them; NULL: none */
	const struct sandbox_cred *cred;
	struct proxy_cred pcred;
};

int sandbox_proxy_start(struct sandbox_proxy *sp, const struct policy *p, struct log *log, struct errmsg *em);
/*
 * The same, with transparent listeners deciding by name and learned (NULL:
 * none, as above); events name the task that connected, found in the
 * kernel's tconns map tconn_fd (-1: not named) under the sandbox's id;
 * tls: termination (the proxy's callback is set here), NULL: none;
 * cred: the run's masked credentials (sandbox_cred_setup done), NULL: none.
 */
int sandbox_proxy_start_transparent(struct sandbox_proxy *sp, const struct policy *p, struct log *log,
				    struct sandbox_learned *learned, int tconn_fd, uint64_t sandbox,
				    struct proxy_tls *tls, const struct sandbox_cred *cred,
				    struct errmsg *em);
/*
 * Before p is put in force (sandbox_proxy_set_policy): what the proxy needs
 * for it that can fail, so a failure leaves the policy in force unchanged.
 * Its mitmProxy's socket as a parent (new connections routed to it use
 * it); a mitmProxy under a proxy that terminates TLS is refused, as at
 * start. Calls are serialised by the caller (one update at a time). Negative
 * errno, em set.
 */
int sandbox_proxy_prepare(struct sandbox_proxy *sp, const struct policy *p, struct errmsg *em);
/*
 * Live policy (issue 32): the proxy's decisions use p from now on, each
 * callback from one policy, and the connections established to a name p
 * no longer allows are closed on the proxy's loop (proxy_recheck), one
 * event each. New connections follow p's mitmProxy, tlsTerminate's
 * maxTunnels and handshakeTimeoutMs and credentials.sigv4 (docs/proxy.md,
 * "Live policy"); sandbox_proxy_prepare(sp, p) first. Any thread; the
 * caller keeps the old policy until the run ends (rules and reasons of
 * events point into it).
 */
void sandbox_proxy_set_policy(struct sandbox_proxy *sp, const struct policy *p);
void sandbox_proxy_stop(struct sandbox_proxy *sp);

#endif
