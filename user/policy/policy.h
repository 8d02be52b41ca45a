/* SPDX-License-Identifier: MIT */
/*
 * The policy: an srt (Sandbox Runtime) settings file, read with srt's meaning,
 * plus bpfbox's own options under a top-level "bpfbox" object. Loading
 * validates every field, reports every problem, and yields an immutable,
 * normalised struct policy: absolute paths, canonical domains, defaults
 * filled in. The decide functions are the user-space reference model of
 * what the kernel side enforces (used by `bpfbox policy explain` and tests).
 * See docs/policy.md for the format.
 */
#ifndef BPFBOX_POLICY_H
#define BPFBOX_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "domain.h"
#include "lib/diag.h"

/* Where bpfbox looks when neither --policy nor $BPFBOX_POLICY names a file. */
#define POLICY_SYSTEM_PATH "/etc/bpfbox/policy.json"
/* A policy file larger than this is refused rather than read. */
#define POLICY_MAX_BYTES (4 << 20)

enum fs_rule_kind { FS_DENY_READ, FS_ALLOW_READ, FS_ALLOW_WRITE, FS_DENY_WRITE };

/*
 * Under an administrator's ceiling (policy_ceiling.h) the filesystem rules
 * are two layers, each deciding on its own (deepest read rule, any denyWrite,
 * some allowWrite): a path is readable or writable only when both layers
 * allow it. A policy without a ceiling has the one layer FS_LAYER_OWN.
 */
enum fs_layer {
	FS_LAYER_OWN,		/* the policy's own rules; under a ceiling, the caller's */
	FS_LAYER_CEILING,	/* the administrator's rules (names start "ceiling:") */
};
#define FS_LAYERS 2

struct fs_rule {
	enum fs_rule_kind kind;
	enum fs_layer layer;
	char *path;	/* absolute, normalised, symlinks resolved (unless that would widen scope) */
	char *source;	/* the entry as written in the file, for messages/events */
	bool from_default; /* implicit rule bpfbox added (e.g. /dev/null) */
	char *name;	/* "denyRead:/home/u/.ssh", "implicit:allowWrite:/dev/null" */
	bool kept_spelling; /* a symlink was left unresolved because it would widen scope */
	bool from_glob;	/* one match of a denyRead glob expanded at load */
	bool no_links;	/* a guarded grant: the kernel resolves path following no symlink */
	char *jpath;	/* "filesystem.allowWrite[1]"; NULL for implicit rules */
};

/*
 * An allow whose spelling was kept because its symlink would widen it: the
 * kernel would follow the link, so neither the launcher nor explain applies it.
 */
static inline bool policy_rule_unapplied(const struct fs_rule *r)
{
	return r->kept_spelling && (r->kind == FS_ALLOW_READ || r->kind == FS_ALLOW_WRITE);
}

/* ignoreViolations: "<command substring>" or "*" -> violation-line substrings. */
struct ignore_rule {
	char *command;
	char **lines;
	size_t n_lines;
};

enum policy_log_format { POLICY_LOG_TEXT, POLICY_LOG_JSON };

/* bpfbox.network.parentProxy: the host's proxy bpfbox's proxy reaches allowed destinations through. */
enum policy_parent_scheme { PARENT_NONE, PARENT_HTTP, PARENT_SOCKS5 };

struct policy_parent {
	enum policy_parent_scheme scheme;
	char *host;		/* a name, or an IP literal without brackets */
	unsigned port;
	char *user, *pass;	/* percent-decoded; NULL when the URL has none */
	char *shown;		/* the URL with any credentials replaced by "***" (logs, show) */
};

/*
 * Parses "http://[user:pass@]HOST:PORT" or "socks5://...": a scheme, a
 * host (name, IPv4 literal or [IPv6]), a port that must be given, nothing
 * after it but an optional "/". 0, -EINVAL with *why (static text), or
 * -ENOMEM. On failure out is left empty.
 */
int policy_parent_parse(const char *url, struct policy_parent *out, const char **why);
void policy_parent_free(struct policy_parent *pp);
/* A deep copy; -ENOMEM. */
int policy_parent_copy(struct policy_parent *dst, const struct policy_parent *src);

/*
 * bpfbox.network.allowSocketProtocols: the names a policy may list, each the
 * BB_SOCK_* bit (include/bpfbox.h) it opens beyond the default allow-list.
 */
