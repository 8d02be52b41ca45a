// SPDX-License-Identifier: MIT
/*
 * 'bpfbox connect' against a real proxy on loopback: the command runs in a
 * forked child with pipes for stdin, stdout and stderr, as under ssh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/commands.h"
#include "proxy/addr_guard.h"
#include "proxy/proxy.h"

struct fixture {
	struct proxy *proxy;
	unsigned short port, echo_port;
	struct addr_guard guard;
	int echo_fd;
	pthread_t echo;
	atomic_int stop;
};

static void decide(void *ctx, const char *host, unsigned port, struct proxy_decision *out)
{
	out->allow = !strcmp(host, "127.0.0.1");
	out->rule = out->allow ? "allowedDomains:127.0.0.1" : "default:deny";
	out->reason = out->allow ? NULL : "Not on the list";
}

/* Echoes one connection at a time and passes EOF back as a half-close. */
static void *echo_main(void *arg)
{
	struct fixture *f = arg;
	char buf[65536];

	while (!atomic_load(&f->stop)) {
		struct pollfd p = { .fd = f->echo_fd, .events = POLLIN };
		ssize_t n;
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(f->echo_fd, NULL, NULL);
		if (fd < 0)
			continue;
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
				break;
		shutdown(fd, SHUT_WR);
		close(fd);
	}
	return NULL;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct proxy_config cfg = { .decide = decide, .guard = &f->guard, .idle_timeout_ms = 5000 };
	const char *err;

	addr_guard_init_empty(&f->guard);
	assert_int_equal(addr_guard_add_allow(&f->guard, "127.0.0.1", &err), 0);
	f->echo_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(f->echo_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->echo_fd, 4), 0);
	assert_int_equal(getsockname(f->echo_fd, (struct sockaddr *)&a, &len), 0);
	f->echo_port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&f->echo, NULL, echo_main, f), 0);
	assert_int_equal(proxy_start(&cfg, &f->proxy, &f->port), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	proxy_stop(f->proxy);
	atomic_store(&f->stop, 1);
	pthread_join(f->echo, NULL);
	close(f->echo_fd);
	addr_guard_free(&f->guard);
	free(f);
	return 0;
}

struct run {
	int status;
	char out[1 << 20], err[1024];
	size_t outlen;
};

/* Runs cmd_connect(host, port) with input on stdin; collects stdout, stderr, status. */
static void run_connect(const char *proxy_env, const char *host, const char *port,
			const char *input, size_t inlen, struct run *r)
{
	int in[2], out[2], err[2];
	size_t errlen = 0, off = 0;
	bool out_open = true, err_open = true;
	pid_t pid;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char *argv[] = { "connect", (char *)host, (char *)port, NULL };

		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(in[1]);
		close(out[0]);
		close(err[0]);
		unsetenv("HTTPS_PROXY");
		unsetenv("https_proxy");
		unsetenv("HTTP_PROXY");
		unsetenv("http_proxy");
		setenv("BPFBOX_PROXY", proxy_env, 1);
		_exit(cmd_connect(3, argv));
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	r->outlen = 0;
	while (out_open || err_open || in[1] >= 0) {
		struct pollfd p[3] = {
			{ .fd = out_open ? out[0] : -1, .events = POLLIN },
			{ .fd = err_open ? err[0] : -1, .events = POLLIN },
			{ .fd = in[1], .events = POLLOUT },
		};
		ssize_t n;

		assert_true(poll(p, 3, 5000) > 0);
		if (p[0].revents) {
			n = read(out[0], r->out + r->outlen, sizeof(r->out) - r->outlen);
			if (n <= 0)
				out_open = false;
			else
				r->outlen += (size_t)n;
		}
		if (p[1].revents) {
			n = read(err[0], r->err + errlen, sizeof(r->err) - 1 - errlen);
			if (n <= 0)
				err_open = false;
			else
				errlen += (size_t)n;
		}
		if (p[2].revents) {
			size_t k = inlen - off < 4096 ? inlen - off : 4096;

			/* At most PIPE_BUF: POLLOUT promises no more without blocking. */
			n = k ? write(in[1], input + off, k) : 0;
			if (n > 0)
				off += (size_t)n;
			if (n <= 0 || off == inlen) {
				close(in[1]);	/* stdin EOF: must become a half-close */
				in[1] = -1;
			}
		}
	}
	r->err[errlen] = '\0';
	close(out[0]);
	close(err[0]);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
}

static void test_tunnel_roundtrip(void **state)
{
	struct fixture *f = *state;
	static struct run r;
	static char input[300000];
	char proxy[32], port[8];

	for (size_t i = 0; i < sizeof(input); i++)
		input[i] = (char)(i * 7);
	snprintf(proxy, sizeof(proxy), "127.0.0.1:%u", f->port);
	snprintf(port, sizeof(port), "%u", f->echo_port);
	run_connect(proxy, "127.0.0.1", port, input, sizeof(input), &r);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_int_equal(r.outlen, sizeof(input));
	assert_memory_equal(r.out, input, sizeof(input));
	assert_string_equal(r.err, "");
}

static void test_refusal(void **state)
{
	struct fixture *f = *state;
	static struct run r;
	char proxy[32];

	snprintf(proxy, sizeof(proxy), "127.0.0.1:%u", f->port);
	run_connect(proxy, "github.com", "22", "", 0, &r);
	assert_int_equal(WEXITSTATUS(r.status), 1);
	assert_int_equal(r.outlen, 0);
	assert_string_equal(r.err, "bpfbox connect: proxy refused github.com:22: "
			    "HTTP/1.1 403 Not on the list\n");
}

static void test_bad_arguments(void **state)
{
	struct fixture *f = *state;
	static struct run r;
	char proxy[32];

	snprintf(proxy, sizeof(proxy), "127.0.0.1:%u", f->port);
	run_connect(proxy, "127.0.0.1", "022", "", 0, &r);
	assert_int_equal(WEXITSTATUS(r.status), 2);
	run_connect("not a proxy", "127.0.0.1", "22", "", 0, &r);
	assert_int_equal(WEXITSTATUS(r.status), 1);
	assert_non_null(strstr(r.err, "BPFBOX_PROXY"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tunnel_roundtrip),
		cmocka_unit_test(test_refusal),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
