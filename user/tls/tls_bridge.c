// SPDX-License-Identifier: MIT
/*
 * A TLS session on a thread of its own, over a BIO pair: the thread moves
 * bytes between the socket and OpenSSL itself, so bytes the proxy already
 * read (a ClientHello it sniffed) go in first, a preface can go out in the
 * clear first, and every wait is one poll(2) with a deadline. The pair's
 * rings are read from and written to in place (BIO_nread0/BIO_nwrite0):
 * recv(2) fills OpenSSL's input and send(2) drains its output with no copy
 * between, and their sizes bound what the bridge holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/openssl_lazy.h"

#include "lib/mono_clock.h"
#include "tls_bridge.h"

#define BUF 16384
/* Each way: a few records, the most a bridge holds between socket and OpenSSL. */
#define RING (4 * BUF)
#define STACK_SIZE (512 * 1024)

/* Threads of this process's bridges still running, whatever their connection became: bounded by the proxy. */
static atomic_uint live_bridges;

struct bridge {
	struct tls_bridge_status *st;
	int tfd, pfd;
	SSL *ssl;
	BIO *net;			/* the pair's network end; OpenSSL has the other */
	bool server;
	unsigned handshake_ms, idle_ms;
	char expect_sni[256];
	unsigned char *preface;
	size_t preface_len;
	bool tcp_eof, tls_eof, plain_eof, plain_shut, tls_shut, tcp_shut;
	bool plain_gone;			/* the proxy closed its end altogether */
	bool tcp_hup;				/* the socket is closed both ways: nothing to wait for on it */
	bool tcp_err;				/* the socket reported an error (a reset) */
	unsigned char t2p[BUF];		/* plaintext from TLS on its way to pfd */
	size_t t2p_off, t2p_len;
	unsigned char p2t[BUF];		/* plaintext from pfd on its way into TLS */
	size_t p2t_off, p2t_len;
};

void tls_bridge_put(struct tls_bridge_status *st)
{
	if (st && atomic_fetch_sub(&st->refs, 1) == 1)
		free(st);
}

static void fail(struct bridge *b, const char *what)
{
	char ossl[120] = "";
	unsigned long e = ERR_peek_last_error();
	long v;

	if (!b->server && (v = SSL_get_verify_result(b->ssl)) != X509_V_OK)
		snprintf(ossl, sizeof(ossl), "certificate verify failed: %s",
			 X509_verify_cert_error_string(v));
	else if (e)
		ERR_error_string_n(e, ossl, sizeof(ossl));
	ERR_clear_error();
	snprintf(b->st->error, sizeof(b->st->error), "%s%s%s", what, ossl[0] ? ": " : "", ossl);
	atomic_store(&b->st->state, TLS_BRIDGE_FAILED);
}

/* Moves what OpenSSL wrote toward the socket, from the ring. 0, or -1 when the socket is gone. */
static int flush_out(struct bridge *b)
{
	for (;;) {
		char *p;
		int avail = BIO_nread0(b->net, &p);
		ssize_t n;

		if (avail <= 0)
			return 0;
		n = send(b->tfd, p, (size_t)avail, MSG_NOSIGNAL);
		if (n > 0)
			BIO_nread(b->net, &p, (int)n);
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		else if (n < 0 && errno != EINTR)
			return -1;
	}
}

static bool out_pending(struct bridge *b)
{
	return BIO_ctrl_pending(b->net) > 0;
}

/*
 * More plaintext is taken from the plain end only once OpenSSL's output
 * went on toward the socket: a peer that stops reading stops the proxy's
 * writes, and one record always fits in the ring.
 */
static bool plain_wanted(struct bridge *b)
{
	return !b->plain_eof && b->p2t_off == b->p2t_len && !out_pending(b);
}

/*
 * The socket is read while OpenSSL's input ring has room: its size, not
 * the socket, is what holds a fast peer back when the plain end does not
 * keep up.
 */
static bool tls_wanted(struct bridge *b)
{
	return !b->tcp_eof && BIO_ctrl_get_write_guarantee(b->net) > 0;
}

