// SPDX-License-Identifier: MIT
/* Live policy's command-line side: control lines, fixed fields, domain edits. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/exec_live.h"

static void write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		assert_true(w > 0);
		s += w;
		n -= (size_t)w;
	}
}

/* Whole lines in order, blank ones seen as blank, a partial line held back, EOF noted. */
static void lines_in_pieces(void **state)
{
	struct live_lines l;
	int p[2];
	char *line;

	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_int_equal(live_lines_init(&l), 0);
	assert_int_equal(live_lines_fill(&l, p[0]), -EAGAIN);
	write_all(p[1], "{\"a\":1}\n\n  \r\n{\"b\"", 17);
	assert_int_equal(live_lines_fill(&l, p[0]), 0);
	assert_int_equal(live_lines_next(&l, &line), 1);
	assert_string_equal(line, "{\"a\":1}");
	assert_int_equal(live_lines_next(&l, &line), 1);
	assert_true(live_line_blank(line));
	assert_int_equal(live_lines_next(&l, &line), 1);
	assert_true(live_line_blank(line));
	assert_int_equal(live_lines_next(&l, &line), 0);
	write_all(p[1], ":2}\n{\"c\"", 9);
	assert_int_equal(live_lines_fill(&l, p[0]), 0);
	assert_int_equal(live_lines_next(&l, &line), 1);
	assert_string_equal(line, "{\"b\":2}");
	assert_false(live_line_blank(line));
	assert_int_equal(live_lines_next(&l, &line), 0);
	close(p[1]);
	assert_int_equal(live_lines_fill(&l, p[0]), 0);
	assert_true(l.eof);
	/* the unterminated tail is not a line */
	assert_int_equal(live_lines_next(&l, &line), 0);
	live_lines_free(&l);
	close(p[0]);
}

/* Fills until a line or a refusal comes out of the reader. */
static int drain(struct live_lines *l, int fd, char **line)
{
	for (int i = 0; i < 1000; i++) {
		int r = live_lines_next(l, line);

		if (r)
			return r;
		r = live_lines_fill(l, fd);
		if (r == -EAGAIN || l->eof)
			return 0;
		assert_int_equal(r, 0);
	}
	return 0;
}

/* A line over the bound is refused once and skipped to its newline; the next line is read. */
static void long_line_skipped(void **state)
{
	size_t big = LIVE_LINE_MAX + 4096;
	char *junk = malloc(big);
	struct live_lines l;
	char *line;
	int p[2];

	assert_non_null(junk);
	memset(junk, 'x', big);
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_int_equal(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) > 0, 1);
	assert_int_equal(live_lines_init(&l), 0);
	size_t sent = 0;
	int refused = 0;

	while (sent < big) {
		ssize_t w = write(p[1], junk + sent, big - sent);

		if (w > 0)
			sent += (size_t)w;
		int r = drain(&l, p[0], &line);

		assert_true(r == 0 || r == -E2BIG);
		refused += r == -E2BIG;
	}
	write_all(p[1], "tail\n{\"ok\":1}\n", 14);
	int r;

	while ((r = drain(&l, p[0], &line)) == -E2BIG)
		refused++;
	assert_int_equal(refused, 1);
	assert_int_equal(r, 1);
	assert_string_equal(line, "{\"ok\":1}");
	/* a line of exactly the bound is accepted */
	memset(junk, 'y', LIVE_LINE_MAX);
	junk[LIVE_LINE_MAX] = '\n';
	sent = 0;
	r = 0;
	while (sent < LIVE_LINE_MAX + 1 || !r) {
		if (sent < LIVE_LINE_MAX + 1) {
			ssize_t w = write(p[1], junk + sent, LIVE_LINE_MAX + 1 - sent);

			if (w > 0)
				sent += (size_t)w;
		}
		r = drain(&l, p[0], &line);
		assert_true(r >= 0);
	}
	assert_int_equal(strlen(line), LIVE_LINE_MAX);
	live_lines_free(&l);
	close(p[0]);
	close(p[1]);
	free(junk);
}

static void check_fixed(const char *a, const char *b, const char *field)
{
	cJSON *x = cJSON_Parse(a), *y = cJSON_Parse(b);
	struct errmsg em = { "" };
	int r;

	assert_non_null(x);
	assert_non_null(y);
	r = live_doc_check_fixed(x, y, &em);
	if (!field) {
		if (r)
			fail_msg("refused: %s", em.text);
	} else {
		char want[300];

		assert_int_equal(r, -EINVAL);
		snprintf(want, sizeof(want), "%s cannot change while the sandbox runs; restart it", field);
		/* errmsg adds the errno's text after the context */
		if (strncmp(em.text, want, strlen(want)))
			fail_msg("got \"%s\", want \"%s\"", em.text, want);
	}
	cJSON_Delete(x);
	cJSON_Delete(y);
}

