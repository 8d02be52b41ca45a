// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy suggest`: the refusals of a log turned into the smallest
 * grants that cover them (the audit -> propose -> enforce loop). Only grants
 * a policy can give are proposed: the mandatory set, the administrator's
 * ceiling, the policy's own denies, built-in refusals and direct egress are
 * reported with why, never turned into a grant. Every value comes from a log
 * the sandboxed code influenced (paths, names), so each is checked the way
 * the loader checks it, alone, before it is proposed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"
#include "mandatory.h"
#include "policy.h"
#include "policy_suggest.h"

static const char *const list_key[SUGGEST_LISTS][2] = {
	[SUGGEST_WRITE] = { "filesystem", "allowWrite" },
	[SUGGEST_READ] = { "filesystem", "allowRead" },
	[SUGGEST_DOMAIN] = { "network", "allowedDomains" },
	[SUGGEST_UNIX] = { "network", "allowUnixSockets" },
};

static const char *const write_actions[] = {
	"open-write", "truncate", "rename", "chmod", "chown", "setxattr", "removexattr",
	"setattr", "create", "mkdir", "mknod", "symlink", "link", "unlink", "rmdir", NULL,
};
static const char *const read_actions[] = { "open-read", "exec", NULL };
static const char *const name_actions[] = {
	"proxy-connect", "proxy-http", "proxy-socks", "proxy-transparent", "dns-query", NULL,
};

static bool in(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return true;
	return false;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

void policy_suggest_init(struct policy_suggest *s, const char *sandbox_id, unsigned collapse)
{
	memset(s, 0, sizeof(*s));
	s->sandbox_id = sandbox_id;
	s->collapse = collapse;
}

static void free_entries(struct suggest_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].value);
	free(e);
}

void policy_suggest_free(struct policy_suggest *s)
{
	for (int l = 0; l < SUGGEST_LISTS; l++)
		free_entries(s->list[l], s->n[l]);
	for (size_t i = 0; i < s->n_skips; i++) {
		free(s->skips[i].action);
		free(s->skips[i].rule);
		free(s->skips[i].why);
	}
	free(s->skips);
	memset(s, 0, sizeof(*s));
}

