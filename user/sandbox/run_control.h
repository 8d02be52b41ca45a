/* SPDX-License-Identifier: MIT */
/*
 * A running sandbox's control socket (issue 32): root's way to change its
 * policy while it runs (`bpfbox update`, the daemon relaying a caller's
 * update, the daemon's ceiling reload). One Unix socket per sandbox under a
 * directory only root can enter; the supervisor answers peers whose
 * SO_PEERCRED uid is 0 and nobody else. One request a connection: the client
 * writes a JSON object and shuts its side, the supervisor answers with one
 * JSON object and closes.
 */
#ifndef BPFBOX_RUN_CONTROL_H
#define BPFBOX_RUN_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/errmsg.h"

#define RUN_CONTROL_DIR "/run/bpfbox/control"
#define RUN_CONTROL_MAX (4u << 20) /* a request or an answer on the socket */
#define RUN_CONTROL_POLICY_MAX (1u << 20) /* a settings document, as on the daemon's wire */
#define RUN_CONTROL_NAMES_MAX 64 /* --allow-domain / --deny-domain names in one request */
#define RUN_CONTROL_NAME_MAX 253
#define RUN_CONTROL_READ_MS 5000 /* the supervisor's bound on reading a request */
#define RUN_CONTROL_ANSWER_MS 30000 /* the client's bound on the answer (resolution takes up to 10 s) */
/*
 * The bound on a preview's or a status's answer: both come from what the supervisor holds, and
 * the administrator's apply and root's ps ask every sandbox in turn, so a sandbox slow to answer
 * (its user's paths on a hung mount) delays them by this at most, not by the update's bound.
 */
#define RUN_CONTROL_QUICK_ANSWER_MS 5000

enum run_control_op {
	RUN_CONTROL_UPDATE = 1, /* the caller's settings replaced, or domains allowed / denied */
	RUN_CONTROL_CEILING, /* the administrator's policy changed: narrow to it, or stop */
	RUN_CONTROL_PREVIEW, /* what a new administrator's policy would change, nothing changed */
	RUN_CONTROL_STATUS, /* generation, digests and refusals so far, for ps */
};

struct run_control_request {
	enum run_control_op op;
	bool for_caller; /* relayed by the daemon for for_uid: only a sandbox of that caller's may take it */
	uint32_t for_uid;
	const char *policy; /* update: a whole settings document (NUL-terminated, policy_len bytes) */
	size_t policy_len;
	const char **allow; /* update: names to allow, to deny */
	size_t n_allow;
	const char **deny;
	size_t n_deny;
	const char *ceiling; /* ceiling, preview: the administrator's policy text */
	size_t ceiling_len;
	void *storage; /* what the strings point into */
};

/*
 * Strict decoder: every key known and single, the op's fields and only
 * them, the bounds above; 0, or -EINVAL / -E2BIG / -ENOMEM with em naming the
 * field. Free q with run_control_request_free either way.
 */
int run_control_request_decode(const char *json, size_t len, struct run_control_request *q, struct errmsg *em);
void run_control_request_free(struct run_control_request *q);
/* The request as JSON (malloc'd), or NULL. */
char *run_control_request_encode(const struct run_control_request *q);

/* The answer: ok, and the text the client prints (messages, cuts, the summary). */
char *run_control_answer_encode(bool ok, const char *message);
int run_control_answer_decode(const char *json, size_t len, bool *ok, char **message, struct errmsg *em);

/* An id is a registry name (bb- and hex): nothing that could name another path. */
bool run_control_id_valid(const char *id);
/* The socket of sandbox id, listening and non-blocking: its descriptor, or -errno with em. */
int run_control_listen(const char *id, struct errmsg *em);
void run_control_unlink(const char *id);
/*
 * One connection on listen_fd: accepted, its peer checked (uid 0), its
 * request read within RUN_CONTROL_READ_MS. 0 with *conn and *text (free
 * it), -EAGAIN when nobody was there, or -errno with em (the connection
 * answered and closed already when there was one).
 */
int run_control_accept(int listen_fd, int *conn, char **text, size_t *len, struct errmsg *em);
/* Answers and closes conn. */
void run_control_answer(int conn, bool ok, const char *message);
/*
 * The client: q sent to sandbox id's socket, the answer awaited. 0 when the
 * sandbox took it, -EPERM when it refused, -errno when it could not be asked;
 * *message is the answer's text either way when there was one (free it).
 */
int run_control_call(const char *id, const struct run_control_request *q, char **message, struct errmsg *em);

#endif