/* Reads what the socket has into OpenSSL's input ring. -1 on a socket error. */
static int fill_in(struct bridge *b)
{
	while (tls_wanted(b)) {
		char *p;
		int room = BIO_nwrite0(b->net, &p);
		ssize_t n;

		if (room <= 0)
			return 0;
		n = recv(b->tfd, p, (size_t)room, 0);
		if (n > 0) {
			BIO_nwrite(b->net, &p, (int)n);
			continue;
		}
		if (n == 0) {
			b->tcp_eof = true;
			/* An empty input now reads as end of stream, not "retry". */
			BIO_shutdown_wr(b->net);
			return 0;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* One poll over what the bridge waits for; false when the deadline passed. */
static bool wait_io(struct bridge *b, bool relay, unsigned long long deadline)
{
	struct pollfd pf[2] = { { .fd = b->tfd }, { .fd = b->pfd } };
	unsigned long long now = mono_ms();
	int r;

	if (now >= deadline)
		return false;
	if (tls_wanted(b))
		pf[0].events |= POLLIN;
	if (out_pending(b) || b->preface_len)
		pf[0].events |= POLLOUT;
	if (relay && plain_wanted(b))
		pf[1].events |= POLLIN;
	if (relay && b->t2p_off < b->t2p_len)
		pf[1].events |= POLLOUT;
	/*
	 * A plain end that is closed says POLLHUP at once, whatever was asked:
	 * it is left out while that says nothing (the socket is still being
	 * written), or the wait would spin until the peer reads.
	 */
	if (!relay || (!pf[1].events && out_pending(b)))
		pf[1].fd = -1;
	/*
	 * The same for a socket closed both ways (POLLHUP whatever is asked):
	 * what it still holds is read when OpenSSL has room (fill_in runs on
	 * every pass), and a write to it fails.
	 */
	if (b->tcp_hup && !(pf[0].events & POLLOUT))
		pf[0].fd = -1;
	do
		r = poll(pf, 2, (int)(deadline - now));
	while (r < 0 && errno == EINTR);
	if (r > 0 && relay && (pf[1].revents & (POLLHUP | POLLERR)))
		b->plain_gone = true;
	if (r > 0 && (pf[0].revents & POLLHUP))
		b->tcp_hup = true;
	/* A reset socket: nothing more can move on it, and poll would say so on every pass. */
	if (r > 0 && (pf[0].revents & POLLERR)) {
		b->tcp_err = true;
		return true;
	}
	return r > 0;
}

static int send_preface(struct bridge *b, unsigned long long deadline)
{
	size_t off = 0;

	while (off < b->preface_len) {
		ssize_t n = send(b->tfd, b->preface + off, b->preface_len - off, MSG_NOSIGNAL);

		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = { .fd = b->tfd, .events = POLLOUT };
			unsigned long long now = mono_ms();

			if (now >= deadline || poll(&pf, 1, (int)(deadline - now)) <= 0)
				return -1;
		} else if (n < 0 && errno != EINTR) {
			return -1;
		}
	}
	free(b->preface);
	b->preface = NULL;
	b->preface_len = 0;
	return 0;
}

static bool sni_matches(struct bridge *b)
{
	const char *sni = SSL_get_servername(b->ssl, TLSEXT_NAMETYPE_host_name);
	size_t n;

	if (!sni || !b->expect_sni[0])
		return true;
	n = strlen(sni);
	if (n && sni[n - 1] == '.')
		n--;
	return n == strlen(b->expect_sni) && !strncasecmp(sni, b->expect_sni, n);
}

static int handshake(struct bridge *b)
{
	unsigned long long deadline = mono_ms() + b->handshake_ms;
	const unsigned char *alpn = NULL;
	unsigned alpn_len = 0;

	if (send_preface(b, deadline)) {
		fail(b, b->server ? "client gone before the handshake" : "upstream gone before the handshake");
		return -1;
	}
	for (;;) {
		int r = SSL_do_handshake(b->ssl), e;

		if (flush_out(b)) {
			fail(b, "connection closed during the TLS handshake");
			return -1;
		}
		if (r == 1)
			break;
		e = SSL_get_error(b->ssl, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			fail(b, b->server ? "TLS handshake with the client failed" :
				 "TLS handshake with the upstream failed");
			return -1;
		}
		if (b->tcp_eof && !BIO_ctrl_wpending(b->net)) {
			fail(b, "connection closed during the TLS handshake");
			return -1;
		}
		if (!wait_io(b, false, deadline)) {
			fail(b, "TLS handshake timed out");
			return -1;
		}
		if (b->tcp_err) {
			fail(b, "connection reset during the TLS handshake");
			return -1;
		}
		if (fill_in(b)) {
			fail(b, "connection failed during the TLS handshake");
			return -1;
		}
	}
	if (b->server && !sni_matches(b)) {
		snprintf(b->st->error, sizeof(b->st->error),
			 "the client's server_name differs from the tunnel's name %.96s", b->expect_sni);
		atomic_store(&b->st->state, TLS_BRIDGE_FAILED);
		return -1;
	}
	SSL_get0_alpn_selected(b->ssl, &alpn, &alpn_len);
	if (alpn_len && alpn_len < sizeof(b->st->alpn))
		memcpy(b->st->alpn, alpn, alpn_len);
	atomic_store(&b->st->state, TLS_BRIDGE_UP);
	return 0;
}

/*
 * Plaintext out of TLS, toward the plain end. 1 when a record was read or
 * a held one went out (OpenSSL may hold more, and poll would not say so),
 * 0, -1: TLS failed.
 */
static int tls_to_plain(struct bridge *b)
{
	bool held = b->t2p_off < b->t2p_len;
	int got = 0;

	while (!b->tls_eof && b->t2p_off == b->t2p_len) {
		int r = SSL_read(b->ssl, b->t2p, sizeof(b->t2p)), e;

		if (r > 0) {
			b->t2p_off = 0;
			b->t2p_len = (size_t)r;
			got = 1;
			break;
		}
		e = SSL_get_error(b->ssl, r);
		if (e == SSL_ERROR_WANT_READ)
			break;
		if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && b->tcp_eof)) {
			b->tls_eof = true;
			break;
		}
		fail(b, "TLS record error");
		return -1;
	}
	while (b->t2p_off < b->t2p_len) {
		ssize_t n = send(b->pfd, b->t2p + b->t2p_off, b->t2p_len - b->t2p_off, MSG_NOSIGNAL);

		if (n > 0)
			b->t2p_off += (size_t)n;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		else if (n < 0 && errno != EINTR)
			return -1;	/* the proxy dropped its end: nothing more to do */
	}
	if (b->tls_eof && b->t2p_off == b->t2p_len && !b->plain_shut) {
		shutdown(b->pfd, SHUT_WR);
		b->plain_shut = true;
	}
	/* A held record went out: OpenSSL may hold the next, which no poll would announce. */
	if (held && b->t2p_off == b->t2p_len)
		got = 1;
	return got;
}

