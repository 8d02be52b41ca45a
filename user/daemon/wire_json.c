// SPDX-License-Identifier: MIT
/* The daemon's wire protocol: the JSON inside the frames, strict decoders and their encoders. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json_keys.h"
#include "log/log_level.h"
#include "wire.h"

/* Every key of obj must be one of keys[], once. */
static int check_keys(const cJSON *obj, const char *where, const char *const *keys, struct errmsg *em)
{
	bool repeated;
	const cJSON *m = json_keys_check(obj, keys, &repeated);

	if (!m)
		return 0;
	return errmsg_set(em, -EINVAL, "%s%s: %s", where, m->string ? m->string : "?",
			  repeated ? "duplicate key" : "unknown key");
}

static int get_bool(const cJSON *obj, const char *key, bool *out, struct errmsg *em)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v)
		return 0;
	if (!cJSON_IsBool(v))
		return errmsg_set(em, -EINVAL, "%s: expected true or false", key);
	*out = cJSON_IsTrue(v);
	return 0;
}

/* An integer in [lo, hi]; absent keeps *out. */
static int get_int(const cJSON *obj, const char *where, const char *key, long long lo, long long hi, long long *out,
		   struct errmsg *em)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v)
		return 0;
	/* The range first: converting a double outside long long's range is undefined (and NaN fails both). */
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= (double)lo && v->valuedouble <= (double)hi) ||
	    v->valuedouble != (double)(long long)v->valuedouble)
		return errmsg_set(em, -EINVAL, "%s%s: expected a whole number from %lld to %lld", where, key, lo, hi);
	*out = (long long)v->valuedouble;
	return 0;
}

static int get_string(const cJSON *obj, const char *key, size_t max, char **out, struct errmsg *em)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v)
		return 0;
	if (!cJSON_IsString(v) || !v->valuestring)
		return errmsg_set(em, -EINVAL, "%s: expected a string", key);
	if (strlen(v->valuestring) > max)
		return errmsg_set(em, -E2BIG, "%s: longer than %zu bytes", key, max);
	*out = v->valuestring;
	return 0;
}

/* A NULL-terminated vector pointing into the document's strings. */
static int get_strv(const cJSON *obj, const char *key, size_t max_n, bool nonempty, char ***out, size_t *n,
		    struct errmsg *em)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key), *it;
	size_t i = 0, count;

	if (!arr) {
		if (nonempty)
			return errmsg_set(em, -EINVAL, "%s: missing", key);
		arr = NULL;
	} else if (!cJSON_IsArray(arr)) {
		return errmsg_set(em, -EINVAL, "%s: expected an array of strings", key);
	}
	count = arr ? (size_t)cJSON_GetArraySize(arr) : 0;
	if (nonempty && !count)
		return errmsg_set(em, -EINVAL, "%s: must not be empty", key);
	if (count > max_n)
		return errmsg_set(em, -E2BIG, "%s: more than %zu entries", key, max_n);
	*out = calloc(count + 1, sizeof(char *));
	if (!*out)
		return errmsg_set(em, -ENOMEM, "%s", key);
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsString(it) || !it->valuestring)
			return errmsg_set(em, -EINVAL, "%s[%zu]: expected a string", key, i);
		if (strlen(it->valuestring) > WIRE_MAX_STRING)
			return errmsg_set(em, -E2BIG, "%s[%zu]: longer than %u bytes", key, i, WIRE_MAX_STRING);
		(*out)[i++] = it->valuestring;
	}
	*n = i;
	return 0;
}

static int get_fd_index(const cJSON *fds, const char *key, size_t n_fds, bool required, int *out,
			struct errmsg *em)
{
	long long v = -1;
	int err = get_int(fds, "fds.", key, 0, WIRE_MAX_FDS - 1, &v, em);

	if (err)
		return err;
	if (v < 0) {
		if (required)
			return errmsg_set(em, -EINVAL, "fds.%s: missing", key);
		*out = -1;
		return 0;
	}
	if ((size_t)v >= n_fds)
		return errmsg_set(em, -EINVAL, "fds.%s: descriptor %lld was not passed (%zu were)", key, v, n_fds);
	*out = (int)v;
	return 0;
}

