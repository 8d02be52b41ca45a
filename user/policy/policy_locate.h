/* SPDX-License-Identifier: MIT */
/*
 * Where a diagnostic's JSON path is in the policy's text: the line and
 * column an editor highlights. Paths are the loader's own
 * (policy_json.c): identifiers joined by '.', array indexes as [N], other
 * keys as a JSON string in brackets (["git push"]).
 */
#ifndef BPFBOX_POLICY_LOCATE_H
#define BPFBOX_POLICY_LOCATE_H

#include <stddef.h>

struct policy_location {
	unsigned line, column;	/* 1-based; column counts bytes */
	size_t offset;		/* byte offset in the text */
	int exact;		/* 1: the path itself; 0: its deepest ancestor found */
};

/*
 * Finds path in json (len bytes, not necessarily NUL-terminated): an
 * object member is located at its key, an array element at its first
 * byte, "" at the top-level value. A path that leads nowhere in the text
 * gets its deepest ancestor there (exact 0). Returns 0, or -EINVAL when
 * path is not a path or the text is not a JSON value.
 */
int policy_locate(const char *json, size_t len, const char *path, struct policy_location *loc);

#endif
