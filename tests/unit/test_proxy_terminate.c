// SPDX-License-Identifier: MIT
/*
 * TLS termination end to end on loopback: a real proxy thread with a
 * sandbox CA, a real TLS server thread whose certificate comes from another
 * CA (the "public" one, trusted as an extra CA), and OpenSSL clients that
 * CONNECT, handshake with the proxy's leaf and send requests inside. Each
 * case asserts what the client got, what the server saw and the event.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "proxy/addr_guard.h"
#include "cred/cred_sigv4.h"
#include "cred/cred_subst.h"
#include "proxy/proxy_http.h"
#include "proxy/proxy.h"
#include "tls/tls_bridge.h"
#include "tls/tls_ca.h"
#include "tls/tls_leaf.h"
#include "tls/tls_upstream.h"

#define IO_MS 5000
#define MAX_EVENTS 64

struct ev_copy {
	char protocol[16], method[24], host[64], error[200], tls[16], rule[64], credentials[64];
	int status;
	bool allowed;
};

struct fixture {
	/* the upstream: a TLS server for up.test (and reached as wrong.test too) */
	struct tls_ca *public_ca;
	struct tls_leaf_cache *public_leaves;
	int lfd;
	unsigned short up_port;
	pthread_t up_thread;
	atomic_int stop;
	pthread_mutex_t lock;
	char seen[16384];		/* every request the server read, appended */
	/* the proxy */
	struct tls_ca *sandbox_ca;
	struct cred_table *creds;
	struct proxy_cred pcred;
	struct cred_sigv4_pair aws;
	size_t aws_secret;
	int sigv4_streaming;		/* what a live policy says now (sigv4_live) */
	struct tls_leaf_cache *leaves;
	SSL_CTX *upstream_ctx;
	struct proxy_tls tls;
	struct addr_guard guard;
	struct proxy *proxy;
	unsigned short port;
	struct ev_copy ev[MAX_EVENTS];
	size_t nev;
	/* the client: trusts the sandbox CA only */
	SSL_CTX *client_ctx;
	char *sandbox_pem, *public_pem;
};

/* ---- the upstream TLS server ---- */

#define BIG_BODY (32u << 20)

/* A large answer, written until the reader stops taking it (blocked, or gone). */
static void send_big(SSL *ssl)
{
	static char chunk[65536];
	char head[128];
	size_t sent = 0;

	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %u\r\n\r\n", BIG_BODY);
	if (SSL_write(ssl, head, (int)strlen(head)) <= 0)
		return;
	memset(chunk, 'x', sizeof(chunk));
	while (sent < BIG_BODY && SSL_write(ssl, chunk, sizeof(chunk)) > 0)
		sent += sizeof(chunk);
	ERR_clear_error();
}

/* A head, and the body its Content-Length or chunked framing announces. */
static bool request_complete(const char *buf, size_t len)
{
	const char *end = strstr(buf, "\r\n\r\n"), *cl = strcasestr(buf, "\r\nContent-Length: ");
	const char *te = strcasestr(buf, "\r\nTransfer-Encoding: chunked");

	if (!end)
		return false;
	if (te && te < end)
		return len >= 5 && !strcmp(buf + len - 5, "0\r\n\r\n");
	if (cl && cl < end)
		return len >= (size_t)(end + 4 - buf) + strtoul(cl + 18, NULL, 10);
	return true;
}

static void *server_main(void *arg)
{
	struct fixture *f = arg;

	while (!atomic_load(&f->stop)) {
		struct pollfd p = { .fd = f->lfd, .events = POLLIN };
		char buf[8192];
		SSL_CTX *ctx = NULL;
		SSL *ssl;
		int fd, n, len = 0;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		if (tls_leaf_ctx(f->public_leaves, "up.test", &ctx)) {
			close(fd);
			continue;
		}
		ssl = SSL_new(ctx);
		SSL_CTX_free(ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_accept(ssl) == 1) {
			while (len < (int)sizeof(buf) - 1 && (n = SSL_read(ssl, buf + len, (int)sizeof(buf) - 1 - len)) > 0) {
				len += n;
				buf[len] = '\0';
				if (request_complete(buf, (size_t)len))
					break;
			}
			buf[len] = '\0';
			pthread_mutex_lock(&f->lock);
			strncat(f->seen, buf, sizeof(f->seen) - strlen(f->seen) - 1);
			pthread_mutex_unlock(&f->lock);
			if (len && strstr(buf, "GET /big ")) {
				send_big(ssl);
			} else if (len) {
				static const char resp[] = "HTTP/1.1 200 OK\r\nX-Secret: s3cret\r\nX-Keep: 1\r\n"
							   "Content-Length: 5\r\n\r\nhello";

				SSL_write(ssl, resp, sizeof(resp) - 1);
			}
			SSL_shutdown(ssl);
		}
		SSL_free(ssl);
		close(fd);
	}
	return NULL;
}

/* ---- the proxy's callbacks ---- */

/* Set by a case: wrong.test is denied from then on, as after a live policy update. */
static atomic_bool wrong_revoked;

static void decide(void *ctx, const char *host, unsigned port, struct proxy_decision *out)
{
	out->allow = strcmp(host, "blocked.test") != 0 && !(atomic_load(&wrong_revoked) && !strcmp(host, "wrong.test"));
	out->rule = out->allow ? "allowedDomains:*.test" : "deniedDomains:blocked.test";
}

static bool terminates(void *ctx, const char *host, unsigned port)
{
	return strcmp(host, "excluded.test") != 0;
}

static int resolve(void *ctx, const char *host, struct sockaddr_storage *out, size_t max, size_t *n)
{
	struct sockaddr_in *s = (struct sockaddr_in *)out;

	memset(out, 0, sizeof(*out));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*n = 1;
	return 0;
}

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static void on_event(void *ctx, const struct proxy_event *e)
{
	struct fixture *f = ctx;

	pthread_mutex_lock(&f->lock);
	if (f->nev < MAX_EVENTS) {
		struct ev_copy *c = &f->ev[f->nev++];

		copy(c->protocol, sizeof(c->protocol), e->protocol);
		copy(c->method, sizeof(c->method), e->method);
		copy(c->host, sizeof(c->host), e->host);
		copy(c->error, sizeof(c->error), e->error);
		copy(c->tls, sizeof(c->tls), e->tls);
		copy(c->rule, sizeof(c->rule), e->rule);
		copy(c->credentials, sizeof(c->credentials), e->credentials);
		c->status = e->status;
		c->allowed = e->allowed;
	}
	pthread_mutex_unlock(&f->lock);
}