static int decode_pass(const cJSON *root, size_t n_fds, struct wire_exec *x, struct errmsg *em)
{
	static const char *const keys[] = { "fd", "as", NULL };
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "pass"), *it;
	char where[32];
	int err;

	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr))
		return errmsg_set(em, -EINVAL, "pass: expected an array");
	if (cJSON_GetArraySize(arr) > WIRE_MAX_PASS)
		return errmsg_set(em, -E2BIG, "pass: more than %d descriptors", WIRE_MAX_PASS);
	cJSON_ArrayForEach(it, arr) {
		long long fd = -1, as = -1;

		snprintf(where, sizeof(where), "pass[%zu].", x->n_pass);
		if (!cJSON_IsObject(it))
			return errmsg_set(em, -EINVAL, "%s: expected an object", where);
		err = check_keys(it, where, keys, em);
		if (!err)
			err = get_int(it, where, "fd", 0, WIRE_MAX_FDS - 1, &fd, em);
		/* 0-2 are stdio; the command's other descriptors start at 3. */
		if (!err)
			err = get_int(it, where, "as", 3, 1023, &as, em);
		if (err)
			return err;
		if (fd < 0 || as < 0)
			return errmsg_set(em, -EINVAL, "%s: needs fd and as", where);
		if ((size_t)fd >= n_fds)
			return errmsg_set(em, -EINVAL, "%sfd: descriptor %lld was not passed", where, fd);
		for (size_t i = 0; i < x->n_pass; i++)
			if (x->pass[i].target == (int)as)
				return errmsg_set(em, -EINVAL, "%sas: %lld given twice", where, as);
		x->pass[x->n_pass++] = (struct wire_pass_fd){ (int)fd, (int)as };
	}
	return 0;
}

/* control_fd_number: the caller's own number for fds.control, which srt's messages name. */
static int decode_control_number(const cJSON *root, struct wire_exec *x, struct errmsg *em)
{
	long long n = -1;
	int err = get_int(root, "", "control_fd_number", 3, INT32_MAX, &n, em);

	if (err)
		return err;
	if (n >= 0 && x->fd_control < 0)
		return errmsg_set(em, -EINVAL, "control_fd_number: given without fds.control");
	x->control_fd_number = (int)n;
	return 0;
}

