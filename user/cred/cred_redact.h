/* SPDX-License-Identifier: MIT */
/*
 * What keeps real values out of logs: every occurrence of any real value of
 * a table becomes "[masked:NAME]". Occurrences that overlap or touch by
 * overlap are one masked span (named after the longest value starting
 * first), so no byte of any real value is left; empty real values are
 * ignored.
 */
#ifndef BPFBOX_CRED_REDACT_H
#define BPFBOX_CRED_REDACT_H

#include <stddef.h>

struct cred_table;

/*
 * in[0..len) redacted, in *out (malloc'd, NUL-terminated, *out_len without
 * the NUL when out_len is not NULL); *count (when not NULL) is how many
 * spans were masked. 0 or -ENOMEM. A NULL or empty table copies in.
 */
int cred_redact(const struct cred_table *t, const char *in, size_t len, char **out,
		size_t *out_len, size_t *count);

#endif
