// SPDX-License-Identifier: MIT
/*
 * "credentials" (strict, as in srt: an unknown key is an error, because a
 * misspelt credential rule would leak the secret it meant to protect):
 * envVars rules, files (each a read deny; "mask" becomes "deny"), the
 * masking options of both in policy_cred_mask.c, awsPairs and sigv4 in
 * policy_cred_aws.c. Then "ignoreViolations" and "git".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"

static const struct key_spec cred_keys[] = {
	{ "envVars", KEY_KNOWN, NULL },
	{ "files", KEY_KNOWN, NULL },
	{ "awsPairs", KEY_KNOWN, NULL },
	{ "allowPlaintextInject", KEY_KNOWN, NULL },
	{ "sigv4", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

/* srt's entries strip unknown keys; bpfbox warns (an error under --strict). */
#define MASK_KEYS \
	{ "mode", KEY_KNOWN, NULL }, \
	{ "extract", KEY_KNOWN, NULL }, \
	{ "onExtractNoMatch", KEY_KNOWN, NULL }, \
	{ "decode", KEY_KNOWN, NULL }, \
	{ "maskClaims", KEY_KNOWN, NULL }, \
	{ "maskDuplicates", KEY_KNOWN, NULL }, \
	{ "injectHosts", KEY_KNOWN, NULL }, \
	{ NULL, KEY_KNOWN, NULL }

static const struct key_spec env_keys[] = { { "name", KEY_KNOWN, NULL }, MASK_KEYS };
static const struct key_spec file_keys[] = { { "path", KEY_KNOWN, NULL }, MASK_KEYS };

/* An entry's mode: 0 and *mode, or -1 (reported). */
static int parse_mode(struct pctx *c, const cJSON *e, const char *path, enum policy_cred_mode *mode)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "mode");
	char *mp = jpath_key(c, path, "mode");
	int ret = -1;

	if (!mp)
		return -1;
	if (!v) {
		perr(c, mp, "Required");
	} else if (jelem_string(c, v, mp, true)) {
		if (!strcmp(v->valuestring, "deny") || !strcmp(v->valuestring, "mask")) {
			*mode = v->valuestring[0] == 'm' ? POLICY_CRED_MASK : POLICY_CRED_DENY;
			ret = 0;
		} else {
			perr(c, mp, "expected \"deny\" or \"mask\", got \"%s\"", v->valuestring);
		}
	}
	free(mp);
	return ret;
}

/*
 * Two deny rules of one variable say the same; a mask next to another rule
 * would leave which masking applies to the order of the list.
 */
static bool env_rule_fits(struct pctx *c, const char *np, const struct policy_cred_rule *r)
{
	const struct policy_cred_rule *o = policy_cred_find(c->p, r->name);

	if (!o || (o->mode == POLICY_CRED_DENY && r->mode == POLICY_CRED_DENY))
		return true;
	perr(c, np, "\"%s\" has a rule earlier in credentials.envVars: with \"mask\", one rule "
	     "per variable", r->name);
	return false;
}

static void add_env_rule(struct pctx *c, struct policy_cred_rule *r)
{
	struct policy_credentials *cr = &c->p->cred;
	struct policy_cred_rule *n = realloc(cr->env, (cr->n_env + 1) * sizeof(*n));

	if (!pcheck(c, n)) {
		policy_cred_rule_free(r);
		return;
	}
	cr->env = n;
	n[cr->n_env++] = *r;
	if (r->mode == POLICY_CRED_DENY)
		strv_push(c, &c->p->env_deny, &c->p->n_env_deny, r->name);
	memset(r, 0, sizeof(*r));
}

/* Returns whether the entry masks. */
static bool parse_env_var(struct pctx *c, const cJSON *e, const char *path)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
	struct policy_cred_rule r = { 0 };
	char *np = jpath_key(c, path, "name");
	bool ok = np != NULL, masks;

	check_keys(c, e, path, env_keys);
	if (!np) {
		ok = false;
	} else if (!name) {
		perr(c, np, "Required");
		ok = false;
	} else if (!jelem_string(c, name, np, true)) {
		ok = false;
	} else if (!env_name_ok(name->valuestring)) {
		perr(c, np, "\"%s\": an environment variable name is letters, digits "
		     "and '_', not starting with a digit", name->valuestring);
		ok = false;
	}
	if (parse_mode(c, e, path, &r.mode))
		ok = false;
	masks = ok && r.mode == POLICY_CRED_MASK;
	policy_parse_cred_mask(c, e, path, &r);
	if (ok) {
		r.name = pcheck(c, strdup(name->valuestring));
		ok = r.name && env_rule_fits(c, np, &r);
	}
	if (ok)
		add_env_rule(c, &r);
	free(np);
	policy_cred_rule_free(&r);
	return masks;
}

