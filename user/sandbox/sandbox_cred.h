/* SPDX-License-Identifier: MIT */
/*
 * Masked credentials' side of a run (credentials.envVars with mode
 * "mask"): the real values, read from the command's base environment, go
 * into a table that lives in the supervisor's memory only (the proxy puts
 * them back in requests to each one's injectHosts); the command's
 * environment gets the sentinels; the log learns every real value as a
 * secret, so that no line shows it.
 */
#ifndef BPFBOX_SANDBOX_CRED_H
#define BPFBOX_SANDBOX_CRED_H

#include <stdbool.h>
#include <stddef.h>

#include "cred/cred_sigv4.h"
#include "lib/errmsg.h"
#include "log/log.h"
#include "policy/policy.h"

struct cred_table;

struct sandbox_cred {
	struct cred_table *table;	/* NULL: nothing masked */
	/* Per pair of the table: the rule it masks (its injectHosts). */
	const struct policy_cred_rule **rule_of;
	size_t n_pairs;
	/* "NAME=value" the command sees: sentinels, or srt's fake token */
	char **env;
	size_t n_env;
	/* Masked rules whose variable is to be removed (onExtractNoMatch "deny") */
	char **removed;
	size_t n_removed;
	/* credentials.awsPairs whose variables are masked here: a SigV4 request is re-signed with them */
	struct cred_sigv4_pair *aws;	/* spans into the table */
	size_t *aws_secret;		/* per AWS pair: the table pair of its secret */
	size_t n_aws;
};

/*
 * Builds the table from the mask rules of p and the variables of base_env.
 * A rule whose variable is absent masks nothing. Warnings (a value passed
 * unmasked under onExtractNoMatch "warn") go to log. 0, or a negative errno
 * with em set: the run must not start.
 */
int sandbox_cred_setup(struct sandbox_cred *sc, const struct policy *p, char *const *base_env, struct log *log,
		       struct errmsg *em);
/* The command's value for a masked variable ("NAME=..."), or NULL when it is not masked. */
const char *sandbox_cred_env_for(const struct sandbox_cred *sc, const char *name);
/* Is name a masked variable to remove from the command's environment? */
bool sandbox_cred_removed(const struct sandbox_cred *sc, const char *name);
/* select[i]: may pair i's real value go to canonical_host? select holds n_pairs entries. */
void sandbox_cred_select(const struct sandbox_cred *sc, const char *canonical_host, bool *select);
/* Wipes the real values and frees. */
void sandbox_cred_free(struct sandbox_cred *sc);

#endif
