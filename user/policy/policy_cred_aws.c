// SPDX-License-Identifier: MIT
/*
 * credentials.awsPairs and credentials.sigv4, with srt's meaning. A SigV4
 * signature is an HMAC of the secret key, so a request signed with the
 * masked secret can only be repaired by signing it again with the real one:
 * a pair names the masked variables that make up one AWS credential. Each
 * member must be a whole-value masked envVars rule (the trigger is the fake
 * key id matched exactly, and the signer needs the entire secret) and fill
 * one slot only. srt pairs AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN by itself when they are masked so and no pair names
 * them; that pair is added here, marked implicit. sigv4 says what becomes
 * of the requests no re-signing can serve (streaming, presigned, SigV4a).
 */
#include <stdlib.h>
#include <string.h>

#include "policy_json.h"

static const struct key_spec pair_keys[] = {
	{ "accessKeyIdVar", KEY_KNOWN, NULL },
	{ "secretAccessKeyVar", KEY_KNOWN, NULL },
	{ "sessionTokenVar", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

static const struct key_spec sigv4_keys[] = {
	{ "streaming", KEY_KNOWN, NULL },
	{ "presigned", KEY_KNOWN, NULL },
	{ "sigv4a", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

static bool whole_value_mask(const struct policy_cred_rule *r)
{
	return r && r->mode == POLICY_CRED_MASK && !r->extract && !r->decode_jwt;
}

static bool pair_names(const struct policy_aws_pair *a, const char *name)
{
	return !strcmp(a->key_id_var, name) || !strcmp(a->secret_var, name) ||
	       (a->session_var && !strcmp(a->session_var, name));
}

/* A slot's variable: checked, and kept in *out when it may fill the slot. */
static void pair_member(struct pctx *c, const cJSON *e, const char *path, const char *key,
			bool required, const char *names[3], int slot, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
	const struct policy_cred_rule *r;
	const struct policy_credentials *cr = &c->p->cred;
	char *kp = jpath_key(c, path, key);
	const char *name;
	bool seen = false;

	if (!kp)
		return;
	if (!v) {
		if (required)
			perr(c, kp, "Required");
		goto out;
	}
	name = jelem_string(c, v, kp, true);
	if (!name)
		goto out;
	if (!env_name_ok(name)) {
		perr(c, kp, "\"%s\": Environment variable name must start with a letter or underscore "
		     "and contain only letters, digits, and underscores", name);
		goto out;
	}
	for (size_t i = 0; i < cr->n_aws_pairs && !seen; i++)
		seen = pair_names(&cr->aws_pairs[i], name);
	for (int k = 0; k < slot && !seen; k++)
		seen = names[k] && !strcmp(names[k], name);
	names[slot] = name;
	r = policy_cred_find(c->p, name);
	if (seen)
		perr(c, kp, "\"%s\" appears in more than one awsPairs slot (within or across pairs) — "
		     "each variable can fill exactly one slot.", name);
	else if (!r || r->mode != POLICY_CRED_MASK)
		perr(c, kp, "\"%s\" does not reference a credentials.envVars entry with mode \"mask\" "
		     "— an AWS pair links already-masked variables; add the entry (masking is the "
		     "opt-in for SigV4 re-signing).", name);
	else if (!whole_value_mask(r))
		perr(c, kp, "\"%s\" uses extract/decode, but an AWS pair member must be masked "
		     "whole-value: the SigV4 trigger is an exact match of the fake access key id, and "
		     "the signer needs the entire real value.", name);
	else
		*out = pcheck(c, strdup(name));
out:
	free(kp);
}

static void add_pair(struct pctx *c, struct policy_aws_pair *a)
{
	struct policy_credentials *cr = &c->p->cred;
	struct policy_aws_pair *n = realloc(cr->aws_pairs, (cr->n_aws_pairs + 1) * sizeof(*n));

	if (!pcheck(c, n)) {
		free(a->key_id_var);
		free(a->secret_var);
		free(a->session_var);
		return;
	}
	cr->aws_pairs = n;
	n[cr->n_aws_pairs++] = *a;
}

static void parse_pair(struct pctx *c, const cJSON *e, const char *path)
{
	struct policy_aws_pair a = { 0 };
	const char *names[3] = { NULL, NULL, NULL };

	/* srt's pair object is strict. */
	check_keys_ex(c, e, path, pair_keys, "an AWS pair has accessKeyIdVar, secretAccessKeyVar "
		      "and sessionTokenVar");
	pair_member(c, e, path, "accessKeyIdVar", true, names, 0, &a.key_id_var);
	pair_member(c, e, path, "secretAccessKeyVar", true, names, 1, &a.secret_var);
	pair_member(c, e, path, "sessionTokenVar", false, names, 2, &a.session_var);
	if (a.key_id_var && a.secret_var &&
	    (a.session_var || !cJSON_GetObjectItemCaseSensitive(e, "sessionTokenVar"))) {
		add_pair(c, &a);
		return;
	}
	free(a.key_id_var);
	free(a.secret_var);
	free(a.session_var);
}

/* srt's own pairing of the conventional variables, when masked whole and named by no pair. */
static void implicit_pair(struct pctx *c)
{
	static const char *const trio[] = { "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
					    "AWS_SESSION_TOKEN" };
	const struct policy_credentials *cr = &c->p->cred;
	struct policy_aws_pair a = { 0 };

	for (size_t i = 0; i < cr->n_aws_pairs; i++)
		for (int k = 0; k < 3; k++)
			if (pair_names(&cr->aws_pairs[i], trio[k]))
				return;
	if (!whole_value_mask(policy_cred_find(c->p, trio[0])) ||
	    !whole_value_mask(policy_cred_find(c->p, trio[1])))
		return;
	a.key_id_var = pcheck(c, strdup(trio[0]));
	a.secret_var = pcheck(c, strdup(trio[1]));
	if (whole_value_mask(policy_cred_find(c->p, trio[2])))
		a.session_var = pcheck(c, strdup(trio[2]));
	a.implicit = true;
	add_pair(c, &a);
}

static void parse_sigv4(struct pctx *c, const cJSON *s)
{
	static const char parent[] = "credentials.sigv4";
	static const char *const keys[] = { "streaming", "presigned", "sigv4a" };
	struct policy_credentials *cr = &c->p->cred;
	enum policy_sigv4_mode *out[] = { &cr->sigv4_streaming, &cr->sigv4_presigned, &cr->sigv4a };

	if (!want_object(c, s, parent))
		return;
	check_keys_ex(c, s, parent, sigv4_keys, "sigv4 has streaming, presigned and sigv4a");
	for (int i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, keys[i]);
		char *kp;

		if (!v)
			continue;
		kp = jpath_key(c, parent, keys[i]);
		if (kp && jelem_string(c, v, kp, false)) {
			if (!strcmp(v->valuestring, "passthrough"))
				*out[i] = POLICY_SIGV4_PASSTHROUGH;
			else if (strcmp(v->valuestring, "deny"))
				perr(c, kp, "expected \"deny\" or \"passthrough\", got \"%s\"",
				     v->valuestring);
		}
		free(kp);
	}
}

void policy_parse_aws(struct pctx *c, const cJSON *cred)
{
	const cJSON *arr = jget_array(c, cred, "awsPairs", "credentials", false, "objects");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(cred, "sigv4");
	size_t i = 0;

	for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next, i++) {
		char *path = jpath_index(c, "credentials.awsPairs", i);

		if (!path)
			return;
		if (want_object(c, e, path))
			parse_pair(c, e, path);
		free(path);
	}
	implicit_pair(c);
	if (s && !cJSON_IsNull(s))
		parse_sigv4(c, s);
}