/* The last event, once the connection closed (the proxy emits at close). */
static struct ev_copy last_event(struct fixture *f, size_t before)
{
	struct ev_copy c = { 0 };

	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&f->lock);
		if (f->nev > before)
			c = f->ev[f->nev - 1];
		pthread_mutex_unlock(&f->lock);
		if (c.protocol[0])
			return c;
		usleep(10000);
	}
	fail_msg("no event");
	return c;
}

/* ---- setup ---- */

/* Masked credentials as the sandbox gives them: one sentinel, put back inside terminated TLS to up.test only. */
#define SENTINEL "fake_value_SENTINEL"
#define REAL "real-SECRET-0123456789"
/* A second one as long as its real value: a Content-Length body keeps its length, it streams. */
#define SENTINEL2 "fake_value_SAMELEN"
#define REAL2 "REAL2-same-len-abc"

/* An AWS pair the command holds as sentinels: a SigV4 request signed with them is signed again. */
#define AKID_SENT "fake_value_AKIDSENT01"
#define AKID_REAL "AKIAREALKEYID0000001"
#define SECRET_SENT "fake_value_SECRETSENT"
#define SECRET_REAL "realSecret/0123456789abcdefghijklmnopqrstu"
#define N_PAIRS 4

/* Every pair goes to up.test inside terminated TLS, nowhere else. */
static void cred_select(void *ctx, const char *host, bool plaintext, bool *select)
{
	for (size_t i = 0; i < N_PAIRS; i++)
		select[i] = !plaintext && !strcmp(host, "up.test");
}

/* credentials.sigv4 as a live policy has it when the request comes (the sandbox asks its policy in force). */
static void sigv4_live(void *ctx, struct cred_sigv4_policy *out)
{
	struct fixture *f = ctx;

	out->streaming = (enum cred_sigv4_shape_policy)__atomic_load_n(&f->sigv4_streaming, __ATOMIC_ACQUIRE);
}

static int start(struct fixture *f, bool refuse_opaque, unsigned max_tunnels)
{
	/* The refusing fixture also asks Host to match on plain HTTP. */
	static const char *const strip[] = { "x-secret" };
	struct proxy_config cfg = {
		.decide = decide,
		.on_event = on_event,
		.ctx = f,
		.guard = &f->guard,
		.idle_timeout_ms = 3000,
		.resolve = resolve,
		.tls = &f->tls,
		.cred = &f->pcred,
		.rules = { .refuse_opaque_tunnels = refuse_opaque, .require_host_match = refuse_opaque,
			   .strip_response_headers = strip,
			   .n_strip_response_headers = 1 },
	};

	f->tls.max_tunnels = max_tunnels;
	f->creds = cred_table_new();
	if (!f->creds || cred_table_add(f->creds, "API_KEY", SENTINEL, strlen(SENTINEL), REAL, strlen(REAL)) < 0 ||
	    cred_table_add(f->creds, "SAME_LEN", SENTINEL2, strlen(SENTINEL2), REAL2, strlen(REAL2)) < 0 ||
	    cred_table_add(f->creds, "AWS_ACCESS_KEY_ID", AKID_SENT, strlen(AKID_SENT), AKID_REAL,
			   strlen(AKID_REAL)) < 0 ||
	    cred_table_add(f->creds, "AWS_SECRET_ACCESS_KEY", SECRET_SENT, strlen(SECRET_SENT), SECRET_REAL,
			   strlen(SECRET_REAL)) < 0)
		return -ENOMEM;
	f->aws = (struct cred_sigv4_pair){ .sentinel_akid = { AKID_SENT, strlen(AKID_SENT) },
					   .real_akid = { AKID_REAL, strlen(AKID_REAL) },
					   .real_secret = { SECRET_REAL, strlen(SECRET_REAL) } };
	f->aws_secret = 3;
	f->pcred = (struct proxy_cred){ .table = f->creds, .n_pairs = N_PAIRS, .select = cred_select,
					.aws = &f->aws, .aws_secret = &f->aws_secret, .n_aws = 1,
					.sigv4_modes = sigv4_live };
	return proxy_start(&cfg, &f->proxy, &f->port);
}

static int setup_with(void **state, bool refuse_opaque, unsigned max_tunnels, bool trust_public)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	const char *why = NULL, *pems[1];
	size_t lens[1], len;
	BIO *bio;
	X509 *x;

	pthread_mutex_init(&f->lock, NULL);
	assert_int_equal(tls_ca_generate("public", 3600, &f->public_ca), 0);
	assert_int_equal(tls_leaf_cache_new(f->public_ca, 8, 3600, &f->public_leaves), 0);
	assert_int_equal(tls_ca_generate("test", 3600, &f->sandbox_ca), 0);
	assert_int_equal(tls_leaf_cache_new(f->sandbox_ca, 8, 3600, &f->leaves), 0);
	assert_int_equal(tls_ca_cert_pem(f->public_ca, &f->public_pem, &len), 0);
	pems[0] = f->public_pem;
	lens[0] = len;
	assert_int_equal(tls_upstream_ctx_new(pems, lens, trust_public ? 1 : 0, &f->upstream_ctx, &why), 0);
	f->tls = (struct proxy_tls){ .leaves = f->leaves, .upstream = f->upstream_ctx,
				     .terminates = terminates, .handshake_ms = 3000 };
	addr_guard_init_empty(&f->guard);
	assert_int_equal(addr_guard_add_allow(&f->guard, "127.0.0.1", &why), 0);

	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &alen), 0);
	f->up_port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&f->up_thread, NULL, server_main, f), 0);
	assert_int_equal(start(f, refuse_opaque, max_tunnels), 0);

	/* The client trusts the sandbox's CA alone, as the bundle makes it. */
	assert_int_equal(tls_ca_cert_pem(f->sandbox_ca, &f->sandbox_pem, &len), 0);
	f->client_ctx = SSL_CTX_new(TLS_client_method());
	bio = BIO_new_mem_buf(f->sandbox_pem, (int)len);
	x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(f->client_ctx), x);
	X509_free(x);
	BIO_free(bio);
	SSL_CTX_set_verify(f->client_ctx, SSL_VERIFY_PEER, NULL);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, false, 8, true);
}

/* The proxy trusts the system store only: the test server's CA is unknown to it. */
static int setup_untrusted(void **state)
{
	return setup_with(state, false, 8, false);
}

static int setup_opaque_refused(void **state)
{
	return setup_with(state, true, 8, true);
}