static int skip(struct policy_suggest *s, const char *action, const char *rule, const char *why,
		unsigned long count)
{
	struct suggest_skip *k;

	for (size_t i = 0; i < s->n_skips; i++) {
		k = &s->skips[i];
		if (!strcmp(k->action, action) && !strcmp(k->rule, rule) && !strcmp(k->why, why)) {
			k->count += count;
			return 0;
		}
	}
	if (s->n_skips == SUGGEST_SKIPS_MAX) {
		s->dropped += count;
		return 0;
	}
	k = realloc(s->skips, (s->n_skips + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	s->skips = k;
	k = &k[s->n_skips];
	k->action = strdup(action);
	k->rule = strdup(rule);
	k->why = strdup(why);
	k->count = count;
	if (!k->action || !k->rule || !k->why) {
		free(k->action);
		free(k->rule);
		free(k->why);
		return -ENOMEM;
	}
	s->n_skips++;
	return 0;
}

static int add(struct policy_suggest *s, enum suggest_list l, const char *value,
	       unsigned long count)
{
	struct suggest_entry *e;

	for (size_t i = 0; i < s->n[l]; i++)
		if (!strcmp(s->list[l][i].value, value)) {
			s->list[l][i].count += count;
			return 0;
		}
	if (s->n[l] == SUGGEST_ENTRIES_MAX) {
		s->dropped += count;
		return 0;
	}
	e = realloc(s->list[l], (s->n[l] + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	s->list[l] = e;
	e[s->n[l]].value = strdup(value);
	if (!e[s->n[l]].value)
		return -ENOMEM;
	e[s->n[l]].count = count;
	s->n[l]++;
	return 0;
}

/* obj.a.b as a string, or NULL. */
static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);

	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Why a path from the log cannot be granted as it is written, or NULL. */
static const char *path_unusable(const char *path, bool truncated)
{
	if (path[0] != '/')
		return "the path is not absolute";
	if (truncated)
		return "the path was cut in the log (bpfbox.truncated)";
	if (strstr(path, "\xef\xbf\xbd"))
		return "the name is not UTF-8 (U+FFFD in the log): grant it by hand";
	if (strpbrk(path, "*?[]"))
		return "the path holds glob characters, which a policy entry would read as a pattern";
	return NULL;
}

static const char *rule_why(const char *rule)
{
	if (starts(rule, "ceiling:"))
		return "the administrator's policy (the ceiling) refuses it: only the administrator can grant it";
	if (starts(rule, "mandatory:"))
		return "the mandatory deny set, which no policy lifts";
	if (starts(rule, "denyWrite:"))
		return "the policy's own denyWrite entry refuses it; a grant does not lift a deny (remove the entry)";
	if (starts(rule, "deniedDomains:"))
		return "the policy's own deniedDomains entry refuses it; a deny wins over any allow";
	if (starts(rule, "builtin:") || starts(rule, "limit:"))
		return "built into bpfbox: no entry of these lists grants it";
	if (!strcmp(rule, "default:dnsQueryTypes"))
		return "the name is allowed, the query type is not answered (bpfbox.network.dnsQueryTypes)";
	if (!strcmp(rule, "default:unix-abstract"))
		return "an abstract Unix socket: allowUnixSockets grants paths";
	if (starts(rule, "transparent:"))
		return "a direct connection the transparent path could not tie to an allowed name";
	return "not a refusal that a grant of filesystem or network lists covers";
}

static int file_refusal(struct policy_suggest *s, const cJSON *ev, const char *action,
			const char *rule, enum suggest_list l, unsigned long count)
{
	const char *path = str_at(ev, "file", "path"), *why;
	bool truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(ev, "bpfbox"), "truncated"));

	if (!path)
		return skip(s, action, rule, "the line names no path (repeats folded into an earlier line)", count);
	why = path_unusable(path, truncated);
	/* An audited write is logged as not granted; the mandatory set would refuse it all the same. */
	if (!why && l == SUGGEST_WRITE && mandatory_rule_of_path(path))
		why = "the mandatory deny set (a protected name in the path), which no policy lifts";
	return why ? skip(s, action, rule, why, count) : add(s, l, path, count);
}

static int name_refusal(struct policy_suggest *s, const cJSON *ev, const char *action,
			const char *rule, unsigned long count)
{
	const char *name = str_at(ev, "destination", "domain"), *err;
	char canon[DOMAIN_TEXT_MAX];

	if (!name)
		name = str_at(cJSON_GetObjectItemCaseSensitive(ev, "dns"), "question", "name");
	if (!name)
		name = str_at(ev, "url", "domain");
	if (!name)
		return skip(s, action, rule, "no name, only an address: bpfbox grants names, never addresses", count);
	if (host_canonicalise(name, canon, sizeof(canon), &err))
		return skip(s, action, rule, "the name is not a valid host name", count);
	if (host_ip_family(canon))
		return skip(s, action, rule, "an address, not a name: bpfbox grants names, never addresses", count);
	return add(s, SUGGEST_DOMAIN, canon, count);
}

static int refusal(struct policy_suggest *s, const cJSON *ev, const char *action, const char *rule,
		   unsigned long count)
{
	if (in(action, write_actions) && !strcmp(rule, "default:write"))
		return file_refusal(s, ev, action, rule, SUGGEST_WRITE, count);
	if (in(action, read_actions) && (starts(rule, "denyRead:") || !strcmp(rule, "default:read")))
		return file_refusal(s, ev, action, rule, SUGGEST_READ, count);
	if (in(action, name_actions) && !strcmp(rule, "default:network"))
		return name_refusal(s, ev, action, rule, count);
	if ((!strcmp(action, "unix-connect") || !strcmp(action, "unix-send")) &&
	    !strcmp(rule, "default:unix-socket")) {
		const char *path = str_at(ev, "destination", "address"), *why;

		if (!path)
			return skip(s, action, rule, "the line names no socket", count);
		why = path_unusable(path, false);
		return why ? skip(s, action, rule, why, count) : add(s, SUGGEST_UNIX, path, count);
	}
	if ((!strcmp(action, "bind") || !strcmp(action, "listen")) &&
	    !strcmp(rule, "allowLocalBinding:false")) {
		s->local_binding = true;
		s->local_binding_count += count;
		return 0;
	}
	if ((!strcmp(action, "connect") || !strcmp(action, "sendmsg")) && starts(rule, "default:network"))
		return skip(s, action, rule, "direct egress is never granted: reach the name through the proxy", count);
	return skip(s, action, rule, rule_why(rule), count);
}

/* A refusal, enforced or audited; not a revoked connection or a daemon's refusal of a request. */
static bool is_refusal(const cJSON *ev, const char *action)
{
	const cJSON *types = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(ev, "event"), "type"), *t;
	const cJSON *bb = cJSON_GetObjectItemCaseSensitive(ev, "bpfbox");

	if (starts(action, "daemon-") || str_at(bb, "proxy", "closed"))
		return false;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(bb, "audit")) &&
	    strcmp(action, "sandbox-start"))
		return true;
	cJSON_ArrayForEach(t, types)
		if (cJSON_IsString(t) && !strcmp(t->valuestring, "denied"))
			return true;
	return false;
}

