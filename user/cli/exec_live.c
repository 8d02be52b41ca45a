// SPDX-License-Identifier: MIT
/*
 * Live policy's command-line side: control lines, the fields fixed while a
 * sandbox runs, and the domain edits of bpfbox update. No I/O but the one
 * read of live_lines_fill; the run itself is switched by sandbox_run_update.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_live.h"
#include "policy/domain.h"

int live_lines_init(struct live_lines *l)
{
	memset(l, 0, sizeof(*l));
	l->buf = malloc(LIVE_LINE_MAX + 1);
	return l->buf ? 0 : -ENOMEM;
}

void live_lines_free(struct live_lines *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

/* The refused line's end arrived: what follows it is kept. */
static void drop_to_newline(struct live_lines *l)
{
	char *nl = memchr(l->buf, '\n', l->len);

	if (!nl) {
		l->len = 0;
		return;
	}
	l->len -= (size_t)(nl + 1 - l->buf);
	memmove(l->buf, nl + 1, l->len);
	l->skipping = false;
}

int live_lines_fill(struct live_lines *l, int fd)
{
	ssize_t n;

	if (l->start) { /* the unread tail moves to the front, making room */
		memmove(l->buf, l->buf + l->start, l->len - l->start);
		l->len -= l->start;
		l->start = 0;
	}
	if (l->len == LIVE_LINE_MAX + 1)
		return 0; /* full: live_lines_next refuses the line first */
	do
		n = read(fd, l->buf + l->len, LIVE_LINE_MAX + 1 - l->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0) {
		l->eof = true;
		return 0;
	}
	l->len += (size_t)n;
	if (l->skipping)
		drop_to_newline(l);
	return 0;
}

int live_lines_next(struct live_lines *l, char **line)
{
	char *p = l->buf + l->start;
	size_t avail = l->len - l->start;
	char *nl = avail ? memchr(p, '\n', avail) : NULL;

	if (nl) {
		*nl = '\0';
		*line = p;
		l->start += (size_t)(nl + 1 - p);
		return 1;
	}
	if (avail == LIVE_LINE_MAX + 1) {
		l->start = l->len = 0;
		l->skipping = true;
		return -E2BIG;
	}
	return 0;
}

bool live_line_blank(const char *line)
{
	return line[strspn(line, " \t\r")] == '\0';
}

/*
 * Fields that change for the running command: srt's network lists,
 * excludeDomains, mitmProxy, tlsTerminate's maxTunnels and
 * handshakeTimeoutMs and credentials.sigv4 (the proxy asks the policy in
 * force for each new connection, tunnel, handshake and request), and
 * bpfbox's files, Unix sockets and devices. Turning tlsTerminate on or off
 * and its CA files stay fixed, as in srt.
 */
static const char *const live_keys[][3] = {
	{ "network", "allowedDomains", NULL },
	{ "network", "deniedDomains", NULL },
	{ "network", "deniedDomainReasons", NULL },
	{ "network", "deniedResolvedAddresses", NULL },
	{ "network", "allowUnixSockets", NULL },
	{ "network", "mitmProxy", NULL },
	{ "network", "tlsTerminate", "excludeDomains" },
	{ "network", "tlsTerminate", "maxTunnels" },
	{ "network", "tlsTerminate", "handshakeTimeoutMs" },
	{ "credentials", "sigv4", NULL },
	{ "filesystem", "denyRead", NULL },
	{ "filesystem", "allowRead", NULL },
	{ "filesystem", "allowWrite", NULL },
	{ "filesystem", "denyWrite", NULL },
	{ "bpfbox", "devices", NULL },
};

/*
 * The document less its live fields. A section emptied by that is dropped, so
 * "network": {"allowedDomains": []} and no network at all compare equal;
 * tlsTerminate stays, as its presence turns termination on.
 */