static int setup_one_tunnel(void **state)
{
	return setup_with(state, false, 1, true);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	proxy_stop(f->proxy);
	atomic_store(&f->stop, 1);
	pthread_join(f->up_thread, NULL);
	close(f->lfd);
	addr_guard_free(&f->guard);
	SSL_CTX_free(f->client_ctx);
	SSL_CTX_free(f->upstream_ctx);
	tls_leaf_cache_free(f->leaves);
	tls_leaf_cache_free(f->public_leaves);
	tls_ca_free(f->sandbox_ca);
	tls_ca_free(f->public_ca);
	cred_table_free(f->creds);
	free(f->sandbox_pem);
	free(f->public_pem);
	free(f);
	return 0;
}

/* ---- clients ---- */

static int proxy_socket(struct fixture *f)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(f->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = IO_MS / 1000 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* CONNECT name:port; the proxy's answer head in out. */
static int connect_to(struct fixture *f, const char *name, char *out, size_t cap)
{
	char req[256];
	size_t len = 0;
	int fd = proxy_socket(f);

	snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", name, f->up_port, name,
		 f->up_port);
	assert_true(send(fd, req, strlen(req), 0) > 0);
	/* Byte by byte: what follows the head is TLS, the client's to read. */
	while (len + 1 < cap && !(len >= 4 && !memcmp(out + len - 4, "\r\n\r\n", 4))) {
		if (recv(fd, out + len, 1, 0) != 1)
			break;
		len++;
	}
	out[len] = '\0';
	return fd;
}

/* TLS over fd to name, verified against ctx's trust; NULL when the handshake fails. */
static SSL *handshake(SSL_CTX *ctx, int fd, const char *sni, const char *verify_name)
{
	SSL *ssl = SSL_new(ctx);

	SSL_set_fd(ssl, fd);
	SSL_set_tlsext_host_name(ssl, sni);
	SSL_set1_host(ssl, verify_name);
	if (SSL_connect(ssl) != 1) {
		ERR_clear_error();
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

static size_t request(SSL *ssl, const char *head, char *out, size_t cap)
{
	size_t len = 0;
	int n;

	assert_true(SSL_write(ssl, head, (int)strlen(head)) > 0);
	while (len + 1 < cap && (n = SSL_read(ssl, out + len, (int)(cap - 1 - len))) > 0)
		len += (size_t)n;
	out[len] = '\0';
	ERR_clear_error();
	return len;
}

/* CONNECT, handshake with the proxy's leaf for name, one request; the answer in out. */
static void terminated_request(struct fixture *f, const char *name, const char *fmt, char *out, size_t cap)
{
	char head[4096], answer[256];
	int fd = connect_to(f, name, answer, sizeof(answer));
	SSL *ssl;

	assert_non_null(strstr(answer, " 200 "));
	ssl = handshake(f->client_ctx, fd, name, name);
	assert_non_null(ssl);
	snprintf(head, sizeof(head), fmt, f->up_port);
	request(ssl, head, out, cap);
	SSL_free(ssl);
	close(fd);
}

static bool server_saw(struct fixture *f, const char *needle)
{
	bool yes;

	pthread_mutex_lock(&f->lock);
	yes = strstr(f->seen, needle) != NULL;
	pthread_mutex_unlock(&f->lock);
	return yes;
}

/* ---- cases ---- */

static void test_terminated_request_reaches_server(void **state)
{
	struct fixture *f = *state;
	char out[2048], host[64];
	size_t before = f->nev;
	struct ev_copy e;

	terminated_request(f, "up.test", "GET /ok HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(out, "hello"));
	/* stripResponseHeaders inside TLS too; the rest passes */
	assert_null(strstr(out, "X-Secret"));
	assert_non_null(strstr(out, "X-Keep: 1"));
	snprintf(host, sizeof(host), "Host: up.test:%u", f->up_port);
	assert_true(server_saw(f, "GET /ok HTTP/1.1"));
	assert_true(server_saw(f, host));
	e = last_event(f, before);
	assert_string_equal(e.tls, "terminated");
	assert_string_equal(e.protocol, "https");
	assert_string_equal(e.method, "GET");
	assert_string_equal(e.host, "up.test");
	assert_int_equal(e.status, 200);
}

static void test_fronting_refused(void **state)
{
	struct fixture *f = *state;
	char out[2048];
	size_t before = f->nev;
	struct ev_copy e;

	/* TLS for an allowed name, Host of a denied one, then of another allowed one: both 421. */
	terminated_request(f, "up.test", "GET /front HTTP/1.1\r\nHost: blocked.test:%u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 421 "));
	assert_non_null(strstr(out, "X-Proxy-Error: host-mismatch"));
	terminated_request(f, "up.test", "GET /front2 HTTP/1.1\r\nHost: other.test:%u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 421 "));
	/* and the same name on another port */
	terminated_request(f, "up.test", "GET /front3 HTTP/1.1\r\nHost: up.test:443\r\nX-Port: %u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 421 "));
	assert_false(server_saw(f, "/front"));
	e = last_event(f, before);
	assert_int_equal(e.status, 421);
	assert_false(e.allowed);
}

static void test_trace_and_absolute_refused(void **state)
{
	struct fixture *f = *state;
	char out[2048];

	terminated_request(f, "up.test", "TRACE /t HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 405 "));
	assert_non_null(strstr(out, "X-Proxy-Error: method-not-allowed"));
	terminated_request(f, "up.test", "TRACK /t HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 405 "));
	/* a request naming another server in its target inside the tunnel */
	terminated_request(f, "up.test", "GET http://blocked.test:%u/a HTTP/1.1\r\nHost: up.test\r\n\r\n", out,
			   sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 400 "));
	assert_false(server_saw(f, "/t "));
	assert_false(server_saw(f, "/a "));
}

static void test_wrong_upstream_name_is_502(void **state)
{
	struct fixture *f = *state;
	char out[2048];
	size_t before = f->nev;
	struct ev_copy e;

	/* wrong.test reaches the server for up.test: its certificate does not name wrong.test. */
	terminated_request(f, "wrong.test", "GET /wrong HTTP/1.1\r\nHost: wrong.test:%u\r\n\r\n", out,
			   sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 502 "));
	assert_false(server_saw(f, "/wrong"));
	e = last_event(f, before);
	assert_int_equal(e.status, 502);
	assert_non_null(strstr(e.error, "certificate verify failed"));
}

static void test_untrusted_upstream_is_502(void **state)
{
	struct fixture *f = *state;
	char out[2048];
	size_t before = f->nev;
	struct ev_copy e;

	terminated_request(f, "up.test", "GET /untrusted HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 502 "));
	assert_false(server_saw(f, "/untrusted"));
	e = last_event(f, before);
	assert_non_null(strstr(e.error, "certificate verify failed"));
}

