/* SPDX-License-Identifier: MIT */
/*
 * The daemon's wire protocol, spoken over its Unix stream socket.
 *
 * Every message is a frame: the magic "BBX1", a 32-bit big-endian length,
 * then that many bytes of JSON (one object). A client sends one request
 * frame (op "exec", "ps" or "stop"), with the descriptors it passes
 * (SCM_RIGHTS) attached to the frame's first byte; the daemon answers with
 * frames ("exit", "error", "text"); during an exec the client may
 * send control frames ("signal", "cont"). Identity is never part of a
 * request: the daemon takes it from SO_PEERCRED. Descriptors are named by
 * their index in the received set.
 *
 * The decoders are strict (unknown keys, wrong types, out-of-range numbers,
 * oversized strings and arrays are errors naming the field) and pure, for
 * the unit tests and the fuzz target.
 *
 * wire.c holds the frames and descriptor passing, wire_json.c the JSON
 * bodies (the decoders and encoders).
 */
#ifndef BPFBOX_DAEMON_WIRE_H
#define BPFBOX_DAEMON_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/errmsg.h"

#define WIRE_MAGIC "BBX1"
#define WIRE_HEADER_LEN 8
#define WIRE_MAX_REQUEST (4u << 20) /* a request: argv, environment and a policy */
#define WIRE_MAX_CONTROL 4096u /* any later frame, either way */
#define WIRE_MAX_FDS 24 /* stdio, cwd, log, 16 --pass-fd, and slack */
#define WIRE_MAX_ARGS 4096
#define WIRE_MAX_ENV 8192
#define WIRE_MAX_STRING (128u << 10)
#define WIRE_MAX_POLICY (1u << 20)
#define WIRE_MAX_PASS 16

enum wire_op {
	WIRE_OP_EXEC = 1,
	WIRE_OP_PS,
	WIRE_OP_STOP,
	WIRE_OP_UPDATE,
};

#define WIRE_MAX_UPDATE_NAMES 64 /* update: names to allow or deny in one request */
#define WIRE_MAX_NAME 253

struct wire_pass_fd {
	int index; /* in the received descriptors */
	int target; /* the number the command sees it as (--pass-fd N) */
};

/* What a client asks a sandbox for. Strings point into the request's own storage. */
struct wire_exec {
	char **argv; /* NULL-terminated, argc >= 1 */
	size_t argc;
	char **env; /* NULL-terminated: the caller's environment, the command's base */
	size_t n_env;
	bool has_policy; /* false: the administrator's policy as it is */
	char *policy_name; /* the caller's file name, for messages only; never opened */
	char *policy_json;
	size_t policy_len;
	char *cwd; /* the caller's working directory as it named it (informational; fd_cwd is what counts) */
	bool strict, audit, tty;
	long long timeout_ms; /* 0 = none */
	long long kill_after_ms; /* -1 = default */
	int log_format; /* -1 = default, else enum log_format */
	int log_level; /* -1 = default, else enum log_level */
	int fd_stdin, fd_stdout, fd_stderr, fd_cwd; /* indexes, all required */
	int fd_log; /* index of the caller's --log-file, or -1 */
	int fd_control; /* index of the caller's --control-fd descriptor, or -1 */
	int control_fd_number; /* that descriptor's number in the caller, for messages (-1: none) */
	struct wire_pass_fd pass[WIRE_MAX_PASS];
	size_t n_pass;
};

struct wire_request {
	enum wire_op op;
	struct wire_exec exec;
	char sandbox_id[64]; /* op stop, update */
	/* op update: a whole settings document, or names to allow and deny (pointing into storage) */
	char *update_policy;
	size_t update_policy_len;
	char **update_allow;
	size_t n_update_allow;
	char **update_deny;
	size_t n_update_deny;
	bool ps_json; /* op ps: JSON rather than a table */
	void *storage; /* owned: the parsed document */
};

enum wire_msg_type {
	WIRE_MSG_EXIT = 1, /* status: the run's exit status */
	WIRE_MSG_ERROR, /* status, message: the request was refused or failed */
	WIRE_MSG_TEXT, /* message: output for the client's stdout (ps, stop) */
	WIRE_MSG_SIGNAL, /* client -> worker: signal */
	WIRE_MSG_CONT, /* client -> worker: resume a stopped command */
};

struct wire_msg {
	enum wire_msg_type type;
	int status;
	int signal;
	char *message; /* owned */
};

/*
 * Checks a frame header. Returns 0 and *len, -EPROTO for a bad magic,
 * -EMSGSIZE when the length exceeds max.
 */
int wire_header_parse(const uint8_t hdr[WIRE_HEADER_LEN], uint32_t max, uint32_t *len);
void wire_header_make(uint8_t hdr[WIRE_HEADER_LEN], uint32_t len);

/*
 * Decodes a request body that arrived with n_fds descriptors. Returns 0, or
 * -EINVAL/-E2BIG/-ENOMEM with em naming the field. req is always safe to
 * wire_request_free.
 */
int wire_request_decode(const char *json, size_t len, size_t n_fds, struct wire_request *req, struct errmsg *em);
void wire_request_free(struct wire_request *req);
/* The JSON body of a request (malloc'd), NULL when out of memory. */
char *wire_request_encode(const struct wire_request *req);

int wire_msg_decode(const char *json, size_t len, struct wire_msg *msg, struct errmsg *em);
void wire_msg_free(struct wire_msg *msg);
/* The JSON body of a message (malloc'd); message may be NULL. */
char *wire_msg_encode(enum wire_msg_type type, int status_or_signal, const char *message);

/*
 * Reading frames with their descriptors, blocking or not. A reader holds one
 * frame at a time; after wire_reader_take the next frame may be read.
 */
struct wire_reader {
	uint32_t max; /* largest body accepted */
	uint8_t hdr[WIRE_HEADER_LEN];
	size_t have; /* header bytes, then header + body bytes */
	uint32_t len;
	char *body;
	size_t cap; /* allocated for the body so far */
	int fds[WIRE_MAX_FDS];
	size_t n_fds;
	bool too_many_fds; /* descriptors were cut or exceeded WIRE_MAX_FDS: the frame is refused */
};

void wire_reader_init(struct wire_reader *r, uint32_t max);
/*
 * Reads what the socket has without blocking (callers poll). Returns 1 when
 * a whole frame is there, 0 when more is needed, -EPIPE when the peer
 * closed before a frame began, -EPROTO/-EMSGSIZE/-E2BIG (too many
 * descriptors) for a bad frame, -errno for a socket error.
 */
int wire_reader_read(struct wire_reader *r, int sock);
/* The same, reading at most max bytes in this call (0 when they were read and more is needed). */
int wire_reader_read_max(struct wire_reader *r, int sock, size_t max);
/* Hands over the body (NUL-terminated; caller frees) and its descriptors; the reader is reset. */
char *wire_reader_take(struct wire_reader *r, uint32_t *len, int *fds, size_t *n_fds);
/* Closes held descriptors and frees the body. */
void wire_reader_release(struct wire_reader *r);

/* Sends one frame, descriptors attached to its first byte; loops on partial writes. */
int wire_send(int sock, const char *body, const int *fds, size_t n_fds);
int wire_send_msg(int sock, enum wire_msg_type type, int status_or_signal, const char *message);

#endif
