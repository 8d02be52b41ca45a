// SPDX-License-Identifier: MIT
/* Wiring the sandbox's DNS resolver to the policy (names) and the log (one event per query). */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "lib/mono_clock.h"
#include "sandbox_dns.h"
#include "sandbox_tconn.h"

/* The policy in force, loaded once per callback: sandbox_dns_set_policy may replace it live. */
static const struct policy *current(const struct sandbox_dns *sd)
{
	return __atomic_load_n(&sd->policy, __ATOMIC_ACQUIRE);
}

void sandbox_dns_set_policy(struct sandbox_dns *sd, const struct policy *p)
{
	__atomic_store_n(&sd->policy, p, __ATOMIC_RELEASE);
	/*
	 * Every query is decided by the policy before the cache is read, so a
	 * revoked name is never answered from it; the cache is emptied all the
	 * same, so nothing the previous policy let in outlives it there.
	 */
	dns_server_flush_cache(sd->server);
}

static bool decide(void *ctx, const char *name, const char **rule, const char **reason)
{
	struct sandbox_dns *sd = ctx;

	return policy_decide_name(current(sd), name, rule, reason) == NET_ALLOW;
}

static bool denied_outright(void *ctx, const char *name, const char **rule)
{
	struct sandbox_dns *sd = ctx;
	const char *reason;

	return policy_decide_name(current(sd), name, rule, &reason) == NET_DENY_DENIED;
}

static bool answers_type(void *ctx, unsigned qtype)
{
	struct sandbox_dns *sd = ctx;

	return policy_dns_type_answered(current(sd), qtype);
}

static const char *rcode_name(unsigned rcode)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED" };

	return rcode < sizeof(names) / sizeof(names[0]) ? names[rcode] : "OTHER";
}

/*
 * An address the sandbox's share has no room for is not learned (its
 * connects stay refused in the kernel); the client still gets its answer.
 * The first refusal is logged at once, the next ones at most once a second
 * with how many there were: a sandbox asking for many names cannot flood
 * the log.
 */
static void learn_refused(struct sandbox_dns *sd, const char *name, const struct errmsg *em)
{
	time_t now = time(NULL);

	sd->unlogged_refusals++;
	if (sd->refusal_logged && now == sd->refusal_logged)
		return;
	log_msg(sd->log, LOG_WARN, "learned-address-refused",
		"addresses of %s were not learned (its TCP connects stay refused): %s (%llu refusal(s) since the "
		"last line)", name, em->text, sd->unlogged_refusals);
	sd->unlogged_refusals = 0;
	sd->refusal_logged = now;
}

static void on_answer(void *ctx, const char *name, const struct dns_addr *addrs, size_t n)
{
	struct sandbox_dns *sd = ctx;
	struct errmsg em = { { 0 } };

	for (size_t i = 0; i < n; i++)
		if (sandbox_learned_add(sd->learned, name, addrs[i].family, addrs[i].addr, (long)addrs[i].ttl, &em))
			learn_refused(sd, name, &em);
}

/*
 * With a parent proxy: an allowed name gets its synthesized address (A, or
 * AAAA) and nothing is asked upstream; other types get no record.
 */
static int synthesize(void *ctx, const char *name, unsigned qtype, struct dns_addr *out, size_t max)
{
	struct sandbox_dns *sd = ctx;
	int family = qtype == DNS_TYPE_A ? AF_INET : qtype == DNS_TYPE_AAAA ? AF_INET6 : 0;
	struct errmsg em = { { 0 } };
	int err;

	size_t n = strlen(name);

	if (!family || !max)
		return 0;
	memset(out, 0, sizeof(*out));
	/* RFC 6761: localhost is this host's loopback, never the parent's. */
	if (!strcmp(name, "localhost") || (n > 10 && !strcmp(name + n - 10, ".localhost"))) {
		out->family = family;
		if (family == AF_INET)
			memcpy(out->addr, "\x7f\0\0\x01", 4);
		else
			out->addr[15] = 1;
		out->ttl = 60;
		return 1;
	}
	err = sandbox_learned_synthesize(sd->learned, name, family, out->addr, &em);
	if (err) {
		if (err != -ENOSPC || em.text[0])
			learn_refused(sd, name, &em);
		return err;
	}
	out->family = family;
	/* Short: a client that caches it longer still finds it, it is learned for the sandbox's life. */
	out->ttl = 60;
	return 1;
}

