// SPDX-License-Identifier: MIT
/*
 * One DNS query, from parse to the answer: refused, synthesized, answered
 * from the cache, or asked of the upstreams.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/mono_clock.h"
#include "dns_server_state.h"

static socklen_t ss_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/* Where an allowed answer came from, for its event. */
enum answer_from { FROM_UPSTREAM, FROM_SYNTHESIZED, FROM_CACHE };

static void emit_ex(struct dns_server *s, const struct dns_question *q, bool parsed, const char *transport,
		    const struct dns_client *client, bool allowed, const char *rule, const char *reason, unsigned rcode, size_t n,
		    const char *error, enum answer_from from)
{
	struct dns_query_event ev = {
		.synthesized = from == FROM_SYNTHESIZED,
		.cached = from == FROM_CACHE,
		.name = parsed ? q->name : NULL,
		.qtype = parsed ? q->qtype : 0,
		.transport = transport,
		.client = client,
		.allowed = allowed,
		.rule = rule,
		.reason = reason,
		.rcode = rcode,
		.n_addrs = n,
		.error = error,
	};

	if (s->cfg.on_event)
		s->cfg.on_event(s->cfg.ctx, &ev);
}

static void emit(struct dns_server *s, const struct dns_question *q, bool parsed, const char *transport,
		 const struct dns_client *client, bool allowed, const char *rule, const char *reason, unsigned rcode, size_t n,
		 const char *error)
{
	emit_ex(s, q, parsed, transport, client, allowed, rule, reason, rcode, n, error, FROM_UPSTREAM);
}

void dns_tcp_close(struct dns_server *s, int i)
{
	struct tcp_client *c = &s->tcp_clients[i];

	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	for (int k = 0; k < MAX_PENDING; k++)
		if (s->pend[k].used && s->pend[k].tcp == i)
			s->pend[k].tcp = -2; /* orphaned: its answer is dropped */
}

