// SPDX-License-Identifier: MIT
/* The sandbox's DNS resolver: one thread, poll, UDP and TCP listeners, UDP upstreams. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "dns_server.h"

#define MAX_PENDING 64
#define MAX_TCP 16
#define TCP_DEADLINE_MS 10000
#define MAX_ADDRS 64
#define DEFAULT_TIMEOUT_MS 2000

struct pending {
	bool used;
	int fd; /* connected UDP socket to the current upstream */
	int reply_fd; /* UDP listener to answer from, or -1 for a TCP client */
	int tcp; /* index of the TCP client, or -1 */
	struct sockaddr_storage client;
	socklen_t client_len;
	struct dns_client who;
	struct dns_question q;
	uint16_t up_id;
	uint8_t *query; /* the client's, for the answers we write ourselves */
	size_t query_len;
	uint8_t up[DNS_HEADER_LEN + DNS_NAME_MAX + 1 + 4 + 11]; /* what upstream gets: rebuilt */
	size_t up_len;
	size_t server;
	long long deadline;
	const char *rule;
	const char *transport;
};

struct tcp_client {
	int fd; /* -1 when free */
	uint8_t *buf;
	size_t have;
	bool waiting; /* its query is with an upstream */
	long long deadline;
	struct dns_client who;
};

struct dns_server {
	struct dns_server_config cfg;
	int udp[2], tcp[2]; /* [0] IPv4, [1] IPv6; -1 when absent */
	unsigned short port[2]; /* their port, UDP and TCP alike */
	int stop_fd;
	pthread_t thread;
	struct pending pend[MAX_PENDING];
	struct tcp_client tcp_clients[MAX_TCP];
	uint8_t buf[DNS_TCP_MAX + 2];
	struct dns_addr addrs[MAX_ADDRS];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The client of a datagram or connection from ss, received on listener f (0 IPv4, 1 IPv6). */
static void client_of(const struct dns_server *s, const struct sockaddr_storage *ss, int f, bool tcp,
		      struct dns_client *c)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	memset(c, 0, sizeof(*c));
	c->listener = s->port[f];
	c->family = f ? AF_INET6 : AF_INET;
	c->tcp = tcp;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		c->port = ntohs(s4->sin_port);
		snprintf(c->text, sizeof(c->text), "%s:%u", ip, c->port);
	} else {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		c->port = ntohs(s6->sin6_port);
		snprintf(c->text, sizeof(c->text), "[%s]:%u", ip, c->port);
	}
	if (s->cfg.sender)
		s->cfg.sender(s->cfg.ctx, c, &c->sender);
}

int dns_read_resolv_conf(const char *path, struct sockaddr_storage *out, size_t max)
{
	char line[512], word[256];
	size_t n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		struct sockaddr_in *s4 = (void *)&out[n];
		struct sockaddr_in6 *s6 = (void *)&out[n];
		char *pct;

		if (sscanf(line, " nameserver %255s", word) != 1)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		pct = strchr(word, '%');
		if (pct)
			*pct = 0; /* a zone id: link-local servers are not supported, the address alone is tried */
		if (inet_pton(AF_INET, word, &s4->sin_addr) == 1) {
			s4->sin_family = AF_INET;
			s4->sin_port = htons(53);
			n++;
		} else if (inet_pton(AF_INET6, word, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(53);
			n++;
		}
	}
	fclose(f);
	return (int)n;
}

static socklen_t ss_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

static void emit_ex(struct dns_server *s, const struct dns_question *q, bool parsed, const char *transport,
		    const struct dns_client *client, bool allowed, const char *rule, const char *reason, unsigned rcode, size_t n,
		    const char *error, bool synthesized)
{
	struct dns_query_event ev = {
		.synthesized = synthesized,
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
	emit_ex(s, q, parsed, transport, client, allowed, rule, reason, rcode, n, error, false);
}

static void tcp_close(struct dns_server *s, int i)
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
		tcp_close(s, tcp);
	} else if (tcp == -1) {
		sendto(udp_fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to, to_len);
	}
}

