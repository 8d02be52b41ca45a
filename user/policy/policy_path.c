// SPDX-License-Identifier: MIT
/*
 * Path entries to absolute, canonical paths: the kernel side compares real
 * paths, so a rule must name the real path too; but, as in srt, a symlink is
 * not followed when that would make a rule cover more than it names.
 */
#define POLICY_INTERNAL
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	return !strncmp(orig, res, rl) && orig[rl] == '/';
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
	char *lex = NULL;
	int ret;

	*out = NULL;
	*err = NULL;
	ret = expand(raw, cwd, home, &lex, err);
	if (ret)
		return ret;
	*out = resolve_existing(lex);
	free(lex);
	return *out ? 0 : -ENOMEM;
}