static const char FILE_MASK_NOTE[] = "bpfbox has no mount namespace to show a masked copy at "
	"the same path, so, as srt does where it cannot bind one (macOS, Windows), the file is "
	"denied instead: unreadable inside the sandbox";

/* Returns whether the entry asks for masking (done as a deny). */
static bool parse_file(struct pctx *c, const cJSON *e, const char *path)
{
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(e, "path");
	struct policy_cred_rule r = { 0 };
	char *pp = jpath_key(c, path, "path"), *prefix = NULL;
	const char *raw = NULL;
	bool ok, masks;

	check_keys(c, e, path, file_keys);
	ok = !parse_mode(c, e, path, &r.mode);
	masks = ok && r.mode == POLICY_CRED_MASK;
	/* Checked as srt checks them, though a deny uses none of them. */
	policy_parse_cred_mask(c, e, path, &r);
	policy_cred_rule_free(&r);
	if (!pp)
		goto out;
	if (!pv)
		perr(c, pp, "Required");
	else
		raw = jelem_string(c, pv, pp, true);
	if (!raw || !ok)
		goto out;
	if (masks) {
		size_t len = strlen(raw);

		if (raw[len - 1] == '/') {
			perr(c, pp, "Credential mode \"mask\" applies to a single file, not a directory. "
			     "Use mode \"deny\" for \"%s\", or point at the credential file inside it.",
			     raw);
			goto out;
		}
		pwarn(c, path, "\"%s\": mode \"mask\" becomes \"deny\": %s", raw, FILE_MASK_NOTE);
	}
	/* srt's filesystem.disabled drops these denies with every other read rule. */
	if (c->p->fs_disabled) {
		pdebug(c, pp, "off: filesystem.disabled drops every read rule, this one included");
		goto out;
	}
	if (asprintf(&prefix, "%s:", path) < 0) {
		prefix = NULL;
		c->oom = true;
		goto out;
	}
	policy_fs_add_named(c, FS_DENY_READ, raw, pp, prefix);
out:
	free(prefix);
	free(pp);
	return masks;
}

/* Walks a list of entries; returns whether any masks. */
static bool parse_entries(struct pctx *c, const cJSON *cred, const char *key,
			  bool (*entry)(struct pctx *c, const cJSON *e, const char *path))
{
	char *lp = jpath_key(c, "credentials", key);
	const cJSON *arr = jget_array(c, cred, key, "credentials", false, "objects");
	bool masks = false;
	size_t i = 0;

	for (const cJSON *e = arr && lp ? arr->child : NULL; e; e = e->next, i++) {
		char *path = jpath_index(c, lp, i);

		if (!path)
			break;
		if (want_object(c, e, path))
			masks |= entry(c, e, path);
		free(path);
	}
	free(lp);
	return masks;
}

void policy_credentials_free(struct policy_credentials *cr)
{
	for (size_t i = 0; i < cr->n_env; i++)
		policy_cred_rule_free(&cr->env[i]);
	free(cr->env);
	for (size_t i = 0; i < cr->n_aws_pairs; i++) {
		free(cr->aws_pairs[i].key_id_var);
		free(cr->aws_pairs[i].secret_var);
		free(cr->aws_pairs[i].session_var);
	}
	free(cr->aws_pairs);
	memset(cr, 0, sizeof(*cr));
}

void policy_parse_credentials(struct pctx *c, const cJSON *cred)
{
	static const char parent[] = "credentials";
	bool masks;

	if (!want_object(c, cred, parent))
		return;
	/* srt rejects unknown keys here; so do we, even without --strict. */
	check_keys_ex(c, cred, parent, cred_keys, "credentials accepts envVars, files, awsPairs, "
		      "allowPlaintextInject and sigv4");
	jget_bool(c, cred, "allowPlaintextInject", parent, &c->p->cred.allow_plaintext_inject);
	masks = parse_entries(c, cred, "envVars", parse_env_var);
	masks |= parse_entries(c, cred, "files", parse_file);
	policy_parse_aws(c, cred);
	/* The real value may go only where TLS is verified, unless the file opts out. */
	if (masks && !c->p->tls.enabled && !c->p->cred.allow_plaintext_inject)
		perr(c, parent, "Credential masking requires network.tlsTerminate so substitution "
		     "runs only over a verified TLS connection. Enable tlsTerminate, or set "
		     "credentials.allowPlaintextInject to opt out (not recommended).");
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
