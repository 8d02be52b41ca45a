// SPDX-License-Identifier: MIT
/*
 * The "filesystem" section: four path lists, allowGitConfig and disabled.
 * The kernel side matches exact paths and subtrees, so globs are refused
 * except a trailing slash-star-star (the subtree itself) and, in denyRead only, a
 * wildcard in the last component, expanded once here as srt does on Linux.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"

static const char *const kind_key[] = {
	[FS_DENY_READ] = "denyRead",
	[FS_ALLOW_READ] = "allowRead",
	[FS_ALLOW_WRITE] = "allowWrite",
	[FS_DENY_WRITE] = "denyWrite",
};

static const struct key_spec fs_keys[] = {
	{ "denyRead", KEY_KNOWN, NULL },
	{ "allowRead", KEY_KNOWN, NULL },
	{ "allowWrite", KEY_KNOWN, NULL },
	{ "denyWrite", KEY_KNOWN, NULL },
	{ "allowGitConfig", KEY_KNOWN, NULL },
	{ "disabled", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

static int push_rule(struct pctx *c, enum fs_rule_kind kind, char *path,
		     const char *source, bool from_default, const char *prefix)
{
	struct policy *p = c->p;
	struct fs_rule *r, *nr;

	nr = realloc(p->fs_rules, (p->n_fs_rules + 1) * sizeof(*nr));
	if (!pcheck(c, nr)) {
		free(path);
		return -ENOMEM;
	}
	p->fs_rules = nr;
	r = &nr[p->n_fs_rules];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->path = path;
	r->from_default = from_default;
	r->source = strdup(source);
	if (asprintf(&r->name, "%s%s:%s", prefix, kind_key[kind], path) < 0)
		r->name = NULL;
	p->n_fs_rules++;
	if (!pcheck(c, r->source) || !pcheck(c, r->name))
		return -ENOMEM;
	return 0;
}

static bool has_glob(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (strchr("*?[]", s[i]))
			return true;
	return false;
}

static void note_kept(struct pctx *c, const char *path, const char *abs, bool grant)
{
	if (grant)
		pwarn(c, path, "\"%s\" is a symlink that would widen the rule if followed; "
		      "this allow is not applied (name what it should open without the link)", abs);
	else
		pwarn(c, path, "\"%s\" is a symlink that would widen the rule if followed; "
		      "kept as written, and as a deny it still follows the link: it denies the target", abs);
}

static int add_path(struct pctx *c, enum fs_rule_kind kind, const char *raw,
		    const char *source, const char *path, bool from_glob)
{
	bool grant = kind == FS_ALLOW_READ || kind == FS_ALLOW_WRITE;
	bool kept, caller_link = false;
	char *abs = NULL;
	const char *why;
	int ret;

	if (c->p->guarded)
		ret = policy_path_guarded(raw, c->p->cwd, c->p->home, c->p->guard_uid, grant, &abs,
					  &kept, &caller_link, &why);
	else
		ret = policy_path_normalise(raw, c->p->cwd, c->p->home, true, &abs, &kept, &why);
	if (ret == -ENOMEM) {
		c->oom = true;
		return ret;
	}
	if (ret) {
		perr(c, path, "\"%s\": %s", source, why);
		return ret;
	}
	if (grant && caller_link) {
		grant_cut(c, path, source, abs);
		free(abs);
		return 0;
	}
	if (kept && !caller_link)
		note_kept(c, path, abs, grant);
	ret = push_rule(c, kind, abs, source, false, "");
	if (!ret) {
		struct fs_rule *r = &c->p->fs_rules[c->p->n_fs_rules - 1];

		r->kept_spelling = kept;
		r->no_links = c->p->guarded && grant;
		r->from_glob = from_glob;
		/* The ceiling names the caller's entry by its place in the file. */
		r->jpath = strdup(path);
		if (!pcheck(c, r->jpath))
			ret = -ENOMEM;
	}
	return ret;
}

/* Escapes glob metacharacters of an already-resolved directory. */
static char *glob_escape(const char *s)
{
	char *out = malloc(strlen(s) * 2 + 1), *w = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			*w++ = '\\';
		*w++ = *s;
	}
	*w = '\0';
	return out;
}