static void test_sni_must_name_the_tunnel(void **state)
{
	struct fixture *f = *state;
	char answer[256], out[512];
	int fd = connect_to(f, "up.test", answer, sizeof(answer));
	SSL *ssl;

	assert_non_null(strstr(answer, " 200 "));
	/* server_name of another host: the proxy refuses the handshake (or closes right after). */
	ssl = handshake(f->client_ctx, fd, "blocked.test", "up.test");
	if (ssl) {
		assert_int_equal(request(ssl, "GET /sni HTTP/1.1\r\nHost: up.test\r\n\r\n", out, sizeof(out)), 0);
		SSL_free(ssl);
	}
	close(fd);
	assert_false(server_saw(f, "/sni"));
}

static void test_excluded_is_tunnelled(void **state)
{
	struct fixture *f = *state;
	char answer[256], out[2048];
	int fd = connect_to(f, "excluded.test", answer, sizeof(answer));
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	BIO *bio = BIO_new_mem_buf(f->public_pem, -1);
	X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	SSL *ssl;

	assert_non_null(strstr(answer, " 200 "));
	/* The server's own certificate arrives: the client verifies it against the public CA. */
	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ssl = handshake(ctx, fd, "up.test", "up.test");
	assert_non_null(ssl);
	request(ssl, "GET /excluded HTTP/1.1\r\nHost: up.test\r\n\r\n", out, sizeof(out));
	/* An opaque tunnel: nothing is stripped. */
	assert_non_null(strstr(out, "X-Secret: s3cret"));
	SSL_free(ssl);
	close(fd);
	X509_free(x);
	BIO_free(bio);
	SSL_CTX_free(ctx);
}

static void test_opaque_tunnel_refused(void **state)
{
	struct fixture *f = *state;
	char answer[512];
	int fd = connect_to(f, "excluded.test", answer, sizeof(answer));

	assert_non_null(strstr(answer, "HTTP/1.1 403 "));
	assert_non_null(strstr(answer, "X-Proxy-Error: opaque-tunnel"));
	close(fd);
	/* A terminated name still works. */
	terminated_request(f, "up.test", "GET /still HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", answer, sizeof(answer));
	assert_non_null(strstr(answer, "HTTP/1.1 200 OK"));
}

