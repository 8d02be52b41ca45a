/* SPDX-License-Identifier: MIT */
/*
 * What the ceiling's sections share (policy_ceiling_fs.c, _net.c, _tls.c,
 * _env.c, _bpfbox.c, run in order by policy_ceiling.c): the state of one
 * policy_ceiling_apply, the cut messages, and the copies into the effective
 * policy, each of which flags OOM in the state instead of failing. Not for
 * use outside user/policy/.
 */
#ifndef BPFBOX_POLICY_CEILING_CUT_H
#define BPFBOX_POLICY_CEILING_CUT_H

#include <stdbool.h>
#include <stddef.h>

#include "policy_ceiling.h"

struct ceiling {
	const struct policy *admin, *caller;
	const char *admin_file, *caller_file;
	struct ceiling_cuts *cuts;
	struct policy *p;	/* the effective policy being built */
	bool oom;
};

/*
 * One cut: "CALLER: PATH VALUE: WHY (ADMIN); OUTCOME". value is printed as
 * given (callers quote strings), and may be NULL.
 */
void ceiling_cut(struct ceiling *c, const char *path, const char *value, const char *why,
		 const char *outcome);
/* An entry as written, in quotes, then what it means when that differs (malloc'd). */
char *ceiling_quoted(struct ceiling *c, const char *s, const char *normalised);
/* A cut whose value is ceiling_quoted(written, normalised). */
void ceiling_cut_quoted(struct ceiling *c, const char *path, const char *written,
			const char *normalised, const char *why, const char *outcome);
/* A cut of a true flag the administrator's policy does not set. */
void ceiling_cut_flag(struct ceiling *c, const char *path, bool caller, bool admin,
		      const char *outcome);

/* The places a cut names ("granted only at A, B, and N more"), built one at a time. */
struct cut_places {
	char *text;
	size_t n;
};
void places_add(struct ceiling *c, struct cut_places *l, const char *item);
/* A cut whose outcome is "PREFIX A, B, ..."; none when l is empty. Empties l. */
void ceiling_cut_places(struct ceiling *c, const char *path, const char *value, const char *why,
			struct cut_places *l, const char *prefix);

/* "LIST[i]" (malloc'd). */
char *ceiling_jpath_at(struct ceiling *c, const char *list, size_t i);
/* A copy of s; NULL for NULL. */
char *ceiling_strdup(struct ceiling *c, const char *s);
bool ceiling_strv_has(char *const *v, size_t n, const char *s);
/* Appends a copy of s (the vector stays NULL-terminated). */
void ceiling_strv_add(struct ceiling *c, char ***v, size_t *n, const char *s);
void ceiling_strv_add_unique(struct ceiling *c, char ***v, size_t *n, const char *s);

/* The sections, in the order policy_ceiling_apply runs them (and the cuts are listed). */
void ceiling_filesystem(struct ceiling *c);
void ceiling_network(struct ceiling *c);
/* Called by ceiling_network last: tlsTerminate and srt's other request-level settings. */
void ceiling_tls(struct ceiling *c);
/* Called by ceiling_bpfbox between bpfbox.git and bpfbox.limits. */
void ceiling_env(struct ceiling *c);
/* Called by ceiling_env first: credentials.envVars rules, awsPairs, sigv4, allowPlaintextInject. */
void ceiling_cred(struct ceiling *c);
void ceiling_bpfbox(struct ceiling *c);

#endif
