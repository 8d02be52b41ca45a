/* SPDX-License-Identifier: MIT */
/*
 * A strict, bounded reader of git's config file format (git-config(1),
 * "CONFIGURATION FILE"), read as git's own parser reads it (config.c:
 * git_parse_source, get_base_var, get_extended_base_var, get_value,
 * parse_value), so that what is found here is what git would act on. Used
 * after a sandbox ends: which keys of a repository's config make git run a
 * command, and the config written again without them.
 *
 * Nothing is followed: include.path and includeIf are entries like any
 * other (and executing ones: the included file is wherever the sandbox
 * could write).
 */
#ifndef BPFBOX_GIT_CONFIG_H
#define BPFBOX_GIT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define GIT_CONFIG_MAX_BYTES (1024 * 1024) /* larger input: -EFBIG */
#define GIT_CONFIG_MAX_ENTRIES 4096 /* more: -E2BIG */

/*
 * One "section[.subsection].key[=value]" as git reads it. Entries under one
 * section header share that header's section and subsection strings
 * (git_config_free frees them once): memory stays linear in the input.
 */
struct git_config_entry {
	char *section; /* lower-cased; "" for a key before any section header */
	char *subsection; /* NULL when none; case kept (for the deprecated [a.b] form, lower-cased as git does) */
	char *key; /* lower-cased */
	char *value; /* NULL for a bare boolean key ("[core]\n\tbare\n"); unquoted, escapes resolved */
	int line; /* 1-based line where the entry starts */
};

struct git_config {
	struct git_config_entry *entries;
	size_t n;
};

/*
 * Parses buf (len bytes; may contain NUL -> -EINVAL). 0 or negative errno;
 * on error *err_line is the 1-based line at fault (the line git's "bad
 * config line N" names), or 0 when no line is (-EFBIG, -ENOMEM), and *out
 * is empty. err_line may be NULL.
 */
int git_config_parse(const char *buf, size_t len, struct git_config *out, int *err_line);
void git_config_free(struct git_config *c);

/*
 * Why an entry makes git run something, or NULL when it does not. A short
 * static reason string, e.g. "runs a hook directory", "runs a command".
 */
const char *git_config_exec_reason(const struct git_config_entry *e);

/*
 * The config re-serialised canonically, without entries for which skip[i]
 * is true (skip may be NULL): "[section \"sub\"]\n\tkey = \"value\"\n",
 * values quoted and escaped so git reads back the same value; a bare
 * boolean key is written bare. Malloc'd NUL-terminated text in *out, its
 * length in *out_len. 0 or -ENOMEM; -EINVAL for an entry git_config_parse
 * could not have made (a name git would read differently, a key without a
 * section after one with a section).
 */
int git_config_serialise(const struct git_config *c, const bool *skip, char **out, size_t *out_len);

#endif
