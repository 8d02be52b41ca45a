// SPDX-License-Identifier: MIT
/* Wiring the proxy to the policy (decisions) and the log (one event per decision). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "sandbox_cred.h"
#include "sandbox_proxy.h"
#include "sandbox_tconn.h"

/*
 * The policy in force: sandbox_proxy_set_policy may replace it while the
 * proxy runs, so each callback loads it once (acquire, pairing with the
 * setter's release) and decides from that one policy alone.
 */
static const struct policy *current(const struct sandbox_proxy *sp)
{
	return __atomic_load_n(&sp->policy, __ATOMIC_ACQUIRE);
}

void sandbox_proxy_set_policy(struct sandbox_proxy *sp, const struct policy *p)
{
	__atomic_store_n(&sp->policy, p, __ATOMIC_RELEASE);
	/* Established connections to a name no longer allowed are closed on the proxy's loop. */
	proxy_recheck(sp->proxy);
}

static void decide(void *ctx, const char *host, unsigned port, struct proxy_decision *out)
{
	struct sandbox_proxy *sp = ctx;
	const char *rule = NULL, *reason = NULL;
	enum net_verdict v = policy_decide_host(current(sp), host, port, &rule, &reason);

	out->allow = v == NET_ALLOW;
	out->rule = rule;
	out->reason = reason;
}

/*
 * The guard asks whether an address a name resolved to is itself allowed as
 * a literal. Deciding it as a request for that literal keeps the port of the
 * entry (10.0.0.5:8080 opens port 8080 only) and lets deniedDomains win.
 */
static bool allow_literal(void *ctx, const struct sockaddr *sa)
{
	struct sandbox_proxy *sp = ctx;
	char host[INET6_ADDRSTRLEN];
	const void *a;
	unsigned port;

	if (sa->sa_family == AF_INET) {
		a = &((const struct sockaddr_in *)sa)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	} else {
		return false;
	}
	if (!inet_ntop(sa->sa_family, a, host, sizeof(host)))
		return false;
	return policy_decide_host(current(sp), host, port, NULL, NULL) == NET_ALLOW;
}

static int orig_dst(void *ctx, const struct sockaddr_storage *client, unsigned short listener,
		    struct sockaddr_storage *orig, struct proxy_peer *peer)
{
	struct sandbox_proxy *sp = ctx;

	return sandbox_learned_orig_dst(sp->learned, client, listener, orig, peer);
}

/* A connection to the explicit proxy: the kernel kept who made it (bb_connect4, bb_sockops). */
static int client_peer(void *ctx, const struct sockaddr_storage *client, unsigned short listener,
		       struct proxy_peer *out)
{
	struct sandbox_proxy *sp = ctx;
	struct bb_tconn v;
	int err = sandbox_tconn_take(sp->tconn_fd, sp->sandbox, client, listener, &v);

	if (err)
		return err;
	if (v.kind != BB_REDIRECT_PROXY)
		return -ENOENT;
	sandbox_peer_from_kernel(&v.peer, out);
	return 0;
}

/*
 * A redirected connection: a name is allowed when the policy allows it on
 * the port AND the address it was going to was learned for that very name
 * (an allowed SNI pinned to another address, a foreign Host on a shared
 * address are refused). Without a name, the address must have been learned
 * for some name the policy allows on that port.
 */
static void decide_transparent(void *ctx, const char *name, const struct sockaddr_storage *orig,
			       struct proxy_decision *out)
{
	struct sandbox_proxy *sp = ctx;
	const struct sockaddr *sa = (const struct sockaddr *)orig;
	unsigned port = ntohs(orig->ss_family == AF_INET ? ((const struct sockaddr_in *)orig)->sin_port
							 : ((const struct sockaddr_in6 *)orig)->sin6_port);
	const char *rule = NULL, *reason = NULL;

