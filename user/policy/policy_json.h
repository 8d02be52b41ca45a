/* SPDX-License-Identifier: MIT */
/*
 * The policy loader's internals, shared by the user/policy/ files that walk
 * the JSON (policy_json.c and the section parsers): the loading context,
 * JSON paths for messages, diagnostics, key tables that turn unknown,
 * tool-specific and unsupported keys into the right diagnostic, type checks
 * that report instead of stopping, and the sections' entry points. Not for
 * use outside user/policy/.
 */
#ifndef BPFBOX_POLICY_JSON_H
#define BPFBOX_POLICY_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "policy.h"

struct pctx {
	struct policy *p;
	struct diag_list *diags;
	bool strict;
	bool oom;
};

enum key_action {
	KEY_KNOWN,	/* parsed by the section */
	KEY_IGNORED,	/* concerns srt's own tools or another OS: one debug line */
	KEY_REFUSED,	/* not implemented, and ignoring it would weaken security */
};

struct key_spec {
	const char *name;
	enum key_action action;
	const char *note;	/* why ignored / refused */
};

/* JSON paths: "a.b", "a[3]", a["odd key"]. Return malloc'd strings (NULL on OOM, flagged). */
char *jpath_key(struct pctx *c, const char *parent, const char *key);
char *jpath_index(struct pctx *c, const char *parent, size_t i);

void perr(struct pctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A warning, or an error under --strict. */
void pwarn(struct pctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pdebug(struct pctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Flags OOM when ptr is NULL; returns ptr. */
void *pcheck(struct pctx *c, void *ptr);

const char *json_type_name(const cJSON *v);
/* Reports duplicate keys of obj, unknown keys (warning) and ignored/refused keys. */
void check_keys(struct pctx *c, const cJSON *obj, const char *path,
		const struct key_spec *specs);
/* Same, but an unknown key is an error whose message ends with unknown_error. */
void check_keys_ex(struct pctx *c, const cJSON *obj, const char *path,
		   const struct key_spec *specs, const char *unknown_error);
void check_duplicate_keys(struct pctx *c, const cJSON *obj, const char *path);
/* An object-typed section; reports "expected an object" when not. */
bool want_object(struct pctx *c, const cJSON *v, const char *path);
/* Optional members: 1 = present and valid, 0 = absent, -1 = invalid (reported). */
int jget_bool(struct pctx *c, const cJSON *obj, const char *key, const char *parent, bool *out);
int jget_int(struct pctx *c, const cJSON *obj, const char *key, const char *parent,
	     long long min, long long max, long long *out);
/* An array member; when required and absent reports "Required". */
const cJSON *jget_array(struct pctx *c, const cJSON *obj, const char *key,
			const char *parent, bool required, const char *what);
/* A string element of an array (non-empty when nonempty); reports and returns NULL otherwise. */
const char *jelem_string(struct pctx *c, const cJSON *item, const char *path, bool nonempty);

int strv_push(struct pctx *c, char ***v, size_t *n, const char *s);
/*
 * A grant of a guarded policy left out: it met a symlink the caller could
 * have placed. Named by its JSON path, as written and lexically (lex), never
 * by where the link leads.
 */
void grant_cut(struct pctx *c, const char *path, const char *source, const char *lex);
void strv_free(char **v, size_t n);

/*
 * A member of an object that has a parser of its own. A section lists its
 * members in a table ended by a NULL key; parse_members hands each present
 * one to its parser, in table order (which orders the diagnostics), and
 * reports "Required" at the path of a required one that is absent.
 */
struct json_member {
	const char *key;
	void (*parse)(struct pctx *c, const cJSON *v);
	bool required;
};
void parse_members(struct pctx *c, const cJSON *obj, const char *parent,
		   const struct json_member *members);

/* The loader's sections, one file each (policy_fs.c, policy_net.c, ...), walked by policy.c. */
void policy_parse_filesystem(struct pctx *c, const cJSON *fs);
void policy_parse_network(struct pctx *c, const cJSON *net);
/* network's request-level members (tlsTerminate, requireHostMatch, ...): policy_tls.c */
void policy_parse_tls(struct pctx *c, const cJSON *net);
/* network.mitmProxy: policy_mitm.c */
void policy_parse_mitm(struct pctx *c, const cJSON *net);
void policy_parse_credentials(struct pctx *c, const cJSON *cred);
/* An envVars or files entry's masking options into r (r->mode set first): policy_cred_mask.c */
void policy_parse_cred_mask(struct pctx *c, const cJSON *e, const char *path,
			    struct policy_cred_rule *r);
/* credentials.awsPairs and sigv4, after envVars: policy_cred_aws.c */
void policy_parse_aws(struct pctx *c, const cJSON *cred);
/* A POSIX identifier: letters, digits and '_', not starting with a digit. */
bool env_name_ok(const char *s);
/*
 * An extract pattern's capturing groups (ECMAScript syntax, as srt's
 * RegExp reads it), or -EINVAL with *why (static) when RegExp would refuse it.
 */
int policy_cred_regex_groups(const char *src, const char **why);
/*
 * A filesystem entry of another section (credentials.files): what
 * filesystem's list of kind would make of raw, each rule's name prefixed.
 */
void policy_fs_add_named(struct pctx *c, enum fs_rule_kind kind, const char *raw,
			 const char *path, const char *prefix);
void policy_parse_ignore(struct pctx *c, const cJSON *iv);
void policy_parse_git(struct pctx *c, const cJSON *git);
void policy_parse_bpfbox(struct pctx *c, const cJSON *bb);
void policy_parse_devices(struct pctx *c, const cJSON *dev);
/* Adds the implicit /dev/null and /dev/tty write rules. */
int policy_add_implicit_rules(struct pctx *c);

#endif