static cJSON *fixed_part(const cJSON *doc)
{
	cJSON *copy = cJSON_Duplicate(doc, true);

	if (!copy || !cJSON_IsObject(copy))
		return copy;
	for (size_t i = 0; i < sizeof(live_keys) / sizeof(live_keys[0]); i++) {
		const char *const *k = live_keys[i];
		cJSON *sec = cJSON_GetObjectItemCaseSensitive(copy, k[0]);
		cJSON *obj = sec;

		if (k[2])
			obj = cJSON_GetObjectItemCaseSensitive(sec, k[1]);
		if (!cJSON_IsObject(obj))
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(obj, k[2] ? k[2] : k[1]);
		if (cJSON_IsObject(sec) && !sec->child)
			cJSON_DeleteItemFromObjectCaseSensitive(copy, k[0]);
	}
	return copy;
}

/*
 * A section only one side has is named by its first field
 * (network.allowAllUnixSockets); tlsTerminate by itself, as its presence is
 * the setting (termination on or off).
 */
static void first_member(const cJSON *o, char *path, size_t size)
{
	size_t len = strlen(path);

	if (o && o->string && !strcmp(o->string, "tlsTerminate"))
		return;
	for (; cJSON_IsObject(o) && o->child; o = o->child, len = strlen(path)) {
		snprintf(path + len, size - len, ".%s", o->child->string);
		if (!strcmp(o->child->string, "tlsTerminate"))
			return;
	}
}

/* Names the first member where a and b differ (a's order, then members only b has). */
static void first_difference(const cJSON *a, const cJSON *b, char *path, size_t size)
{
	size_t len = strlen(path);
	const cJSON *m;

	if (!cJSON_IsObject(a) || !cJSON_IsObject(b))
		return;
	for (m = a->child; m; m = m->next) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(b, m->string);

		if (o && cJSON_Compare(m, o, true))
			continue;
		snprintf(path + len, size - len, "%s%s", len ? "." : "", m->string);
		if (o)
			first_difference(m, o, path, size);
		else
			first_member(m, path, size);
		return;
	}
	for (m = b->child; m; m = m->next) {
		if (cJSON_GetObjectItemCaseSensitive(a, m->string))
			continue;
		snprintf(path + len, size - len, "%s%s", len ? "." : "", m->string);
		first_member(m, path, size);
		return;
	}
}

int live_doc_check_fixed(const cJSON *running, const cJSON *next, struct errmsg *em)
{
	cJSON *a = fixed_part(running), *b = fixed_part(next);
	char field[256] = "";
	int ret = 0;

	if (!a || !b) {
		ret = errmsg_set(em, -ENOMEM, "comparing the settings documents");
		goto cleanup;
	}
	if (cJSON_Compare(a, b, true))
		goto cleanup;
	first_difference(a, b, field, sizeof(field));
	ret = errmsg_set(em, -EINVAL, "%s cannot change while the sandbox runs; restart it",
			 field[0] ? field : "the document");
cleanup:
	cJSON_Delete(a);
	cJSON_Delete(b);
	return ret;
}

/* The list key of doc's network, made an empty array when absent; NULL if not an array. */
static cJSON *network_list(cJSON *doc, const char *key, struct errmsg *em)
{
	cJSON *net = cJSON_GetObjectItemCaseSensitive(doc, "network");
	cJSON *list;

	if (!net)
		net = cJSON_AddObjectToObject(doc, "network");
	if (!cJSON_IsObject(net)) {
		errmsg_set(em, -EINVAL, "network: expected an object");
		return NULL;
	}
	list = cJSON_GetObjectItemCaseSensitive(net, key);
	if (!list)
		list = cJSON_AddArrayToObject(net, key);
	if (!cJSON_IsArray(list))
		errmsg_set(em, -EINVAL, "network.%s: expected an array", key);
	return cJSON_IsArray(list) ? list : NULL;
}

static bool list_has(const cJSON *list, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, list)
		if (cJSON_IsString(e) && !strcmp(e->valuestring, name))
			return true;
	return false;
}

static void list_drop(cJSON *list, const char *name)
{
	cJSON *e = list->child;

	while (e) {
		cJSON *next = e->next;

		if (cJSON_IsString(e) && !strcmp(e->valuestring, name))
			cJSON_Delete(cJSON_DetachItemViaPointer(list, e));
		e = next;
	}
}