static int decode_exec(const cJSON *root, size_t n_fds, struct wire_exec *x, struct errmsg *em)
{
	static const char *const fd_keys[] = { "stdin", "stdout", "stderr", "cwd", "log", "control", NULL };
	static const char *const pol_keys[] = { "name", "content", NULL };
	const cJSON *fds = cJSON_GetObjectItemCaseSensitive(root, "fds");
	const cJSON *pol = cJSON_GetObjectItemCaseSensitive(root, "policy");
	char *fmt = NULL, *lvl = NULL;
	int err;

	x->kill_after_ms = -1;
	x->log_format = -1;
	x->log_level = -1;
	err = get_strv(root, "argv", WIRE_MAX_ARGS, true, &x->argv, &x->argc, em);
	if (!err)
		err = get_strv(root, "env", WIRE_MAX_ENV, false, &x->env, &x->n_env, em);
	if (!err)
		err = get_string(root, "cwd", WIRE_MAX_STRING, &x->cwd, em);
	if (!err)
		err = get_bool(root, "strict", &x->strict, em);
	if (!err)
		err = get_bool(root, "audit", &x->audit, em);
	if (!err)
		err = get_bool(root, "tty", &x->tty, em);
	/* A week at most: anything longer is a mistake, not a timeout. */
	if (!err)
		err = get_int(root, "", "timeout_ms", 0, 7LL * 24 * 3600 * 1000, &x->timeout_ms, em);
	if (!err)
		err = get_int(root, "", "kill_after_ms", 0, 3600LL * 1000, &x->kill_after_ms, em);
	if (!err)
		err = get_string(root, "log_format", 16, &fmt, em);
	if (!err)
		err = get_string(root, "log_level", 16, &lvl, em);
	if (err)
		return err;
	if (fmt) {
		enum log_format f;

		if (log_format_parse(fmt, &f))
			return errmsg_set(em, -EINVAL, "log_format: expected auto, json or text");
		x->log_format = (int)f;
	}
	if (lvl) {
		enum log_level l;

		if (log_level_parse(lvl, &l))
			return errmsg_set(em, -EINVAL, "log_level: expected debug, info, warn or error");
		x->log_level = (int)l;
	}
	if (pol) {
		const cJSON *content;

		if (!cJSON_IsObject(pol))
			return errmsg_set(em, -EINVAL, "policy: expected an object");
		err = check_keys(pol, "policy.", pol_keys, em);
		if (!err)
			err = get_string(pol, "name", 4096, &x->policy_name, em);
		if (err)
			return err;
		content = cJSON_GetObjectItemCaseSensitive(pol, "content");
		if (!cJSON_IsString(content) || !content->valuestring)
			return errmsg_set(em, -EINVAL, "policy.content: expected the policy file's text");
		x->policy_len = strlen(content->valuestring);
		if (x->policy_len > WIRE_MAX_POLICY)
			return errmsg_set(em, -E2BIG, "policy.content: longer than %u bytes", WIRE_MAX_POLICY);
		x->policy_json = content->valuestring;
		x->has_policy = true;
	}
	if (!cJSON_IsObject(fds))
		return errmsg_set(em, -EINVAL, "fds: expected an object naming stdin, stdout, stderr and cwd");
	err = check_keys(fds, "fds.", fd_keys, em);
	if (!err)
		err = get_fd_index(fds, "stdin", n_fds, true, &x->fd_stdin, em);
	if (!err)
		err = get_fd_index(fds, "stdout", n_fds, true, &x->fd_stdout, em);
	if (!err)
		err = get_fd_index(fds, "stderr", n_fds, true, &x->fd_stderr, em);
	if (!err)
		err = get_fd_index(fds, "cwd", n_fds, true, &x->fd_cwd, em);
	if (!err)
		err = get_fd_index(fds, "log", n_fds, false, &x->fd_log, em);
	if (!err)
		err = get_fd_index(fds, "control", n_fds, false, &x->fd_control, em);
	if (!err)
		err = decode_control_number(root, x, em);
	if (!err)
		err = decode_pass(root, n_fds, x, em);
	return err;
}

/* op stop and update: the sandbox's id. */
static int decode_id(const cJSON *root, struct wire_request *req, struct errmsg *em)
{
	char *id = NULL;
	int err = get_string(root, "id", sizeof(req->sandbox_id) - 1, &id, em);

	if (err)
		return err;
	if (!id || !*id)
		return errmsg_set(em, -EINVAL, "id: missing");
	snprintf(req->sandbox_id, sizeof(req->sandbox_id), "%s", id);
	return 0;
}

static int check_names(char **names, size_t n, const char *key, struct errmsg *em)
{
	for (size_t i = 0; i < n; i++)
		if (!*names[i] || strlen(names[i]) > WIRE_MAX_NAME)
			return errmsg_set(em, -EINVAL, "%s[%zu]: expected a name of 1 to %d bytes", key, i,
					  WIRE_MAX_NAME);
	return 0;
}