int policy_suggest_line(struct policy_suggest *s, const char *line, size_t len)
{
	cJSON *ev = cJSON_ParseWithLength(line, len);
	const cJSON *bb, *cnt;
	const char *action, *rule, *id;
	unsigned long count = 1;
	int ret = 0;

	s->lines++;
	if (!cJSON_IsObject(ev)) {
		s->not_json += !(len == 0 || (len == 1 && line[0] == '\r'));
		goto out;
	}
	action = str_at(ev, "event", "action");
	if (!action || !is_refusal(ev, action))
		goto out;
	bb = cJSON_GetObjectItemCaseSensitive(ev, "bpfbox");
	id = str_at(bb, "sandbox", "id");
	if (s->sandbox_id && (!id || strcmp(id, s->sandbox_id))) {
		s->other_sandbox++;
		goto out;
	}
	cnt = cJSON_GetObjectItemCaseSensitive(bb, "count");
	if (cJSON_IsNumber(cnt) && cnt->valuedouble >= 1 && cnt->valuedouble <= 1e15)
		count = (unsigned long)cnt->valuedouble;
	s->refusals += count;
	rule = str_at(ev, "rule", "name");
	ret = refusal(s, ev, action, rule ? rule : "(no rule)", count);
out:
	cJSON_Delete(ev);
	return ret;
}

static int by_value(const void *a, const void *b)
{
	return strcmp(((const struct suggest_entry *)a)->value, ((const struct suggest_entry *)b)->value);
}

static char *parent_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		return NULL;	/* "/x": its parent is the root, never proposed */
	return strndup(path, slash - path);
}

