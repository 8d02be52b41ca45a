// SPDX-License-Identifier: MIT
/* Masked credentials' side of a run (sandbox_cred.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "cred/cred_extract.h"
#include "cred/cred_jwt.h"
#include "cred/cred_subst.h"
#include "lib/openssl_lazy.h"
#include "policy/domain.h"
#include "sandbox_cred.h"

/* The value of name in env, or NULL. */
static const char *env_value(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int push(char ***v, size_t *n, char *s)
{
	char **nv;

	if (!s)
		return -ENOMEM;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	*v = nv;
	nv[(*n)++] = s;
	return 0;
}

/* Pairs first..count of the table belong to rule r. */
static int own_pairs(struct sandbox_cred *sc, const struct policy_cred_rule *r)
{
	size_t count = cred_table_count(sc->table);
	const struct policy_cred_rule **nr;

	if (count == sc->n_pairs)
		return 0;
	nr = realloc(sc->rule_of, count * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	sc->rule_of = nr;
	for (size_t i = sc->n_pairs; i < count; i++)
		nr[i] = r;
	sc->n_pairs = count;
	return 0;
}

/* The command's value: the sentinel, srt's fake token, or the value with its captures masked. */
static int mask_value(struct sandbox_cred *sc, const struct policy_cred_rule *r, const char *value, char **fake,
		      struct errmsg *em)
{
	size_t len = strlen(value), fake_len;
	struct cred_extract *x = NULL;
	char why[160] = "";
	int err;

	if (r->decode_jwt) {
		err = cred_jwt_mask(sc->table, r->name, value, len, (const char *const *)r->mask_claims,
				    r->n_mask_claims, fake, &fake_len, NULL);
		if (err == -EINVAL)
			return -ENOENT;	/* not a JWT: onExtractNoMatch decides */
		return err;
	}
	if (!r->extract) {
		err = cred_table_mask(sc->table, r->name, value, len, fake, &fake_len);
		if (err == -EINVAL)
			errmsg_set(em, err, "credentials: %s's value cannot be hidden by a sentinel", r->name);
		return err < 0 ? err : 0;
	}
	err = cred_extract_compile(r->extract, &x, why, sizeof(why));
	if (err)
		return errmsg_set(em, err, "credentials: %s's extract: %s", r->name, why), err;
	err = cred_extract_mask(x, sc->table, r->name, value, len, r->mask_duplicates, fake, &fake_len, NULL);
	cred_extract_free(x);
	if (err == -EINVAL)
		errmsg_set(em, err, "credentials: %s's extract leaves its group unset, or a capture cannot be hidden",
			   r->name);
	return err;
}

/* Nothing to mask in the value: srt's onExtractNoMatch. */
static int no_match(struct sandbox_cred *sc, const struct policy_cred_rule *r, struct log *log, struct errmsg *em)
{
	switch (r->on_no_match) {
	case POLICY_NO_MATCH_DENY:
		return push(&sc->removed, &sc->n_removed, strdup(r->name));
	case POLICY_NO_MATCH_ERROR:
		return errmsg_set(em, -EINVAL, "credentials: %s: nothing of its value matches %s (onExtractNoMatch "
				  "\"error\")", r->name, r->decode_jwt ? "a JWT's claims" : "extract"),
		       -EINVAL;
	case POLICY_NO_MATCH_WARN:
		break;
	}
	log_msg(log, LOG_WARN, "credential-unmasked",
		"credentials: %s passes UNMASKED: nothing of its value matches %s (onExtractNoMatch \"warn\"; "
		"\"deny\" removes it instead)", r->name, r->decode_jwt ? "a JWT's claims" : "extract");
	return 0;
}

/* Pair i's real value, as a string for the log's secrets. */
static int add_real(const struct cred_table *t, size_t i, struct log *log)
{
	size_t len;
	const char *real = cred_table_real(t, i, &len);
	char *copy = strndup(real, len);
	int err;

	if (!copy)
		return -ENOMEM;
	err = log_add_secret(log, cred_table_name(t, i), copy);
	explicit_bzero(copy, len);
	free(copy);
	return err;
}

static int mask_rule(struct sandbox_cred *sc, const struct policy_cred_rule *r, const char *value, struct log *log,
		     struct errmsg *em)
{
	char *fake = NULL, *entry = NULL;
	int err;

	/* Before anything can log it. */
	err = log_add_secret(log, r->name, value);
	if (err)
		return errmsg_set(em, err, "credentials: %s", r->name), err;
	err = mask_value(sc, r, value, &fake, em);
	if (err == -ENOENT)
		return no_match(sc, r, log, em);
	if (!err && asprintf(&entry, "%s=%s", r->name, fake) < 0)
		err = -ENOMEM;
	free(fake);
	if (!err)
		err = push(&sc->env, &sc->n_env, entry);
	if (!err)
		err = own_pairs(sc, r);
	/* The claims and captures put back are secrets too. */
	for (size_t i = 0; !err && i < cred_table_count(sc->table); i++)
		err = add_real(sc->table, i, log);
	if (err && !em->text[0])
		errmsg_set(em, err, "credentials: masking %s", r->name);
	return err;
}

/* The table pair masking variable name whole, or -1. */
static long pair_of(const struct cred_table *t, const char *name)
{
	for (size_t i = 0; i < cred_table_count(t); i++)
		if (!strcmp(cred_table_name(t, i), name))
			return (long)i;
	return -1;
}

static struct cred_span real_of(const struct cred_table *t, size_t i)
{
	struct cred_span s;

	s.p = cred_table_real(t, i, &s.n);
	return s;
}

/* awsPairs whose key id and secret were both in the environment, for the proxy's re-signing. */
static int build_aws(struct sandbox_cred *sc, const struct policy *p)
{
	const struct cred_table *t = sc->table;

	if (!p->cred.n_aws_pairs)
		return 0;
	sc->aws = calloc(p->cred.n_aws_pairs, sizeof(*sc->aws));
	sc->aws_secret = calloc(p->cred.n_aws_pairs, sizeof(*sc->aws_secret));
	if (!sc->aws || !sc->aws_secret)
		return -ENOMEM;
	for (size_t j = 0; j < p->cred.n_aws_pairs; j++) {
		const struct policy_aws_pair *a = &p->cred.aws_pairs[j];
		long k = pair_of(t, a->key_id_var), s = pair_of(t, a->secret_var);
		long tok = a->session_var ? pair_of(t, a->session_var) : -1;
		struct cred_sigv4_pair *out = &sc->aws[sc->n_aws];

		if (k < 0 || s < 0)
			continue;
		out->sentinel_akid.p = cred_table_sentinel(t, (size_t)k, &out->sentinel_akid.n);
		out->real_akid = real_of(t, (size_t)k);
		out->real_secret = real_of(t, (size_t)s);
		out->real_token = tok >= 0 ? real_of(t, (size_t)tok) : (struct cred_span){ "", 0 };
		sc->aws_secret[sc->n_aws++] = (size_t)s;
	}
	return 0;
}

int sandbox_cred_setup(struct sandbox_cred *sc, const struct policy *p, char *const *base_env, struct log *log,
		       struct errmsg *em)
{
	int err = 0;

	memset(sc, 0, sizeof(*sc));
	if (!policy_cred_masks(p))
		return 0;
	/* Sentinels are random bytes and AWS pairs are signed again: both are OpenSSL's. */
	err = openssl_lazy_load(em);
	if (err)
		return err;
	/* Real values in this process's memory: no core dump, no ptrace by the caller's uid. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	sc->table = cred_table_new();
	if (!sc->table)
		return errmsg_set(em, -ENOMEM, "credentials"), -ENOMEM;
	for (size_t i = 0; !err && i < p->cred.n_env; i++) {
		const struct policy_cred_rule *r = &p->cred.env[i];
		const char *value;

		if (r->mode != POLICY_CRED_MASK)
			continue;
		value = env_value(base_env, r->name);
		if (value)
			err = mask_rule(sc, r, value, log, em);
	}
	if (!err && build_aws(sc, p))
		err = errmsg_set(em, -ENOMEM, "credentials.awsPairs");
	if (err)
		sandbox_cred_free(sc);
	return err;
}

const char *sandbox_cred_env_for(const struct sandbox_cred *sc, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sc->n_env; i++)
		if (!strncmp(sc->env[i], name, n) && sc->env[i][n] == '=')
			return sc->env[i];
	return NULL;
}

bool sandbox_cred_removed(const struct sandbox_cred *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_removed; i++)
		if (!strcmp(sc->removed[i], name))
			return true;
	return false;
}

void sandbox_cred_select(const struct sandbox_cred *sc, const char *canonical_host, bool *select)
{
	for (size_t i = 0; i < sc->n_pairs; i++) {
		const struct policy_cred_rule *r = sc->rule_of[i];

		select[i] = false;
		for (size_t k = 0; k < r->n_inject_hosts && !select[i]; k++)
			select[i] = domain_pattern_match(&r->inject_hosts[k], canonical_host, 0);
	}
}

void sandbox_cred_free(struct sandbox_cred *sc)
{
	cred_table_free(sc->table);
	for (size_t i = 0; i < sc->n_env; i++) {
		explicit_bzero(sc->env[i], strlen(sc->env[i]));
		free(sc->env[i]);
	}
	for (size_t i = 0; i < sc->n_removed; i++)
		free(sc->removed[i]);
	free(sc->env);
	free(sc->removed);
	free(sc->rule_of);
	free(sc->aws);
	free(sc->aws_secret);
	memset(sc, 0, sizeof(*sc));
}