/* denyRead "dir/pattern": one rule per current match (srt's Linux behaviour). */
static void expand_deny_glob(struct pctx *c, const char *spec, const char *source,
			     const char *path)
{
	char *copy = strdup(spec), *slash, *dir = NULL, *edir = NULL, *pat = NULL;
	const char *base, *why;
	glob_t g = { 0 };
	size_t added = 0;
	int ret;

	if (!pcheck(c, copy))
		return;
	slash = strrchr(copy, '/');
	if (!slash) {
		base = copy;
		ret = policy_path_normalise(".", c->p->cwd, c->p->home, true, &dir, NULL, &why);
	} else {
		*slash = '\0';
		base = slash + 1;
		ret = policy_path_normalise(slash == copy ? "/" : copy, c->p->cwd,
					    c->p->home, true, &dir, NULL, &why);
	}
	if (ret) {
		if (ret == -ENOMEM)
			c->oom = true;
		else
			perr(c, path, "\"%s\": %s", source, why);
		goto out;
	}
	edir = glob_escape(dir);
	if (!pcheck(c, edir) ||
	    asprintf(&pat, "%s/%s", strcmp(edir, "/") ? edir : "", base) < 0) {
		pat = NULL;
		c->oom = true;
		goto out;
	}
	/* GLOB_PERIOD: a deny of "*" must cover dot files too. */
	ret = glob(pat, GLOB_PERIOD, NULL, &g);
	if (ret == GLOB_NOSPACE) {
		c->oom = true;
		goto out;
	}
	for (size_t i = 0; ret == 0 && i < g.gl_pathc; i++) {
		const char *m = strrchr(g.gl_pathv[i], '/');

		m = m ? m + 1 : g.gl_pathv[i];
		if (!strcmp(m, ".") || !strcmp(m, ".."))
			continue;
		if (add_path(c, FS_DENY_READ, g.gl_pathv[i], source, path, true))
			break;
		added++;
	}
	pdebug(c, path, "glob \"%s\" expanded once at load to %zu path(s); files "
	       "created later are not covered", source, added);
out:
	globfree(&g);
	free(copy);
	free(dir);
	free(edir);
	free(pat);
}

static void add_entry(struct pctx *c, enum fs_rule_kind kind, const char *raw,
		      bool literal, const char *path)
{
	char *spec;
	size_t len, dirlen;
	const char *slash;

	if (literal) {
		add_path(c, kind, raw, raw, path, false);
		return;
	}
	spec = strdup(raw);
	if (!pcheck(c, spec))
		return;
	len = strlen(spec);
	/* DIR followed by slash-star-star means DIR and everything under it. */
	if (len >= 3 && !strcmp(spec + len - 3, "/**")) {
		len -= 3;
		spec[len] = '\0';
		if (!len) {
			spec[0] = '/';
			spec[1] = '\0';
			len = 1;
		}
	}
	while (len > 1 && spec[len - 1] == '/')
		spec[--len] = '\0';
	if (!has_glob(spec, len)) {
		add_path(c, kind, spec, raw, path, false);
		goto out;
	}
	slash = strrchr(spec, '/');
	dirlen = slash ? (size_t)(slash - spec) : 0;
	if (kind == FS_DENY_READ && !has_glob(spec, dirlen) && strcmp(spec + dirlen, "/**") &&
	    !strstr(spec + dirlen, "**")) {
		expand_deny_glob(c, spec, raw, path);
		goto out;
	}
	if (kind == FS_DENY_READ)
		perr(c, path, "\"%s\": unsupported glob; denyRead accepts a wildcard "
		     "(* ? [...]) in the last component only, expanded once at load, "
		     "and a trailing /** (the whole directory); for a name containing "
		     "these characters use {\"path\": ..., \"literal\": true}", raw);
	else
		perr(c, path, "\"%s\": globs are not supported in %s; write the "
		     "file or directory (a trailing /** is accepted and means the "
		     "directory); for a name containing * ? [ ] use "
		     "{\"path\": ..., \"literal\": true}", raw, kind_key[kind]);
out:
	free(spec);
}