struct policy_socket_kind {
	const char *name;
	uint32_t bit;
};
extern const struct policy_socket_kind policy_socket_kinds[];
extern const size_t policy_n_socket_kinds;

/*
 * bpfbox.network.dnsQueryTypes (policy_dnstype.c): the query types a policy
 * may add to those always answered for an allowed name (A, AAAA, CNAME,
 * HTTPS), each with its bit in policy.dns_types.
 */
struct policy_dns_type {
	const char *name;
	unsigned type;
	uint32_t bit;
};
extern const struct policy_dns_type policy_dns_types[];
extern const size_t policy_n_dns_types;

/*
 * network.tlsTerminate (policy_tls.c): the proxy terminates TLS for allowed
 * names that excludeDomains does not match, with leaves from the given CA
 * (both paths or neither: an ephemeral CA), so request rules see HTTPS.
 */
#define POLICY_TLS_MAX_TUNNELS_DEFAULT 256
#define POLICY_TLS_HANDSHAKE_MS_DEFAULT 10000

struct policy_tls {
	bool enabled;
	char *ca_cert_path, *ca_key_path; /* absolute; both NULL = an ephemeral CA */
	struct domain_pattern *exclude;	/* excludeDomains, allowedDomains' grammar: left as tunnels */
	size_t n_exclude;
	char **extra_ca_paths;		/* extraCaCertPaths, absolute */
	size_t n_extra_ca;
	unsigned max_tunnels;		/* 1-65536; POLICY_TLS_MAX_TUNNELS_DEFAULT */
	unsigned handshake_timeout_ms;	/* 100-600000; POLICY_TLS_HANDSHAKE_MS_DEFAULT */
	/* Written in the file rather than defaulted: a ceiling narrows a default silently. */
	bool max_tunnels_given, handshake_timeout_given;
	/* The administrator's ceiling supplied it: its files are root's to read, not the caller's. */
	bool from_ceiling;
};

/* network.ambiguousRequestTarget: a target two parsers could read differently. */
enum policy_ambiguous_target {
	POLICY_AMBIG_REFUSE = 0,	/* 400, X-Proxy-Error: ambiguous-request-target (default) */
	POLICY_AMBIG_AS_SPELLED,	/* forwarded as spelled */
	POLICY_AMBIG_NORMALIZE,		/* forwarded normalised */
};
void policy_tls_free(struct policy_tls *t);
/* "refuse", "asSpelled" or "normalize". */
const char *policy_ambiguous_target_name(enum policy_ambiguous_target t);

/*
 * network.mitmProxy (policy_mitm.c): allowed names matching domains are sent
 * to the HTTP proxy listening on socketPath (CONNECT, or absolute-form for
 * plain HTTP) instead of being dialled; bpfbox still decides first.
 */
struct policy_mitm {
	bool enabled;
	char *socket_path;		/* absolute; fits a sockaddr_un */
	struct domain_pattern *domains;	/* allowedDomains' grammar */
	size_t n_domains;
};
void policy_mitm_free(struct policy_mitm *m);

/*
 * credentials (policy_cred.c, policy_cred_mask.c), with srt's meaning. A
 * rule of credentials.envVars: "deny" removes the variable from the
 * command's environment (its name is in policy.env_deny too); "mask" gives
 * the command a sentinel in its place, which the proxy swaps for the real
 * value only in requests to inject_hosts.
 */
struct policy;
enum policy_cred_mode { POLICY_CRED_DENY, POLICY_CRED_MASK };
/* onExtractNoMatch: the value passes unmasked with a warning, is removed, or the run fails. */
enum policy_cred_no_match { POLICY_NO_MATCH_WARN, POLICY_NO_MATCH_DENY, POLICY_NO_MATCH_ERROR };
/* credentials.sigv4: a signed AWS request the proxy cannot re-sign. */
enum policy_sigv4_mode { POLICY_SIGV4_DENY, POLICY_SIGV4_PASSTHROUGH };

