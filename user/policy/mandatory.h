/* SPDX-License-Identifier: MIT */
/*
 * The mandatory deny set as the kernel matches it: names, at any depth, that
 * are never writable (srt's list), and the two-level entries under .git and
 * .claude.
 */
#ifndef BPFBOX_MANDATORY_H
#define BPFBOX_MANDATORY_H

#include <stddef.h>
#include <stdint.h>

struct mandatory_name {
	const char *name;
	uint32_t flags; /* BB_M_* */
	const char *rule; /* how events name it */
};

extern const struct mandatory_name mandatory_names_table[];
extern const size_t mandatory_names_count;

/* The hash the kernel computes for a path component. */
uint64_t component_name_hash(const char *name, size_t len);
/* Name of a built-in rule id (BB_RULE_*), or NULL when it is a policy rule. */
const char *special_rule_name(uint32_t rule);
/*
 * The mandatory rule an absolute path falls under for a write, as the kernel
 * matches names (a protected name at any depth; hooks and config under .git,
 * commands and agents under .claude), or NULL. A repository the sandbox made
 * itself is not known here: this is for proposals, never for a decision.
 */
const char *mandatory_rule_of_path(const char *path);

#endif
