// SPDX-License-Identifier: MIT
/*
 * "credentials" (strict, as in srt: an unknown key is an error, because a
 * misspelt credential rule would leak the secret it meant to protect),
 * "ignoreViolations" and "git".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"

static const char MASK_NOTE[] = "credential masking (putting the real value back in requests to its hosts) "
	"is not built yet: use \"deny\", or keep the variable out of the sandbox";

static const struct key_spec cred_keys[] = {
	{ "envVars", KEY_KNOWN, NULL },
	{ "files", KEY_REFUSED, "credentials.files is not implemented; list the "
	  "path in filesystem.denyRead instead" },
	{ "awsPairs", KEY_REFUSED, MASK_NOTE },
	{ "allowPlaintextInject", KEY_IGNORED, "only concerns masked credentials" },
	{ "sigv4", KEY_IGNORED, "only concerns masked credentials" },
	{ NULL, KEY_KNOWN, NULL },
};

static const struct key_spec env_keys[] = {
	{ "name", KEY_KNOWN, NULL },
	{ "mode", KEY_KNOWN, NULL },
	{ "extract", KEY_IGNORED, "only used with mode \"mask\"" },
	{ "onExtractNoMatch", KEY_IGNORED, "only used with mode \"mask\"" },
	{ "decode", KEY_IGNORED, "only used with mode \"mask\"" },
	{ "maskClaims", KEY_IGNORED, "only used with mode \"mask\"" },
	{ "injectHosts", KEY_IGNORED, "only used with mode \"mask\"" },
	{ NULL, KEY_KNOWN, NULL },
};

static bool env_name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static void parse_env_var(struct pctx *c, const cJSON *e, const char *path)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(e, "mode");
	char *np = jpath_key(c, path, "name"), *mp = jpath_key(c, path, "mode");
	bool ok = true;

	if (!np || !mp)
		goto out;
	check_keys(c, e, path, env_keys);
	if (!name) {
		perr(c, np, "Required");
		ok = false;
	} else if (!jelem_string(c, name, np, true)) {
		ok = false;
	} else if (!env_name_ok(name->valuestring)) {
		perr(c, np, "\"%s\": an environment variable name is letters, digits "
		     "and '_', not starting with a digit", name->valuestring);
		ok = false;
	}
	if (!mode) {
		perr(c, mp, "Required");
		ok = false;
	} else if (!jelem_string(c, mode, mp, true)) {
		ok = false;
	} else if (!strcmp(mode->valuestring, "mask")) {
		perr(c, mp, "not supported by bpfbox: mode \"mask\" (%s); use "
		     "\"deny\" or remove the entry", MASK_NOTE);
		ok = false;
	} else if (strcmp(mode->valuestring, "deny")) {
		perr(c, mp, "expected \"deny\" or \"mask\", got \"%s\"", mode->valuestring);
		ok = false;
	}
	if (ok)
		strv_push(c, &c->p->env_deny, &c->p->n_env_deny, name->valuestring);
out:
	free(np);
	free(mp);
}

void policy_parse_credentials(struct pctx *c, const cJSON *cred)
{
	static const char parent[] = "credentials";
	const cJSON *arr;
	size_t i = 0;

	if (!want_object(c, cred, parent))
		return;
	/* srt rejects unknown keys here; so do we, even without --strict. */
	check_keys_ex(c, cred, parent, cred_keys, "credentials accepts envVars only");
	arr = jget_array(c, cred, "envVars", parent, false, "objects");
	for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next, i++) {
		char *path = jpath_index(c, "credentials.envVars", i);

		if (!path)
			return;
		if (want_object(c, e, path))
			parse_env_var(c, e, path);
		free(path);
	}
}

void policy_parse_ignore(struct pctx *c, const cJSON *iv)
{
	static const char parent[] = "ignoreViolations";
	struct policy *p = c->p;

	if (!want_object(c, iv, parent))
		return;
	check_duplicate_keys(c, iv, parent);
	for (const cJSON *m = iv->child; m; m = m->next) {
		char *path = jpath_key(c, parent, m->string);
		struct ignore_rule *nr, *r;
		size_t i = 0;

		if (!path)
			return;
		if (!cJSON_IsArray(m)) {
			perr(c, path, "expected an array of strings, got %s", json_type_name(m));
			goto next;
		}
		nr = realloc(p->ignore, (p->n_ignore + 1) * sizeof(*nr));
		if (!pcheck(c, nr))
			goto next;
		p->ignore = nr;
		r = &nr[p->n_ignore++];
		memset(r, 0, sizeof(*r));
		r->command = pcheck(c, strdup(m->string));
		for (const cJSON *l = m->child; l; l = l->next, i++) {
			char *lp = jpath_index(c, path, i);

			if (lp && jelem_string(c, l, lp, false))
				strv_push(c, &r->lines, &r->n_lines, l->valuestring);
			free(lp);
		}
next:
		free(path);
	}
}

static const struct key_spec git_keys[] = {
	{ "safeDirectories", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

void policy_parse_git(struct pctx *c, const cJSON *git)
{
	struct policy *p = c->p;
	const cJSON *arr;
	size_t i = 0;

	if (!want_object(c, git, "git"))
		return;
	check_keys(c, git, "git", git_keys);
	arr = jget_array(c, git, "safeDirectories", "git", false, "paths");
	for (const cJSON *d = arr ? arr->child : NULL; d; d = d->next, i++) {
		char *path = jpath_index(c, "git.safeDirectories", i), *abs = NULL;
		const char *s, *why;
		int ret;

		if (!path)
			return;
		s = jelem_string(c, d, path, true);
		if (!s)
			goto next;
		/* git's own "*" (every directory) is passed through as is. */
		if (!strcmp(s, "*")) {
			strv_push(c, &p->git_safe_dirs, &p->n_git_safe_dirs, s);
			goto next;
		}
		ret = policy_path_normalise(s, p->cwd, p->home, true, &abs, NULL, &why);
		if (ret == -ENOMEM)
			c->oom = true;
		else if (ret)
			perr(c, path, "\"%s\": %s", s, why);
		else
			strv_push(c, &p->git_safe_dirs, &p->n_git_safe_dirs, abs);
		free(abs);
next:
		free(path);
	}
}
