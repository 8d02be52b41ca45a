/* SPDX-License-Identifier: MIT */
/*
 * A JavaScript regex (srt's extract) as a POSIX ERE with the same meaning,
 * or a refusal saying why (cred_extract.h lists both). For user/cred/ only.
 */
#ifndef BPFBOX_CRED_REGEX_H
#define BPFBOX_CRED_REGEX_H

#include <stddef.h>

/* The longest pattern taken: a policy's regex is compiled in the supervisor. */
#define CRED_REGEX_MAX 1024

/*
 * *ere (malloc'd) and *group1, the ERE's subexpression index of JS's
 * capture group 1. 0; -EINVAL with why; -ENOMEM.
 */
int cred_regex_from_js(const char *js, char **ere, size_t *group1, char *why, size_t why_len);

#endif