/* op update: a whole settings document, or names to allow and deny; never both, never neither. */
static int decode_update(const cJSON *root, struct wire_request *req, struct errmsg *em)
{
	static const char *const keys[] = { "v", "op", "id", "policy", "allow", "deny", NULL };
	int err = check_keys(root, "", keys, em);

	if (!err)
		err = decode_id(root, req, em);
	if (!err)
		err = get_string(root, "policy", WIRE_MAX_POLICY, &req->update_policy, em);
	if (!err)
		err = get_strv(root, "allow", WIRE_MAX_UPDATE_NAMES, false, &req->update_allow, &req->n_update_allow, em);
	if (!err)
		err = get_strv(root, "deny", WIRE_MAX_UPDATE_NAMES, false, &req->update_deny, &req->n_update_deny, em);
	if (!err)
		err = check_names(req->update_allow, req->n_update_allow, "allow", em);
	if (!err)
		err = check_names(req->update_deny, req->n_update_deny, "deny", em);
	if (err)
		return err;
	if (req->update_policy)
		req->update_policy_len = strlen(req->update_policy);
	if (req->update_policy && (req->n_update_allow || req->n_update_deny))
		return errmsg_set(em, -EINVAL, "policy: a whole document, or names to allow and deny, not both");
	if (!req->update_policy && !req->n_update_allow && !req->n_update_deny)
		return errmsg_set(em, -EINVAL, "policy: missing (or allow / deny)");
	return 0;
}

int wire_request_decode(const char *json, size_t len, size_t n_fds, struct wire_request *req, struct errmsg *em)
{
	static const char *const exec_keys[] = { "v", "op", "argv", "env", "policy", "cwd", "strict", "audit",
						 "tty", "timeout_ms", "kill_after_ms", "log_format", "log_level",
						 "fds", "pass", "control_fd_number", NULL };
	static const char *const ps_keys[] = { "v", "op", "json", NULL };
	static const char *const stop_keys[] = { "v", "op", "id", NULL };
	cJSON *root;
	char *op = NULL;
	long long v = 0;
	int err;

	memset(req, 0, sizeof(*req));
	req->exec.fd_log = -1;
	req->exec.fd_control = -1;
	req->exec.control_fd_number = -1;
	if (n_fds > WIRE_MAX_FDS)
		return errmsg_set(em, -E2BIG, "more than %d descriptors", WIRE_MAX_FDS);
	root = cJSON_ParseWithLength(json, len);
	if (!root)
		return errmsg_set(em, -EINVAL, "not a JSON document");
	req->storage = root;
	if (!cJSON_IsObject(root))
		return errmsg_set(em, -EINVAL, "expected a JSON object");
	err = get_int(root, "", "v", 1, 1, &v, em);
	if (!err && v != 1)
		err = errmsg_set(em, -EINVAL, "v: missing (this daemon speaks version 1)");
	if (!err)
		err = get_string(root, "op", 16, &op, em);
	if (err)
		return err;
	if (!op)
		return errmsg_set(em, -EINVAL, "op: missing");
	if (!strcmp(op, "exec")) {
		req->op = WIRE_OP_EXEC;
		err = check_keys(root, "", exec_keys, em);
		return err ? err : decode_exec(root, n_fds, &req->exec, em);
	}
	if (n_fds)
		return errmsg_set(em, -EINVAL, "op %s: takes no descriptors", op);
	if (!strcmp(op, "ps")) {
		req->op = WIRE_OP_PS;
		err = check_keys(root, "", ps_keys, em);
		return err ? err : get_bool(root, "json", &req->ps_json, em);
	}
	if (!strcmp(op, "stop")) {
		req->op = WIRE_OP_STOP;
		err = check_keys(root, "", stop_keys, em);
		return err ? err : decode_id(root, req, em);
	}
	if (!strcmp(op, "update")) {
		req->op = WIRE_OP_UPDATE;
		return decode_update(root, req, em);
	}
	return errmsg_set(em, -EINVAL, "op: unknown operation '%s' (exec, ps, stop or update)", op);
}

void wire_request_free(struct wire_request *req)
{
	free(req->exec.argv);
	free(req->exec.env);
	free(req->update_allow);
	free(req->update_deny);
	cJSON_Delete(req->storage);
	memset(req, 0, sizeof(*req));
}

static cJSON *strv_json(char *const *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < n; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(v[i]))) {
			cJSON_Delete(arr);
			return NULL;
		}
	return arr;
}

static const char *const format_names[] = { "auto", "json", "text" };