static void pending_free(struct pending *p)
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
			p->deadline = now_ms() + s->cfg.timeout_ms;
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
			"no synthesized address left", true);
	} else {
		/* The addresses are known to the kernel (learned) before the client can use them. */
		n = dns_build_answer(msg, q, a, (size_t)na, out, sizeof(out));
		emit_ex(s, q, true, transport, client, true, rule, reason, DNS_RCODE_NOERROR, (size_t)na, NULL, true);
	}
	if (n > 0)
		reply(s, udp_fd, from, from_len, tcp, out, (size_t)n);
	else if (tcp >= 0)
		tcp_close(s, tcp);
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

static bool type_answered(const struct dns_server *s, unsigned qtype)
{
	if (s->cfg.answers_type)
		return s->cfg.answers_type(s->cfg.ctx, qtype);
	return qtype == DNS_TYPE_A || qtype == DNS_TYPE_AAAA;
}

static void handle_query(struct dns_server *s, uint8_t *msg, size_t len, int udp_fd,
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
				tcp_close(s, tcp);
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
			tcp_close(s, tcp);
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
			tcp_close(s, tcp);
		return;
	}
	if (synthesize(s, msg, &q, udp_fd, from, from_len, tcp, transport, client, rule, reason))
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
			pending_free(p);
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
	/*
	 * The upstream sees a fresh id and a query rebuilt from the parsed
	 * question: no byte of the client's (case, flags, EDNS options) passes.
	 * An answer must match the id and the question to be taken.
	 */
	if (getrandom(&p->up_id, sizeof(p->up_id), 0) != sizeof(p->up_id))
		p->up_id = (uint16_t)now_ms() ^ q.id;
	n = dns_build_query(&q, p->up_id, p->up, sizeof(p->up));
	p->up_len = n > 0 ? (size_t)n : 0;
	if (n <= 0 || !pending_send(s, p)) {
		n = dns_build_error(msg, &q, DNS_RCODE_SERVFAIL, out, sizeof(out));
		emit(s, &q, true, transport, client, true, rule, NULL, DNS_RCODE_SERVFAIL, 0, "no upstream server");
		if (n > 0)
			reply(s, udp_fd, from, from_len, tcp, out, n);
		pending_free(p);
		return;
	}
	if (tcp >= 0)
		s->tcp_clients[tcp].waiting = true;
}

static void upstream_answer(struct dns_server *s, struct pending *p)
{
	ssize_t len = recv(p->fd, s->buf, sizeof(s->buf), MSG_DONTWAIT);
	unsigned rcode;
	size_t n;

	if (len < 0)
		return;
	/* Anything but the answer to this question is ignored (spoofing, stray packets). */
	if (dns_parse_answer(s->buf, (size_t)len, p->up_id, &p->q, s->addrs, MAX_ADDRS, &n, &rcode))
		return;
	/* The addresses are known to the kernel before the client can use them. */
	if (n && s->cfg.on_answer)
		s->cfg.on_answer(s->cfg.ctx, p->q.name, s->addrs, n);
	s->buf[0] = p->q.id >> 8;
	s->buf[1] = p->q.id & 0xff;
	restore_question(p, s->buf, (size_t)len);
	emit(s, &p->q, true, p->transport, &p->who, true, p->rule, NULL, rcode, n, NULL);
	reply(s, p->reply_fd, &p->client, p->client_len, p->tcp, s->buf, (size_t)len);
	pending_free(p);
}

static void pending_timeout(struct dns_server *s, struct pending *p)
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
	pending_free(p);
}

static void udp_readable(struct dns_server *s, int f)
{
	struct sockaddr_storage from;
	struct dns_client client;
	int fd = s->udp[f];

	for (int i = 0; i < 64; i++) {
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(fd, s->buf, DNS_UDP_MAX + 1, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);

		if (len < 0)
			return;
		if (len > DNS_UDP_MAX)
			continue; /* truncated by us: not a query we can read whole */
		client_of(s, &from, f, false, &client);
		handle_query(s, s->buf, (size_t)len, fd, &from, flen, -1, "udp", &client);
	}
}