struct policy_cred_rule {
	char *name;			/* the variable */
	enum policy_cred_mode mode;
	/* What of the value is masked; the fields below matter for "mask" only. */
	char *extract;			/* ECMAScript regex source (>= 1 group), NULL = the whole value */
	enum policy_cred_no_match on_no_match;
	bool decode_jwt;		/* decode: "jwt" */
	char **mask_claims;		/* maskClaims; needs decode_jwt */
	size_t n_mask_claims;
	bool mask_duplicates;
	/*
	 * Where the real value may go: host patterns, any port. Without
	 * injectHosts in the file (inject_defaulted) it is allowedDomains with
	 * their ports dropped, filled in here. The list is what is in force
	 * (under a ceiling, what both policies name): empty means nowhere.
	 */
	struct domain_pattern *inject_hosts;
	size_t n_inject_hosts;
	bool inject_defaulted;
	/* Under a ceiling: the administrator's rule, the caller having none for it. */
	bool from_ceiling;
};

/* credentials.awsPairs: masked variables re-signed together (SigV4). */
struct policy_aws_pair {
	char *key_id_var, *secret_var;
	char *session_var;		/* NULL when not given */
	bool implicit;			/* srt's own pairing of AWS_ACCESS_KEY_ID, ... */
};

struct policy_credentials {
	struct policy_cred_rule *env;	/* credentials.envVars in file order */
	size_t n_env;
	struct policy_aws_pair *aws_pairs;
	size_t n_aws_pairs;
	enum policy_sigv4_mode sigv4_streaming, sigv4_presigned, sigv4a;
	bool allow_plaintext_inject;
};
void policy_cred_rule_free(struct policy_cred_rule *r);
void policy_credentials_free(struct policy_credentials *cr);
/* The envVars rule for name, or NULL. */
const struct policy_cred_rule *policy_cred_find(const struct policy *p, const char *name);
/* Does any envVars rule mask? */
bool policy_cred_masks(const struct policy *p);

/* bpfbox.git.newRepositories: what becomes of a repository the sandbox makes (docs/git.md). */
enum policy_git_new {
	POLICY_GIT_STRICT, /* executing config keys logged at the end and removed (the default) */
	POLICY_GIT_REPORT, /* ... logged and left in place */
	POLICY_GIT_REFUSE, /* no new repository: its .git/config and hooks/ are refused like any */
};

struct policy {
	/* filesystem: all four kinds, in file order, then implicit rules, then credentials.files denies */
	struct fs_rule *fs_rules;
	size_t n_fs_rules;
	bool fs_disabled;	/* filesystem.disabled: no rules at all, mandatory included */
	bool allow_git_config;
	bool allow_nested_userns;

	/* network */
	struct domain_pattern *allowed_domains;
	size_t n_allowed_domains;
	struct domain_pattern *denied_domains;
	size_t n_denied_domains;
	char **allowed_sources;	/* entries as written, parallel to allowed_domains */
	char **denied_sources;	/* entries as written, parallel to denied_domains */
	char **allowed_rule_names; /* "allowedDomains:<canonical entry>" */
	char **denied_rule_names;  /* "deniedDomains:<canonical entry>" */
	char **denied_reasons;	/* parallel to denied_domains; NULL = no reason given */
	struct ip_cidr *denied_addrs;	/* deniedResolvedAddresses */
	size_t n_denied_addrs;
	char **allow_unix_sockets;	/* absolute paths */
	size_t n_allow_unix_sockets;
	bool allow_all_unix_sockets;
	bool allow_local_binding;
	int http_proxy_port;	/* external proxy ports, 0 = none (use bpfbox's proxy) */
	int socks_proxy_port;
	struct policy_tls tls;		/* network.tlsTerminate; enabled false = not given */
	struct policy_mitm mitm;	/* network.mitmProxy; exclusive with tls */
	/* srt's request-level settings (docs/policy.md), for the proxy's terminated and plain requests */
	bool require_host_match;	/* Host must be the tunnel's name, else 421 */
	bool refuse_opaque_tunnels;	/* a tunnel the proxy cannot inspect is refused */
	bool allow_plaintext_header_set; /* header changes allowed on plain HTTP */
	enum policy_ambiguous_target ambiguous_target;
	char **strip_response_headers;	/* lower case field names, each once */
	size_t n_strip_response_headers;

	/* credentials.envVars with mode "deny": removed from the child's environment */
	char **env_deny;
	size_t n_env_deny;
	/* credentials as a whole: every envVars rule (deny ones too), awsPairs, sigv4 */
	struct policy_credentials cred;

	/* git.safeDirectories, absolute (exec passes them as GIT_CONFIG_* safe.directory) */
	char **git_safe_dirs;
	size_t n_git_safe_dirs;

