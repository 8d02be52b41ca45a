// SPDX-License-Identifier: MIT
/*
 * Path entries to absolute, canonical paths: the kernel side compares real
 * paths, so a rule must name the real path too; but, as in srt, a symlink is
 * not followed when that would make a rule cover more than it names.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

/* Joins and lexically normalises: no "//", ".", "..", or trailing '/'. */
static char *lexical(const char *base, const char *rel)
{
	size_t cap = strlen(base) + strlen(rel) + 3;
	char *in = malloc(cap), *out = malloc(cap);
	size_t o = 0;
	char *save = NULL, *tok;

	if (!in || !out)
		goto fail;
	snprintf(in, cap, "%s/%s", base, rel);
	for (tok = strtok_r(in, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;	/* drop the '/' too */
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, tok, strlen(tok));
		o += strlen(tok);
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	free(in);
	return out;
fail:
	free(in);
	free(out);
	return NULL;
}

/* realpath of the deepest existing ancestor, with the rest appended. */
static char *resolve_existing(const char *path)
{
	char *probe = strdup(path), *real = NULL, *out = NULL;
	const char *rest;

	if (!probe)
		return NULL;
	for (;;) {
		char *slash;

		real = realpath(probe, NULL);
		if (real || errno == ENOMEM)
			break;
		slash = strrchr(probe, '/');
		if (!slash || slash == probe)
			probe[1] = '\0';	/* "/" always resolves */
		else
			*slash = '\0';
	}
	if (!real)
		goto out;
	rest = strcmp(probe, "/") ? path + strlen(probe) : path;
	if (asprintf(&out, "%s%s", strcmp(real, "/") ? real : "", rest) < 0)
		out = NULL;
	else if (!*out) {
		free(out);
		out = strdup("/");
	}
out:
	free(probe);
	free(real);
	return out;
}

/*
 * Whether directory res is, as an object, one of the entry's real ancestors:
 * spelled differently (a linked /home) or reached through a bind mount of one.
 */
static bool ancestor_object(const char *orig, const char *res)
{
	char *parent = strdup(orig), *real = NULL;
	struct stat rs, as;
	bool found = false;
	char *slash;

	if (!parent || stat(res, &rs) || !S_ISDIR(rs.st_mode))
		goto out;
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		goto out;
	*slash = '\0';
	real = resolve_existing(parent);
	if (!real)
		goto out;
	do {
		if (!stat(real, &as) && as.st_dev == rs.st_dev && as.st_ino == rs.st_ino) {
			found = true;
			break;
		}
		slash = strrchr(real, '/');
		if (slash && slash != real)
			*slash = '\0';
		else if (slash && real[1])
			real[1] = '\0';
		else
			break;
	} while (1);
out:
	free(parent);
	free(real);
	return found;
}

/* srt's isSymlinkOutsideBoundary: "/", one top-level component, or an ancestor. */
static bool widens(const char *orig, const char *res)
{
	size_t rl = strlen(res);

	if (!strcmp(orig, res))
		return false;
	if (!strcmp(res, "/"))
		return true;
	if (!strchr(res + 1, '/'))
		return true;
	if (!strncmp(orig, res, rl) && orig[rl] == '/')
		return true;
	return ancestor_object(orig, res);
}

static int expand(const char *raw, const char *cwd, const char *home, char **out,
		  const char **err)
{
	const char *base, *rel;

	if (!raw || !*raw) {
		*err = "path cannot be empty";
		return -EINVAL;
	}
	if (raw[0] == '~') {
		if (raw[1] && raw[1] != '/') {
			*err = "~user is not supported; write ~/... or an absolute path";
			return -EINVAL;
		}
		if (!home || home[0] != '/') {
			*err = "~ used but the home directory is unknown";
			return -EINVAL;
		}
		base = home;
		rel = raw + 1;
	} else if (raw[0] == '/') {
		base = "/";
		rel = raw;
	} else {
		if (!cwd || cwd[0] != '/') {
			*err = "relative path but the launch directory is unknown";
			return -EINVAL;
		}
		base = cwd;
		rel = raw;
	}
	*out = lexical(base, rel);
	return *out ? 0 : -ENOMEM;
}

int policy_path_normalise(const char *raw, const char *cwd, const char *home,
			  bool resolve, char **out, bool *kept, const char **err)
{
	char *lex = NULL, *res;
	int ret;

	*out = NULL;
	*err = NULL;
	if (kept)
		*kept = false;
	ret = expand(raw, cwd, home, &lex, err);
	if (ret || !resolve) {
		*out = lex;
		return ret;
	}
	res = resolve_existing(lex);
	if (!res) {
		free(lex);
		return -ENOMEM;
	}
	if (widens(lex, res)) {
		if (kept)
			*kept = true;
		free(res);
		*out = lex;
		return 0;
	}
	free(lex);
	*out = res;
	return 0;
}

int policy_path_resolve_target(const char *raw, const char *cwd, const char *home,
			       char **out, const char **err)
{
	char *lex = NULL, *joined = NULL, *res;
	int ret;

	*out = NULL;
	*err = NULL;
	ret = expand(raw, cwd, home, &lex, err);
	if (ret)
		return ret;
	free(lex);
	/*
	 * The kernel takes ".." after a symbolic link from the link's target: the
	 * spelling is resolved as written, and only what is missing lexically.
	 */
	if (asprintf(&joined, "%s/%s", raw[0] == '~' ? home : raw[0] == '/' ? "" : cwd,
		     raw[0] == '~' ? raw + 1 : raw) < 0)
		return -ENOMEM;
	res = resolve_existing(joined);
	free(joined);
	if (!res)
		return -ENOMEM;
	*out = lexical("/", res);
	free(res);
	return *out ? 0 : -ENOMEM;
}

/* Links followed in one guarded walk before it gives up, as the kernel does. */
#define GUARD_MAX_LINKS 40
/* Directories deep in one walk; deeper paths are refused. */
#define GUARD_MAX_DEPTH 256

/*
 * Could the caller have put, or replace, an entry of this directory? Owned by
 * it, or writable by a group or everyone (the caller's groups are not asked:
 * any such bit counts). A sticky directory counts too: the caller may have
 * created the entry itself.
 */
static bool caller_controls(const struct stat *st, uid_t uid)
{
	return st->st_uid == uid || (st->st_mode & (S_IWGRP | S_IWOTH));
}

/* Appends "/name" (len bytes) to res; -ENAMETOOLONG past PATH_MAX. */
static int push_name(char *res, size_t *rlen, const char *name, size_t len)
{
	if (*rlen + 1 + len >= PATH_MAX)
		return -ENAMETOOLONG;
	res[(*rlen)++] = '/';
	memcpy(res + *rlen, name, len);
	*rlen += len;
	res[*rlen] = '\0';
	return 0;
}

static void pop_name(char *res, size_t *rlen)
{
	while (*rlen > 0 && res[*rlen - 1] != '/')
		(*rlen)--;
	if (*rlen > 0)
		(*rlen)--;
	res[*rlen] = '\0';
}

/*
 * Walks lex from "/" as realpath would, but a link is followed only where no
 * directory on the way to it (the root included) is one the caller controls:
 * taint[k] says whether the directory at depth k, or one above it, is. The
 * deepest existing part is resolved, the rest appended as it is.
 */
static int guarded_walk(const char *lex, uid_t uid, char *res, bool *caller_link)
{
	bool taint[GUARD_MAX_DEPTH + 1];
	char *unwalked = strdup(lex), link[PATH_MAX];
	size_t rlen = 0, depth = 0;
	int links = 0, ret = 0;
	bool missing = false;
	struct stat st;
	const char *p;

	*caller_link = false;
	res[0] = '\0';
	if (!unwalked)
		return -ENOMEM;
	if (lstat("/", &st)) {
		ret = -errno;
		goto out;
	}
	taint[0] = caller_controls(&st, uid);
	p = unwalked;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		const char *next = *end ? end + 1 : end;

		if (!len || (len == 1 && *p == '.')) {
			p = next;
			continue;
		}
		if (len == 2 && !strncmp(p, "..", 2)) {
			pop_name(res, &rlen);
			if (depth > 0)
				depth--;
			p = next;
			continue;
		}
		ret = push_name(res, &rlen, p, len);
		if (ret)
			goto out;
		if (missing || lstat(res, &st)) {
			/* From here on nothing exists: the rest is kept as written. */
			missing = true;
			p = next;
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t n;
			char *rest;

			if (taint[depth]) {
				*caller_link = true;
				goto out;
			}
			n = readlink(res, link, sizeof(link) - 1);
			if (n < 0 || ++links > GUARD_MAX_LINKS) {
				ret = n < 0 ? -errno : -ELOOP;
				goto out;
			}
			link[n] = '\0';
			pop_name(res, &rlen);
			if (link[0] == '/') {
				rlen = 0;
				res[0] = '\0';
				depth = 0;
			}
			if (asprintf(&rest, "%s/%s", link, next) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			free(unwalked);
			unwalked = rest;
			p = unwalked;
			continue;
		}
		if (++depth > GUARD_MAX_DEPTH) {
			ret = -ENAMETOOLONG;
			goto out;
		}
		taint[depth] = taint[depth - 1] || (S_ISDIR(st.st_mode) && caller_controls(&st, uid));
		p = next;
	}
	if (!rlen)
		strcpy(res, "/");
out:
	free(unwalked);
	return ret;
}

int policy_path_guarded(const char *raw, const char *cwd, const char *home, uid_t uid,
			bool grant, char **out, bool *kept, bool *caller_link, const char **err)
{
	char *lex = NULL, res[PATH_MAX];
	int ret;

	*out = NULL;
	*err = NULL;
	*kept = false;
	ret = expand(raw, cwd, home, &lex, err);
	if (ret)
		return ret;
	ret = guarded_walk(lex, uid, res, caller_link);
	if (ret == -ENOMEM) {
		free(lex);
		return ret;
	}
	/* A walk that failed (a loop, a name too long) leaves nothing to trust. */
	if (ret)
		*caller_link = true;
	/*
	 * A grant names what the walk found, every link resolved: the kernel
	 * then resolves it without following any. A deny through the caller's
	 * link keeps the caller's spelling (the kernel still follows the link,
	 * which only narrows), so no name beyond it reaches a message.
	 */
	if (*caller_link || (!grant && widens(lex, res))) {
		*kept = !grant;
		*out = lex;
		return 0;
	}
	free(lex);
	*out = strdup(res);
	return *out ? 0 : -ENOMEM;
}
