// SPDX-License-Identifier: MIT
/* The control socket's requests and answers (run_control.h): strict decoders, encoders. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json_keys.h"
#include "run_control.h"

static int check_object_keys(const cJSON *root, const char *const *keys, struct errmsg *em)
{
	bool repeated = false;
	const cJSON *bad = json_keys_check(root, keys, &repeated);

	if (!bad)
		return 0;
	return errmsg_set(em, -EINVAL, "%s: %s", bad->string, repeated ? "repeated" : "unknown key");
}

/* A string member: NULL when absent; -EINVAL when not a string, -E2BIG over max bytes or with a NUL inside. */
static int get_text(const cJSON *root, const char *key, size_t max, const char **out, size_t *len,
		    struct errmsg *em)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, key);
	size_t n;

	*out = NULL;
	if (!m)
		return 0;
	if (!cJSON_IsString(m) || !m->valuestring)
		return errmsg_set(em, -EINVAL, "%s: expected a string", key);
	n = strlen(m->valuestring);
	if (n > max)
		return errmsg_set(em, -E2BIG, "%s: longer than %zu bytes", key, max);
	*out = m->valuestring;
	if (len)
		*len = n;
	return 0;
}

static int get_names(const cJSON *root, const char *key, const char ***out, size_t *n, struct errmsg *em)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, key), *e;
	size_t i = 0, count;

	if (!m)
		return 0;
	if (!cJSON_IsArray(m))
		return errmsg_set(em, -EINVAL, "%s: expected an array of names", key);
	count = (size_t)cJSON_GetArraySize(m);
	if (count > RUN_CONTROL_NAMES_MAX)
		return errmsg_set(em, -E2BIG, "%s: more than %d names", key, RUN_CONTROL_NAMES_MAX);
	*out = calloc(count + 1, sizeof(**out));
	if (!*out)
		return errmsg_set(em, -ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, m) {
		if (!cJSON_IsString(e) || !e->valuestring || !*e->valuestring ||
		    strlen(e->valuestring) > RUN_CONTROL_NAME_MAX)
			return errmsg_set(em, -EINVAL, "%s[%zu]: expected a name of 1 to %d bytes", key, i,
					  RUN_CONTROL_NAME_MAX);
		(*out)[i++] = e->valuestring;
	}
	*n = i;
	return 0;
}

static int decode_update(const cJSON *root, struct run_control_request *q, struct errmsg *em)
{
	static const char *const keys[] = { "v", "op", "for_uid", "policy", "allow", "deny", NULL };
	int err = check_object_keys(root, keys, em);

	if (!err)
		err = get_text(root, "policy", RUN_CONTROL_POLICY_MAX, &q->policy, &q->policy_len, em);
	if (!err)
		err = get_names(root, "allow", &q->allow, &q->n_allow, em);
	if (!err)
		err = get_names(root, "deny", &q->deny, &q->n_deny, em);
	if (err)
		return err;
	if (q->policy && (q->n_allow || q->n_deny))
		return errmsg_set(em, -EINVAL, "policy: a whole document, or names to allow and deny, not both");
	if (!q->policy && !q->n_allow && !q->n_deny)
		return errmsg_set(em, -EINVAL, "policy: missing (or allow / deny)");
	return 0;
}

static int decode_for_uid(const cJSON *root, struct run_control_request *q, struct errmsg *em)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "for_uid");

	if (!m)
		return 0;
	if (!cJSON_IsNumber(m) || m->valuedouble < 0 || m->valuedouble > 4294967294.0 ||
	    m->valuedouble != (double)(uint32_t)m->valuedouble)
		return errmsg_set(em, -EINVAL, "for_uid: expected a uid");
	q->for_caller = true;
	q->for_uid = (uint32_t)m->valuedouble;
	return 0;
}