	out->allow = false;
	out->reason = NULL;
	if (!name) {
		out->allow = sandbox_learned_allowed_name(sp->learned, sa, port, &rule, sp->tname, sizeof(sp->tname));
		out->rule = out->allow ? rule : "transparent:no-name";
		/* With a parent proxy, the name the address stands for is what the parent is asked for. */
		out->name = out->allow ? sp->tname : NULL;
		if (!out->allow)
			out->reason = "no name, and the address was not learned for a name allowed on this port";
		return;
	}
	if (policy_decide_host(current(sp), name, port, &rule, &reason) != NET_ALLOW) {
		out->rule = rule;
		out->reason = reason;
		return;
	}
	if (!sandbox_learned_has(sp->learned, name, sa)) {
		out->rule = "transparent:not-learned";
		out->reason = "the address was not learned for this name";
		return;
	}
	out->allow = true;
	out->rule = rule;
}

static bool terminates(void *ctx, const char *host, unsigned port)
{
	struct sandbox_proxy *sp = ctx;

	return policy_tls_terminates(current(sp), host, port);
}

/* Which masked credentials may go to host (sandbox_cred_select); over plain HTTP only with allowPlaintextInject. */
static void cred_select(void *ctx, const char *host, bool plaintext, bool *select)
{
	struct sandbox_proxy *sp = ctx;

	if (plaintext && !current(sp)->cred.allow_plaintext_inject)
		return;
	sandbox_cred_select(sp->cred, host, select);
}

static enum cred_sigv4_shape_policy sigv4_mode(enum policy_sigv4_mode m)
{
	return m == POLICY_SIGV4_PASSTHROUGH ? CRED_SIGV4_POLICY_PASSTHROUGH : CRED_SIGV4_POLICY_DENY;
}

static void sigv4_of(const struct policy *p, struct cred_sigv4_policy *out)
{
	const struct policy_credentials *pc = &p->cred;

	*out = (struct cred_sigv4_policy){ sigv4_mode(pc->sigv4_streaming), sigv4_mode(pc->sigv4_presigned),
					   sigv4_mode(pc->sigv4a) };
}

/* credentials.sigv4 as the policy in force has it, for each request. */
static void sigv4_modes(void *ctx, struct cred_sigv4_policy *out)
{
	struct sandbox_proxy *sp = ctx;

	sigv4_of(current(sp), out);
}

/* The proxy's view of the run's masked credentials. */
static const struct proxy_cred *cred_setup(struct sandbox_proxy *sp, const struct sandbox_cred *sc)
{
	if (!sc || !sc->table || !sc->n_pairs)
		return NULL;
	sp->cred = sc;
	sp->pcred = (struct proxy_cred){
		.table = sc->table,
		.n_pairs = sc->n_pairs,
		.select = cred_select,
		.aws = sc->aws,
		.aws_secret = sc->aws_secret,
		.n_aws = sc->n_aws,
		.sigv4_modes = sigv4_modes,
	};
	sigv4_of(current(sp), &sp->pcred.sigv4);
	return &sp->pcred;
}

/*
 * A mitmProxy socket, as a parent the proxy dials. Added by
 * sandbox_proxy_prepare before a policy naming it is in force, one per
 * socket path however many policies name it, and kept until the proxy
 * stops: a connection holds its parent for its whole life.
 */
struct sandbox_mitm {
	struct proxy_parent parent;
	char shown[sizeof("unix:") + sizeof(((struct sockaddr_un *)0)->sun_path)];	/* "unix:PATH" in events */
	struct sandbox_mitm *next;
};

/* A policy in force whose socket was not prepared: no address, so its names fail to connect (closed). */
static const struct proxy_parent mitm_unprepared = { .kind = PROXY_PARENT_HTTP, .shown = "unix:(not prepared)" };

static struct sandbox_mitm *mitm_of(const struct sandbox_proxy *sp, const char *path)
{
	struct sandbox_mitm *m = __atomic_load_n(&sp->mitms, __ATOMIC_ACQUIRE);

	while (m && strcmp(((const struct sockaddr_un *)&m->parent.addrs[0])->sun_path, path))
		m = m->next;
	return m;
}