static void fixed_fields(void **state)
{
	check_fixed("{\"network\":{\"allowedDomains\":[\"a.com\"]}}",
		    "{\"network\":{\"allowedDomains\":[\"b.com\"],\"deniedDomains\":[\"c.com\"]}}", NULL);
	check_fixed("{\"network\":{\"allowedDomains\":[\"a.com\"]}}", "{}", NULL);
	check_fixed("{\"filesystem\":{\"denyRead\":[\"~\"]},\"bpfbox\":{\"devices\":{}}}",
		    "{\"filesystem\":{\"allowWrite\":[\".\"]}}", NULL);
	check_fixed("{\"network\":{\"tlsTerminate\":{\"maxTunnels\":3}}}",
		    "{\"network\":{\"tlsTerminate\":{\"maxTunnels\":3,\"excludeDomains\":[\"x.com\"]}}}", NULL);
	/* srt changes these live, and the proxy follows them (the policy in force, each new connection). */
	check_fixed("{\"network\":{\"tlsTerminate\":{\"maxTunnels\":3}}}",
		    "{\"network\":{\"tlsTerminate\":{\"maxTunnels\":4}}}", NULL);
	check_fixed("{\"network\":{\"tlsTerminate\":{\"maxTunnels\":3,\"handshakeTimeoutMs\":500}}}",
		    "{\"network\":{\"tlsTerminate\":{}}}", NULL);
	check_fixed("{\"credentials\":{\"sigv4\":{}}}", "{\"credentials\":{}}", NULL);
	check_fixed("{\"credentials\":{\"sigv4\":{\"streaming\":\"deny\"}}}", "{}", NULL);
	check_fixed("{\"network\":{\"mitmProxy\":{\"socketPath\":\"/a\"}}}",
		    "{\"network\":{\"mitmProxy\":{\"socketPath\":\"/b\"}}}", NULL);
	check_fixed("{}", "{\"network\":{\"mitmProxy\":{\"socketPath\":\"/a\",\"domains\":[\"x.com\"]}}}", NULL);
	/* Termination itself, and its CA, stay fixed (srt's too): named. */
	check_fixed("{\"network\":{\"tlsTerminate\":{\"maxTunnels\":3}}}", "{\"network\":{\"maxTunnels\":3}}",
		    "network.tlsTerminate");
	check_fixed("{\"network\":{\"tlsTerminate\":{\"maxTunnels\":3}}}", "{}", "network.tlsTerminate");
	check_fixed("{}", "{\"network\":{\"tlsTerminate\":{\"maxTunnels\":3}}}", "network.tlsTerminate");
	check_fixed("{\"network\":{\"tlsTerminate\":{\"extraCaCertPaths\":[\"/ca\"]}}}", "{\"network\":{}}",
		    "network.tlsTerminate");
	check_fixed("{}", "{\"network\":{\"tlsTerminate\":{\"caCertPath\":\"/a\"}}}", "network.tlsTerminate");
	check_fixed("{\"network\":{\"tlsTerminate\":{\"extraCaCertPaths\":[\"/a\"]}}}",
		    "{\"network\":{\"tlsTerminate\":{\"extraCaCertPaths\":[\"/b\"]}}}",
		    "network.tlsTerminate.extraCaCertPaths");
	check_fixed("{\"credentials\":{\"sigv4\":{},\"envVars\":[]}}", "{\"credentials\":{\"sigv4\":{}}}",
		    "credentials.envVars");
	check_fixed("{\"network\":{\"allowAllUnixSockets\":false}}",
		    "{\"network\":{\"allowAllUnixSockets\":true,\"allowedDomains\":[]}}",
		    "network.allowAllUnixSockets");
	check_fixed("{\"network\":{\"tlsTerminate\":{\"excludeDomains\":[\"x.com\"]}}}", "{}", "network.tlsTerminate");
	check_fixed("{}", "{\"network\":{\"allowAllUnixSockets\":true}}", "network.allowAllUnixSockets");
	check_fixed("{\"network\":{\"tlsTerminate\":{\"caCertPath\":\"/a\"}}}",
		    "{\"network\":{\"tlsTerminate\":{\"caCertPath\":\"/b\"}}}",
		    "network.tlsTerminate.caCertPath");
	check_fixed("{}", "{\"enableWeakerNestedSandbox\":true}", "enableWeakerNestedSandbox");
	check_fixed("{\"bpfbox\":{\"strict\":true}}", "{\"bpfbox\":{\"strict\":false}}", "bpfbox.strict");
	check_fixed("{\"filesystem\":{\"allowGitConfig\":true}}", "{}", "filesystem.allowGitConfig");
}

