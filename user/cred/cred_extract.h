/* SPDX-License-Identifier: MIT */
/*
 * extract and onExtractNoMatch as srt has them. extract is a regex whose
 * capture group 1 picks the credential out of a larger value (the password
 * of a DATABASE_URL): every match's group-1 span becomes a sentinel, the
 * rest of the value stays byte for byte. Each distinct captured value gets
 * one sentinel (cred_table_mask), reused where it is captured again; empty
 * captures are skipped. With mask_duplicates, verbatim copies of a captured
 * value outside the matches are replaced too (longest capture first, regex
 * spans winning), as srt does for files.
 *
 * srt's patterns are JavaScript regexes; bpfbox compiles them to POSIX EREs
 * (regex.h, the C locale, bytes), translating what means the same: \d \w \s
 * (ASCII classes; JS's \s also takes Unicode spaces), escaped punctuation,
 * \n \t \r \f \v, \xHH below 0x80, (?:...) (an ERE group that is not
 * counted as JS group 1), '.' as [^\n\r] (JS's dot stops at line ends),
 * classes rebuilt as POSIX brackets. It refuses, with the reason, what it
 * cannot give JS's meaning: lazy quantifiers, lookaround, named groups,
 * inline flags, backreferences, \b \B \D \W \S \u \p \c \k and other
 * escapes, non-ASCII bytes inside a class, an empty class, a '{' that is not
 * a quantifier, a pattern without a capturing group. For the supervisor's
 * sake it also refuses patterns over 1024 bytes, counts over 255 and a count
 * on a group ((ab){2}: regcomp expands it). One difference is left
 * and documented: where two alternatives of '|' both match at one place, JS
 * takes the first that lets the whole match succeed, POSIX the longest; so
 * write alternatives that cannot both match at the same place (srt's own
 * example (?:secret|backup)=([^;]+) is such a pattern).
 */
#ifndef BPFBOX_CRED_EXTRACT_H
#define BPFBOX_CRED_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>

struct cred_table;
struct cred_extract;

/*
 * What a masked variable becomes when extract matches nothing: warn (srt's
 * default: the variable keeps its real value, and a warning names it, never
 * its value), deny (the variable is unset), error (the run is refused).
 */
enum cred_no_match {
	CRED_NO_MATCH_WARN,
	CRED_NO_MATCH_DENY,
	CRED_NO_MATCH_ERROR,
};

/* "warn", "deny", "error"; NULL is the default, warn. 0 or -EINVAL. */
int cred_no_match_parse(const char *s, enum cred_no_match *out);

/*
 * Compiles srt's extract pattern. 0; -EINVAL with the reason in why[why_len]
 * (a refused construct, or regcomp's message); -ENOMEM.
 */
int cred_extract_compile(const char *pattern, struct cred_extract **out, char *why,
			 size_t why_len);
void cred_extract_free(struct cred_extract *x);
/* The POSIX ERE the pattern became (for tests and messages). */
const char *cred_extract_posix(const struct cred_extract *x);

/*
 * Masks value[0..len) (no NUL in it, a NUL at value[len]) for the
 * credential name: sentinels
 * into t, the value the command sees into *fake (malloc'd, NUL-terminated),
 * *captures (when not NULL) the distinct values masked. 0; -ENOENT when no
 * match captured anything (t untouched: apply onExtractNoMatch); -EINVAL
 * when a match leaves group 1 unset (srt refuses the entry) or the value
 * holds a NUL or a capture no sentinel can hide (cred_sentinel_make);
 * -ENOMEM. After -EINVAL or -ENOMEM from the table t may hold some pairs.
 */
int cred_extract_mask(const struct cred_extract *x, struct cred_table *t, const char *name,
		      const char *value, size_t len, bool mask_duplicates, char **fake,
		      size_t *fake_len, size_t *captures);

#endif
