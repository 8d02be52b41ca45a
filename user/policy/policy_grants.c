// SPDX-License-Identifier: MIT
/* A policy's grants as strings, and the difference of two policies' grants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_grants.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int push(char **v, size_t *k, char *s)
{
	if (!s)
		return -1;
	v[(*k)++] = s;
	return 0;
}

static int push_fmt(char **v, size_t *k, const char *kind, const char *what)
{
	char *s;

	if (asprintf(&s, "%s:%s", kind, what) < 0)
		return -1;
	return push(v, k, s);
}

char **policy_grants(const struct policy *p, size_t *n)
{
	size_t cap = p->n_fs_rules + p->n_allowed_domains + p->n_denied_domains + p->n_allow_unix_sockets +
		     p->n_device_allow + 1, k = 0, w = 0;
	char **v = calloc(cap, sizeof(*v));
	int err = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < p->n_fs_rules && !err; i++)
		err = push(v, &k, strdup(p->fs_rules[i].name));
	for (size_t i = 0; i < p->n_allowed_domains && !err; i++)
		err = push(v, &k, strdup(p->allowed_rule_names[i]));
	for (size_t i = 0; i < p->n_denied_domains && !err; i++)
		err = push(v, &k, strdup(p->denied_rule_names[i]));
	for (size_t i = 0; i < p->n_allow_unix_sockets && !err; i++)
		err = push_fmt(v, &k, "allowUnixSockets", p->allow_unix_sockets[i]);
	for (size_t i = 0; i < p->n_device_allow && !err; i++)
		err = push_fmt(v, &k, "devices.allow", p->device_allow[i]);
	if (err) {
		policy_grants_free(v, k);
		return NULL;
	}
	qsort(v, k, sizeof(*v), cmp_str);
	/* Each once: a glob's matches or a repeated entry would otherwise count twice. */
	for (size_t i = 0; i < k; i++) {
		if (w && !strcmp(v[w - 1], v[i])) {
			free(v[i]);
			continue;
		}
		v[w++] = v[i];
	}
	*n = w;
	return v;
}

char **policy_grants_missing(char *const *a, size_t na, char *const *b, size_t nb)
{
	char **out = calloc(na + 1, sizeof(*out));
	size_t i = 0, j = 0, k = 0;

	if (!out)
		return NULL;
	while (i < na) {
		int c = j < nb ? strcmp(a[i], b[j]) : -1;

		if (c < 0)
			out[k++] = a[i++];
		else if (c > 0)
			j++;
		else
			i++, j++;
	}
	return out;
}

void policy_grants_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}