/* Plaintext from the plain end, into TLS. -1: TLS failed or the socket is gone. */
static int plain_to_tls(struct bridge *b)
{
	if (plain_wanted(b)) {
		ssize_t n = recv(b->pfd, b->p2t, sizeof(b->p2t), 0);

		if (n > 0) {
			b->p2t_off = 0;
			b->p2t_len = (size_t)n;
		} else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			b->plain_eof = true;
		}
	}
	while (b->p2t_off < b->p2t_len) {
		int r = SSL_write(b->ssl, b->p2t + b->p2t_off, (int)(b->p2t_len - b->p2t_off));

		/* The output ring is full: the same write again once it drained. */
		if (r <= 0 && SSL_get_error(b->ssl, r) == SSL_ERROR_WANT_WRITE)
			break;
		if (r <= 0) {
			fail(b, "TLS write failed");
			return -1;
		}
		b->p2t_off += (size_t)r;
	}
	if (b->plain_eof && b->p2t_off == b->p2t_len && !b->tls_shut) {
		SSL_shutdown(b->ssl);	/* close_notify; the peer's is not awaited */
		b->tls_shut = true;
	}
	if (flush_out(b))
		return -1;
	if (b->tls_shut && !out_pending(b) && !b->tcp_shut) {
		shutdown(b->tfd, SHUT_WR);
		b->tcp_shut = true;
	}
	return 0;
}

static void relay(struct bridge *b)
{
	unsigned long long deadline = mono_ms() + b->idle_ms;

	for (;;) {
		uint64_t before = b->t2p_off + b->p2t_off + BIO_number_read(b->net);
		int got;

		if (fill_in(b) || (got = tls_to_plain(b)) < 0 || plain_to_tls(b))
			return;
		if (b->tls_eof && b->plain_eof && b->t2p_off == b->t2p_len && !out_pending(b))
			return;
		/* The proxy is done with this session: what TLS might still say has no reader. */
		if (b->plain_gone && b->plain_eof && !out_pending(b))
			return;
		if (b->t2p_off + b->p2t_off + BIO_number_read(b->net) != before)
			deadline = mono_ms() + b->idle_ms;
		/* A record was read: read again before waiting, what OpenSSL holds makes no poll event. */
		if (got && b->t2p_off == b->t2p_len)
			continue;
		/*
		 * Only what moved above puts the deadline off: a wake-up that moves
		 * nothing (a byte of a record that never completes, a peer that
		 * reads nothing) does not keep the thread alive.
		 */
		if (!wait_io(b, true, deadline)) {
			/* The proxy sees only an end: the reason goes with it, not "closed". */
			snprintf(b->st->error, sizeof(b->st->error), "TLS connection idle for %u ms", b->idle_ms);
			atomic_store(&b->st->state, TLS_BRIDGE_FAILED);
			return;
		}
		if (b->tcp_err) {
			fail(b, b->server ? "the client's connection was reset" : "the upstream's connection was reset");
			return;
		}
	}
}