char *wire_request_encode(const struct wire_request *req)
{
	const struct wire_exec *x = &req->exec;
	cJSON *root = cJSON_CreateObject(), *fds, *pol, *pass;
	char *out = NULL;
	bool ok = root != NULL;

	ok = ok && cJSON_AddNumberToObject(root, "v", 1);
	if (req->op == WIRE_OP_PS) {
		ok = ok && cJSON_AddStringToObject(root, "op", "ps") && cJSON_AddBoolToObject(root, "json", req->ps_json);
		goto done;
	}
	if (req->op == WIRE_OP_STOP) {
		ok = ok && cJSON_AddStringToObject(root, "op", "stop") && cJSON_AddStringToObject(root, "id", req->sandbox_id);
		goto done;
	}
	if (req->op == WIRE_OP_UPDATE) {
		ok = ok && cJSON_AddStringToObject(root, "op", "update") &&
		     cJSON_AddStringToObject(root, "id", req->sandbox_id);
		if (ok && req->update_policy)
			ok = cJSON_AddStringToObject(root, "policy", req->update_policy) != NULL;
		if (ok && req->n_update_allow)
			ok = cJSON_AddItemToObject(root, "allow", strv_json(req->update_allow, req->n_update_allow));
		if (ok && req->n_update_deny)
			ok = cJSON_AddItemToObject(root, "deny", strv_json(req->update_deny, req->n_update_deny));
		goto done;
	}
	ok = ok && cJSON_AddStringToObject(root, "op", "exec");
	ok = ok && cJSON_AddItemToObject(root, "argv", strv_json(x->argv, x->argc));
	ok = ok && cJSON_AddItemToObject(root, "env", strv_json(x->env, x->n_env));
	if (ok && x->has_policy) {
		pol = cJSON_AddObjectToObject(root, "policy");
		ok = pol && (!x->policy_name || cJSON_AddStringToObject(pol, "name", x->policy_name)) &&
		     cJSON_AddStringToObject(pol, "content", x->policy_json);
	}
	if (ok && x->cwd)
		ok = cJSON_AddStringToObject(root, "cwd", x->cwd) != NULL;
	ok = ok && cJSON_AddBoolToObject(root, "strict", x->strict) && cJSON_AddBoolToObject(root, "audit", x->audit) &&
	     cJSON_AddBoolToObject(root, "tty", x->tty);
	if (ok && x->timeout_ms)
		ok = cJSON_AddNumberToObject(root, "timeout_ms", (double)x->timeout_ms) != NULL;
	if (ok && x->kill_after_ms >= 0)
		ok = cJSON_AddNumberToObject(root, "kill_after_ms", (double)x->kill_after_ms) != NULL;
	if (ok && x->log_format >= 0 && x->log_format < 3)
		ok = cJSON_AddStringToObject(root, "log_format", format_names[x->log_format]) != NULL;
	if (ok && x->log_level >= 0 && x->log_level < LOG_LEVELS)
		ok = cJSON_AddStringToObject(root, "log_level", log_level_name((enum log_level)x->log_level)) != NULL;
	fds = ok ? cJSON_AddObjectToObject(root, "fds") : NULL;
	ok = fds && cJSON_AddNumberToObject(fds, "stdin", x->fd_stdin) && cJSON_AddNumberToObject(fds, "stdout", x->fd_stdout) &&
	     cJSON_AddNumberToObject(fds, "stderr", x->fd_stderr) && cJSON_AddNumberToObject(fds, "cwd", x->fd_cwd);
	if (ok && x->fd_log >= 0)
		ok = cJSON_AddNumberToObject(fds, "log", x->fd_log) != NULL;
	if (ok && x->fd_control >= 0)
		ok = cJSON_AddNumberToObject(fds, "control", x->fd_control) != NULL;
	if (ok && x->fd_control >= 0 && x->control_fd_number >= 3)
		ok = cJSON_AddNumberToObject(root, "control_fd_number", x->control_fd_number) != NULL;
	if (ok && x->n_pass) {
		pass = cJSON_AddArrayToObject(root, "pass");
		for (size_t i = 0; pass && ok && i < x->n_pass; i++) {
			cJSON *p = cJSON_CreateObject();

			ok = p && cJSON_AddNumberToObject(p, "fd", x->pass[i].index) &&
			     cJSON_AddNumberToObject(p, "as", x->pass[i].target) && cJSON_AddItemToArray(pass, p);
		}
		ok = ok && pass;
	}
done:
	if (ok)
		out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return out;
}

