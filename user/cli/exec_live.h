/* SPDX-License-Identifier: MIT */
/*
 * Live policy's command-line side (issue 32): the lines of exec --control-fd,
 * which fields of a settings document may change while the sandbox runs, and
 * update's --allow-domain / --deny-domain edits of the caller's document.
 */
#ifndef BPFBOX_EXEC_LIVE_H
#define BPFBOX_EXEC_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "lib/errmsg.h"

/* The longest control line accepted (without its newline); longer ones are skipped to it. */
#define LIVE_LINE_MAX (1u << 20)

/* The lines of one control descriptor: one read per fill, so a writer cannot hold the supervisor. */
struct live_lines {
	char *buf; /* LIVE_LINE_MAX + 1 bytes: a whole line and its newline */
	size_t start, len; /* unread bytes are buf[start, len) */
	bool skipping; /* inside a refused line: dropped up to its newline */
	bool eof;
};

int live_lines_init(struct live_lines *l);
void live_lines_free(struct live_lines *l);
/*
 * One read of fd into the buffer: 0 (l->eof set at end of file), -EAGAIN
 * when nothing was there, or -errno.
 */
int live_lines_fill(struct live_lines *l, int fd);
/*
 * The next whole line, its newline replaced by a NUL: 1 with *line set (valid
 * until the next call), 0 when no whole line is buffered, -E2BIG once for a
 * line over LIVE_LINE_MAX (the rest of it is dropped as it arrives). A partial
 * line at end of file is not a line: srt reads whole lines only.
 */
int live_lines_next(struct live_lines *l, char **line);
/* Is the line blank (only spaces, tabs, carriage returns)? Blank lines are ignored. */
bool live_line_blank(const char *line);

/*
 * Do running and next agree on every field that cannot change while the
 * sandbox runs? 0, or -EINVAL with em naming the first field that differs
 * ("network.allowAllUnixSockets cannot change while the sandbox runs;
 * restart it").
 */
int live_doc_check_fixed(const cJSON *running, const cJSON *next, struct errmsg *em);

/*
 * update --allow-domain NAME (allow true): NAME added to
 * network.allowedDomains and an exact NAME removed from deniedDomains;
 * --deny-domain the reverse. NAME is checked with the policy's domain grammar
 * for the list it joins. 0, or -EINVAL / -ENOMEM with em.
 */
int live_doc_edit_domain(cJSON *doc, const char *name, bool allow, struct errmsg *em);

#endif