/* A plain request: the proxy's answer, read to EOF. */
static void plain_request(struct fixture *f, const char *head, char *out, size_t cap)
{
	int fd = proxy_socket(f);
	size_t len = 0;
	ssize_t n;

	assert_true(send(fd, head, strlen(head), 0) > 0);
	while (len + 1 < cap && (n = recv(fd, out + len, cap - 1 - len, 0)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fd);
}

static void test_plain_request_rules(void **state)
{
	struct fixture *f = *state;
	char head[256], out[1024];

	/* userinfo: where URL parsers disagree on the host; never forwarded */
	snprintf(head, sizeof(head), "GET http://up.test@blocked.test:%u/u HTTP/1.1\r\nHost: up.test\r\n\r\n",
		 f->up_port);
	plain_request(f, head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 400 "));
	assert_non_null(strstr(out, "X-Proxy-Error: ambiguous-request-target"));
	/* requireHostMatch: Host names another server than the URL */
	snprintf(head, sizeof(head), "GET http://up.test:%u/h HTTP/1.1\r\nHost: blocked.test\r\n\r\n", f->up_port);
	plain_request(f, head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 421 "));
	assert_non_null(strstr(out, "X-Proxy-Error: host-mismatch"));
	/* TRACE is refused on plain HTTP too */
	snprintf(head, sizeof(head), "TRACE http://up.test:%u/t HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", f->up_port,
		 f->up_port);
	plain_request(f, head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 405 "));
	assert_false(server_saw(f, "/u "));
	assert_false(server_saw(f, "/h "));
	assert_false(server_saw(f, "/t "));
}

/* The sentinel in a terminated request's target and headers reaches the server as the real value. */
static void test_masked_credentials_put_back(void **state)
{
	struct fixture *f = *state;
	char out[2048];

	terminated_request(f, "up.test", "GET /k?key=" SENTINEL " HTTP/1.1\r\nHost: up.test:%u\r\n"
			   "Authorization: Bearer " SENTINEL "\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "GET /k?key=" REAL " HTTP/1.1"));
	assert_true(server_saw(f, "Authorization: Bearer " REAL));
	assert_false(server_saw(f, SENTINEL));
	/* Never in what comes back: the client sees no real value. */
	assert_null(strstr(out, REAL));
}

/* A Content-Length body whose sentinel is shorter than its real value: read whole, sent with its new length. */
static void test_masked_body_new_length(void **state)
{
	struct fixture *f = *state;
	static const char body[] = "key=" SENTINEL "&again=" SENTINEL;
	char out[2048], head[512], cl[64];
	size_t before = f->nev;
	struct ev_copy e;

	snprintf(head, sizeof(head), "POST /b HTTP/1.1\r\nHost: up.test:%%u\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(body), body);
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "\r\n\r\nkey=" REAL "&again=" REAL));
	snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", strlen("key=" REAL "&again=" REAL));
	assert_true(server_saw(f, cl));
	assert_false(server_saw(f, "fake_value_"));
	e = last_event(f, before);
	assert_string_equal(e.credentials, "API_KEY");
}

/* A sentinel as long as its real value: the body streams, its length stays. */
static void test_masked_body_same_length(void **state)
{
	struct fixture *f = *state;
	static const char body[] = "{\"token\": \"" SENTINEL2 "\"}";
	char out[2048], head[512], cl[64];

	snprintf(head, sizeof(head), "PUT /s HTTP/1.1\r\nHost: up.test:%%u\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(body), body);
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "{\"token\": \"" REAL2 "\"}"));
	snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", strlen(body));
	assert_true(server_saw(f, cl));
}

/* A chunked body, a sentinel split across two chunks: found all the same, re-chunked. */
static void test_masked_body_chunked(void **state)
{
	struct fixture *f = *state;
	char out[2048];

	terminated_request(f, "up.test", "POST /c HTTP/1.1\r\nHost: up.test:%u\r\nTransfer-Encoding: chunked\r\n\r\n"
			   "c\r\nsecret=fake_\r\ne\r\nvalue_SENTINEL\r\n0\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "Transfer-Encoding: chunked\r\n"));
	assert_true(server_saw(f, "secret=" REAL));
	assert_true(server_saw(f, "\r\n0\r\n\r\n"));
	assert_false(server_saw(f, "fake_"));
}

/* A compressed body cannot be searched: it passes as it is; its head still gets the real value. */
static void test_masked_body_encoded_untouched(void **state)
{
	struct fixture *f = *state;
	static const char body[] = "opaque " SENTINEL;
	char out[2048], head[512];

	snprintf(head, sizeof(head), "POST /e HTTP/1.1\r\nHost: up.test:%%u\r\nX-Key: " SENTINEL "\r\n"
		 "Content-Encoding: gzip\r\nContent-Length: %zu\r\n\r\n%s", strlen(body), body);
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "X-Key: " REAL "\r\n"));
	assert_true(server_saw(f, "\r\n\r\nopaque " SENTINEL));
}

/* A request as the SigV4 code reads it, from an origin-form head. */
struct sigv4_view {
	struct cred_sigv4_request req;
	struct cred_header hdr[PROXY_MAX_HEADERS];
};

static void view_of(const struct proxy_request *pr, struct sigv4_view *v)
{
	const char *q = memchr(pr->target.p, '?', pr->target.n);
	size_t plen = q ? (size_t)(q - pr->target.p) : pr->target.n;

	v->req.method = (struct cred_span){ pr->method.p, pr->method.n };
	v->req.path = (struct cred_span){ pr->target.p, plen };
	v->req.query = q ? (struct cred_span){ q + 1, pr->target.n - plen - 1 } : (struct cred_span){ "", 0 };
	for (size_t i = 0; i < pr->nhdr; i++)
		v->hdr[i] = (struct cred_header){ { pr->hdr[i].name.p, pr->hdr[i].name.n },
						  { pr->hdr[i].value.p, pr->hdr[i].value.n } };
	v->req.hdr = v->hdr;
	v->req.nhdr = pr->nhdr;
}

static struct cred_span header_of(const struct proxy_request *pr, const char *name)
{
	for (size_t i = 0; i < pr->nhdr; i++)
		if (proxy_span_ieq(pr->hdr[i].name, name))
			return (struct cred_span){ pr->hdr[i].value.p, pr->hdr[i].value.n };
	return (struct cred_span){ "", 0 };
}

/* Signs head (with "%s" where Authorization goes) with the sentinel pair, as an AWS SDK in the sandbox would. */
static void sign_as_client(const char *head_fmt, unsigned port, const char *body, char *out, size_t cap)
{
	static const char tmpl[] = "AWS4-HMAC-SHA256 Credential=" AKID_SENT "/20261204/us-east-1/s3/aws4_request, "
				   "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature="
				   "0000000000000000000000000000000000000000000000000000000000000000";
	struct proxy_request *pr = calloc(1, sizeof(*pr));
	struct sigv4_view *v = calloc(1, sizeof(*v));
	struct cred_sigv4_auth auth;
	char unsigned_head[2048], authz[CRED_SIGV4_AUTH_MAX];
	uint8_t sig[32];
	size_t alen;

	snprintf(unsigned_head, sizeof(unsigned_head), head_fmt, port, "X-Placeholder: 1");
	assert_int_equal(proxy_parse_request(unsigned_head, strlen(unsigned_head), pr), 0);
	view_of(pr, v);
	assert_int_equal(cred_sigv4_parse_auth(tmpl, strlen(tmpl), &auth), 0);
	assert_int_equal(cred_sigv4_signature(&v->req, &auth, header_of(pr, "x-amz-date"),
					      header_of(pr, "x-amz-content-sha256"),
					      (struct cred_span){ SECRET_SENT, strlen(SECRET_SENT) }, sig, NULL), 0);
	assert_int_equal(cred_sigv4_format_auth((struct cred_span){ AKID_SENT, strlen(AKID_SENT) }, &auth, sig, authz,
						sizeof(authz), &alen), 0);
	snprintf(out, cap, head_fmt, port, "Authorization: ");
	/* The Authorization value goes where the placeholder line was. */
	{
		char *at = strstr(out, "Authorization: ") + strlen("Authorization: ");
		char rest[1024];

		snprintf(rest, sizeof(rest), "%s", at);
		snprintf(at, cap - (size_t)(at - out), "%s%s%s", authz, rest, body);
	}
	free(pr);
	free(v);
}

/* The request the server read starting with needle, verified with secret: 0 valid, else the error. */
static int server_verifies(struct fixture *f, const char *needle, const char *secret)
{
	struct proxy_request *pr = calloc(1, sizeof(*pr));
	struct sigv4_view *v = calloc(1, sizeof(*v));
	struct cred_sigv4_auth auth;
	struct cred_span a;
	char *last, copy[4096];
	ssize_t end;
	size_t scan = 0;
	int rc = -EINVAL;

	pthread_mutex_lock(&f->lock);
	last = strstr(f->seen, needle);
	snprintf(copy, sizeof(copy), "%s", last ? last : "");
	pthread_mutex_unlock(&f->lock);
	end = proxy_head_end(copy, strlen(copy), &scan);
	if (end > 0 && !proxy_parse_request(copy, (size_t)end, pr)) {
		view_of(pr, v);
		a = header_of(pr, "authorization");
		if (!cred_sigv4_parse_auth(a.p, a.n, &auth))
			rc = cred_sigv4_verify(&v->req, &auth, header_of(pr, "x-amz-date"),
					       header_of(pr, "x-amz-content-sha256"),
					       (struct cred_span){ secret, strlen(secret) });
	}
	free(pr);
	free(v);
	return rc;
}

/* Signed with the sentinel secret in the sandbox, verified with the real one at the server. */
static void test_sigv4_resigned(void **state)
{
	struct fixture *f = *state;
	static const char fmt[] = "GET /bucket/key.txt?list-type=2 HTTP/1.1\r\nHost: up.test:%u\r\n"
				  "x-amz-date: 20261204T120000Z\r\n"
				  "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\r\n"
				  "%s\r\n\r\n";
	char head[4096], out[2048];
	size_t before = f->nev;
	struct ev_copy e;

	sign_as_client(fmt, f->up_port, "", head, sizeof(head));
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "Credential=" AKID_REAL "/20261204/us-east-1/s3/aws4_request"));
	assert_false(server_saw(f, "fake_value_"));
	assert_int_equal(server_verifies(f, "GET /bucket/", SECRET_REAL), 0);
	assert_int_not_equal(server_verifies(f, "GET /bucket/", SECRET_SENT), 0);
	e = last_event(f, before);
	assert_non_null(strstr(e.credentials, "AWS_ACCESS_KEY_ID"));
}

/*
 * The secret key's sentinel in a re-signed request's header and body stays
 * the sentinel: the real secret only signs (a PUT of it to a bucket the
 * command can read would otherwise hand it over).
 */
