// SPDX-License-Identifier: MIT
/*
 * The environment under a ceiling: credentials.envVars rules variable by
 * variable (policy_ceiling_cred.c), their denies united,
 * bpfbox.env.allow lists intersected entry by entry (names, and prefixes
 * ending in '*'), and each allow entry of the caller that loses ground named.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_ceiling_cut.h"

static bool env_prefix(const char *e, size_t *len)
{
	*len = strlen(e);
	if (*len && e[*len - 1] == '*') {
		(*len)--;
		return true;
	}
	return false;
}

/* Does env.allow entry e allow name? */
static bool env_match(const char *e, const char *name)
{
	size_t len;

	return env_prefix(e, &len) ? !strncmp(e, name, len) : !strcmp(e, name);
}

/* The entry allowing exactly what both allow (a name or the longer prefix), or NULL. */
static const char *env_intersect(const char *x, const char *y)
{
	size_t lx, ly;
	bool px = env_prefix(x, &lx), py = env_prefix(y, &ly);

	if (!px && !py)
		return strcmp(x, y) ? NULL : x;
	if (!px)
		return env_match(y, x) ? x : NULL;
	if (!py)
		return env_match(x, y) ? y : NULL;
	if (lx >= ly)
		return strncmp(x, y, ly) ? NULL : x;
	return strncmp(x, y, lx) ? NULL : y;
}

static void cut_env_allow(struct ceiling *c, size_t i)
{
	const struct policy *a = c->admin, *u = c->caller;
	const char *e = u->env_allow[i];
	char *path = ceiling_jpath_at(c, "bpfbox.env.allow", i), *v = NULL;
	struct cut_places l = { 0 };
	bool covered = !a->has_env_allow;

	if (!path)
		return;
	v = ceiling_quoted(c, e, NULL);
	if (!v)
		goto out;
	/* A name the caller denies itself is not taken away by the ceiling. */
	if (ceiling_strv_has(u->env_deny, u->n_env_deny, e))
		goto out;
	if (ceiling_strv_has(a->env_deny, a->n_env_deny, e)) {
		ceiling_cut(c, path, v, "denied by the administrator's credentials.envVars", "not granted");
		goto out;
	}
	for (size_t k = 0; !covered && k < a->n_env_allow; k++)
		covered = env_intersect(e, a->env_allow[k]) == e;
	if (!covered) {
		for (size_t k = 0; k < a->n_env_allow; k++) {
			const char *x = env_intersect(e, a->env_allow[k]);

			if (x)
				places_add(c, &l, x);
		}
		if (l.n)
			ceiling_cut_places(c, path, v, "partly outside the administrator's bpfbox.env.allow",
					   &l, "granted only for");
		else
			ceiling_cut(c, path, v, "outside the administrator's bpfbox.env.allow",
				    "not granted");
		goto out;
	}
	for (size_t k = 0; k < a->n_env_deny; k++)
		if (env_match(e, a->env_deny[k]) && !ceiling_strv_has(u->env_deny, u->n_env_deny,
								      a->env_deny[k]))
			places_add(c, &l, a->env_deny[k]);
	ceiling_cut_places(c, path, v, "partly denied by the administrator's credentials.envVars", &l,
			   "not granted for");
out:
	free(l.text);
	free(v);
	free(path);
}

/* Denies united; an allow-list of both is the pairwise intersection of their entries. */
void ceiling_env(struct ceiling *c)
{
	const struct policy *a = c->admin, *u = c->caller;
	struct policy *p = c->p;

	ceiling_cred(c);
	for (size_t i = 0; i < a->n_env_deny; i++)
		ceiling_strv_add_unique(c, &p->env_deny, &p->n_env_deny, a->env_deny[i]);
	for (size_t i = 0; i < u->n_env_deny; i++)
		ceiling_strv_add_unique(c, &p->env_deny, &p->n_env_deny, u->env_deny[i]);
	p->has_env_allow = a->has_env_allow || u->has_env_allow;
	if (a->has_env_allow && u->has_env_allow) {
		for (size_t i = 0; i < u->n_env_allow; i++)
			for (size_t k = 0; k < a->n_env_allow; k++) {
				const char *x = env_intersect(u->env_allow[i], a->env_allow[k]);

				if (x)
					ceiling_strv_add_unique(c, &p->env_allow, &p->n_env_allow, x);
			}
	} else {
		const struct policy *s = a->has_env_allow ? a : u;

		for (size_t i = 0; i < s->n_env_allow; i++)
			ceiling_strv_add_unique(c, &p->env_allow, &p->n_env_allow, s->env_allow[i]);
	}
	for (size_t i = 0; u->has_env_allow && i < u->n_env_allow; i++)
		cut_env_allow(c, i);
}
