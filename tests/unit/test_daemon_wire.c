// SPDX-License-Identifier: MIT
/* The daemon's request decoder and frames: what a caller may send, and every refusal naming its field. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/wire.h"

#define FDS4 "\"fds\":{\"stdin\":0,\"stdout\":1,\"stderr\":2,\"cwd\":3}"

static int decode(const char *json, size_t n_fds, struct wire_request *req, struct errmsg *em)
{
	memset(em, 0, sizeof(*em));
	return wire_request_decode(json, strlen(json), n_fds, req, em);
}

static void test_exec_minimal(void **state)
{
	struct wire_request req;
	struct errmsg em;

	assert_int_equal(decode("{\"v\":1,\"op\":\"exec\",\"argv\":[\"id\",\"-u\"]," FDS4 "}", 4, &req, &em), 0);
	assert_int_equal(req.op, WIRE_OP_EXEC);
	assert_int_equal(req.exec.argc, 2);
	assert_string_equal(req.exec.argv[0], "id");
	assert_null(req.exec.argv[2]);
	assert_false(req.exec.has_policy);
	assert_int_equal(req.exec.fd_log, -1);
	assert_int_equal(req.exec.fd_control, -1);
	assert_int_equal(req.exec.control_fd_number, -1);
	assert_int_equal(req.exec.kill_after_ms, -1);
	assert_int_equal(req.exec.log_format, -1);
	assert_int_equal(req.exec.fd_cwd, 3);
	assert_int_equal(req.exec.n_env, 0);
	wire_request_free(&req);
}

/* What the client encodes, the daemon decodes to the same request. */
static void test_round_trip(void **state)
{
	struct wire_request in = { .op = WIRE_OP_EXEC }, out;
	char *argv[] = { "sh", "-c", "echo \"q\" \\ é", NULL }, *env[] = { "A=1", "PATH=/bin", NULL };
	struct errmsg em;
	char *body;

	in.exec.argv = argv;
	in.exec.argc = 3;
	in.exec.env = env;
	in.exec.n_env = 2;
	in.exec.has_policy = true;
	in.exec.policy_name = "p.json";
	in.exec.policy_json = "{\"network\":{}}";
	in.exec.cwd = "/home/carol";
	in.exec.strict = true;
	in.exec.tty = true;
	in.exec.timeout_ms = 1500;
	in.exec.kill_after_ms = 0;
	in.exec.log_format = 1;
	in.exec.log_level = 2;
	in.exec.fd_stdin = 0;
	in.exec.fd_stdout = 1;
	in.exec.fd_stderr = 2;
	in.exec.fd_cwd = 3;
	in.exec.fd_log = 4;
	in.exec.fd_control = 5;
	in.exec.control_fd_number = 3;
	in.exec.pass[0] = (struct wire_pass_fd){ 5, 7 };
	in.exec.n_pass = 1;
	body = wire_request_encode(&in);
	assert_non_null(body);
	assert_int_equal(decode(body, 6, &out, &em), 0);
	assert_string_equal(out.exec.argv[2], argv[2]);
	assert_string_equal(out.exec.env[1], "PATH=/bin");
	assert_true(out.exec.has_policy);
	assert_string_equal(out.exec.policy_name, "p.json");
	assert_string_equal(out.exec.policy_json, "{\"network\":{}}");
	assert_int_equal(out.exec.policy_len, 14);
	assert_string_equal(out.exec.cwd, "/home/carol");
	assert_true(out.exec.strict);
	assert_false(out.exec.audit);
	assert_true(out.exec.tty);
	assert_int_equal(out.exec.timeout_ms, 1500);
	assert_int_equal(out.exec.kill_after_ms, 0);
	assert_int_equal(out.exec.log_format, 1);
	assert_int_equal(out.exec.log_level, 2);
	assert_int_equal(out.exec.fd_log, 4);
	assert_int_equal(out.exec.fd_control, 5);
	assert_int_equal(out.exec.control_fd_number, 3);
	assert_int_equal(out.exec.n_pass, 1);
	assert_int_equal(out.exec.pass[0].index, 5);
	assert_int_equal(out.exec.pass[0].target, 7);
	wire_request_free(&out);
	free(body);

	/* "auto" is a value a request may carry, not the same as leaving it out. */
	in.exec.log_format = 0;
	body = wire_request_encode(&in);
	assert_non_null(body);
	assert_int_equal(decode(body, 6, &out, &em), 0);
	assert_int_equal(out.exec.log_format, 0);
	wire_request_free(&out);
	free(body);
}

