// SPDX-License-Identifier: MIT
/*
 * A TLS bridge against a hostile peer, on loopback: a real bridge thread
 * with a leaf of a throwaway CA, and an OpenSSL client that misbehaves.
 * Each case asserts that the thread ends (tls_bridge_live), why, and that
 * it did not spin on the way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls/tls_bridge.h"
#include "tls/tls_ca.h"
#include "tls/tls_leaf.h"

struct fixture {
	struct tls_ca *ca;
	struct tls_leaf_cache *leaves;
	SSL_CTX *client_ctx;
	int client;			/* the hostile peer's socket */
	SSL *ssl;			/* its TLS */
	int plain;			/* the proxy's end */
	struct tls_bridge_status *st;
};

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A bridge that accepts the client's TLS for up.test (idle_ms as given), the client's handshake done. */
static void start_bridge(struct fixture *f, unsigned idle_ms)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, sv;
	struct tls_bridge_spec spec = { .server = true, .handshake_ms = 5000, .idle_ms = idle_ms,
					.expect_sni = "up.test" };
	SSL_CTX *sctx = NULL;

	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &alen), 0);
	f->client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* The hostile client's receive buffer is tiny: what the bridge sends it stays pending. */
	setsockopt(f->client, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
	assert_int_equal(connect(f->client, (struct sockaddr *)&a, sizeof(a)), 0);
	sv = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	close(l);
	assert_true(sv >= 0);
	assert_int_equal(tls_leaf_ctx(f->leaves, "up.test", &sctx), 0);
	spec.ssl = SSL_new(sctx);
	SSL_CTX_free(sctx);
	spec.tls_fd = sv;
	assert_int_equal(tls_bridge_start(&spec, &f->plain, &f->st), 0);
	f->ssl = SSL_new(f->client_ctx);
	SSL_set_tlsext_host_name(f->ssl, "up.test");
	SSL_set_fd(f->ssl, f->client);
	assert_int_equal(SSL_connect(f->ssl), 1);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(tls_ca_generate("bridge-test", 3600, &f->ca), 0);
	assert_int_equal(tls_leaf_cache_new(f->ca, 8, 3600, &f->leaves), 0);
	f->client_ctx = SSL_CTX_new(TLS_client_method());
	assert_non_null(f->client_ctx);
	f->client = f->plain = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	SSL_free(f->ssl);
	if (f->client >= 0)
		close(f->client);
	if (f->plain >= 0)
		close(f->plain);
	tls_bridge_put(f->st);
	SSL_CTX_free(f->client_ctx);
	tls_leaf_cache_free(f->leaves);
	tls_ca_free(f->ca);
	free(f);
	return 0;
}

/* Waits up to ms for every bridge thread of the process to end; true when they did. */
static bool bridges_end_within(unsigned ms)
{
	for (unsigned i = 0; i < ms / 20; i++) {
		if (!tls_bridge_live())
			return true;
		usleep(20000);
	}
	return !tls_bridge_live();
}

/*
 * A client that reads nothing of a large answer and keeps the bridge busy
 * with a record it never finishes, one byte at a time, after the proxy
 * closed its end: only what moves puts the idle deadline off, so the
 * thread ends one idle time later, trickle or not.
 */
static void test_trickle_does_not_keep_a_bridge(void **state)
{
	struct fixture *f = *state;
	static char answer[65536];
	double t0, ended = -1;

	start_bridge(f, 1000);
	assert_int_equal(tls_bridge_live(), 1);
	fcntl(f->plain, F_SETFL, O_NONBLOCK);
	/* The proxy's answer, until nothing more is taken: OpenSSL's output waits on the client. */
	for (int i = 0, stuck = 0; i < 1000 && stuck < 25; i++) {
		stuck = send(f->plain, answer, sizeof(answer), MSG_NOSIGNAL) > 0 ? 0 : stuck + 1;
		usleep(stuck ? 20000 : 0);
	}
	/* A record of 16,000 bytes announced; its body comes a byte at a time. */
	assert_int_equal(send(f->client, "\x17\x03\x03\x3e\x80", 5, MSG_NOSIGNAL), 5);
	close(f->plain);	/* the proxy is done with the connection */
	f->plain = -1;
	t0 = now_s();
	while (now_s() - t0 < 4.0) {
		send(f->client, "A", 1, MSG_NOSIGNAL);
		usleep(100000);
		if (!tls_bridge_live()) {
			ended = now_s() - t0;
			break;
		}
	}
	print_message("# the trickled bridge ended after %.1f s (idle time 1 s)\n", ended);
	assert_true(ended >= 0);
	assert_int_equal(atomic_load(&f->st->state), TLS_BRIDGE_FAILED);
	assert_non_null(strstr(f->st->error, "idle"));
}

/*
 * A client whose plaintext the proxy does not read (its request was
 * forwarded), which then resets the connection: the bridge ends at once
 * with the reason, instead of polling a socket that reports the error on
 * every pass until the idle timeout.
 */
static void test_reset_ends_a_bridge_at_once(void **state)
{
	struct fixture *f = *state;
	static char buf[16000];
	struct linger lg = { 1, 0 };
	double cpu;

	start_bridge(f, 60000);
	fcntl(f->client, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 300; i++)
		if (SSL_write(f->ssl, buf, sizeof(buf)) <= 0) {
			ERR_clear_error();
			usleep(5000);
		}
	setsockopt(f->client, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	cpu = cpu_seconds();
	close(f->client);	/* a reset */
	f->client = -1;
	assert_true(bridges_end_within(1000));
	print_message("# after the reset: %.3f s of CPU\n", cpu_seconds() - cpu);
	assert_true(cpu_seconds() - cpu < 0.3);
	assert_int_equal(atomic_load(&f->st->state), TLS_BRIDGE_FAILED);
	assert_non_null(strstr(f->st->error, "reset"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_trickle_does_not_keep_a_bridge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_ends_a_bridge_at_once, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