	/* bpfbox's own options ("bpfbox" object) */
	bool audit;		/* mode "audit": report denials, do not enforce them */
	char **env_allow;	/* names, or prefixes ending in '*' (e.g. "LC_*") */
	size_t n_env_allow;
	bool has_env_allow;	/* env.allow given: inherit only those variables */
	long long limit_pids;	/* 0 = no limit */
	long long limit_memory_bytes; /* 0 = no limit */
	int limit_cpu_percent;	/* percent of one CPU, 0 = no limit */
	char *log_file;		/* bpfbox.log.file, absolute; NULL = stderr */
	char **device_allow;	/* bpfbox.devices.allow: absolute paths of device nodes */
	size_t n_device_allow;
	enum policy_log_format log_format;
	bool transparent_off;	/* bpfbox.network.transparent false: no sandbox DNS, no transparent path */
	struct policy_parent parent; /* bpfbox.network.parentProxy; scheme PARENT_NONE = dial directly */
	uint32_t sock_allow;	/* bpfbox.network.allowSocketProtocols: BB_SOCK_* bits */
	uint32_t dns_types;	/* bpfbox.network.dnsQueryTypes: policy_dns_types bits */
	enum policy_git_new git_new; /* bpfbox.git.newRepositories */

	struct ignore_rule *ignore;
	size_t n_ignore;

	/*
	 * Set when this is a caller's effective policy under an administrator's
	 * ceiling (policy_ceiling_apply): fs_rules hold both layers, and a host
	 * must also match the administrator's allowedDomains below. Every other
	 * field above already holds the intersection.
	 */
	bool has_ceiling;
	struct domain_pattern *ceiling_allowed_domains;
	size_t n_ceiling_allowed_domains;
	char *ceiling_file;	/* the administrator's policy file */
	char ceiling_digest[65];
	/*
	 * audit above is set only when both modes say "audit". ceiling_audit:
	 * the administrator's mode is "audit"; audit_own: the caller's mode is
	 * "audit" while the administrator's enforces, which audits only the
	 * caller's own narrowing (policy_audit_scope).
	 */
	bool ceiling_audit;
	bool audit_own;

	char digest[65];	/* sha256 hex of the file bytes, or of "default" */
	char *file;		/* path it came from, NULL for the built-in default */
	char *cwd;		/* what relative entries were resolved against */
	char *home;		/* what ~ expanded to */

	/*
	 * Loaded for a caller (policy_load_opts.guard): each grant that ran into
	 * a symlink the caller could have placed, as the caller may see it:
	 * "filesystem.allowWrite[0] \"~/work\" (/home/u/work)". Not in fs_rules.
	 */
	char **grant_cuts;
	size_t n_grant_cuts;
	bool guarded;
	uid_t guard_uid;
};

struct policy_load_opts {
	const char *cwd;	/* launch directory; NULL = getcwd() */
	const char *home;	/* home directory; NULL = $HOME, then the passwd entry */
	bool strict;		/* warnings are errors */
	/*
	 * The administrator's policy, loaded for the daemon's caller guard_uid:
	 * grant paths (allowRead, allowWrite, allowUnixSockets) follow no
	 * symlink the caller could have placed (policy_path_guarded); a grant
	 * that meets one is left out and named in grant_cuts.
	 */
	bool guard;
	uid_t guard_uid;
};

/*
 * Loads a policy file. Returns 0 or a negative errno (-ENOENT, -EACCES, ...
 * for the file, -EINVAL for an invalid policy, -ENOMEM); on failure *out is
 * NULL and every problem found has been appended to diags. Warnings and
 * debug notes are appended on success too. Nothing is printed.
 */
int policy_load_file(const char *file, const struct policy_load_opts *opts,
		     struct policy **out, struct diag_list *diags);
/* Same, from memory; name is recorded as policy->file (may be NULL). */
int policy_load_buffer(const char *name, const char *json, size_t len,
		       const struct policy_load_opts *opts, struct policy **out,
		       struct diag_list *diags);
/*
 * srt's defaults, used when no policy file is found: no network, no writes
 * (but /dev/null and /dev/tty; exec adds the sandbox's private TMPDIR), reads
 * unrestricted, the mandatory deny set in force.
 */
int policy_default(const struct policy_load_opts *opts, struct policy **out);
/* --policy, then $BPFBOX_POLICY, then POLICY_SYSTEM_PATH if it exists, else NULL = default. */
const char *policy_discover(const char *cli_path);
void policy_free(struct policy *p);