/* Every refusal: the error names the field a caller got wrong. */
static const struct {
	const char *json;
	size_t n_fds;
	int err;
	const char *says;
} bad[] = {
	{ "", 0, -EINVAL, "not a JSON document" },
	{ "[1]", 0, -EINVAL, "expected a JSON object" },
	{ "{\"op\":\"exec\"}", 0, -EINVAL, "v:" },
	{ "{\"v\":2,\"op\":\"ps\"}", 0, -EINVAL, "v:" },
	{ "{\"v\":1}", 0, -EINVAL, "op: missing" },
	{ "{\"v\":1,\"op\":\"shutdown\"}", 0, -EINVAL, "unknown operation" },
	{ "{\"v\":1,\"op\":\"ps\",\"uid\":0}", 0, -EINVAL, "uid: unknown key" },
	{ "{\"v\":1,\"op\":\"ps\"}", 1, -EINVAL, "takes no descriptors" },
	{ "{\"v\":1,\"op\":\"stop\"}", 0, -EINVAL, "id: missing" },
	{ "{\"v\":1,\"op\":\"exec\"," FDS4 "}", 4, -EINVAL, "argv: missing" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[]," FDS4 "}", 4, -EINVAL, "argv: must not be empty" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[1]," FDS4 "}", 4, -EINVAL, "argv[0]: expected a string" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"]}", 0, -EINVAL, "fds: expected an object" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"]," FDS4 "}", 3, -EINVAL, "fds.cwd: descriptor 3 was not passed" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"fds\":{\"stdin\":0,\"stdout\":1,\"stderr\":2}}", 4, -EINVAL,
	  "fds.cwd: missing" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"fds\":{\"stdin\":0,\"stdout\":1,\"stderr\":2,\"cwd\":3,\"tty\":4}}", 5,
	  -EINVAL, "fds.tty: unknown key" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"fds\":{\"stdin\":-1,\"stdout\":1,\"stderr\":2,\"cwd\":3}}", 4,
	  -EINVAL, "fds.stdin: expected a whole number" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"user\":\"root\"," FDS4 "}", 4, -EINVAL, "user: unknown key" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"uid\":0," FDS4 "}", 4, -EINVAL, "uid: unknown key" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"argv\":[\"b\"]," FDS4 "}", 4, -EINVAL, "argv: duplicate key" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"timeout_ms\":1.5," FDS4 "}", 4, -EINVAL, "timeout_ms: expected" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"timeout_ms\":-1," FDS4 "}", 4, -EINVAL, "timeout_ms: expected" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"strict\":1," FDS4 "}", 4, -EINVAL, "strict: expected true" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"log_format\":\"xml\"," FDS4 "}", 4, -EINVAL, "log_format" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"policy\":\"p.json\"," FDS4 "}", 4, -EINVAL,
	  "policy: expected an object" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"policy\":{\"name\":\"p\"}," FDS4 "}", 4, -EINVAL,
	  "policy.content" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"policy\":{\"path\":\"/etc/shadow\",\"content\":\"{}\"}," FDS4 "}", 4,
	  -EINVAL, "policy.path: unknown key" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"pass\":[{\"fd\":4,\"as\":1}]," FDS4 "}", 5, -EINVAL, "pass[0].as" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"pass\":[{\"fd\":9,\"as\":5}]," FDS4 "}", 5, -EINVAL,
	  "pass[0].fd: descriptor 9 was not passed" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"pass\":[{\"fd\":4,\"as\":5},{\"fd\":4,\"as\":5}]," FDS4 "}", 5,
	  -EINVAL, "pass[1].as: 5 given twice" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"]," FDS4 "}", WIRE_MAX_FDS + 1, -E2BIG, "descriptors" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"control_fd_number\":3," FDS4 "}", 4, -EINVAL,
	  "control_fd_number: given without fds.control" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"control_fd_number\":2,"
	  "\"fds\":{\"stdin\":0,\"stdout\":1,\"stderr\":2,\"cwd\":3,\"control\":4}}", 5, -EINVAL,
	  "control_fd_number: expected a whole number from 3" },
	/* Found by the fuzzer: a number past long long's range was converted before the range check. */
	{ "{\"v\":1.55556e+88,\"op\":\"ps\"}", 0, -EINVAL, "v: expected a whole number" },
	{ "{\"v\":1,\"op\":\"exec\",\"argv\":[\"a\"],\"timeout_ms\":-1e300," FDS4 "}", 4, -EINVAL, "timeout_ms" },
};

static void test_bad_requests(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wire_request req;
		struct errmsg em;
		int err = decode(bad[i].json, bad[i].n_fds, &req, &em);

		if (err != bad[i].err || !strstr(em.text, bad[i].says))
			fail_msg("row %zu (%s): got %d \"%s\", want %d \"%s\"", i, bad[i].json, err, em.text, bad[i].err,
				 bad[i].says);
		wire_request_free(&req);
	}
}

static void test_oversized(void **state)
{
	size_t n = WIRE_MAX_ARGS + 1, len = 64 + n * 4;
	char *json = malloc(len + 128), *p = json;
	struct wire_request req;
	struct errmsg em;

	p += sprintf(p, "{\"v\":1,\"op\":\"exec\",\"argv\":[");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s\"a\"", i ? "," : "");
	sprintf(p, "]," FDS4 "}");
	assert_int_equal(decode(json, 4, &req, &em), -E2BIG);
	assert_non_null(strstr(em.text, "argv: more than"));
	wire_request_free(&req);
	free(json);
}