static const struct {
	const char *name;
	enum wire_msg_type type;
} msg_types[] = {
	{ "exit", WIRE_MSG_EXIT },	 { "error", WIRE_MSG_ERROR },   { "text", WIRE_MSG_TEXT },
	{ "signal", WIRE_MSG_SIGNAL }, { "cont", WIRE_MSG_CONT },
};

int wire_msg_decode(const char *json, size_t len, struct wire_msg *msg, struct errmsg *em)
{
	static const char *const keys[] = { "type", "status", "signal", "message", NULL };
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *type;
	char *text = NULL;
	long long status = -1, sig = 0;
	int err = 0;

	memset(msg, 0, sizeof(*msg));
	if (!root)
		return errmsg_set(em, -EINVAL, "not a JSON document");
	if (!cJSON_IsObject(root)) {
		err = errmsg_set(em, -EINVAL, "expected a JSON object");
		goto cleanup;
	}
	err = check_keys(root, "", keys, em);
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	if (!err && !cJSON_IsString(type))
		err = errmsg_set(em, -EINVAL, "type: missing");
	for (size_t i = 0; !err && !msg->type && i < sizeof(msg_types) / sizeof(msg_types[0]); i++)
		if (!strcmp(type->valuestring, msg_types[i].name))
			msg->type = msg_types[i].type;
	if (!err && !msg->type)
		err = errmsg_set(em, -EINVAL, "type: unknown message '%s'", type->valuestring);
	if (!err)
		err = get_int(root, "", "status", 0, 255, &status, em);
	if (!err)
		err = get_int(root, "", "signal", 1, 64, &sig, em);
	if (!err)
		err = get_string(root, "message", WIRE_MAX_CONTROL, &text, em);
	if (err)
		goto cleanup;
	if ((msg->type == WIRE_MSG_EXIT || msg->type == WIRE_MSG_ERROR) && status < 0) {
		err = errmsg_set(em, -EINVAL, "status: missing");
		goto cleanup;
	}
	if (msg->type == WIRE_MSG_SIGNAL && !sig) {
		err = errmsg_set(em, -EINVAL, "signal: missing");
		goto cleanup;
	}
	msg->status = (int)status;
	msg->signal = (int)sig;
	if (text) {
		msg->message = strdup(text);
		if (!msg->message)
			err = errmsg_set(em, -ENOMEM, "message");
	}
cleanup:
	cJSON_Delete(root);
	return err;
}

void wire_msg_free(struct wire_msg *msg)
{
	free(msg->message);
	memset(msg, 0, sizeof(*msg));
}

char *wire_msg_encode(enum wire_msg_type type, int status_or_signal, const char *message)
{
	cJSON *root = cJSON_CreateObject();
	const char *name = NULL;
	char *out = NULL;
	bool ok;

	for (size_t i = 0; i < sizeof(msg_types) / sizeof(msg_types[0]); i++)
		if (msg_types[i].type == type)
			name = msg_types[i].name;
	ok = root && name && cJSON_AddStringToObject(root, "type", name);
	if (ok && (type == WIRE_MSG_EXIT || type == WIRE_MSG_ERROR))
		ok = cJSON_AddNumberToObject(root, "status", status_or_signal) != NULL;
	if (ok && type == WIRE_MSG_SIGNAL)
		ok = cJSON_AddNumberToObject(root, "signal", status_or_signal) != NULL;
	if (ok && message) {
		/* A message never outgrows a control frame: cut it rather than fail the answer. */
		char cut[WIRE_MAX_CONTROL - 256];

		snprintf(cut, sizeof(cut), "%s", message);
		ok = cJSON_AddStringToObject(root, "message", cut) != NULL;
	}
	if (ok)
		out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return out;
}
