// SPDX-License-Identifier: MIT
/*
 * Building one event: a cJSON tree addressed by dotted ECS names. Errors
 * are recorded in the event rather than returned, so that callers building
 * a refusal report need no error paths; log_emit() reports them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "log_event.h"
#include "log_utf8.h"

struct log_event {
	enum log_level level;
	cJSON *root;
	bool violation;
	bool has_time;
	struct timespec time;
	int err; /* first error while building, 0 if none */
};

/* A budget for all elements of one array, so argv cannot make a huge line. */
#define LOG_ARRAY_MAX (4 * LOG_VALUE_MAX)

static void fail(struct log_event *ev, int err)
{
	if (!ev->err)
		ev->err = err;
}

static bool replace_or_add(cJSON *obj, const char *key, cJSON *item)
{
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
	return cJSON_AddItemToObject(obj, key, item);
}

/* "a.b.c": no empty name anywhere, checked before anything is created. */
static bool key_ok(const char *key)
{
	size_t n = key ? strlen(key) : 0;

	return n && key[0] != '.' && key[n - 1] != '.' && !strstr(key, "..");
}

/* Stores item (owned, even on failure) at the dotted key; NULL item with remove deletes it. */
static void put(struct log_event *ev, const char *key, cJSON *item, bool remove)
{
	char *path = NULL, *seg, *dot;
	cJSON *obj;

	if (!ev)
		goto out;
	if (!item && !remove) {
		fail(ev, -ENOMEM);
		goto out;
	}
	if (!key_ok(key))
		goto bad;
	path = strdup(key);
	if (!path) {
		fail(ev, -ENOMEM);
		goto out;
	}
	obj = ev->root;
	for (seg = path; (dot = strchr(seg, '.')); seg = dot + 1) {
		cJSON *child;

		*dot = '\0';
		child = cJSON_GetObjectItemCaseSensitive(obj, seg);
		if (!cJSON_IsObject(child)) {
			if (remove)
				goto out; /* nothing there to remove */
			child = cJSON_CreateObject();
			if (!child || !replace_or_add(obj, seg, child)) {
				cJSON_Delete(child);
				fail(ev, -ENOMEM);
				goto out;
			}
		}
		obj = child;
	}
	if (remove) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, seg);
	} else {
		if (!replace_or_add(obj, seg, item))
			fail(ev, -ENOMEM);
		else
			item = NULL;
	}
out:
	free(path);
	cJSON_Delete(item);
	return;
bad:
	fail(ev, -EINVAL);
	goto out;
}

/* A JSON string of sanitised bytes; flags the event when they were cut. */
static cJSON *make_string(struct log_event *ev, const char *s, size_t len, size_t *size)
{
	bool cut = false;
	char *clean = log_utf8_sanitize(s, len, &cut);
	cJSON *item;

	if (!clean)
		return NULL;
	if (cut)
		put(ev, "bpfbox.truncated", cJSON_CreateTrue(), false);
	if (size)
		*size = strlen(clean);
	item = cJSON_CreateString(clean);
	free(clean);
	return item;
}

/* "a,b" -> ["a","b"], for ECS fields that are arrays of keywords. */
static cJSON *make_list(const char *csv)
{
	cJSON *arr = cJSON_CreateArray();
	const char *p = csv;

	if (!arr)
		return NULL;
	while (*p) {
		size_t n = strcspn(p, ",");
		char *word = strndup(p, n);
		cJSON *item = word ? cJSON_CreateString(word) : NULL;

		free(word);
		if (!item || !cJSON_AddItemToArray(arr, item)) {
			cJSON_Delete(item);
			cJSON_Delete(arr);
			return NULL;
		}
		p += n + (p[n] == ',');
	}
	return arr;
}

static void put_list(struct log_event *ev, const char *key, const char *csv)
{
	if (!csv || !*csv)
		fail(ev, -EINVAL);
	else
		put(ev, key, make_list(csv), false);
}

static void put_word(struct log_event *ev, const char *key, const char *word)
{
	if (!word || !*word)
		fail(ev, -EINVAL);
	else
		put(ev, key, cJSON_CreateString(word), false);
}

struct log_event *log_event_new(enum log_level level, const char *kind, const char *category,
				const char *type, const char *action, const char *outcome)
{
	struct log_event *ev;

	if ((unsigned int)level >= LOG_LEVELS)
		level = LOG_ERROR;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return NULL;
	ev->level = level;
	ev->root = cJSON_CreateObject();
	if (!ev->root) {
		free(ev);
		return NULL;
	}
	/* Placeholders fix the order readers see first; log_emit() fills them. */
	put(ev, "@timestamp", cJSON_CreateString(""), false);
	put(ev, "log.level", cJSON_CreateString(log_level_name(level)), false);
	put(ev, "message", cJSON_CreateString(""), false);
	put(ev, "ecs.version", cJSON_CreateString(LOG_ECS_VERSION), false);
	put(ev, "event.kind", cJSON_CreateString(kind ? kind : "event"), false);
	put_list(ev, "event.category", category);
	put_list(ev, "event.type", type);
	put_word(ev, "event.action", action);
	put(ev, "event.outcome", cJSON_CreateString(outcome ? outcome : "unknown"), false);
	return ev;
}