/* The policy in force routes the name to its mitmProxy: that socket. */
static const struct proxy_parent *mitm_route(void *ctx, const char *host, unsigned port)
{
	struct sandbox_proxy *sp = ctx;
	const struct policy *p = current(sp);
	struct sandbox_mitm *m;

	if (!policy_mitm_routes(p, host, port))
		return NULL;
	m = mitm_of(sp, p->mitm.socket_path);
	return m ? &m->parent : &mitm_unprepared;
}

int sandbox_proxy_prepare(struct sandbox_proxy *sp, const struct policy *p, struct errmsg *em)
{
	struct sockaddr_un *un;
	struct sandbox_mitm *m;

	if (!p->mitm.enabled || mitm_of(sp, p->mitm.socket_path))
		return 0;
	/* The same words as the settings file naming both (policy_tls.c). */
	if (sp->tls)
		return errmsg_set(em, -EINVAL, "network.mitmProxy: mitmProxy and tlsTerminate are exclusive (as in "
				  "srt): a name is either sent to an upstream MITM proxy or terminated by bpfbox's proxy");
	m = calloc(1, sizeof(*m));
	if (!m)
		return errmsg_set(em, -ENOMEM, "network.mitmProxy: its socket's address");
	un = (struct sockaddr_un *)&m->parent.addrs[0];
	un->sun_family = AF_UNIX;
	/* policy_mitm.c checked that it fits. */
	snprintf(un->sun_path, sizeof(un->sun_path), "%s", p->mitm.socket_path);
	m->parent.naddrs = 1;
	m->parent.kind = PROXY_PARENT_HTTP;
	snprintf(m->shown, sizeof(m->shown), "unix:%s", p->mitm.socket_path);
	m->parent.shown = m->shown;
	m->next = sp->mitms;
	/* Whole before the loop can find it (acquire in mitm_of). */
	__atomic_store_n(&sp->mitms, m, __ATOMIC_RELEASE);
	return 0;
}

/* tlsTerminate's maxTunnels and handshakeTimeoutMs as the policy in force has them. */
static void tls_bounds(void *ctx, unsigned *max_tunnels, unsigned *handshake_ms)
{
	struct sandbox_proxy *sp = ctx;
	const struct policy *p = current(sp);

	*max_tunnels = p->tls.max_tunnels;
	*handshake_ms = p->tls.handshake_timeout_ms;
}