static void bridge_free(struct bridge *b)
{
	if (b->ssl)
		SSL_free(b->ssl);
	BIO_free(b->net);
	if (b->tfd >= 0)
		close(b->tfd);
	if (b->pfd >= 0)
		close(b->pfd);
	free(b->preface);
	tls_bridge_put(b->st);
	free(b);
}

static void *bridge_main(void *arg)
{
	struct bridge *b = arg;

	if (!handshake(b)) {
		relay(b);
		if (atomic_load(&b->st->state) == TLS_BRIDGE_UP)
			atomic_store(&b->st->state, TLS_BRIDGE_DONE);
	}
	ERR_clear_error();
	bridge_free(b);
	OPENSSL_thread_stop();
	atomic_fetch_sub(&live_bridges, 1);
	return NULL;
}

static int bridge_new(const struct tls_bridge_spec *spec, int pfd, struct bridge **out)
{
	struct bridge *b = calloc(1, sizeof(*b));
	BIO *ssl_end = NULL;

	if (!b)
		return -ENOMEM;
	b->tfd = spec->tls_fd;
	b->pfd = pfd;
	b->ssl = spec->ssl;
	b->server = spec->server;
	b->handshake_ms = spec->handshake_ms ? spec->handshake_ms : 10000;
	b->idle_ms = spec->idle_ms ? spec->idle_ms : 60000;
	snprintf(b->expect_sni, sizeof(b->expect_sni), "%s", spec->expect_sni ? spec->expect_sni : "");
	b->st = calloc(1, sizeof(*b->st));
	/* OpenSSL's output ring, then its input ring: bytes the proxy already read go in whole. */
	if (!BIO_new_bio_pair(&ssl_end, RING, &b->net,
			      spec->preread_len > RING ? spec->preread_len : RING))
		ssl_end = b->net = NULL;
	if (spec->preface_len) {
		b->preface = malloc(spec->preface_len);
		if (b->preface) {
			memcpy(b->preface, spec->preface, spec->preface_len);
			b->preface_len = spec->preface_len;
		}
	}
	if (!b->st || !b->net || (spec->preface_len && !b->preface)) {
		BIO_free(ssl_end);
		BIO_free(b->net);
		b->ssl = NULL;
		free(b->preface);
		free(b->st);
		free(b);
		return -ENOMEM;
	}
	atomic_init(&b->st->refs, 2);	/* the thread's and the caller's */
	atomic_init(&b->st->state, TLS_BRIDGE_HANDSHAKE);
	if (spec->preread_len)
		BIO_write(b->net, spec->preread, (int)spec->preread_len);
	SSL_set_bio(b->ssl, ssl_end, ssl_end);
	/* Servers that close without close_notify are common: their end is an end. */
	SSL_set_options(b->ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
	if (b->server)
		SSL_set_accept_state(b->ssl);
	else
		SSL_set_connect_state(b->ssl);
	*out = b;
	return 0;
}

int tls_bridge_start(const struct tls_bridge_spec *spec, int *plain_fd,
		     struct tls_bridge_status **status)
{
	struct tls_bridge_status *st;
	struct bridge *b = NULL;
	pthread_attr_t attr;
	pthread_t t;
	int sp[2], err;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp)) {
		err = -errno;
		close(spec->tls_fd);
		SSL_free(spec->ssl);
		return err;
	}
	err = bridge_new(spec, sp[1], &b);
	if (err) {
		close(sp[0]);
		close(sp[1]);
		close(spec->tls_fd);
		SSL_free(spec->ssl);
		return err;
	}
	st = b->st;	/* b is the thread's once it runs */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	atomic_fetch_add(&live_bridges, 1);
	err = -pthread_create(&t, &attr, bridge_main, b);
	pthread_attr_destroy(&attr);
	if (err) {
		atomic_fetch_sub(&live_bridges, 1);
		atomic_store(&b->st->refs, 1);	/* the caller never gets its reference */
		close(sp[0]);
		bridge_free(b);
		return err;
	}
	*status = st;
	*plain_fd = sp[0];
	return 0;
}

unsigned tls_bridge_live(void)
{
	return atomic_load(&live_bridges);
}