int run_control_request_decode(const char *json, size_t len, struct run_control_request *q, struct errmsg *em)
{
	static const char *const ceiling_keys[] = { "v", "op", "ceiling", NULL };
	static const char *const status_keys[] = { "v", "op", NULL };
	const cJSON *v, *op;
	cJSON *root;
	int err;

	memset(q, 0, sizeof(*q));
	if (len > RUN_CONTROL_MAX)
		return errmsg_set(em, -E2BIG, "the request is longer than %u bytes", RUN_CONTROL_MAX);
	root = cJSON_ParseWithLength(json, len);
	if (!root)
		return errmsg_set(em, -EINVAL, "not a JSON document");
	q->storage = root;
	if (!cJSON_IsObject(root))
		return errmsg_set(em, -EINVAL, "expected a JSON object");
	v = cJSON_GetObjectItemCaseSensitive(root, "v");
	if (!cJSON_IsNumber(v) || v->valuedouble != 1)
		return errmsg_set(em, -EINVAL, "v: missing (this sandbox speaks version 1)");
	op = cJSON_GetObjectItemCaseSensitive(root, "op");
	if (!cJSON_IsString(op) || !op->valuestring)
		return errmsg_set(em, -EINVAL, "op: missing");
	if (!strcmp(op->valuestring, "update")) {
		q->op = RUN_CONTROL_UPDATE;
		err = decode_update(root, q, em);
		return err ? err : decode_for_uid(root, q, em);
	}
	if (!strcmp(op->valuestring, "status")) {
		q->op = RUN_CONTROL_STATUS;
		return check_object_keys(root, status_keys, em);
	}
	if (!strcmp(op->valuestring, "ceiling"))
		q->op = RUN_CONTROL_CEILING;
	else if (!strcmp(op->valuestring, "preview"))
		q->op = RUN_CONTROL_PREVIEW;
	else
		return errmsg_set(em, -EINVAL, "op: unknown operation (update, ceiling, preview or status)");
	err = check_object_keys(root, ceiling_keys, em);
	if (!err)
		err = get_text(root, "ceiling", RUN_CONTROL_POLICY_MAX, &q->ceiling, &q->ceiling_len, em);
	if (!err && !q->ceiling)
		err = errmsg_set(em, -EINVAL, "ceiling: missing");
	return err;
}

void run_control_request_free(struct run_control_request *q)
{
	free(q->allow);
	free(q->deny);
	cJSON_Delete(q->storage);
	memset(q, 0, sizeof(*q));
}

static bool add_names(cJSON *root, const char *key, const char **names, size_t n)
{
	cJSON *arr;

	if (!n)
		return true;
	arr = cJSON_AddArrayToObject(root, key);
	for (size_t i = 0; arr && i < n; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(names[i])))
			return false;
	return arr != NULL;
}

char *run_control_request_encode(const struct run_control_request *q)
{
	cJSON *root = cJSON_CreateObject();
	char *out = NULL;
	bool ok = root && cJSON_AddNumberToObject(root, "v", 1);

	if (q->op == RUN_CONTROL_STATUS) {
		ok = ok && cJSON_AddStringToObject(root, "op", "status");
	} else if (q->op == RUN_CONTROL_CEILING || q->op == RUN_CONTROL_PREVIEW) {
		ok = ok && cJSON_AddStringToObject(root, "op", q->op == RUN_CONTROL_CEILING ? "ceiling" : "preview") &&
		     cJSON_AddStringToObject(root, "ceiling", q->ceiling ? q->ceiling : "");
	} else {
		ok = ok && cJSON_AddStringToObject(root, "op", "update");
		if (ok && q->for_caller)
			ok = cJSON_AddNumberToObject(root, "for_uid", q->for_uid) != NULL;
		if (ok && q->policy)
			ok = cJSON_AddStringToObject(root, "policy", q->policy) != NULL;
		ok = ok && add_names(root, "allow", q->allow, q->n_allow) && add_names(root, "deny", q->deny, q->n_deny);
	}
	if (ok)
		out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return out;
}

char *run_control_answer_encode(bool ok, const char *message)
{
	cJSON *root = cJSON_CreateObject();
	char *out = NULL;

	if (root && cJSON_AddNumberToObject(root, "v", 1) && cJSON_AddBoolToObject(root, "ok", ok) &&
	    cJSON_AddStringToObject(root, "message", message ? message : ""))
		out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return out;
}

int run_control_answer_decode(const char *json, size_t len, bool *ok, char **message, struct errmsg *em)
{
	static const char *const keys[] = { "v", "ok", "message", NULL };
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *o, *m;
	int err = 0;

	*message = NULL;
	if (!cJSON_IsObject(root)) {
		err = errmsg_set(em, -EPROTO, "the sandbox's answer is not a JSON object");
		goto cleanup;
	}
	err = check_object_keys(root, keys, em);
	if (err)
		goto cleanup;
	o = cJSON_GetObjectItemCaseSensitive(root, "ok");
	m = cJSON_GetObjectItemCaseSensitive(root, "message");
	if (!cJSON_IsBool(o) || !cJSON_IsString(m)) {
		err = errmsg_set(em, -EPROTO, "the sandbox's answer lacks ok or message");
		goto cleanup;
	}
	*ok = cJSON_IsTrue(o);
	*message = strdup(m->valuestring);
	if (!*message)
		err = errmsg_set(em, -ENOMEM, "out of memory");
cleanup:
	cJSON_Delete(root);
	return err;
}