static void tcp_accept(struct dns_server *s, int f)
{
	struct sockaddr_storage from;
	socklen_t flen = sizeof(from);
	int c = accept4(s->tcp[f], (struct sockaddr *)&from, &flen, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (c < 0)
		return;
	for (int i = 0; i < MAX_TCP; i++) {
		struct tcp_client *t = &s->tcp_clients[i];

		if (t->fd >= 0)
			continue;
		t->buf = malloc(DNS_TCP_MAX + 2);
		if (!t->buf)
			break;
		t->fd = c;
		t->have = 0;
		t->waiting = false;
		t->deadline = now_ms() + TCP_DEADLINE_MS;
		client_of(s, &from, f, true, &t->who);
		return;
	}
	close(c); /* too many: the client retries or gives up */
}

static void tcp_readable(struct dns_server *s, int i)
{
	struct tcp_client *t = &s->tcp_clients[i];
	size_t want;
	ssize_t len;

	want = t->have < 2 ? 2 : 2 + ((size_t)t->buf[0] << 8 | t->buf[1]);
	len = recv(t->fd, t->buf + t->have, want - t->have, MSG_DONTWAIT);
	if (len == 0 || (len < 0 && errno != EAGAIN && errno != EINTR)) {
		tcp_close(s, i);
		return;
	}
	if (len < 0)
		return;
	t->have += (size_t)len;
	if (t->have == 2 && !t->buf[0] && !t->buf[1]) {
		tcp_close(s, i);
		return;
	}
	if (t->have < 2 || t->have < 2 + ((size_t)t->buf[0] << 8 | t->buf[1]))
		return;
	handle_query(s, t->buf + 2, t->have - 2, -1, NULL, 0, i, "tcp", &t->who);
}

static void *dns_thread(void *arg)
{
	struct dns_server *s = arg;
	struct pollfd pfd[5 + MAX_PENDING + MAX_TCP];
	int kind[5 + MAX_PENDING + MAX_TCP], idx[5 + MAX_PENDING + MAX_TCP];

	for (;;) {
		long long now = now_ms(), next = now + 1000;
		int n = 0, r;

		pfd[n] = (struct pollfd){ s->stop_fd, POLLIN, 0 };
		kind[n++] = 0;
		for (int f = 0; f < 2; f++) {
			if (s->udp[f] >= 0) {
				pfd[n] = (struct pollfd){ s->udp[f], POLLIN, 0 };
				kind[n] = 1;
				idx[n++] = f;
			}
			if (s->tcp[f] >= 0) {
				pfd[n] = (struct pollfd){ s->tcp[f], POLLIN, 0 };
				kind[n] = 2;
				idx[n++] = f;
			}
		}
		for (int i = 0; i < MAX_PENDING; i++) {
			struct pending *p = &s->pend[i];

			if (!p->used)
				continue;
			if (p->deadline <= now) {
				pending_timeout(s, p);
				if (!p->used)
					continue;
			}
			if (p->deadline < next)
				next = p->deadline;
			pfd[n] = (struct pollfd){ p->fd, POLLIN, 0 };
			kind[n] = 3;
			idx[n++] = i;
		}
		for (int i = 0; i < MAX_TCP; i++) {
			struct tcp_client *t = &s->tcp_clients[i];

			if (t->fd < 0)
				continue;
			if (t->deadline <= now) {
				tcp_close(s, i);
				continue;
			}
			if (t->deadline < next)
				next = t->deadline;
			if (t->waiting)
				continue;
			pfd[n] = (struct pollfd){ t->fd, POLLIN, 0 };
			kind[n] = 4;
			idx[n++] = i;
		}
		r = poll(pfd, n, (int)(next > now ? next - now : 0));
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		if (pfd[0].revents)
			break;
		for (int k = 1; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			switch (kind[k]) {
			case 1:
				udp_readable(s, idx[k]);
				break;
			case 2:
				tcp_accept(s, idx[k]);
				break;
			case 3:
				if (s->pend[idx[k]].used && s->pend[idx[k]].fd == pfd[k].fd)
					upstream_answer(s, &s->pend[idx[k]]);
				break;
			case 4:
				if (s->tcp_clients[idx[k]].fd == pfd[k].fd && !s->tcp_clients[idx[k]].waiting)
					tcp_readable(s, idx[k]);
				break;
			}
		}
	}
	return NULL;
}

/* UDP and TCP on the same loopback port; the port is the kernel's choice. */
static int bind_pair(int family, int *udp, int *tcp, unsigned short *port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (void *)&ss;
	struct sockaddr_in6 *s6 = (void *)&ss;
	socklen_t len = family == AF_INET ? sizeof(*s4) : sizeof(*s6);
	int one = 1, err = -EADDRINUSE;

	for (int attempt = 0; attempt < 32 && err == -EADDRINUSE; attempt++) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = family;
		if (family == AF_INET)
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		else
			s6->sin6_addr = in6addr_loopback;
		*udp = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		*tcp = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (*udp < 0 || *tcp < 0) {
			err = -errno;
			goto fail;
		}
		if (family == AF_INET6) {
			setsockopt(*udp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
			setsockopt(*tcp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		}
		if (bind(*udp, (struct sockaddr *)&ss, len) || getsockname(*udp, (struct sockaddr *)&ss, &len)) {
			err = -errno;
			goto fail;
		}
		if (!bind(*tcp, (struct sockaddr *)&ss, len) && !listen(*tcp, 64)) {
			*port = ntohs(family == AF_INET ? s4->sin_port : s6->sin6_port);
			return 0;
		}
		err = -errno;
fail:
		if (*udp >= 0)
			close(*udp);
		if (*tcp >= 0)
			close(*tcp);
		*udp = *tcp = -1;
	}
	return err;
}

int dns_server_start(const struct dns_server_config *cfg, struct dns_server **out, unsigned short *port4,
		     unsigned short *port6)
{
	struct dns_server *s;
	sigset_t all, old;
	int err, n;

	*out = NULL;
	*port4 = *port6 = 0;
	if (!cfg->decide)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	if (!s->cfg.timeout_ms)
		s->cfg.timeout_ms = DEFAULT_TIMEOUT_MS;
	if (!s->cfg.n_upstreams) {
		n = dns_read_resolv_conf("/etc/resolv.conf", s->cfg.upstreams, DNS_MAX_UPSTREAMS);
		/* No resolv.conf or no server in it: glibc asks 127.0.0.1, so do we. */
		if (n <= 0) {
			struct sockaddr_in *s4 = (void *)&s->cfg.upstreams[0];

			memset(s4, 0, sizeof(*s4));
			s4->sin_family = AF_INET;
			s4->sin_port = htons(53);
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			n = 1;
		}
		s->cfg.n_upstreams = (size_t)n;
	}
	for (int i = 0; i < MAX_PENDING; i++)
		s->pend[i].fd = -1;
	for (int i = 0; i < MAX_TCP; i++)
		s->tcp_clients[i].fd = -1;
	s->udp[0] = s->udp[1] = s->tcp[0] = s->tcp[1] = -1;
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = bind_pair(AF_INET, &s->udp[0], &s->tcp[0], port4);
	if (err)
		goto fail;
	/* No IPv6 loopback: IPv6 DNS stays refused in the kernel, as before. */
	if (bind_pair(AF_INET6, &s->udp[1], &s->tcp[1], port6))
		*port6 = 0;
	s->port[0] = *port4;
	s->port[1] = *port6;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&s->thread, NULL, dns_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	for (int f = 0; f < 2; f++) {
		if (s->udp[f] >= 0)
			close(s->udp[f]);
		if (s->tcp[f] >= 0)
			close(s->tcp[f]);
	}
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	free(s);
	*port4 = *port6 = 0;
	return err;
}

void dns_server_stop(struct dns_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(s->thread); /* cannot happen with a fresh eventfd; never leave a thread behind */
	pthread_join(s->thread, NULL);
	for (int i = 0; i < MAX_PENDING; i++)
		if (s->pend[i].used)
			pending_free(&s->pend[i]);
	for (int i = 0; i < MAX_TCP; i++)
		if (s->tcp_clients[i].fd >= 0)
			tcp_close(s, i);
	for (int f = 0; f < 2; f++) {
		if (s->udp[f] >= 0)
			close(s->udp[f]);
		if (s->tcp[f] >= 0)
			close(s->tcp[f]);
	}
	close(s->stop_fd);
	free(s);
}