static void on_event(void *ctx, const struct proxy_event *pe)
{
	struct sandbox_proxy *sp = ctx;
	bool refused = !pe->allowed;
	/* A connection the policy revoked was allowed, and is now closed. */
	const char *verb = pe->closed ? "closed" : refused ? "denied" : "allowed";
	struct log_event *ev;
	const char *action = pe->transparent			       ? "proxy-transparent"
			     : !strcmp(pe->protocol, "http-connect") ? "proxy-connect"
			     : !strncmp(pe->protocol, "http", 4)     ? "proxy-http"
								       : "proxy-socks";

	ev = log_event_new(refused ? LOG_WARN : LOG_INFO, "event", "network",
			   refused ? "connection,denied" : "connection,allowed", action,
			   refused ? "failure" : "success");
	if (pe->host && !(pe->orig_addr && !strcmp(pe->host, pe->orig_addr)))
		log_event_set_str(ev, "destination.domain", pe->host);
	if (pe->orig_addr)
		log_event_set_str(ev, "destination.ip", pe->orig_addr);
	if (pe->transparent)
		log_event_set_str(ev, "bpfbox.transparent.kind", pe->transparent);
	if (pe->port)
		log_event_set_int(ev, "destination.port", pe->port);
	if (pe->method)
		log_event_set_str(ev, "http.request.method", pe->method);
	/* A SOCKS reply code is no HTTP status (0 means granted there). */
	if (!strncmp(pe->protocol, "socks", 5)) {
		if (pe->status || pe->allowed)
			log_event_set_int(ev, "bpfbox.proxy.socks_reply", pe->status);
	} else if (pe->status) {
		log_event_set_int(ev, "http.response.status_code", pe->status);
	}
	if (pe->client_addr)
		log_event_set_str(ev, "source.address", pe->client_addr);
	if (pe->peer)
		sandbox_peer_log(ev, pe->peer->pid, pe->peer->tid, pe->peer->uid, pe->peer->comm);
	log_event_set_str(ev, "network.protocol", pe->transparent ? pe->transparent : pe->protocol);
	log_event_set_str(ev, "rule.name", pe->rule ? pe->rule : "malformed");
	if (pe->reason)
		log_event_set_str(ev, "event.reason", pe->reason);
	log_event_set_int(ev, "source.bytes", (long long)pe->bytes_up);
	log_event_set_int(ev, "destination.bytes", (long long)pe->bytes_down);
	if (pe->error)
		log_event_set_str(ev, "error.message", pe->error);
	if (pe->parent)
		log_event_set_str(ev, "bpfbox.proxy.parent", pe->parent);
	if (pe->tls)
		log_event_set_str(ev, "bpfbox.proxy.tls", pe->tls);
	/* Names only: the values are secrets of the log (log_redact.c). */
	if (pe->credentials)
		log_event_set_str(ev, "bpfbox.proxy.credentials", pe->credentials);
	if (pe->closed)
		log_event_set_str(ev, "bpfbox.proxy.closed", pe->closed);
	if (pe->transparent)
		log_event_message(ev, "%s %s %s:%u at %s, redirected to the proxy (%s)%s%s",
				  verb, pe->method ? pe->method : pe->transparent,
				  pe->host ? pe->host : "?", pe->port, pe->orig_addr ? pe->orig_addr : "?",
				  pe->rule ? pe->rule : "malformed request", pe->error ? ": " : "",
				  pe->error ? pe->error : "");
	else
		log_event_message(ev, "%s %s %s:%u via the proxy (%s)%s%s", verb,
			  pe->method ? pe->method : pe->protocol, pe->host ? pe->host : "?", pe->port,
			  pe->rule ? pe->rule : "malformed request", pe->error ? ": " : "", pe->error ? pe->error : "");
	/* A connection the policy revoked was allowed when the command made it: no violation. */
	if (refused && !pe->closed)
		log_event_violation(ev);
	log_emit(sp->log, ev);
}

/*
 * The parent's addresses are resolved once, here, with the host's resolver
 * (it is the host's proxy, named by the policy): a name that does not
 * resolve fails the run before the command starts.
 */
static int parent_setup(struct sandbox_proxy *sp, const struct policy_parent *pp, struct errmsg *em)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG }, *res = NULL;
	struct proxy_parent *out = &sp->parent;
	char port[8];
	int rc;

	memset(out, 0, sizeof(*out));
	out->kind = pp->scheme == PARENT_HTTP ? PROXY_PARENT_HTTP : PROXY_PARENT_SOCKS5;
	out->shown = pp->shown;
	snprintf(port, sizeof(port), "%u", pp->port);
	rc = getaddrinfo(pp->host, port, &hints, &res);
	if (rc == EAI_ADDRFAMILY || rc == EAI_NONAME || rc == EAI_NODATA) {
		/* AI_ADDRCONFIG hides loopback-only answers on a host with no other address. */
		hints.ai_flags = 0;
		rc = getaddrinfo(pp->host, port, &hints, &res);
	}
	if (rc)
		return errmsg_set(em, -EHOSTUNREACH, "bpfbox.network.parentProxy: cannot resolve %s: %s", pp->host,
				  gai_strerror(rc));
	for (struct addrinfo *ai = res; ai && out->naddrs < PROXY_MAX_ADDRS; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof(out->addrs[0]))
			continue;
		memcpy(&out->addrs[out->naddrs++], ai->ai_addr, ai->ai_addrlen);
	}
	freeaddrinfo(res);
	if (!out->naddrs)
		return errmsg_set(em, -EHOSTUNREACH, "bpfbox.network.parentProxy: %s has no IPv4 or IPv6 address",
				  pp->host);
	if (pp->user && out->kind == PROXY_PARENT_HTTP) {
		if (proxy_parent_basic(pp->user, pp->pass, sp->authorization, sizeof(sp->authorization)))
			return errmsg_set(em, -EINVAL, "bpfbox.network.parentProxy: credentials too long");
		out->authorization = sp->authorization;
	} else if (pp->user) {
		out->user = pp->user;
		out->pass = pp->pass ? pp->pass : "";
	}
	return 0;
}

