/* SPDX-License-Identifier: MIT */
/* One sandbox's entries in the shared maps: registration, rules, removal. */
#ifndef BPFBOX_SANDBOX_MAPS_H
#define BPFBOX_SANDBOX_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_state.h"
#include "lib/errmsg.h"

/* Where a rule path led when the kernel resolved it. */
struct resolve_result {
	int err; /* 0, or the negative errno that stopped resolution */
	uint32_t dev;
	uint64_t ino;
	uint32_t mode;
	uint32_t missing; /* trailing components that did not exist; the identity is their ancestor's */
};

/*
 * Which rule layer a spec's decision flags belong to. RULE_LAYER_OWN is the
 * only one without a ceiling; under one it is the caller's, RULE_LAYER_CEILING
 * the administrator's, and RULE_LAYER_BOTH an implicit rule of both (TMPDIR).
 */
enum rule_layer {
	RULE_LAYER_OWN,
	RULE_LAYER_CEILING,
	RULE_LAYER_BOTH,
};

/*
 * A rule to load: which flags (BB_R_*, decisions in layer-0 positions) the
 * path carries, in which layer, and the id events report.
 */
struct rule_spec {
	const char *path;
	uint32_t flags;
	uint32_t rule;
	enum rule_layer layer;
	bool no_links; /* resolved following no symlink (a grant of the administrator's, for a caller) */
};

struct bb_rule;
/*
 * Merges one rule into a map entry that rules of either layer may share: each
 * layer keeps srt's precedence at one node (allowRead over denyRead, denyWrite
 * over allowWrite) and its own rule ids; marks are layer-free. Pure.
 */
void rule_merge(struct bb_rule *v, uint32_t flags, uint32_t rule, enum rule_layer layer);

/* Registers the sandbox in state RESOLVING with a ring buffer of its own (*ringbuf_fd) and the BB_SOCK_* kinds its policy opens. */
int sandbox_maps_add(const struct bpf_state *st, uint64_t id, uint32_t flags, uint32_t sock_allow, int *ringbuf_fd,
		     struct errmsg *em);
/*
 * How many rule map entries (inode_rules and name_rules together) loading
 * these resolved rules writes at most: what the sandbox reserves first. Pure.
 */
uint32_t sandbox_maps_rule_entries(const struct rule_spec *specs, const struct resolve_result *res, size_t n);
/*
 * Loads rules whose paths the kernel resolved. A path that did not exist is
 * matched by name below its deepest existing ancestor; allow rules dropped
 * because too many of their components were missing (narrowing only) are
 * reported through note(). *written grows by the entries this call created.
 */
int sandbox_maps_load_rules(const struct bpf_state *st, uint64_t id, const struct rule_spec *specs,
			    const struct resolve_result *res, size_t n,
			    void (*note)(void *ctx, const struct rule_spec *spec, const char *what), void *ctx,
			    uint32_t *written, struct errmsg *em);
/* Lets the sandbox reach these abstract Unix socket names (given without the leading '@'). */
int sandbox_maps_allow_unix_names(const struct bpf_state *st, uint64_t id, const char *const *names, size_t n,
				  struct errmsg *em);
/* Where the kernel lets a sandbox's connects go, or sends them; 0 = none. */
struct sandbox_ports {
	unsigned proxy, socks; /* reachable on 127.0.0.1 */
	unsigned own_proxy; /* which of them is bpfbox's own proxy (0 = neither) */
	unsigned dns4, dns6; /* port 53 goes here (127.0.0.1, ::1) */
	unsigned transparent4, transparent6; /* TCP to learned addresses goes here */
};

/* Switches the sandbox to enforcement with its ports. */
int sandbox_maps_enforce(const struct bpf_state *st, uint64_t id, const struct sandbox_ports *ports,
			 struct errmsg *em);
/* Counters the kernel keeps for the sandbox. */
int sandbox_maps_counters(const struct bpf_state *st, uint64_t id, uint64_t *lost, uint64_t *denied);
/* Calls fn for each rate-limited refusal still pending (count folded since its last event). */
void sandbox_maps_pending(const struct bpf_state *st, uint64_t id,
			  void (*fn)(void *ctx, uint32_t op, uint32_t rule, uint64_t count), void *ctx);
/*
 * A live update's switch: from now on the kernel reads the sandbox's file,
 * Unix socket and device rules under key (BB_RULES_KEY), in one map update.
 */
int sandbox_maps_switch_rules(const struct bpf_state *st, uint64_t id, uint64_t key, struct errmsg *em);
/* Removes the rule entries filed under one rules key (a generation no longer in force). */
void sandbox_maps_remove_rules(const struct bpf_state *st, uint64_t key);
/* Removes every entry of the sandbox from every map. */
void sandbox_maps_remove(const struct bpf_state *st, uint64_t id);

/*
 * Child side: resolve each path in the kernel (the sandbox must be RESOLVING).
 * Where no_links[i] (no_links may be NULL), the path is resolved following no
 * symlink at all (openat2 RESOLVE_NO_SYMLINKS): a link there ends it with
 * -ELOOP. Async-signal-safe.
 */
void sandbox_resolve_paths(const struct bpf_state *st, uint64_t id, const char *const *paths, const bool *no_links,
			   size_t n, struct resolve_result *out);

#endif