/* Sends an answer to a UDP client or a TCP client (then closes it). */
static void reply(struct dns_server *s, int udp_fd, const struct sockaddr_storage *to, socklen_t to_len, int tcp,
		  uint8_t *msg, size_t len)
{
	if (tcp >= 0) {
		uint8_t hdr[2] = { len >> 8, len & 0xff };
		struct iovec iov[2] = { { hdr, 2 }, { msg, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		/* One answer per connection; a client that does not read it loses it. */
		sendmsg(s->tcp_clients[tcp].fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		shutdown(s->tcp_clients[tcp].fd, SHUT_WR);
		dns_tcp_close(s, tcp);
	} else if (tcp == -1) {
		sendto(udp_fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to, to_len);
	}
}

void dns_pending_free(struct pending *p)
{
	if (p->fd >= 0)
		close(p->fd);
	free(p->query);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

/* Sends the query to upstream p->server; false when no upstream is left to try. */
static bool pending_send(struct dns_server *s, struct pending *p)
{
	while (p->server < s->cfg.n_upstreams) {
		const struct sockaddr_storage *up = &s->cfg.upstreams[p->server];

		if (p->fd >= 0)
			close(p->fd);
		p->fd = socket(up->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (p->fd >= 0 && !connect(p->fd, (const struct sockaddr *)up, ss_len(up)) &&
		    send(p->fd, p->up, p->up_len, MSG_NOSIGNAL) == (ssize_t)p->up_len) {
			p->deadline = mono_ms() + s->cfg.timeout_ms;
			return true;
		}
		p->server++;
	}
	return false;
}

/* An allowed name answered without upstream; true when handled. */
static bool synthesize(struct dns_server *s, const uint8_t *msg, const struct dns_question *q, int udp_fd,
		       const struct sockaddr_storage *from, socklen_t from_len, int tcp, const char *transport,
		       const struct dns_client *client, const char *rule, const char *reason)
{
	uint8_t out[DNS_HEADER_LEN + 300 + 2 * 28];
	struct dns_addr a[2];
	int na, n;

	if (!s->cfg.synthesize)
		return false;
	na = s->cfg.synthesize(s->cfg.ctx, q->name, q->qtype, a, 2);
	if (na < 0) {
		n = dns_build_error(msg, q, DNS_RCODE_SERVFAIL, out, sizeof(out));
		emit_ex(s, q, true, transport, client, true, rule, reason, DNS_RCODE_SERVFAIL, 0,
			"no synthesized address left", FROM_SYNTHESIZED);
	} else {
		/* The addresses are known to the kernel (learned) before the client can use them. */
		n = dns_build_answer(msg, q, a, (size_t)na, out, sizeof(out));
		emit_ex(s, q, true, transport, client, true, rule, reason, DNS_RCODE_NOERROR, (size_t)na, NULL,
			FROM_SYNTHESIZED);
	}
	if (n > 0)
		reply(s, udp_fd, from, from_len, tcp, out, (size_t)n);
	else if (tcp >= 0)
		dns_tcp_close(s, tcp);
	return true;
}

/*
 * The answer's question in the client's own letter case (upstream was asked
 * in lower case): clients that check the echo exactly (0x20 randomisation)
 * take it. The bytes are the same name, as dns_parse_answer checked.
 */
static void restore_question(const struct pending *p, uint8_t *ans, size_t len)
{
	size_t qlen = p->q.end - DNS_HEADER_LEN;

	if (p->q.end > p->query_len || DNS_HEADER_LEN + qlen > len ||
	    strncasecmp((const char *)ans + DNS_HEADER_LEN, (const char *)p->query + DNS_HEADER_LEN, qlen))
		return;
	memcpy(ans + DNS_HEADER_LEN, p->query + DNS_HEADER_LEN, qlen);
}

/*
 * A flush asked for by another thread (a live policy update) is done here,
 * on the cache's own thread, before the cache is read or written. Returns
 * the flushes asked for so far.
 */
static unsigned cache_sync(struct dns_server *s)
{
	unsigned asked = __atomic_load_n(&s->flushes, __ATOMIC_SEQ_CST);

	if (asked != s->flushes_done) {
		dns_cache_flush(s->cache);
		s->flushes_done = asked;
	}
	return asked;
}

/*
 * An allowed question answered from the cache; true when handled. The
 * policy was asked first, as for every query: the cache never decides.
 * The addresses are learned again with their remaining TTL (the learned
 * table's floor applies as for an upstream answer) before the client
 * can use them.
 */
static bool cached_answer(struct dns_server *s, const uint8_t *msg, const struct dns_question *q, int udp_fd,
			  const struct sockaddr_storage *from, socklen_t from_len, int tcp, const char *transport,
			  const struct dns_client *client, const char *rule, const char *reason)
{
	struct dns_cache_hit hit;
	struct dns_client who = *client; /* a TCP client's own is cleared when its answer closes it */

	cache_sync(s);
	if (dns_cache_get(s->cache, msg, q, mono_ms(), s->cached, sizeof(s->cached), s->addrs, MAX_ADDRS, &hit) != 1)
		return false;
	if (hit.n_addrs && s->cfg.on_answer)
		s->cfg.on_answer(s->cfg.ctx, q->name, s->addrs, hit.n_addrs);
	/* The client has its answer before the event is written: the log's write is not on its path. */
	reply(s, udp_fd, from, from_len, tcp, s->cached, hit.len);
	emit_ex(s, q, true, transport, &who, true, rule, reason, hit.rcode, hit.n_addrs, NULL, FROM_CACHE);
	return true;
}

static bool type_answered(const struct dns_server *s, unsigned qtype)
{
	if (s->cfg.answers_type)
		return s->cfg.answers_type(s->cfg.ctx, qtype);
	return qtype == DNS_TYPE_A || qtype == DNS_TYPE_AAAA;
}

void dns_handle_query(struct dns_server *s, uint8_t *msg, size_t len, int udp_fd,
		      const struct sockaddr_storage *from, socklen_t from_len, int tcp, const char *transport,
		      const struct dns_client *client)
{
	struct dns_question q;
	const char *rule = NULL, *reason = NULL;
	uint8_t out[DNS_HEADER_LEN + 300];
	struct pending *p = NULL;
	int err, n;

	err = dns_parse_query(msg, len, &q);
	if (err) {
		if (len < DNS_HEADER_LEN) {
			if (tcp >= 0)
				dns_tcp_close(s, tcp);
			return; /* not even a header to answer */
		}
		n = dns_build_error(msg, &q, err == -EOPNOTSUPP ? DNS_RCODE_NOTIMP : DNS_RCODE_FORMERR, out,
				    sizeof(out));
		emit(s, &q, false, transport, client, false, "malformed", NULL,
		     err == -EOPNOTSUPP ? DNS_RCODE_NOTIMP : DNS_RCODE_FORMERR, 0,
		     err == -EOPNOTSUPP ? "opcode not supported" : "malformed query");
		if (n > 0)
			reply(s, udp_fd, from, from_len, tcp, out, n);
		else if (tcp >= 0)
			dns_tcp_close(s, tcp);
		return;
	}
	if (q.qclass != DNS_CLASS_IN || !s->cfg.decide(s->cfg.ctx, q.name, &rule, &reason)) {
		/* NXDOMAIN, not REFUSED: resolvers go on with their search list after NXDOMAIN. */
		n = dns_build_error(msg, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
		emit(s, &q, true, transport, client, false, rule ? rule : "default:network", reason,
		     DNS_RCODE_NXDOMAIN, 0, q.qclass != DNS_CLASS_IN ? "class not IN" : NULL);
		if (n > 0)
			reply(s, udp_fd, from, from_len, tcp, out, n);
		return;
	}
	if (!type_answered(s, q.qtype)) {
		/* An allowed name, a type it is not answered for (TXT, NULL, ANY: the usual tunnels). */
		n = dns_build_error(msg, &q, DNS_RCODE_REFUSED, out, sizeof(out));
		emit(s, &q, true, transport, client, false, "default:dnsQueryTypes", NULL, DNS_RCODE_REFUSED, 0,
		     "query type not answered for allowed names (bpfbox.network.dnsQueryTypes)");
		if (n > 0)
			reply(s, udp_fd, from, from_len, tcp, out, n);
		else if (tcp >= 0)
			dns_tcp_close(s, tcp);
		return;
	}
	if (synthesize(s, msg, &q, udp_fd, from, from_len, tcp, transport, client, rule, reason))
		return;
	if (cached_answer(s, msg, &q, udp_fd, from, from_len, tcp, transport, client, rule, reason))
		return;
	for (int i = 0; i < MAX_PENDING && !p; i++)
		if (!s->pend[i].used)
			p = &s->pend[i];
	if (p) {
		p->used = true;
		p->fd = -1;
		p->query = malloc(len);
	}
	if (!p || !p->query) {
		if (p)
			dns_pending_free(p);
		n = dns_build_error(msg, &q, DNS_RCODE_SERVFAIL, out, sizeof(out));
		emit(s, &q, true, transport, client, true, rule, reason, DNS_RCODE_SERVFAIL, 0,
		     "too many queries in flight");
		if (n > 0)
			reply(s, udp_fd, from, from_len, tcp, out, n);
		return;
	}
	memcpy(p->query, msg, len);
	p->query_len = len;
	p->q = q;
	p->reply_fd = udp_fd;
	p->tcp = tcp;
	if (from)
		memcpy(&p->client, from, from_len);
	p->client_len = from_len;
	p->who = *client;
	p->rule = rule;
	p->transport = transport;
	p->flushes = s->flushes_done;
	/*
	 * The upstream sees a fresh id and a query rebuilt from the parsed
	 * question: no byte of the client's (case, flags, EDNS options) passes.
	 * An answer must match the id and the question to be taken.
	 */
	if (getrandom(&p->up_id, sizeof(p->up_id), 0) != sizeof(p->up_id))
		p->up_id = (uint16_t)mono_ms() ^ q.id;
	n = dns_build_query(&q, p->up_id, p->up, sizeof(p->up));
	p->up_len = n > 0 ? (size_t)n : 0;
	if (n <= 0 || !pending_send(s, p)) {
		n = dns_build_error(msg, &q, DNS_RCODE_SERVFAIL, out, sizeof(out));
		emit(s, &q, true, transport, client, true, rule, NULL, DNS_RCODE_SERVFAIL, 0, "no upstream server");
		if (n > 0)
			reply(s, udp_fd, from, from_len, tcp, out, n);
		dns_pending_free(p);
		return;
	}
	if (tcp >= 0)
		s->tcp_clients[tcp].waiting = true;
}

/* An answer whose CNAMEs lead to a name the policy denies: NXDOMAIN, nothing learned or kept. */
static void refuse_chain(struct dns_server *s, struct pending *p, const struct dns_chain_check *check)
{
	char reason[DNS_NAME_MAX + 64];
	int n = dns_build_error(p->query, &p->q, DNS_RCODE_NXDOMAIN, s->buf, sizeof(s->buf));

	snprintf(reason, sizeof(reason), "its answer leads through CNAME to %s, which the policy denies", check->via);
	if (n > 0)
		reply(s, p->reply_fd, &p->client, p->client_len, p->tcp, s->buf, (size_t)n);
	emit(s, &p->q, true, p->transport, &p->who, false, check->rule, reason, DNS_RCODE_NXDOMAIN, 0, NULL);
	dns_pending_free(p);
}

void dns_upstream_answer(struct dns_server *s, struct pending *p)
{
	ssize_t len = recv(p->fd, s->buf, sizeof(s->buf), MSG_DONTWAIT);
	struct dns_chain_check check = { .denied = s->cfg.denied_outright, .ctx = s->cfg.ctx };
	unsigned rcode;
	size_t n;

	if (len < 0)
		return;
	/* Anything but the answer to this question is ignored (spoofing, stray packets). */
	if (dns_parse_answer(s->buf, (size_t)len, p->up_id, &p->q, s->addrs, MAX_ADDRS, &n, &rcode,
			     check.denied ? &check : NULL))
		return;
	if (check.hit) {
		refuse_chain(s, p, &check);
		return;
	}
	/* The addresses are known to the kernel before the client can use them. */
	if (n && s->cfg.on_answer)
		s->cfg.on_answer(s->cfg.ctx, p->q.name, s->addrs, n);
	/* Kept unless a flush came since the query was asked (the policy it was decided by has gone). */
	if (cache_sync(s) == p->flushes)
		dns_cache_put(s->cache, &p->q, s->buf, (size_t)len, s->addrs, n, mono_ms());
	s->buf[0] = p->q.id >> 8;
	s->buf[1] = p->q.id & 0xff;
	restore_question(p, s->buf, (size_t)len);
	/* As for a cached answer, the event after the answer (p's copies outlive the reply). */
	reply(s, p->reply_fd, &p->client, p->client_len, p->tcp, s->buf, (size_t)len);
	emit(s, &p->q, true, p->transport, &p->who, true, p->rule, NULL, rcode, n, NULL);
	dns_pending_free(p);
}

void dns_pending_timeout(struct dns_server *s, struct pending *p)
{
	uint8_t out[DNS_HEADER_LEN + 300];
	int n;

	p->server++;
	if (p->tcp != -2 && pending_send(s, p))
		return;
	n = dns_build_error(p->query, &p->q, DNS_RCODE_SERVFAIL, out, sizeof(out));
	if (n > 0) {
		out[0] = p->q.id >> 8;
		out[1] = p->q.id & 0xff;
	}
	emit(s, &p->q, true, p->transport, &p->who, true, p->rule, NULL, DNS_RCODE_SERVFAIL, 0,
	     "no upstream server answered");
	if (n > 0)
		reply(s, p->reply_fd, &p->client, p->client_len, p->tcp, out, n);
	dns_pending_free(p);
}