int sandbox_proxy_start(struct sandbox_proxy *sp, const struct policy *p, struct log *log, struct errmsg *em)
{
	return sandbox_proxy_start_transparent(sp, p, log, NULL, -1, 0, NULL, NULL, em);
}

int sandbox_proxy_start_transparent(struct sandbox_proxy *sp, const struct policy *p, struct log *log,
				    struct sandbox_learned *learned, int tconn_fd, uint64_t sandbox,
				    struct proxy_tls *tls, const struct sandbox_cred *cred,
				    struct errmsg *em)
{
	struct proxy_config cfg = { 0 };
	const char *texts[256], *why = NULL;
	size_t n = p->n_denied_addrs < 256 ? p->n_denied_addrs : 256;
	int err;

	memset(sp, 0, sizeof(*sp));
	sp->tls = tls != NULL;
	err = sandbox_proxy_prepare(sp, p, em);
	if (err)
		return err;
	sandbox_proxy_set_policy(sp, p);
	sp->log = log;
	sp->tconn_fd = tconn_fd;
	sp->sandbox = sandbox;
	for (size_t i = 0; i < n; i++)
		texts[i] = p->denied_addrs[i].text;
	err = addr_guard_init(&sp->guard, texts, n, &why);
	if (err) {
		errmsg_set(em, err, "network.deniedResolvedAddresses: %s", why ? why : "invalid");
		goto cleanup;
	}
	/* An address allowed as a literal (with its port) stays reachable even in a refused class. */
	sp->guard.allow_literal = allow_literal;
	sp->guard.allow_ctx = sp;
	cfg.decide = decide;
	cfg.canonicalise = host_canonicalise;
	cfg.on_event = on_event;
	cfg.ctx = sp;
	cfg.guard = &sp->guard;
	if (tconn_fd >= 0)
		cfg.peer = client_peer;
	if (tls) {
		tls->terminates = terminates;
		tls->bounds = tls_bounds;
		cfg.tls = tls;
	}
	cfg.rules.require_host_match = p->require_host_match;
	cfg.rules.refuse_opaque_tunnels = p->refuse_opaque_tunnels;
	cfg.rules.strip_response_headers = (const char *const *)p->strip_response_headers;
	cfg.rules.n_strip_response_headers = p->n_strip_response_headers;
	if (p->parent.scheme) {
		err = parent_setup(sp, &p->parent, em);
		if (err)
			goto cleanup;
		cfg.parent = &sp->parent;
	}
	cfg.cred = cred_setup(sp, cred);
	/* Asked even when off at start: a live policy may turn mitmProxy on. */
	cfg.mitm = mitm_route;
	if (learned) {
		sp->learned = learned;
		sp->transparent.orig_dst = orig_dst;
		sp->transparent.decide = decide_transparent;
		cfg.transparent = &sp->transparent;
	}
	err = proxy_start(&cfg, &sp->proxy, &sp->port);
	if (err) {
		errmsg_set(em, err, "starting the sandbox's proxy on 127.0.0.1");
		goto cleanup;
	}
	if (learned)
		proxy_transparent_ports(sp->proxy, &sp->tport4, &sp->tport6);
	return 0;
cleanup:
	sandbox_proxy_stop(sp);
	return err;
}

void sandbox_proxy_stop(struct sandbox_proxy *sp)
{
	if (sp->proxy)
		proxy_stop(sp->proxy);
	sp->proxy = NULL;
	addr_guard_free(&sp->guard);
	explicit_bzero(sp->authorization, sizeof(sp->authorization));
	while (sp->mitms) {
		struct sandbox_mitm *m = sp->mitms;

		sp->mitms = m->next;
		free(m);
	}
}