static void test_ps_stop(void **state)
{
	struct wire_request req = { .op = WIRE_OP_STOP }, out;
	struct errmsg em;
	char *body;

	snprintf(req.sandbox_id, sizeof(req.sandbox_id), "bb-0123456789ab");
	body = wire_request_encode(&req);
	assert_int_equal(decode(body, 0, &out, &em), 0);
	assert_int_equal(out.op, WIRE_OP_STOP);
	assert_string_equal(out.sandbox_id, "bb-0123456789ab");
	wire_request_free(&out);
	free(body);
	req = (struct wire_request){ .op = WIRE_OP_PS, .ps_json = true };
	body = wire_request_encode(&req);
	assert_int_equal(decode(body, 0, &out, &em), 0);
	assert_int_equal(out.op, WIRE_OP_PS);
	assert_true(out.ps_json);
	wire_request_free(&out);
	free(body);
}

static void test_messages(void **state)
{
	struct wire_msg m;
	struct errmsg em;
	char *body = wire_msg_encode(WIRE_MSG_ERROR, 125, "no");

	assert_int_equal(wire_msg_decode(body, strlen(body), &m, &em), 0);
	assert_int_equal(m.type, WIRE_MSG_ERROR);
	assert_int_equal(m.status, 125);
	assert_string_equal(m.message, "no");
	wire_msg_free(&m);
	free(body);
	body = wire_msg_encode(WIRE_MSG_SIGNAL, 15, NULL);
	assert_int_equal(wire_msg_decode(body, strlen(body), &m, &em), 0);
	assert_int_equal(m.signal, 15);
	wire_msg_free(&m);
	free(body);
	assert_int_equal(wire_msg_decode("{\"type\":\"exit\"}", 15, &m, &em), -EINVAL);
	assert_int_equal(wire_msg_decode("{\"type\":\"signal\",\"signal\":99}", 29, &m, &em), -EINVAL);
	assert_int_equal(wire_msg_decode("{\"type\":\"exit\",\"status\":300}", 28, &m, &em), -EINVAL);
	assert_int_equal(wire_msg_decode("{\"type\":\"reboot\"}", 17, &m, &em), -EINVAL);
}

static void test_header(void **state)
{
	uint8_t h[WIRE_HEADER_LEN];
	uint32_t len;

	wire_header_make(h, 1234);
	assert_int_equal(wire_header_parse(h, 2000, &len), 0);
	assert_int_equal(len, 1234);
	assert_int_equal(wire_header_parse(h, 1000, &len), -EMSGSIZE);
	memcpy(h, "GET ", 4);
	assert_int_equal(wire_header_parse(h, 2000, &len), -EPROTO);
}

/* Frames and descriptors over a real socket pair, one byte at a time and all at once. */
static void test_socket_frames(void **state)
{
	struct wire_reader rd;
	int sv[2], fds[WIRE_MAX_FDS], pass[2], got;
	uint32_t len;
	size_t n_fds;
	char *body;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(pass), 0);
	assert_int_equal(wire_send(sv[0], "{\"type\":\"cont\"}", pass, 2), 0);
	wire_reader_init(&rd, WIRE_MAX_CONTROL);
	assert_int_equal(wire_reader_read(&rd, sv[1]), 1);
	body = wire_reader_take(&rd, &len, fds, &n_fds);
	assert_string_equal(body, "{\"type\":\"cont\"}");
	assert_int_equal(n_fds, 2);
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_int_equal(read(pass[0], &got, 1), 1);
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	free(body);
	/* Nothing more yet: 0, not an error. */
	assert_int_equal(wire_reader_read(&rd, sv[1]), 0);
	/* A frame longer than the reader takes is refused at its header. */
	{
		uint8_t h[WIRE_HEADER_LEN];

		wire_header_make(h, WIRE_MAX_CONTROL + 1);
		assert_int_equal(write(sv[0], h, sizeof(h)), (ssize_t)sizeof(h));
		assert_int_equal(wire_reader_read(&rd, sv[1]), -EMSGSIZE);
	}
	wire_reader_release(&rd);
	close(sv[0]);
	assert_int_equal(wire_reader_read(&rd, sv[1]), -EPIPE);
	close(sv[1]);
	close(pass[0]);
	close(pass[1]);
}

/* A peer that closes mid-frame is a protocol error, not a clean end. */
static void test_truncated(void **state)
{
	struct wire_reader rd;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[0], "BBX1\0\0\0\x20{\"v\"", 12), 12);
	close(sv[0]);
	wire_reader_init(&rd, WIRE_MAX_REQUEST);
	assert_int_equal(wire_reader_read(&rd, sv[1]), -EPROTO);
	wire_reader_release(&rd);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_minimal), cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_requests), cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_ps_stop),	     cmocka_unit_test(test_messages),
		cmocka_unit_test(test_header),	     cmocka_unit_test(test_socket_frames),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
