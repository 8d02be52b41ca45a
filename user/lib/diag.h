/* SPDX-License-Identifier: MIT */
/*
 * A list of diagnostics (errors, warnings, debug notes), each tied to a JSON
 * path in the document it is about. Modules append; only commands print, so a
 * caller can show every problem at once instead of stopping at the first.
 */
#ifndef BPFBOX_DIAG_H
#define BPFBOX_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum diag_severity {
	DIAG_ERROR,
	DIAG_WARNING,
	DIAG_DEBUG,
};

struct diag {
	enum diag_severity severity;
	char *path;	/* JSON path, e.g. "network.allowedDomains[2]"; "" = whole file */
	char *message;
};

struct diag_list {
	struct diag *items;
	size_t n, cap;
	bool oom;	/* an entry could not be recorded: treat as an error */
};

#define DIAG_LIST_INIT { 0 }

void diag_list_init(struct diag_list *l);
void diag_list_free(struct diag_list *l);

/*
 * Appends one entry; path may be NULL (the whole file). Returns 0 or -ENOMEM,
 * in which case l->oom is set so the failure is not lost.
 */
int diag_add(struct diag_list *l, enum diag_severity sev, const char *path,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

size_t diag_count(const struct diag_list *l, enum diag_severity sev);

/* True when the list holds an error (or lost an entry to OOM). */
bool diag_has_errors(const struct diag_list *l);

/* Finds the first entry of sev whose path equals path (tests, callers). */
const struct diag *diag_find(const struct diag_list *l, enum diag_severity sev,
			     const char *path);

/*
 * Prints "bpfbox: FILE: PATH: message" per entry, warnings as
 * "bpfbox: warning: FILE: PATH: message" and debug notes as
 * "bpfbox: debug: ..." (only when with_debug). file may be NULL.
 */
void diag_print(const struct diag_list *l, const char *file, FILE *out,
		bool with_debug);

#endif
