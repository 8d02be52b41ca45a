// SPDX-License-Identifier: MIT
/*
 * The daemon's request decoder, on bytes any local user can send: it never
 * crashes, and a request it accepts is exactly what encoding it gives back
 * (so the worker runs what the decoder checked). The first byte is the
 * number of descriptors that came with the frame. Control messages too.
 */
#include <string.h>

#include "daemon/wire.h"
#include "fuzz.h"

static void same_request(const struct wire_request *a, const struct wire_request *b)
{
	FUZZ_CHECK(a->op == b->op);
	FUZZ_CHECK(!strcmp(a->sandbox_id, b->sandbox_id));
	FUZZ_CHECK(a->ps_json == b->ps_json);
	FUZZ_CHECK(a->n_update_allow == b->n_update_allow && a->n_update_deny == b->n_update_deny);
	for (size_t i = 0; i < a->n_update_allow; i++)
		FUZZ_CHECK(!strcmp(a->update_allow[i], b->update_allow[i]));
	for (size_t i = 0; i < a->n_update_deny; i++)
		FUZZ_CHECK(!strcmp(a->update_deny[i], b->update_deny[i]));
	FUZZ_CHECK(!a->update_policy == !b->update_policy &&
		   (!a->update_policy || !strcmp(a->update_policy, b->update_policy)));
	if (a->op != WIRE_OP_EXEC)
		return;
	FUZZ_CHECK(a->exec.argc == b->exec.argc && a->exec.n_env == b->exec.n_env);
	for (size_t i = 0; i < a->exec.argc; i++)
		FUZZ_CHECK(!strcmp(a->exec.argv[i], b->exec.argv[i]));
	for (size_t i = 0; i < a->exec.n_env; i++)
		FUZZ_CHECK(!strcmp(a->exec.env[i], b->exec.env[i]));
	FUZZ_CHECK(a->exec.has_policy == b->exec.has_policy);
	if (a->exec.has_policy)
		FUZZ_CHECK(a->exec.policy_len == b->exec.policy_len &&
			   !memcmp(a->exec.policy_json, b->exec.policy_json, a->exec.policy_len));
	FUZZ_CHECK(a->exec.fd_stdin == b->exec.fd_stdin && a->exec.fd_stdout == b->exec.fd_stdout &&
		   a->exec.fd_stderr == b->exec.fd_stderr && a->exec.fd_cwd == b->exec.fd_cwd &&
		   a->exec.fd_log == b->exec.fd_log && a->exec.fd_control == b->exec.fd_control &&
		   a->exec.control_fd_number == b->exec.control_fd_number);
	FUZZ_CHECK(a->exec.n_pass == b->exec.n_pass);
	for (size_t i = 0; i < a->exec.n_pass; i++)
		FUZZ_CHECK(a->exec.pass[i].index == b->exec.pass[i].index &&
			   a->exec.pass[i].target == b->exec.pass[i].target);
	FUZZ_CHECK(a->exec.strict == b->exec.strict && a->exec.audit == b->exec.audit && a->exec.tty == b->exec.tty);
	FUZZ_CHECK(a->exec.timeout_ms == b->exec.timeout_ms && a->exec.kill_after_ms == b->exec.kill_after_ms);
	FUZZ_CHECK(a->exec.log_format == b->exec.log_format && a->exec.log_level == b->exec.log_level);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_request req, again;
	struct wire_msg msg;
	struct errmsg em;
	size_t n_fds;
	char *body;

	if (!size)
		return 0;
	n_fds = data[0] % (WIRE_MAX_FDS + 2);
	if (!wire_request_decode((const char *)data + 1, size - 1, n_fds, &req, &em)) {
		FUZZ_CHECK(req.op == WIRE_OP_EXEC || req.op == WIRE_OP_PS || req.op == WIRE_OP_STOP);
		if (req.op == WIRE_OP_EXEC) {
			FUZZ_CHECK(req.exec.argc >= 1 && req.exec.argv[req.exec.argc] == NULL);
			FUZZ_CHECK((size_t)req.exec.fd_cwd < n_fds && (size_t)req.exec.fd_stdin < n_fds);
			for (size_t i = 0; i < req.exec.n_pass; i++)
				FUZZ_CHECK((size_t)req.exec.pass[i].index < n_fds && req.exec.pass[i].target >= 3);
		}
		body = wire_request_encode(&req);
		/* A string with a NUL inside is cut by the decoder's view; the rest must round-trip. */
		if (body && !wire_request_decode(body, strlen(body), n_fds, &again, &em)) {
			same_request(&req, &again);
			wire_request_free(&again);
		}
		free(body);
	}
	wire_request_free(&req);
	if (!wire_msg_decode((const char *)data + 1, size - 1, &msg, &em))
		FUZZ_CHECK(msg.type >= WIRE_MSG_EXIT && msg.type <= WIRE_MSG_CONT);
	wire_msg_free(&msg);
	return 0;
}