static void edit(const char *doc, const char *name, bool allow, const char *want)
{
	cJSON *d = cJSON_Parse(doc);
	struct errmsg em = { "" };
	char *out;

	assert_non_null(d);
	if (live_doc_edit_domain(d, name, allow, &em))
		fail_msg("%s: %s", name, em.text);
	out = cJSON_PrintUnformatted(d);
	assert_string_equal(out, want);
	free(out);
	cJSON_Delete(d);
}

static void domain_edits(void **state)
{
	edit("{}", "example.com", true,
	     "{\"network\":{\"allowedDomains\":[\"example.com\"],\"deniedDomains\":[]}}");
	edit("{\"network\":{\"allowedDomains\":[\"a.com\"],\"deniedDomains\":[\"b.com\",\"*.b.com\"]}}",
	     "b.com", true,
	     "{\"network\":{\"allowedDomains\":[\"a.com\",\"b.com\"],\"deniedDomains\":[\"*.b.com\"]}}");
	edit("{\"network\":{\"allowedDomains\":[\"a.com\",\"b.com\"]}}", "a.com", true,
	     "{\"network\":{\"allowedDomains\":[\"a.com\",\"b.com\"],\"deniedDomains\":[]}}");
	edit("{\"network\":{\"allowedDomains\":[\"a.com\",\"*.a.com\",\"a.com\"]}}", "a.com", false,
	     "{\"network\":{\"allowedDomains\":[\"*.a.com\"],\"deniedDomains\":[\"a.com\"]}}");
	edit("{\"network\":{\"deniedDomains\":[]}}", "*", false,
	     "{\"network\":{\"deniedDomains\":[\"*\"],\"allowedDomains\":[]}}");
}

static void domain_edit_refused(void **state)
{
	cJSON *d = cJSON_Parse("{\"network\":{\"allowedDomains\":\"a.com\"}}");
	struct errmsg em = { "" };

	assert_int_equal(live_doc_edit_domain(d, "*", true, &em), -EINVAL);
	assert_non_null(strstr(em.text, "--allow-domain \"*\""));
	assert_int_equal(live_doc_edit_domain(d, "bad name!", false, &em), -EINVAL);
	assert_int_equal(live_doc_edit_domain(d, "ok.com", true, &em), -EINVAL);
	assert_non_null(strstr(em.text, "network.allowedDomains: expected an array"));
	cJSON_Delete(d);
}

static int applied;

static int fake_apply(void *ctx, const char *text, size_t len, struct errmsg *em)
{
	if (strstr(text, "refuse.com"))
		return errmsg_set(em, -EINVAL, "refused by apply");
	applied++;
	return 0;
}

/* Valid lines applied and kept; invalid, fixed-field and refused lines leave the document in force. */
static void control_lines(void **state)
{
	struct live_control c;
	struct errmsg em;
	int p[2];

	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_int_equal(live_control_check_fd(p[1], &em), -EINVAL);
	assert_int_equal(live_control_check_fd(2, &em), -EINVAL);
	assert_int_equal(live_control_check_fd(p[0], &em), 0);
	assert_int_equal(live_control_init(&c, p[0], cJSON_Parse("{\"network\":{\"allowedDomains\":[]}}")), 0);
	c.apply = fake_apply;
	const char *in = "{\"network\":{\"allowedDomains\":[\"a.com\"]}}\n\nnot json\n"
			 "{\"network\":{\"allowAllUnixSockets\":true}}\n"
			 "{\"network\":{\"allowedDomains\":[\"refuse.com\"]}}\n";

	write_all(p[1], in, strlen(in));
	assert_int_equal(live_control_read(&c, p[0]), 0);
	assert_int_equal(applied, 1);
	char *doc = cJSON_PrintUnformatted(c.doc);

	assert_string_equal(doc, "{\"network\":{\"allowedDomains\":[\"a.com\"]}}");
	free(doc);
	close(p[1]);
	assert_int_equal(live_control_read(&c, p[0]), 1);
	live_control_free(&c);
	close(p[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_in_pieces),
		cmocka_unit_test(long_line_skipped),
		cmocka_unit_test(fixed_fields),
		cmocka_unit_test(domain_edits),
		cmocka_unit_test(domain_edit_refused),
		cmocka_unit_test(control_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