/* More than s->collapse refused paths in one directory: the directory instead. */
static int collapse(struct policy_suggest *s, enum suggest_list l)
{
	struct suggest_entry *e = s->list[l];
	size_t n = s->n[l];
	char **parent;
	bool *up;

	if (!s->collapse || !n)
		return 0;
	parent = calloc(n, sizeof(*parent));
	up = calloc(n, sizeof(*up));
	if (!parent || !up) {
		free(parent);
		free(up);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		parent[i] = parent_of(e[i].value);	/* NULL: at the root, or no memory: kept */
	for (size_t i = 0; i < n; i++) {
		size_t siblings = 0;

		for (size_t j = 0; parent[i] && j < n; j++)
			siblings += parent[j] && !strcmp(parent[j], parent[i]);
		up[i] = siblings > s->collapse;
	}
	for (size_t i = 0; i < n; i++) {
		if (up[i]) {
			free(e[i].value);
			e[i].value = parent[i];	/* duplicates merge in drop_covered */
		} else {
			free(parent[i]);
		}
	}
	free(parent);
	free(up);
	return 0;
}

/* Entries another entry of the list covers are dropped, their counts added to it. */
static void drop_covered(struct policy_suggest *s, enum suggest_list l, bool paths)
{
	struct suggest_entry *e = s->list[l];
	size_t kept = 0;

	if (s->n[l] < 2)
		return;
	qsort(e, s->n[l], sizeof(*e), by_value);
	for (size_t i = 0; i < s->n[l]; i++) {
		size_t j;

		for (j = 0; j < kept; j++)
			if (paths ? policy_path_covers(e[j].value, e[i].value) :
				    !strcmp(e[j].value, e[i].value))
				break;
		if (j < kept) {
			e[j].count += e[i].count;
			free(e[i].value);
			continue;
		}
		e[kept++] = e[i];
	}
	s->n[l] = kept;
}

cJSON *policy_suggest_skeleton(void)
{
	static const char *const required[][2] = {
		{ "network", "allowedDomains" }, { "network", "deniedDomains" },
		{ "filesystem", "denyRead" }, { "filesystem", "allowWrite" },
		{ "filesystem", "denyWrite" },
	};
	cJSON *doc = cJSON_CreateObject();

	for (size_t i = 0; doc && i < sizeof(required) / sizeof(required[0]); i++) {
		cJSON *sec = cJSON_GetObjectItemCaseSensitive(doc, required[i][0]);

		if (!sec)
			sec = cJSON_AddObjectToObject(doc, required[i][0]);
		if (!cJSON_AddArrayToObject(sec, required[i][1])) {
			cJSON_Delete(doc);
			doc = NULL;
		}
	}
	return doc;
}

/* The loader, on a document holding this one entry: its first error, or NULL when it loads. */
static int loader_refuses(enum suggest_list l, const char *value, char **why)
{
	struct policy_load_opts lo = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	cJSON *doc = policy_suggest_skeleton(), *sec, *arr;
	char *text = NULL;
	int ret = -ENOMEM;

	*why = NULL;
	sec = cJSON_GetObjectItemCaseSensitive(doc, list_key[l][0]);
	arr = cJSON_GetObjectItemCaseSensitive(sec, list_key[l][1]);
	if (!arr)
		arr = cJSON_AddArrayToObject(sec, list_key[l][1]);
	if (!arr || !cJSON_AddItemToArray(arr, cJSON_CreateString(value)))
		goto out;
	text = cJSON_PrintUnformatted(doc);
	if (!text)
		goto out;
	ret = 0;
	if (policy_load_buffer(NULL, text, strlen(text), &lo, &p, &d)) {
		for (size_t i = 0; i < d.n; i++)
			if (d.items[i].severity == DIAG_ERROR) {
				*why = strdup(d.items[i].message);
				break;
			}
		if (!*why)
			*why = strdup("the policy loader refuses it");
		ret = *why ? 1 : -ENOMEM;
	}
out:
	policy_free(p);
	diag_list_free(&d);
	free(text);
	cJSON_Delete(doc);
	return ret;
}

static int check_each(struct policy_suggest *s, enum suggest_list l)
{
	struct suggest_entry *e = s->list[l];
	size_t kept = 0;
	int ret = 0;

	for (size_t i = 0; i < s->n[l]; i++) {
		char *why = NULL, what[64];
		int r = ret ? 0 : loader_refuses(l, e[i].value, &why);

		if (r < 0)
			ret = r;
		if (r == 1) {
			snprintf(what, sizeof(what), "%s.%s", list_key[l][0], list_key[l][1]);
			r = skip(s, what, e[i].value, why, e[i].count);
			free(why);
			free(e[i].value);
			if (r)
				ret = r;
			continue;
		}
		e[kept++] = e[i];
	}
	s->n[l] = kept;
	return ret;
}

int policy_suggest_finish(struct policy_suggest *s)
{
	int ret;

	for (int l = 0; l < SUGGEST_LISTS; l++) {
		bool paths = l == SUGGEST_WRITE || l == SUGGEST_READ;

		if (l == SUGGEST_WRITE || l == SUGGEST_READ) {
			ret = collapse(s, l);
			if (ret)
				return ret;
		}
		drop_covered(s, l, paths);
		ret = check_each(s, l);
		if (ret)
			return ret;
	}
	return 0;
}

/* doc.key as an object, made when missing; NULL when it is there and not one. */
static cJSON *section(cJSON *doc, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);

	if (!v)
		return cJSON_AddObjectToObject(doc, key);
	return cJSON_IsObject(v) ? v : NULL;
}