void log_event_free(struct log_event *ev)
{
	if (!ev)
		return;
	cJSON_Delete(ev->root);
	free(ev);
}

void log_event_set_str(struct log_event *ev, const char *dotted_key, const char *value)
{
	if (!ev)
		return;
	if (!value)
		put(ev, dotted_key, NULL, true);
	else
		put(ev, dotted_key, make_string(ev, value, strlen(value), NULL), false);
}

void log_event_set_bytes(struct log_event *ev, const char *dotted_key, const void *buf,
			 size_t len)
{
	if (!ev)
		return;
	if (!buf)
		put(ev, dotted_key, NULL, true);
	else
		put(ev, dotted_key, make_string(ev, buf, len, NULL), false);
}

void log_event_set_int(struct log_event *ev, const char *dotted_key, long long value)
{
	put(ev, dotted_key, cJSON_CreateNumber((double)value), false);
}

void log_event_set_bool(struct log_event *ev, const char *dotted_key, bool value)
{
	put(ev, dotted_key, cJSON_CreateBool(value), false);
}

void log_event_set_strv(struct log_event *ev, const char *dotted_key, char *const *argv)
{
	size_t budget = LOG_ARRAY_MAX;
	cJSON *arr;

	if (!ev)
		return;
	if (!argv) {
		put(ev, dotted_key, NULL, true);
		return;
	}
	arr = cJSON_CreateArray();
	for (size_t i = 0; arr && argv[i]; i++) {
		size_t size = 0;
		cJSON *item;

		if (budget < strlen(argv[i])) {
			put(ev, "bpfbox.truncated", cJSON_CreateTrue(), false);
			break;
		}
		item = make_string(ev, argv[i], strlen(argv[i]), &size);
		if (!item || !cJSON_AddItemToArray(arr, item)) {
			cJSON_Delete(item);
			cJSON_Delete(arr);
			arr = NULL;
			break;
		}
		budget -= size < budget ? size : budget;
	}
	put(ev, dotted_key, arr, false);
}

void log_event_set_errno(struct log_event *ev, int err)
{
	const char *name, *desc;
	char buf[32];

	if (!ev)
		return;
	if (err < 0)
		err = -err;
	name = strerrorname_np(err);
	desc = strerrordesc_np(err);
	if (!name) {
		snprintf(buf, sizeof(buf), "errno %d", err);
		name = buf;
	}
	log_event_set_str(ev, "error.code", name);
	log_event_set_str(ev, "error.message", desc ? desc : name);
}

void log_event_set_time(struct log_event *ev, const struct timespec *ts)
{
	if (!ev || !ts)
		return;
	ev->time = *ts;
	ev->has_time = true;
}

void log_event_message(struct log_event *ev, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int n;

	if (!ev)
		return;
	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fail(ev, -ENOMEM);
		return;
	}
	put(ev, "message", make_string(ev, text, (size_t)n, NULL), false);
	free(text);
}

void log_event_violation(struct log_event *ev)
{
	if (ev)
		ev->violation = true;
}

void log_event_audit(struct log_event *ev)
{
	cJSON *event, *types, *t;
	bool allowed = false;

	if (!ev)
		return;
	log_event_set_bool(ev, "bpfbox.audit", true);
	put(ev, "event.outcome", cJSON_CreateString("success"), false);
	event = cJSON_GetObjectItemCaseSensitive(ev->root, "event");
	types = cJSON_GetObjectItemCaseSensitive(event, "type");
	if (!cJSON_IsArray(types))
		return;
	cJSON_ArrayForEach(t, types) {
		if (cJSON_IsString(t) && !strcmp(t->valuestring, "denied") &&
		    !cJSON_SetValuestring(t, "allowed"))
			fail(ev, -ENOMEM);
		if (cJSON_IsString(t) && !strcmp(t->valuestring, "allowed"))
			allowed = true;
	}
	if (!allowed) {
		cJSON *item = cJSON_CreateString("allowed");

		if (!item || !cJSON_AddItemToArray(types, item)) {
			cJSON_Delete(item);
			fail(ev, -ENOMEM);
		}
	}
}

enum log_level log_event_level(const struct log_event *ev)
{
	return ev ? ev->level : LOG_ERROR;
}

cJSON *log_event_json(struct log_event *ev)
{
	return ev->root;
}

bool log_event_is_violation(const struct log_event *ev)
{
	return ev->violation;
}

bool log_event_has_time(const struct log_event *ev)
{
	return ev->has_time;
}

const struct timespec *log_event_time(const struct log_event *ev)
{
	return &ev->time;
}

int log_event_error(const struct log_event *ev)
{
	return ev->err;
}