int live_doc_edit_domain(cJSON *doc, const char *name, bool allow, struct errmsg *em)
{
	struct domain_pattern p;
	const char *err = NULL;
	cJSON *add, *drop, *s;

	if (!cJSON_IsObject(doc))
		return errmsg_set(em, -EINVAL, "the settings document is not an object");
	if (domain_pattern_parse(name, !allow, &p, &err))
		return errmsg_set(em, -EINVAL, "%s \"%s\": %s",
				  allow ? "--allow-domain" : "--deny-domain", name, err);
	add = network_list(doc, allow ? "allowedDomains" : "deniedDomains", em);
	drop = network_list(doc, allow ? "deniedDomains" : "allowedDomains", em);
	if (!add || !drop)
		return -EINVAL;
	list_drop(drop, name);
	if (list_has(add, name))
		return 0;
	s = cJSON_CreateString(name);
	if (!s || !cJSON_AddItemToArray(add, s)) {
		cJSON_Delete(s);
		return errmsg_set(em, -ENOMEM, "adding %s", name);
	}
	return 0;
}

int live_control_check_fd(int fd, struct errmsg *em)
{
	int fl;

	if (fd < 3)
		return errmsg_set(em, -EINVAL, "--control-fd %d: must be 3 or more", fd);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_WRONLY)
		return errmsg_set(em, -EINVAL, "--control-fd %d: not open for reading", fd);
	return 0;
}

int live_control_init(struct live_control *c, int fd, cJSON *doc)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->shown_fd = fd;
	c->doc = doc;
	/* Without a descriptor the document alone serves (bpfbox update's requests). */
	return fd < 0 ? 0 : live_lines_init(&c->lines);
}

void live_control_free(struct live_control *c)
{
	live_lines_free(&c->lines);
	cJSON_Delete(c->doc);
	c->doc = NULL;
}

/* srt's message for a refused line, then bpfbox's reason on a line of its own. */
static void refuse_line(const struct live_control *c, const char *why)
{
	fprintf(stderr, "Invalid config on control fd %d: ignored, previous config still in force\n", c->shown_fd);
	fprintf(stderr, "bpfbox: %s\n", why);
}

/* One whole line: checked, applied, kept as the document in force; else refused. */
static void control_line(struct live_control *c, const char *line)
{
	struct errmsg em = { "" };
	cJSON *next;

	if (live_line_blank(line))
		return;
	next = cJSON_Parse(line);
	if (!cJSON_IsObject(next)) {
		refuse_line(c, "the line is not a JSON object");
		goto cleanup;
	}
	if (c->doc && live_doc_check_fixed(c->doc, next, &em)) {
		refuse_line(c, em.text);
		goto cleanup;
	}
	if (!c->apply) {
		refuse_line(c, "live policy changes are not available in this build");
		goto cleanup;
	}
	if (c->apply(c->apply_ctx, line, strlen(line), &em)) {
		refuse_line(c, em.text);
		goto cleanup;
	}
	cJSON_Delete(c->doc);
	c->doc = next;
	next = NULL;
cleanup:
	cJSON_Delete(next);
}

int live_control_read(void *ctx, int fd)
{
	struct live_control *c = ctx;
	char *line;
	int r = live_lines_fill(&c->lines, fd);

	if (r && r != -EAGAIN) {
		fprintf(stderr, "bpfbox: control fd %d: %s; no longer read\n", c->shown_fd, strerror(-r));
		return 1;
	}
	while ((r = live_lines_next(&c->lines, &line)) != 0) {
		if (r == -E2BIG)
			refuse_line(c, "the line is longer than 1 MiB");
		else
			control_line(c, line);
	}
	return c->lines.eof ? 1 : 0;
}

cJSON *live_doc_read(const char *path)
{
	char *text = NULL, buf[4096];
	size_t len = 0, n;
	FILE *f = fopen(path, "re"), *m;
	cJSON *doc = NULL;

	if (!f)
		return NULL;
	m = open_memstream(&text, &len);
	while (m && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	if (m && !fclose(m))
		doc = cJSON_ParseWithLength(text, len);
	free(text);
	fclose(f);
	return doc;
}