static void test_sigv4_secret_never_put_in(void **state)
{
	struct fixture *f = *state;
	static const char body[] = "leak=" SECRET_SENT;
	char fmt[512], head[4096], out[2048], hash[CRED_SIGV4_HEX + 1];

	cred_sigv4_sha256_hex(body, strlen(body), hash);
	snprintf(fmt, sizeof(fmt), "PUT /bucket/obj HTTP/1.1\r\nHost: up.test:%%u\r\nx-amz-date: 20261204T120000Z\r\n"
		 "x-amz-meta-leak: " SECRET_SENT "\r\nx-amz-content-sha256: %s\r\nContent-Length: %zu\r\n%%s\r\n\r\n",
		 hash, strlen(body));
	sign_as_client(fmt, f->up_port, body, head, sizeof(head));
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_false(server_saw(f, SECRET_REAL));
	assert_true(server_saw(f, "x-amz-meta-leak: " SECRET_SENT));
	assert_true(server_saw(f, "leak=" SECRET_SENT));
	/* Still re-signed with the real pair, over the body as sent. */
	assert_true(server_saw(f, "Credential=" AKID_REAL "/"));
	assert_int_equal(server_verifies(f, "PUT /bucket/obj", SECRET_REAL), 0);
}

/* A signed payload holding a sentinel: read whole, replaced, hashed again, signed with the real secret. */
static void test_sigv4_signed_body(void **state)
{
	struct fixture *f = *state;
	static const char body[] = "data=" SENTINEL;
	static const char real_body[] = "data=" REAL;
	char fmt[512], head[4096], out[2048], hash[CRED_SIGV4_HEX + 1], want[128];

	cred_sigv4_sha256_hex(body, strlen(body), hash);
	snprintf(fmt, sizeof(fmt), "PUT /bucket/obj HTTP/1.1\r\nHost: up.test:%%u\r\nx-amz-date: 20261204T120000Z\r\n"
		 "x-amz-content-sha256: %s\r\nContent-Length: %zu\r\n%%s\r\n\r\n", hash, strlen(body));
	sign_as_client(fmt, f->up_port, body, head, sizeof(head));
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "\r\n\r\n" "data=" REAL));
	cred_sigv4_sha256_hex(real_body, strlen(real_body), hash);
	snprintf(want, sizeof(want), "x-amz-content-sha256: %s\r\n", hash);
	assert_true(server_saw(f, want));
	snprintf(want, sizeof(want), "Content-Length: %zu\r\n", strlen(real_body));
	assert_true(server_saw(f, want));
	assert_int_equal(server_verifies(f, "PUT /bucket/obj", SECRET_REAL), 0);
}

/* An aws-chunked streaming upload signed with the sentinel: srt's 403 by default, the server reads nothing. */
static void test_sigv4_streaming_refused(void **state)
{
	struct fixture *f = *state;
	static const char fmt[] = "GET /bucket/stream HTTP/1.1\r\nHost: up.test:%u\r\n"
				  "x-amz-date: 20261204T120000Z\r\n"
				  "x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD\r\n"
				  "%s\r\n\r\n";
	char head[4096], out[2048];

	sign_as_client(fmt, f->up_port, "", head, sizeof(head));
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 403 "));
	assert_non_null(strstr(out, "X-Proxy-Error: blocked-by-sandbox-runtime"));
	assert_non_null(strstr(out, "streaming"));
	assert_false(server_saw(f, "/bucket/stream"));
}

/* The same request after a live policy let streaming through: the next one passes, the server reads it. */
static void test_sigv4_modes_follow_live(void **state)
{
	struct fixture *f = *state;
	static const char fmt[] = "GET /bucket/live HTTP/1.1\r\nHost: up.test:%u\r\n"
				  "x-amz-date: 20261204T120000Z\r\n"
				  "x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD\r\n"
				  "%s\r\n\r\n";
	char head[4096], out[2048];

	sign_as_client(fmt, f->up_port, "", head, sizeof(head));
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 403 "));
	assert_false(server_saw(f, "/bucket/live"));
	__atomic_store_n(&f->sigv4_streaming, CRED_SIGV4_POLICY_PASSTHROUGH, __ATOMIC_RELEASE);
	terminated_request(f, "up.test", head, out, sizeof(out));
	assert_null(strstr(out, "X-Proxy-Error"));
	assert_true(server_saw(f, "/bucket/live"));
}

/* A CONNECT answered 200 within 2 s, retried every 20 ms while refused (a slot being given back). */
static bool tunnel_let_in_within_2s(struct fixture *f)
{
	char answer[512];

	for (int i = 0; i < 100; i++) {
		close(connect_to(f, "up.test", answer, sizeof(answer)));
		if (strstr(answer, " 200 "))
			return true;
		usleep(20000);
	}
	return false;
}

static void test_max_tunnels(void **state)
{
	struct fixture *f = *state;
	char answer[512];
	int held = connect_to(f, "up.test", answer, sizeof(answer)), fd = -1;
	SSL *ssl = handshake(f->client_ctx, held, "up.test", "up.test");

	assert_non_null(ssl);
	fd = connect_to(f, "up.test", answer, sizeof(answer));
	assert_non_null(strstr(answer, "HTTP/1.1 503 "));
	assert_non_null(strstr(answer, "X-Proxy-Error: too-many-tunnels"));
	close(fd);
	SSL_free(ssl);
	close(held);
	/* Once the held one is gone, a new tunnel is let in. */
	assert_true(tunnel_let_in_within_2s(f));
}

/*
 * maxTunnels bounds the bridge threads too, not only the connections the
 * proxy holds: a bridge can outlive its connection (until idle or its peer
 * is gone). Two bridges of this process that no connection holds (waiting
 * for a ClientHello) fill a maxTunnels of 1; once they end, a tunnel is
 * let in again.
 */