static bool has_string(const cJSON *arr, const char *value)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, value))
			return true;
	return false;
}

int policy_suggest_merge(const struct policy_suggest *s, cJSON *doc)
{
	int added = 0;

	if (!cJSON_IsObject(doc))
		return -EINVAL;
	for (int l = 0; l < SUGGEST_LISTS; l++) {
		cJSON *sec, *arr;

		if (!s->n[l])
			continue;
		sec = section(doc, list_key[l][0]);
		if (!sec)
			return -EINVAL;
		arr = cJSON_GetObjectItemCaseSensitive(sec, list_key[l][1]);
		if (!arr)
			arr = cJSON_AddArrayToObject(sec, list_key[l][1]);
		else if (!cJSON_IsArray(arr))
			return -EINVAL;
		if (!arr)
			return -ENOMEM;
		for (size_t i = 0; i < s->n[l]; i++) {
			if (has_string(arr, s->list[l][i].value))
				continue;
			if (!cJSON_AddItemToArray(arr, cJSON_CreateString(s->list[l][i].value)))
				return -ENOMEM;
			added++;
		}
	}
	if (s->local_binding) {
		cJSON *net = section(doc, "network"), *b;

		if (!net)
			return -EINVAL;
		b = cJSON_GetObjectItemCaseSensitive(net, "allowLocalBinding");
		if (!cJSON_IsTrue(b)) {
			if (b)
				cJSON_DeleteItemFromObjectCaseSensitive(net, "allowLocalBinding");
			if (!cJSON_AddTrueToObject(net, "allowLocalBinding"))
				return -ENOMEM;
			added++;
		}
	}
	return added;
}

static const char *plural(unsigned long n)
{
	return n == 1 ? "" : "s";
}

/* s through escape, "(unprintable)" when it gives nothing: *held is freed by the next call or by NULL. */
static const char *safe(char *(*escape)(const char *s), const char *s, char **held)
{
	free(*held);
	*held = s ? escape(s) : NULL;
	return *held ? *held : "(unprintable)";
}

void policy_suggest_report(const struct policy_suggest *s, FILE *out, char *(*escape)(const char *s))
{
	char *a = NULL, *b = NULL, *c = NULL;
	bool any = s->local_binding;

	fprintf(out, "bpfbox: policy suggest: %lu line%s, %lu refusal%s", s->lines, plural(s->lines),
		s->refusals, plural(s->refusals));
	if (s->not_json)
		fprintf(out, "; %lu line%s not JSON, skipped", s->not_json, plural(s->not_json));
	if (s->other_sandbox)
		fprintf(out, "; %lu refusal%s of other sandboxes, skipped", s->other_sandbox,
			plural(s->other_sandbox));
	fprintf(out, "\n");
	for (int l = 0; l < SUGGEST_LISTS; l++)
		any |= s->n[l] > 0;
	fprintf(out, any ? "proposed:\n" : "proposed: nothing\n");
	for (int l = 0; l < SUGGEST_LISTS; l++)
		for (size_t i = 0; i < s->n[l]; i++)
			fprintf(out, "  %s.%s \"%s\" (%lu refusal%s)\n", list_key[l][0], list_key[l][1],
				safe(escape, s->list[l][i].value, &a), s->list[l][i].count,
				plural(s->list[l][i].count));
	if (s->local_binding)
		fprintf(out, "  network.allowLocalBinding true (%lu refusal%s)\n", s->local_binding_count,
			plural(s->local_binding_count));
	if (s->n_skips)
		fprintf(out, "not proposed:\n");
	for (size_t i = 0; i < s->n_skips; i++)
		fprintf(out, "  %lu x %s [%s]: %s\n", s->skips[i].count, safe(escape, s->skips[i].action, &a),
			safe(escape, s->skips[i].rule, &b), safe(escape, s->skips[i].why, &c));
	if (s->dropped)
		fprintf(out, "  %lu refusals not sorted: over %d distinct entries of a list or %d groups\n",
			s->dropped, SUGGEST_ENTRIES_MAX, SUGGEST_SKIPS_MAX);
	free(a);
	free(b);
	free(c);
}
