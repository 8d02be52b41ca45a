/* SPDX-License-Identifier: MIT */
/* A policy's grants as strings, and what one policy grants that another does not (live updates' events). */
#ifndef BPFBOX_POLICY_GRANTS_H
#define BPFBOX_POLICY_GRANTS_H

#include <stddef.h>

#include "policy/policy.h"

/*
 * Every rule of p as events name it ("denyRead:/home/u/.ssh",
 * "allowedDomains:example.org", "allowUnixSockets:/run/x.sock",
 * "devices.allow:/dev/kvm"), sorted, each once. NULL when out of memory.
 */
char **policy_grants(const struct policy *p, size_t *n);
/* The entries of a that b lacks (both from policy_grants): NULL-terminated, pointing into a. */
char **policy_grants_missing(char *const *a, size_t na, char *const *b, size_t nb);
void policy_grants_free(char **v, size_t n);

#endif