/* The task that sent from this client's port, as the kernel filed it (none when it aged out). */
static void sender(void *ctx, const struct dns_client *c, struct dns_sender *out)
{
	struct sandbox_dns *sd = ctx;
	struct bb_dns_peer_key key = { 0 };
	struct bb_dns_peer v;
	struct timespec now;

	memset(out, 0, sizeof(*out));
	key.sandbox = sd->sandbox;
	key.port = c->port;
	key.listener = c->listener;
	key.family = (uint8_t)c->family;
	key.proto = c->tcp ? IPPROTO_TCP : IPPROTO_UDP;
	if (bpf_map_lookup_elem(sd->peers_fd, &key, &v) || !v.peer.pid)
		return;
	/* A socket gone longer than the grace: whatever sends from its port now is not its sender. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (v.released_ns && (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec - v.released_ns > BB_DNS_PEER_GRACE_NS)
		return;
	out->known = true;
	out->pid = (int)v.peer.pid;
	out->tid = (int)v.peer.tid;
	out->uid = v.peer.uid;
	memcpy(out->comm, v.peer.comm, sizeof(v.peer.comm));
	out->comm[sizeof(out->comm) - 1] = 0;
}

/*
 * Query lines: a burst of DNS_LINE_BURST, then DNS_LINE_RATE a second. A
 * query costs the sandbox one datagram; without a bound it could write tens
 * of thousands of lines a second into its log and the administrator's. The
 * queries beyond it are still decided and answered; they are counted into
 * one folded line each for the denied and the answered, written within a
 * second (the resolver's tick) and when the resolver stops.
 */
#define DNS_LINE_RATE 50
#define DNS_LINE_BURST 200

static void write_held(struct sandbox_dns *sd, bool denied, unsigned long long *held)
{
	struct log_event *ev;

	if (!*held)
		return;
	ev = log_event_new(denied ? LOG_WARN : LOG_INFO, "event", "network",
			   denied ? "protocol,denied" : "protocol,allowed", "dns-query", denied ? "failure" : "success");
	log_event_set_str(ev, "network.protocol", "dns");
	log_event_set_int(ev, "bpfbox.count", (long long)*held);
	log_event_set_bool(ev, "bpfbox.folded", true);
	log_event_message(ev, "%s %llu more DNS quer%s, folded: over %d query lines a second", denied ? "denied" :
			  "answered", *held, *held == 1 ? "y" : "ies", DNS_LINE_RATE);
	if (denied)
		log_event_violation(ev);
	log_emit(sd->log, ev);
	*held = 0;
}

static void write_all_held(struct sandbox_dns *sd)
{
	write_held(sd, true, &sd->held_denied);
	write_held(sd, false, &sd->held_answered);
}

/* Whether this query's line fits the budget; the held lines go first when it does. */
static bool line_fits(struct sandbox_dns *sd, bool denied)
{
	long long now = mono_ms();

	sd->line_tokens += (double)(now - sd->line_refilled_ms) * DNS_LINE_RATE / 1000.0;
	if (sd->line_tokens > DNS_LINE_BURST)
		sd->line_tokens = DNS_LINE_BURST;
	sd->line_refilled_ms = now;
	if (sd->line_tokens < 1) {
		(*(denied ? &sd->held_denied : &sd->held_answered))++;
		return false;
	}
	sd->line_tokens -= 1;
	write_all_held(sd);
	return true;
}

/* The resolver's thread, once a second: what was held is written, busy or idle. */
static void tick(void *ctx)
{
	write_all_held(ctx);
}

static void on_event(void *ctx, const struct dns_query_event *de)
{
	struct sandbox_dns *sd = ctx;
	bool refused = !de->allowed;
	struct log_event *ev;
	char tbuf[16];

	if (!line_fits(sd, refused))
		return;

	ev = log_event_new(refused ? LOG_WARN : LOG_INFO, "event", "network",
			   refused ? "protocol,denied" : "protocol,allowed", "dns-query",
			   refused ? "failure" : "success");
	if (de->name) {
		log_event_set_str(ev, "dns.question.name", de->name);
		log_event_set_str(ev, "dns.question.type", policy_dns_type_name(de->qtype, tbuf, sizeof(tbuf)));
	}
	log_event_set_str(ev, "dns.response_code", rcode_name(de->rcode));
	log_event_set_str(ev, "network.protocol", "dns");
	log_event_set_str(ev, "network.transport", de->transport);
	if (de->client) {
		const struct dns_sender *ds = &de->client->sender;

		log_event_set_str(ev, "source.address", de->client->text);
		if (ds->known)
			sandbox_peer_log(ev, ds->pid, ds->tid, ds->uid, ds->comm);
	}
	log_event_set_str(ev, "rule.name", de->rule ? de->rule : "malformed");
	if (de->reason)
		log_event_set_str(ev, "event.reason", de->reason);
	if (de->allowed)
		log_event_set_int(ev, "bpfbox.dns.addresses", (long long)de->n_addrs);
	if (de->synthesized)
		log_event_set_bool(ev, "bpfbox.dns.synthesized", true);
	if (de->cached)
		log_event_set_bool(ev, "bpfbox.dns.cached", true);
	if (de->error)
		log_event_set_str(ev, "error.message", de->error);
	log_event_message(ev, "%s DNS query for %s (%s): %s%s%s%s", refused ? "denied" : "answered",
			  de->name ? de->name : "?", de->rule ? de->rule : "malformed query", rcode_name(de->rcode),
			  de->cached ? " from the cache" : "", de->error ? ", " : "", de->error ? de->error : "");
	if (refused)
		log_event_violation(ev);
	log_emit(sd->log, ev);
}

int sandbox_dns_start(struct sandbox_dns *sd, const struct policy *p, struct log *log,
		      struct sandbox_learned *learned, int peers_fd, uint64_t sandbox, struct errmsg *em)
{
	struct dns_server_config cfg = { 0 };
	int err;

	memset(sd, 0, sizeof(*sd));
	sd->line_tokens = DNS_LINE_BURST;
	sd->line_refilled_ms = mono_ms();
	sandbox_dns_set_policy(sd, p);
	sd->log = log;
	sd->learned = learned;
	sd->peers_fd = peers_fd;
	sd->sandbox = sandbox;
	cfg.decide = decide;
	cfg.denied_outright = denied_outright;
	cfg.answers_type = answers_type;
	if (learned)
		cfg.on_answer = on_answer;
	/* The parent resolves the names it is asked for: upstream is never asked (docs/network.md). */
	if (learned && p->parent.scheme)
		cfg.synthesize = synthesize;
	cfg.on_event = on_event;
	cfg.tick = tick;
	if (peers_fd >= 0)
		cfg.sender = sender;
	cfg.ctx = sd;
	err = dns_server_start(&cfg, &sd->server, &sd->port4, &sd->port6);
	if (err)
		return errmsg_set(em, err, "starting the sandbox's DNS resolver on 127.0.0.1");
	return 0;
}

void sandbox_dns_stop(struct sandbox_dns *sd)
{
	dns_server_stop(sd->server);
	sd->server = NULL;
	/* The resolver's thread is gone: nothing else writes these counts now. */
	write_all_held(sd);
}