/*
 * Mandatory deny set: always write-denied (still readable), matched at any
 * depth. A name with a '/' is two consecutive path components.
 */
enum mandatory_kind {
	MANDATORY_FILE,		/* a file name, e.g. .bashrc */
	MANDATORY_DIR,		/* a directory name or pair, e.g. .vscode, .git/hooks */
	MANDATORY_GIT_FILE,	/* ".git" only when it is a regular file (worktree pointer) */
};
struct mandatory_entry {
	const char *name;
	enum mandatory_kind kind;
};
#define POLICY_MANDATORY_MAX 24
/* Fills out with the entries in force for p (none when fs_disabled); returns the count. */
size_t policy_mandatory(const struct policy *p, struct mandatory_entry out[POLICY_MANDATORY_MAX]);

/* Decisions: pure user-space reference model of the kernel's semantics. */
struct fs_decision {
	bool allowed;
	const struct fs_rule *rule;	/* NULL for mandatory/default decisions */
	const char *rule_name;	/* "denyRead:/home/u/.ssh", "mandatory:.git/hooks", "default:write" */
};
/*
 * Deepest matching denyRead/allowRead wins; at equal depth allowRead wins; else allowed.
 * Under a ceiling each layer decides so, and both must allow (the caller's
 * refusal is reported first).
 */
void policy_decide_read(const struct policy *p, const char *abs_path, struct fs_decision *out);
/*
 * Mandatory set, then any denyWrite on the path or above, then allowWrite, else
 * "default:write". Under a ceiling: the mandatory set, then a denyWrite of
 * either layer, then each layer needs an allowWrite ("ceiling:default:write").
 */
void policy_decide_write(const struct policy *p, const char *abs_path, struct fs_decision *out);
/*
 * One layer's own decision, without the mandatory set or filesystem.disabled
 * (explain shows both layers; the ceiling uses it to find what it cuts).
 * A layer without any rule allows reads and refuses writes.
 */
void policy_decide_layer_read(const struct policy *p, enum fs_layer layer, const char *abs_path,
			      struct fs_decision *out);
void policy_decide_layer_write(const struct policy *p, enum fs_layer layer, const char *abs_path,
			       struct fs_decision *out);
/* Is rule_path the same path as path, or an ancestor of it? */
bool policy_path_covers(const char *rule_path, const char *path);

enum net_verdict { NET_DENY_MALFORMED, NET_DENY_DENIED, NET_ALLOW, NET_DENY_NOT_ALLOWED };
/*
 * Canonicalises host, then: malformed -> deny; any deniedDomains match ->
 * deny (*reason = deniedDomainReasons entry or NULL); any allowedDomains
 * match -> allow (under a ceiling, the administrator's allowedDomains must
 * match too, else "ceiling:default:network"); else deny. *rule_name:
 * "deniedDomains:<canonical entry>",
 * "allowedDomains:<canonical entry>", "malformed" (then *reason says why)
 * or "default:network". Strings live as long as p (or are static).
 * rule_name and reason may be NULL. Port 0 or above 65535 is malformed.
 */
enum net_verdict policy_decide_host(const struct policy *p, const char *host, unsigned port,
				    const char **rule_name, const char **reason);
const char *net_verdict_name(enum net_verdict v);
/*
 * May the sandbox's DNS answer this name? Allowed when some allowedDomains
 * entry matches it on any port (the port is decided when connecting) and no
 * deniedDomains entry for every port matches it; under a ceiling an entry of
 * the administrator's allowedDomains must match it too (any port), else
 * "ceiling:default:network". IP literals and malformed names are not names:
 * NET_DENY_MALFORMED. Same rule_name and reason as policy_decide_host.
 */
enum net_verdict policy_decide_name(const struct policy *p, const char *host, const char **rule_name,
				    const char **reason);
/* "strict", "report" or "refuse". */
const char *policy_git_new_name(enum policy_git_new g);
/* The type named (any case) by bpfbox.network.dnsQueryTypes, or NULL. */
const struct policy_dns_type *policy_dns_type_by_name(const char *name);
/* Does the sandbox's resolver answer this query type for an allowed name? */
bool policy_dns_type_answered(const struct policy *p, unsigned qtype);
/* A query type's mnemonic ("TXT"), or "TYPEn" written into buf. */
const char *policy_dns_type_name(unsigned qtype, char *buf, size_t len);
/*
 * The one port the allowedDomains entries matching a canonical name allow,
 * or 0 when they allow any port or several ports.
 */