static void test_max_tunnels_counts_bridge_threads(void **state)
{
	struct fixture *f = *state;
	struct tls_bridge_status *st[2] = { NULL, NULL };
	int peer[2] = { -1, -1 }, plain[2] = { -1, -1 }, fd;
	char answer[512];

	/* The bridges of earlier cases' connections end first. */
	for (int i = 0; i < 500 && tls_bridge_live(); i++)
		usleep(20000);
	assert_int_equal(tls_bridge_live(), 0);
	for (int i = 0; i < 2; i++) {
		struct tls_bridge_spec spec = { .server = true, .handshake_ms = 10000, .idle_ms = 10000 };
		SSL_CTX *ctx = NULL;
		int sp[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp), 0);
		assert_int_equal(tls_leaf_ctx(f->leaves, "up.test", &ctx), 0);
		spec.ssl = SSL_new(ctx);
		SSL_CTX_free(ctx);
		spec.tls_fd = sp[0];
		peer[i] = sp[1];
		assert_int_equal(tls_bridge_start(&spec, &plain[i], &st[i]), 0);
	}
	assert_int_equal(tls_bridge_live(), 2);
	fd = connect_to(f, "up.test", answer, sizeof(answer));
	close(fd);
	assert_non_null(strstr(answer, "HTTP/1.1 503 "));
	assert_non_null(strstr(answer, "X-Proxy-Error: too-many-tunnels"));
	/* Their peers go: the handshakes fail and the threads end. */
	for (int i = 0; i < 2; i++) {
		close(peer[i]);
		close(plain[i]);
		tls_bridge_put(st[i]);
	}
	assert_true(tunnel_let_in_within_2s(f));
}

