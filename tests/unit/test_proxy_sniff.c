// SPDX-License-Identifier: MIT
/*
 * The transparent path's classifier: lenient where servers are lenient,
 * never "other" for bytes a server reads as a request with a Host. The
 * table pins the forms down; the differential test asks Python's own HTTP
 * server (tests/unit/http_sniff_ref.py) about thousands of generated heads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "policy/domain.h"
#include "proxy/proxy_http.h"
#include "proxy/proxy_http_sniff.h"

#define CAP 16384

struct sniff_row {
	const char *in;
	enum proxy_sniff want;
	const char *normalized; /* for HTTP rows: the head after the rewrite */
};

static void test_rows(void **state)
{
	static const struct sniff_row rows[] = {
		{ "", PROXY_SNIFF_MORE, NULL },
		{ "\x16\x03\x01", PROXY_SNIFF_TLS, NULL },
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n" },
		{ "GET", PROXY_SNIFF_MORE, NULL },
		{ "GET /x", PROXY_SNIFF_MORE, NULL },
		/* What real servers accept: each is HTTP, rewritten to the strict form. */
		{ "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n" },
		{ "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n" },
		{ "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n" },
		{ "\n\r\n\nPOST  /p   HTTP/1.0\r\r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP,
		  "POST /p HTTP/1.0\r\nHost: a\r\n\r\n" },
		{ "get\x0b/\x0cHTTP/1.1\r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP, "get / HTTP/1.1\r\nHost: a\r\n\r\n" },
		{ "GET\r/ HTTP/1.1\r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP, "GET / HTTP/1.1\r\nHost: a\r\n\r\n" },
		{ "M-SEARCH * HTTP/1.1\r\n\r\n", PROXY_SNIFF_HTTP, "M-SEARCH * HTTP/1.1\r\n\r\n" },
		/* HTTP, but left for the strict parser to refuse. */
		{ "GET / http/1.1\r\nHost: a\r\n\r\n", PROXY_SNIFF_HTTP, "GET / http/1.1\r\nHost: a\r\n\r\n" },
		{ "GET /a b HTTP/1.1\r\n\r\n", PROXY_SNIFF_HTTP, "GET /a b HTTP/1.1\r\n\r\n" },
		{ "GET / HTTP/1.1\nHost: a\n\n", PROXY_SNIFF_HTTP, "GET / HTTP/1.1\nHost: a\n\n" },
		{ "GET /index.html\r\n", PROXY_SNIFF_HTTP, "GET /index.html\r\n" },
		{ "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", PROXY_SNIFF_HTTP, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" },
		/* Not HTTP: by address, at once where a server would wait. */
		{ "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", PROXY_SNIFF_OTHER, NULL },
		{ "SSH-2.0-OpenSSH_9.2p1\r\n", PROXY_SNIFF_OTHER, NULL },
		{ "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", PROXY_SNIFF_OTHER, NULL },
		{ "\x00\x00\x00\x08\x04\xd2\x16\x2f", PROXY_SNIFF_OTHER, NULL },
		{ "EHLO x\r\n", PROXY_SNIFF_OTHER, NULL },
		{ "GET\r\n", PROXY_SNIFF_OTHER, NULL },
		{ "GET:", PROXY_SNIFF_OTHER, NULL },
		{ "SET k v\r\n", PROXY_SNIFF_OTHER, NULL },
	};
	char buf[256];
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct sniff_row *r = &rows[i];
		size_t len = strlen(r->in) ? strlen(r->in) : 0, n;
		enum proxy_sniff got;

		/* Rows with NUL bytes give their length by the literal. */
		if (r->in[0] == 0 && r->want == PROXY_SNIFF_OTHER)
			len = 8;
		memcpy(buf, r->in, len);
		got = proxy_http_sniff(buf, len, CAP);
		if (got != r->want)
			fail_msg("row %zu: class %d, want %d", i, got, r->want);
		if (!r->normalized)
			continue;
		n = proxy_http_sniff_normalize(buf, len);
		if (n != strlen(r->normalized) || memcmp(buf, r->normalized, n))
			fail_msg("row %zu: normalized to \"%.*s\", want \"%s\"", i, (int)n, buf, r->normalized);
	}
}

/* A full buffer is decided: whatever may still become a request line is HTTP (then 431). */
static void test_full_buffer(void **state)
{
	static char buf[CAP];
	(void)state;

	memset(buf, 'A', sizeof(buf));
	assert_int_equal(proxy_http_sniff(buf, sizeof(buf), sizeof(buf)), PROXY_SNIFF_HTTP);
	memcpy(buf, "GET /", 5);
	assert_int_equal(proxy_http_sniff(buf, sizeof(buf), sizeof(buf)), PROXY_SNIFF_HTTP);
	memset(buf, '\n', sizeof(buf));
	assert_int_equal(proxy_http_sniff(buf, sizeof(buf), sizeof(buf)), PROXY_SNIFF_HTTP);
	assert_int_equal(proxy_http_sniff(buf, 100, sizeof(buf)), PROXY_SNIFF_MORE);
	memcpy(buf, "SSH-2.0-x ", 10);
	memset(buf + 10, 'y', sizeof(buf) - 10);
	assert_int_equal(proxy_http_sniff(buf, sizeof(buf), sizeof(buf)), PROXY_SNIFF_HTTP);
}

/*
 * What the transparent path does with the bytes, as in proxy_transparent.c:
 * "other" (relayed by address, unchanged), "held" (waits, then closes),
 * "refuse" (400/431), or "host NAME" (decided by NAME, rebuilt).
 */
static void ours(const char *in, size_t len, char *out, size_t cap)
{
	static char buf[CAP];
	static struct proxy_request req;
	struct proxy_authority auth;
	struct proxy_span host = { 0 };
	size_t scan = 0, n, hosts = 0;
	ssize_t head;

	memcpy(buf, in, len);
	switch (proxy_http_sniff(buf, len, CAP)) {
	case PROXY_SNIFF_MORE:
		snprintf(out, cap, "held");
		return;
	case PROXY_SNIFF_TLS:
	case PROXY_SNIFF_OTHER:
		snprintf(out, cap, "other");
		return;
	case PROXY_SNIFF_HTTP:
		break;
	}
	n = proxy_http_sniff_normalize(buf, len);
	head = proxy_head_end(buf, n, &scan);
	if (head == 0) {
		snprintf(out, cap, "held");
		return;
	}
	if (head < 0 || proxy_parse_request(buf, (size_t)head, &req)) {
		snprintf(out, cap, "refuse");
		return;
	}
	for (size_t i = 0; i < req.nhdr; i++)
		if (proxy_span_ieq(req.hdr[i].name, "host")) {
			host = req.hdr[i].value;
			hosts++;
		}
	if (hosts > 1 || (hosts && proxy_parse_authority(host.p, host.n, 80, &auth))) {
		snprintf(out, cap, "refuse");
		return;
	}
	snprintf(out, cap, hosts ? "host %s" : "nohost", hosts ? auth.host : "");
	for (char *c = out; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned pick(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

#define PICK(a) (a)[pick(sizeof(a) / sizeof((a)[0]))]

/* One head from pieces real clients, sloppy clients and attackers send. */
static size_t generate(char *out, size_t cap)
{
	static const char *const lead[] = { "", "", "", "\r\n", "\n", "\r\n\r\n", "\r" };
	static const char *const method[] = { "GET", "POST", "get", "G", "M-SEARCH", "PRI", "OPTIONS", "X!#$",
					      "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "GE\x00T", "\xc3\xa9" };
	static const char *const sep[] = { " ", " ", "\t", "  ", "\x0b", "\x0c", " \t", "\r", "\x1c", "\xa0", "" };
	static const char *const target[] = { "/", "/a", "http://denied.test/", "*", "/a b", "denied.test:80", "" };
	static const char *const version[] = { "HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "http/1.1", "HTTP/1.1 ",
					       "HTTP/1.1\t", "HTTP/2.0", "HTTP/1.10", "", "HTTP/1", "HTTP/1.1x" };
	static const char *const eol[] = { "\r\n", "\r\n", "\n", "\r\r\n", "\r\n\r\n" };
	static const char *const header[] = {
		"Host: denied.test\r\n",      "host:denied.test\r\n",	     "Host: denied.test\n",
		"Host : denied.test\r\n",     "Host:\tDenied.Test \r\n",    "X: y\r\nHost: denied.test\r\n",
		"Host: denied.test\r\nHost: allowed.test\r\n", " Host: x\r\n", "Host: denied.test:8080\r\n",
		"Host:\r\n",		      "Content-Length: 0\r\n",	     "Host: [::1]\r\n",
	};
	static const char *const end[] = { "\r\n", "\r\n", "\n", "" };
	size_t n = 0;
	const char *parts[16];
	size_t np = 0, nh = pick(3);

	parts[np++] = PICK(lead);
	parts[np++] = PICK(method);
	parts[np++] = PICK(sep);
	parts[np++] = PICK(target);
	parts[np++] = PICK(sep);
	parts[np++] = PICK(version);
	parts[np++] = PICK(eol);
	for (size_t i = 0; i < nh; i++)
		parts[np++] = PICK(header);
	parts[np++] = PICK(end);
	for (size_t i = 0; i < np; i++) {
		/* "GE\x00T": its NUL counts. */
		size_t l = parts[i] == method[9] ? 4 : strlen(parts[i]);

		memcpy(out + n, parts[i], l);
		n += l;
	}
	/* A quarter get one random byte replaced or inserted. */
	if (n && n + 1 < cap && !pick(4)) {
		size_t at = pick((unsigned)n);

		if (pick(2)) {
			memmove(out + at + 1, out + at, n - at);
			n++;
		}
		out[at] = (char)pick(256);
	}
	return n;
}

static const char *srcdir(void)
{
	return getenv("BPFBOX_SRCDIR") ? getenv("BPFBOX_SRCDIR") : ".";
}

/*
 * Whatever Python's server reads as a request with a Host and a method, we
 * decide by that Host or refuse. (A method of other bytes, which only
 * http.server reads, is relayed by address: binary protocols must not wait.)
 */
static void test_against_python(void **state)
{
	enum { CASES = 30000 };
	/* Not "bpfbox-*": the VM tests count those in /tmp as a sandbox's leftovers. */
	char in_path[] = "/tmp/sniff-diff-in.XXXXXX", out_path[] = "/tmp/sniff-diff-out.XXXXXX";
	static char cases[CASES][512];
	static size_t lens[CASES];
	char cmd[1024], line[600], mine[600];
	size_t relayed_hosts = 0, decided = 0, refused = 0, python_hosts = 0, tokenless = 0;
	int in_fd = mkstemp(in_path), out_fd = mkstemp(out_path);
	FILE *in, *out;
	(void)state;

	assert_true(in_fd >= 0 && out_fd >= 0);
	in = fdopen(in_fd, "w");
	assert_non_null(in);
	for (size_t i = 0; i < CASES; i++) {
		lens[i] = generate(cases[i], sizeof(cases[i]));
		fprintf(in, "%zu\n", lens[i]);
		fwrite(cases[i], 1, lens[i], in);
	}
	fclose(in);
	close(out_fd);
	snprintf(cmd, sizeof(cmd), "python3 %s/tests/unit/http_sniff_ref.py <'%s' >'%s'", srcdir(), in_path,
		 out_path);
	assert_int_equal(system(cmd), 0);
	out = fopen(out_path, "r");
	assert_non_null(out);
	for (size_t i = 0; i < CASES; i++) {
		assert_non_null(fgets(line, sizeof(line), out));
		line[strcspn(line, "\n")] = 0;
		ours(cases[i], lens[i], mine, sizeof(mine));
		if (!strncmp(line, "tokenless ", 10))
			tokenless++;
		if (strncmp(line, "host ", 5))
			continue;
		python_hosts++;
		if (!strcmp(mine, "other")) {
			relayed_hosts++;
			print_message("case %zu: Python reads %s, we relay it by address: \"%.*s\"\n", i, line,
				      (int)lens[i], cases[i]);
		} else if (!strncmp(mine, "host ", 5)) {
			decided++;
			if (strcmp(mine, line))
				fail_msg("case %zu: Python reads %s, we decide %s: \"%.*s\"", i, line, mine,
					 (int)lens[i], cases[i]);
		} else {
			refused++;
			if (getenv("SNIFF_DEBUG") && refused < 40)
				print_message("refused %s: \"%.*s\"\n", line, (int)lens[i], cases[i]);
		}
	}
	fclose(out);
	unlink(in_path);
	unlink(out_path);
	print_message("%zu cases; Python read a Host in %zu: we decided %zu by the same Host, refused or held %zu; "
		      "%zu more had a method no name-routing server reads (docs/network.md)\n",
		      (size_t)CASES, python_hosts, decided, refused, tokenless);
	assert_int_equal(relayed_hosts, 0);
	/* The generator must reach the interesting cases, or the test proves nothing. */
	assert_true(python_hosts > CASES / 30);
	assert_true(decided > CASES / 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_full_buffer),
		cmocka_unit_test(test_against_python),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
