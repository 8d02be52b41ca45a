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

/* A policy file's JSON as it is: the document live lines are compared with. NULL if unreadable or not JSON. */
cJSON *live_doc_read(const char *path);

/*
 * exec --control-fd N: the descriptor's lines, each a whole settings
 * document. apply loads the text as the policy is loaded at start (under the
 * ceiling, if any) and switches the run to it; it returns 0 or -errno with em.
 */
struct live_control {
	int fd;
	int shown_fd; /* the number the caller gave (a daemon's worker receives it as another) */
	struct live_lines lines;
	cJSON *doc; /* the document in force: every line is compared with it */
	int (*apply)(void *ctx, const char *text, size_t len, struct errmsg *em);
	void *apply_ctx;
};

/* fd must be >= 3 and open for reading: 0, or -EINVAL with em (a usage error). */
int live_control_check_fd(int fd, struct errmsg *em);
/* doc: the document at start (owned from here on, NULL for none). */
int live_control_init(struct live_control *c, int fd, cJSON *doc);
void live_control_free(struct live_control *c);
/* supervise.h's live callback: reads what is there, applies each whole line; 1 at end of file. */
int live_control_read(void *ctx, int fd);

#endif
