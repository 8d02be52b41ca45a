/* SPDX-License-Identifier: MIT */
/*
 * `bpfbox policy suggest`: from the refusals of a log (typically an --audit
 * run), the smallest grants that would have allowed them, merged into a
 * policy document. Pure logic: lines in, a cJSON document changed, a report.
 */
#ifndef BPFBOX_POLICY_SUGGEST_H
#define BPFBOX_POLICY_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

/* Distinct entries one list keeps, and distinct groups of what is not proposed. */
#define SUGGEST_ENTRIES_MAX 4096
#define SUGGEST_SKIPS_MAX 256
/* Default: more refused paths than this in one directory become the directory. */
#define SUGGEST_COLLAPSE_DEFAULT 8

enum suggest_list {
	SUGGEST_WRITE,		/* filesystem.allowWrite */
	SUGGEST_READ,		/* filesystem.allowRead */
	SUGGEST_DOMAIN,		/* network.allowedDomains */
	SUGGEST_UNIX,		/* network.allowUnixSockets */
	SUGGEST_LISTS,
};

struct suggest_entry {
	char *value;
	unsigned long count;	/* refusals it covers (bpfbox.count summed) */
};

struct suggest_skip {
	char *action, *rule, *why;
	unsigned long count;
};

struct policy_suggest {
	const char *sandbox_id;	/* only this sandbox's lines, or NULL */
	unsigned collapse;	/* 0: exact paths only */
	struct suggest_entry *list[SUGGEST_LISTS];
	size_t n[SUGGEST_LISTS];
	bool local_binding;
	unsigned long local_binding_count;
	struct suggest_skip *skips;
	size_t n_skips;
	unsigned long lines, not_json, refusals, other_sandbox, dropped;
};

void policy_suggest_init(struct policy_suggest *s, const char *sandbox_id, unsigned collapse);
void policy_suggest_free(struct policy_suggest *s);
/*
 * One line of the log (without its newline). Lines that are not JSON objects
 * are counted and skipped; events that are not refusals are ignored. Returns
 * 0, or -ENOMEM.
 */
int policy_suggest_line(struct policy_suggest *s, const char *line, size_t len);
/*
 * After the last line: paths collapsed into directories and entries covered
 * by another dropped; each entry checked by the loader alone, so one the
 * loader would refuse is reported, not proposed. Returns 0 or -ENOMEM.
 */
int policy_suggest_finish(struct policy_suggest *s);
/*
 * The entries added to doc (an object: the base policy), each list created
 * where missing and no entry written twice. Returns the number of entries
 * added, -EINVAL when a section or list of doc is not of its type, -ENOMEM.
 */
int policy_suggest_merge(const struct policy_suggest *s, cJSON *doc);
/* The smallest document the loader accepts: srt's required lists, empty. NULL: no memory. */
cJSON *policy_suggest_skeleton(void);
/* What was proposed and what was not, and why, for a person. */
/*
 * The report's strings come from a log anyone's sandbox wrote to: each goes
 * through escape (a malloc'd terminal-safe copy, NULL when it cannot make one).
 */
void policy_suggest_report(const struct policy_suggest *s, FILE *out, char *(*escape)(const char *s));

#endif