unsigned policy_name_port(const struct policy *p, const char *canon_host);

/*
 * Does the proxy terminate TLS for this canonical host (host_canonicalise)
 * and port? True when network.tlsTerminate is given and no excludeDomains
 * entry matches them (allowedDomains' matching, ports included). Whether the
 * host is allowed at all is policy_decide_host's to say, first.
 */
bool policy_tls_terminates(const struct policy *p, const char *canonical_host, unsigned port);
/* Does network.mitmProxy send this canonical host to its socket? */
bool policy_mitm_routes(const struct policy *p, const char *canonical_host, unsigned port);

/* Is a resolved address inside network.deniedResolvedAddresses? */
bool policy_addr_denied(const struct policy *p, int family, const void *addr);

/* Environment: credentials.envVars deny wins over bpfbox.env.allow. */
bool policy_env_denied(const struct policy *p, const char *name);
/* true when no env.allow list is given, or name matches one of its entries. */
bool policy_env_allowed(const struct policy *p, const char *name);

/*
 * Normalises a path the way policy entries are: ~ and ~/x against home,
 * relative against cwd, "." and ".." and repeated or trailing '/' removed
 * lexically, then symlinks resolved (the deepest existing ancestor, the rest
 * appended) unless the result is "/", a single top-level directory, or an
 * ancestor of the path, in which case the spelling is kept (*kept set).
 * With resolve false, symlinks are left alone. Returns 0, -EINVAL (*err)
 * or -ENOMEM; *out is malloc'd.
 */
int policy_path_normalise(const char *raw, const char *cwd, const char *home,
			  bool resolve, char **out, bool *kept, const char **err);
/*
 * For the administrator's policy loaded for a caller (uid): the lexical path
 * is walked from "/", and a symlink is followed only when no directory on
 * the way to it is owned by uid or writable by a group or by everyone (the
 * caller could not have placed it). Otherwise *caller_link is set and *out
 * is the lexical path: a grant must then be left out; a deny keeps that
 * spelling (*kept). A grant that meets no such link is *out fully resolved,
 * with no symlink left in it (the kernel resolves it following none); a deny
 * keeps its spelling where resolving would widen, as above. Returns 0,
 * -EINVAL (*err) or -ENOMEM.
 */
int policy_path_guarded(const char *raw, const char *cwd, const char *home, uid_t uid,
			bool grant, char **out, bool *kept, bool *caller_link, const char **err);
/* Like policy_path_normalise but always resolves fully (what the kernel sees), for explain. */
int policy_path_resolve_target(const char *raw, const char *cwd, const char *home,
			       char **out, const char **err);

/* The effective policy as JSON text (malloc'd), as `bpfbox policy show` prints it. */
char *policy_to_json(const struct policy *p);

/*
 * Reads fd to its end into a new buffer (*len bytes, not NUL-terminated):
 * 0, -EFBIG past POLICY_MAX_BYTES, or a negative errno.
 */
int policy_read_fd(int fd, char **buf, size_t *len);

/*
 * Reads the policy file (not a directory, at most POLICY_MAX_BYTES) into a
 * new buffer, as policy_load_file does; a problem goes to diags. 0 or a
 * negative errno.
 */
int policy_read_file(const char *file, char **buf, size_t *len, struct diag_list *diags);

/* sha256 of data as 64 hex digits and a NUL. */
void policy_sha256_hex(const void *data, size_t len, char out[65]);

/* The device-set decision for a device node (policy_devices.c). */
struct device_decision {
	bool is_device;		/* the path is a character or block device node */
	bool block;
	unsigned int major, minor;
	bool allowed;
	const char *rule_name;	/* "builtin:device-set", "bpfbox.devices.allow" or "builtin:device" */
	const char *entry;	/* the bpfbox.devices.allow entry with the same number, or NULL */
	const char *what;	/* the built-in set's name for it (e.g. "null"), or a note; NULL if none */
};
/* Decides an open of abs_path as the kernel would, by the node's number; false when not a device. */
bool policy_decide_device(const struct policy *p, const char *abs_path, struct device_decision *out);

#endif