void policy_fs_add_named(struct pctx *c, enum fs_rule_kind kind, const char *raw,
			 const char *path, const char *prefix)
{
	size_t first = c->p->n_fs_rules;

	add_entry(c, kind, raw, false, path);
	for (size_t i = first; i < c->p->n_fs_rules; i++) {
		struct fs_rule *r = &c->p->fs_rules[i];
		char *name;

		if (!r->name || asprintf(&name, "%s%s", prefix, r->name) < 0) {
			c->oom = true;
			return;
		}
		free(r->name);
		r->name = name;
	}
}

static const struct key_spec entry_keys[] = {
	{ "path", KEY_KNOWN, NULL },
	{ "literal", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

static void parse_object_entry(struct pctx *c, enum fs_rule_kind kind,
			       const cJSON *item, const char *path)
{
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(item, "path");
	bool literal = false;
	char *pp = jpath_key(c, path, "path");

	check_keys(c, item, path, entry_keys);
	jget_bool(c, item, "literal", path, &literal);
	if (!pp)
		return;
	if (!pv)
		perr(c, pp, "Required");
	else if (jelem_string(c, pv, pp, true))
		add_entry(c, kind, pv->valuestring, literal, path);
	free(pp);
}

static void parse_list(struct pctx *c, enum fs_rule_kind kind, const cJSON *arr,
		       const char *parent)
{
	char *lp = jpath_key(c, parent, kind_key[kind]);
	size_t i = 0;

	if (!lp)
		return;
	for (const cJSON *item = arr->child; item; item = item->next, i++) {
		char *path = jpath_index(c, lp, i);

		if (!path)
			break;
		if (cJSON_IsString(item)) {
			if (jelem_string(c, item, path, true))
				add_entry(c, kind, item->valuestring, false, path);
		} else if (cJSON_IsObject(item)) {
			parse_object_entry(c, kind, item, path);
		} else {
			perr(c, path, "expected a path string or {\"path\": ..., "
			     "\"literal\": true}, got %s", json_type_name(item));
		}
		free(path);
	}
	free(lp);
}

int policy_add_implicit_rules(struct pctx *c)
{
	/* srt's implicit writable devices; /dev/stdout and /dev/stderr are the
	 * process's own descriptors and are handled by the kernel side. */
	static const char *const dev[] = { "/dev/null", "/dev/tty" };

	for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++) {
		char *d = strdup(dev[i]);

		if (!pcheck(c, d) || push_rule(c, FS_ALLOW_WRITE, d, "(implicit)", true,
					       "implicit:"))
			return -ENOMEM;
		c->p->fs_rules[c->p->n_fs_rules - 1].from_default = true;
	}
	return 0;
}

void policy_parse_filesystem(struct pctx *c, const cJSON *fs)
{
	static const char parent[] = "filesystem";
	struct policy *p = c->p;

	if (!want_object(c, fs, parent))
		return;
	check_keys(c, fs, parent, fs_keys);
	jget_bool(c, fs, "disabled", parent, &p->fs_disabled);
	jget_bool(c, fs, "allowGitConfig", parent, &p->allow_git_config);
	jget_array(c, fs, "denyRead", parent, true, "paths");
	jget_array(c, fs, "allowWrite", parent, true, "paths");
	jget_array(c, fs, "denyWrite", parent, true, "paths");
	jget_array(c, fs, "allowRead", parent, false, "paths");
	/* Walk members, not keys, so rules keep the file's order. */
	for (const cJSON *m = fs->child; m; m = m->next) {
		for (int k = FS_DENY_READ; k <= FS_DENY_WRITE; k++)
			if (!strcmp(m->string, kind_key[k]) && cJSON_IsArray(m))
				parse_list(c, k, m, parent);
	}
	if (p->fs_disabled) {
		for (size_t i = 0; i < p->n_fs_rules; i++) {
			free(p->fs_rules[i].path);
			free(p->fs_rules[i].source);
			free(p->fs_rules[i].name);
			free(p->fs_rules[i].jpath);
		}
		free(p->fs_rules);
		p->fs_rules = NULL;
		p->n_fs_rules = 0;
		pdebug(c, "filesystem.disabled", "every filesystem rule is off, the "
		       "mandatory deny set included");
		return;
	}
	if (policy_add_implicit_rules(c))
		return;
}
