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
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/mono_clock.h"
#include "dns_server_state.h"

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
		dns_handle_query(s, s->buf, (size_t)len, fd, &from, flen, -1, "udp", &client);
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
		t->deadline = mono_ms() + TCP_DEADLINE_MS;
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
		dns_tcp_close(s, i);
		return;
	}
	if (len < 0)
		return;
	t->have += (size_t)len;
	if (t->have == 2 && !t->buf[0] && !t->buf[1]) {
		dns_tcp_close(s, i);
		return;
	}
	if (t->have < 2 || t->have < 2 + ((size_t)t->buf[0] << 8 | t->buf[1]))
		return;
	dns_handle_query(s, t->buf + 2, t->have - 2, -1, NULL, 0, i, "tcp", &t->who);
}

static void *dns_thread(void *arg)
{
	struct dns_server *s = arg;
	struct pollfd pfd[5 + MAX_PENDING + MAX_TCP];
	int kind[5 + MAX_PENDING + MAX_TCP], idx[5 + MAX_PENDING + MAX_TCP];

	for (;;) {
		long long now = mono_ms(), next = now + 1000;
		int n = 0, r;

		if (s->cfg.tick && now - s->ticked_ms >= 1000) {
			s->cfg.tick(s->cfg.ctx);
			s->ticked_ms = now;
		}

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
				dns_pending_timeout(s, p);
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
				dns_tcp_close(s, i);
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
					dns_upstream_answer(s, &s->pend[idx[k]]);
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
	s->cache = dns_cache_new(0, 0);
	if (!s->cache) {
		err = -ENOMEM;
		goto fail;
	}
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
	dns_cache_free(s->cache);
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
			dns_pending_free(&s->pend[i]);
	for (int i = 0; i < MAX_TCP; i++)
		if (s->tcp_clients[i].fd >= 0)
			dns_tcp_close(s, i);
	for (int f = 0; f < 2; f++) {
		if (s->udp[f] >= 0)
			close(s->udp[f]);
		if (s->tcp[f] >= 0)
			close(s->tcp[f]);
	}
	close(s->stop_fd);
	dns_cache_free(s->cache);
	free(s);
}

void dns_server_flush_cache(struct dns_server *s)
{
	if (s)
		__atomic_add_fetch(&s->flushes, 1, __ATOMIC_SEQ_CST);
}