/* A second request in the same TLS connection is neither forwarded nor answered as if decided. */
static void test_pipelined_request_not_forwarded(void **state)
{
	struct fixture *f = *state;
	char out[2048], fmt[256];
	size_t before = f->nev;

	snprintf(fmt, sizeof(fmt), "%s%s", "GET /first HTTP/1.1\r\nHost: up.test:%1$u\r\n\r\n",
		 "GET /second HTTP/1.1\r\nHost: wrong.test:%1$u\r\n\r\n");
	terminated_request(f, "up.test", fmt, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_null(strstr(out + 1, "HTTP/1.1 "));
	assert_true(server_saw(f, "GET /first "));
	assert_false(server_saw(f, "GET /second "));
	assert_int_equal(last_event(f, before).status, 200);
}

/* Host in another spelling of the tunnel's name (case, trailing dot) is the tunnel's. */
static void test_host_spellings(void **state)
{
	struct fixture *f = *state;
	char out[2048];

	terminated_request(f, "up.test", "GET /upper HTTP/1.1\r\nHost: UP.Test:%u\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_true(server_saw(f, "GET /upper "));
	terminated_request(f, "up.test", "GET /dot HTTP/1.1\r\nHost: up.test.:%u\r\n\r\n", out, sizeof(out));
	assert_true(strstr(out, "HTTP/1.1 200 OK") || strstr(out, "HTTP/1.1 421 "));
	/* another name with the same port is never forwarded */
	terminated_request(f, "up.test", "GET /other HTTP/1.1\r\nHost: up.test.evil:%u\r\n\r\n", out,
			   sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 421 "));
	assert_false(server_saw(f, "GET /other "));
}

/* A client that never begins its TLS holds its maxTunnels slot only until the handshake times out. */
static void test_unfinished_handshake_frees_its_slot(void **state)
{
	struct fixture *f = *state;
	char answer[512];
	size_t before = f->nev;
	int held = connect_to(f, "up.test", answer, sizeof(answer)), fd;
	bool let_in = false, timed_out = false;

	assert_non_null(strstr(answer, " 200 "));
	for (int i = 0; i < 40 && !let_in; i++) {
		usleep(200000);
		fd = connect_to(f, "up.test", answer, sizeof(answer));
		close(fd);
		let_in = strstr(answer, " 200 ") != NULL;
	}
	assert_true(let_in);
	/* the held one was closed and said why */
	pthread_mutex_lock(&f->lock);
	for (size_t i = before; i < f->nev; i++)
		if (strstr(f->ev[i].error, "timed out"))
			timed_out = true;
	pthread_mutex_unlock(&f->lock);
	assert_true(timed_out);
	close(held);
}

/*
 * proxy_recheck after the decisions changed: a terminated tunnel to the
 * revoked name, waiting for its request, is closed (the client's TLS ends
 * within 2 s, one event); the one to the name kept still carries a request.
 */
static void test_recheck_closes_revoked_tunnel(void **state)
{
	struct fixture *f = *state;
	char answer[256], head[256], out[2048];
	int gone = connect_to(f, "wrong.test", answer, sizeof(answer)), keep;
	SSL *gone_ssl, *keep_ssl;
	struct pollfd p = { .fd = gone, .events = POLLIN };
	size_t before;

	assert_non_null(strstr(answer, " 200 "));
	gone_ssl = handshake(f->client_ctx, gone, "wrong.test", "wrong.test");
	assert_non_null(gone_ssl);
	keep = connect_to(f, "up.test", answer, sizeof(answer));
	assert_non_null(strstr(answer, " 200 "));
	keep_ssl = handshake(f->client_ctx, keep, "up.test", "up.test");
	assert_non_null(keep_ssl);
	before = f->nev;
	atomic_store(&wrong_revoked, true);
	proxy_recheck(f->proxy);
	assert_int_equal(poll(&p, 1, 2000), 1);
	assert_true(SSL_read(gone_ssl, out, sizeof(out)) <= 0);
	ERR_clear_error();
	{
		struct ev_copy e = last_event(f, before);

		assert_string_equal(e.host, "wrong.test");
		assert_string_equal(e.tls, "terminated");
		assert_false(e.allowed);
		assert_string_equal(e.error, "closed: the policy no longer allows this name");
	}
	snprintf(head, sizeof(head), "GET /ok HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", f->up_port);
	request(keep_ssl, head, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	atomic_store(&wrong_revoked, false);
	SSL_free(gone_ssl);
	SSL_free(keep_ssl);
	close(gone);
	close(keep);
}

/* Smuggling inside TLS: both framings, or an h2 preface, go nowhere. */
static void test_smuggling_refused(void **state)
{
	struct fixture *f = *state;
	char out[2048];
	size_t before = f->nev;

	terminated_request(f, "up.test",
			   "POST /clte HTTP/1.1\r\nHost: up.test:%u\r\nContent-Length: 44\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
			   out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 400 "));
	assert_false(server_saw(f, "/clte"));
	assert_false(server_saw(f, "/smuggled"));
	assert_int_equal(last_event(f, before).status, 400);
	before = f->nev;
	terminated_request(f, "up.test", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n%.0u", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 4"));
	assert_false(server_saw(f, "PRI "));
	assert_true(last_event(f, before).status >= 400);
}

/* An IP literal tunnel, [::1]: no SNI, a leaf for the address, Host in brackets, decided as ::1. */
static void ip_literal_request(struct fixture *f, const char *host, char *out, size_t cap)
{
	char answer[256], head[128];
	int fd = connect_to(f, "[::1]", answer, sizeof(answer));
	SSL *ssl = SSL_new(f->client_ctx);

	assert_non_null(strstr(answer, " 200 "));
	SSL_set_fd(ssl, fd);
	X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "::1");
	assert_int_equal(SSL_connect(ssl), 1);
	snprintf(head, sizeof(head), "GET /v6 HTTP/1.1\r\nHost: %s:%u\r\n\r\n", host, f->up_port);
	request(ssl, head, out, cap);
	SSL_free(ssl);
	close(fd);
}

static void test_ip_literal_tunnel(void **state)
{
	struct fixture *f = *state;
	char out[2048];
	size_t before = f->nev;
	struct ev_copy e;

	/* The server listens on 127.0.0.1 only: ::1 was dialled, and refused. */
	ip_literal_request(f, "[::1]", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 502 "));
	e = last_event(f, before);
	assert_string_equal(e.host, "::1");
	assert_string_equal(e.tls, "terminated");
	before = f->nev;
	ip_literal_request(f, "[::2]", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 421 "));
	assert_int_equal(last_event(f, before).status, 421);
}

/* The client ends its sending (close_notify, then a TCP half-close) and still reads the answer. */
static void test_half_close_after_request(void **state)
{
	struct fixture *f = *state;
	char answer[256], head[128], out[2048];
	int fd = connect_to(f, "up.test", answer, sizeof(answer)), n;
	SSL *ssl = handshake(f->client_ctx, fd, "up.test", "up.test");
	size_t len = 0, before = f->nev;

	assert_non_null(ssl);
	snprintf(head, sizeof(head), "GET /half HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", f->up_port);
	assert_true(SSL_write(ssl, head, (int)strlen(head)) > 0);
	SSL_shutdown(ssl);
	shutdown(fd, SHUT_WR);
	while (len + 1 < sizeof(out) && (n = SSL_read(ssl, out + len, (int)(sizeof(out) - 1 - len))) > 0)
		len += (size_t)n;
	out[len] = '\0';
	ERR_clear_error();
	SSL_free(ssl);
	close(fd);
	assert_true(server_saw(f, "GET /half "));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK"));
	assert_int_equal(last_event(f, before).status, 200);
}

/* A client that keeps its TLS open and says nothing is closed at the idle timeout, and the event says so. */
static void test_silent_client_times_out(void **state)
{
	struct fixture *f = *state;
	char answer[256], b;
	int fd = connect_to(f, "up.test", answer, sizeof(answer));
	SSL *ssl = handshake(f->client_ctx, fd, "up.test", "up.test");
	size_t before = f->nev;
	struct ev_copy e;

	assert_non_null(ssl);
	/* the proxy ends it: the read sees the end before the client's own timeout */
	assert_true(SSL_read(ssl, &b, 1) <= 0);
	ERR_clear_error();
	e = last_event(f, before);
	assert_string_equal(e.tls, "terminated");
	assert_non_null(strstr(e.error, "idle"));
	SSL_free(ssl);
	close(fd);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *fp = fopen("/proc/self/status", "r");

	while (fp && fgets(line, sizeof(line), fp))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (fp)
		fclose(fp);
	return kb;
}

/*
 * A client that asks for a large answer and then reads nothing: the proxy
 * must neither take the whole answer into memory (backpressure reaches the
 * server) nor spin while it waits for the client; the idle timeout ends it.
 */
static void test_client_that_never_reads(void **state)
{
	struct fixture *f = *state;
	char answer[256], head[128];
	int fd = connect_to(f, "up.test", answer, sizeof(answer));
	SSL *ssl = handshake(f->client_ctx, fd, "up.test", "up.test");
	int rcv = 4096;
	long rss = rss_kb();
	double cpu;

	assert_non_null(ssl);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	snprintf(head, sizeof(head), "GET /big HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", f->up_port);
	assert_true(SSL_write(ssl, head, (int)strlen(head)) > 0);
	usleep(500000);
	cpu = cpu_seconds();
	usleep(1000000);
	/* a thread spinning on poll would have used about the whole second */
	assert_true(cpu_seconds() - cpu < 0.3);
	/* the answer waits in socket buffers and the server, not in the proxy's memory */
	assert_true(rss_kb() - rss < (long)(BIG_BODY / 1024 / 2));
	SSL_free(ssl);
	close(fd);
}

/* A large answer arrives whole: records OpenSSL holds after a full plain end are not forgotten. */
static void test_large_answer_arrives_whole(void **state)
{
	struct fixture *f = *state;
	char answer[256], head[256];
	static char buf[1 << 16];
	int fd = connect_to(f, "up.test", answer, sizeof(answer));
	SSL *ssl = handshake(f->client_ctx, fd, "up.test", "up.test");
	size_t total = 0, body_at = 0;
	int n;

	assert_non_null(ssl);
	snprintf(head, sizeof(head), "GET /big HTTP/1.1\r\nHost: up.test:%u\r\n\r\n", f->up_port);
	assert_true(SSL_write(ssl, head, (int)strlen(head)) > 0);
	while ((n = SSL_read(ssl, buf, sizeof(buf))) > 0) {
		if (!body_at) {
			char *e = memmem(buf, (size_t)n, "\r\n\r\n", 4);

			assert_non_null(e);
			body_at = total + (size_t)(e + 4 - buf);
		}
		total += (size_t)n;
	}
	ERR_clear_error();
	assert_int_equal(total - body_at, BIG_BODY);
	SSL_free(ssl);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_terminated_request_reaches_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_answer_arrives_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fronting_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_masked_credentials_put_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_masked_body_new_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_masked_body_same_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_masked_body_chunked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_masked_body_encoded_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigv4_resigned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigv4_streaming_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigv4_signed_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigv4_secret_never_put_in, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigv4_modes_follow_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace_and_absolute_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_upstream_name_is_502, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_upstream_is_502, setup_untrusted, teardown),
		cmocka_unit_test_setup_teardown(test_sni_must_name_the_tunnel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_excluded_is_tunnelled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opaque_tunnel_refused, setup_opaque_refused, teardown),
		cmocka_unit_test_setup_teardown(test_plain_request_rules, setup_opaque_refused, teardown),
		cmocka_unit_test_setup_teardown(test_max_tunnels, setup_one_tunnel, teardown),
		cmocka_unit_test_setup_teardown(test_max_tunnels_counts_bridge_threads, setup_one_tunnel, teardown),
		cmocka_unit_test_setup_teardown(test_client_that_never_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_request_not_forwarded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_spellings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_client_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_close_after_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ip_literal_tunnel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smuggling_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unfinished_handshake_frees_its_slot, setup_one_tunnel, teardown),
		cmocka_unit_test_setup_teardown(test_recheck_closes_revoked_tunnel, setup, teardown),
	};

	/* A client writing into a connection the proxy refused must see EPIPE, not die. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
