// SPDX-License-Identifier: MIT
/* A sandbox's entries in the shared maps. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfbox.h"
#include "bpfbox.skel.h"
#include "map_sweep.h"
#include "policy/mandatory.h"
#include "quota.h"
#include "ring_pool.h"
#include "sandbox_maps.h"

struct bb_rate_key {
	uint64_t sandbox;
	uint64_t object;
	uint32_t op;
	uint32_t rule;
};

struct bb_rate {
	uint64_t last_ns;
	uint64_t pending;
};

int sandbox_maps_add(const struct bpf_state *st, uint64_t id, uint32_t flags, uint32_t sock_allow, int *ringbuf_fd,
		     struct errmsg *em)
{
	struct bb_sandbox sb = { .id = id, .flags = flags, .state = BB_STATE_RESOLVING,
				 .sock_allow = (bb_u16)(sock_allow & BB_SOCK_ALL) };
	struct bb_resolve slot = { 0 };
	int rb, err;

	/* Rule keys carry a generation above BB_ID_MASK (bpfbox.h): an id must leave those bits free. */
	if (id & ~BB_ID_MASK)
		return errmsg_set(em, -EOVERFLOW, "cgroup id %llu is above 2^%d: bpfbox cannot key its rules "
				  "(a host whose cgroup ids wrapped; reboot it)", (unsigned long long)id, BB_GEN_SHIFT);
	err = ring_pool_claim(st, id, &sb.ring_slot, &rb, em);
	if (err)
		return err;
	if (bpf_map_update_elem(st->maps.resolve_slots, &id, &slot, BPF_ANY) ||
	    bpf_map_update_elem(st->maps.sandboxes, &id, &sb, BPF_NOEXIST)) {
		err = errmsg_set(em, -errno, "registering the sandbox (too many sandboxes? limit %d)",
				 BB_MAX_SANDBOXES);
		sandbox_maps_remove(st, id);
		close(rb);
		return err;
	}
	*ringbuf_fd = rb;
	return 0;
}

static bool strip_last(char *path);

/* One layer's decision flags (layer-0 positions) into v, keeping srt's precedence at a single node. */
static void merge_layer(struct bb_rule *v, uint32_t flags, uint32_t rule, unsigned layer)
{
	unsigned shift = layer == BB_LAYER_CEILING ? BB_R_CEIL_SHIFT : 0;
	uint32_t have = v->flags >> shift;

	if (flags & BB_R_ALLOW_READ)
		v->read_rule[layer] = rule; /* allowRead wins over denyRead on the same path */
	else if ((flags & BB_R_DENY_READ) && !(have & BB_R_ALLOW_READ))
		v->read_rule[layer] = rule;
	if (flags & BB_R_DENY_WRITE)
		v->write_rule[layer] = rule; /* denyWrite wins over allowWrite */
	else if ((flags & BB_R_ALLOW_WRITE) && !(have & BB_R_DENY_WRITE))
		v->write_rule[layer] = rule;
	v->flags |= (flags & BB_R_DECISIONS) << shift;
}

void rule_merge(struct bb_rule *v, uint32_t flags, uint32_t rule, enum rule_layer layer)
{
	if (layer == RULE_LAYER_OWN || layer == RULE_LAYER_BOTH)
		merge_layer(v, flags, rule, BB_LAYER_OWN);
	if (layer == RULE_LAYER_CEILING || layer == RULE_LAYER_BOTH)
		merge_layer(v, flags, rule, BB_LAYER_CEILING);
	/* Marks (anchor, prefix, sockets, /dev/shm, bpfbox's state) belong to no layer. */
	v->flags |= flags & ~(uint32_t)BB_R_DECISIONS;
}

/* Adds a rule to the map entry at key, merged with what other rules put there; counts a new entry. */
static int merge_rule(int fd, const void *key, uint32_t flags, uint32_t rule, enum rule_layer layer,
		      uint32_t *written)
{
	struct bb_rule v = { 0 };
	bool fresh = bpf_map_lookup_elem(fd, key, &v) != 0;

	rule_merge(&v, flags, rule, layer);
	if (bpf_map_update_elem(fd, key, &v, BPF_ANY))
		return -errno;
	*written += fresh;
	return 0;
}

/* Hash chain of the last `missing` components of path, as the kernel walks them. */
static int missing_chain(const char *path, uint32_t missing, uint64_t *chain)
{
	const char *comp[BB_NAME_CHAIN];
	size_t lens[BB_NAME_CHAIN];
	const char *end = path + strlen(path), *p = end;
	uint64_t h = 0;

	if (missing == 0 || missing > BB_NAME_CHAIN)
		return -EINVAL;
	for (uint32_t i = 0; i < missing; i++) {
		const char *stop = p;

		while (p > path && p[-1] != '/')
			p--;
		comp[missing - 1 - i] = p;
		lens[missing - 1 - i] = (size_t)(stop - p);
		if (p > path)
			p--; /* the slash */
	}
	for (uint32_t i = 0; i < missing; i++)
		h = bb_chain_hash(h, component_name_hash(comp[i], lens[i]));
	*chain = h;
	return 0;
}

uint32_t sandbox_maps_rule_entries(const struct rule_spec *specs, const struct resolve_result *res, size_t n)
{
	uint64_t total = 0;

	/* What sandbox_maps_load_rules writes at most: merges of rules on one object only lower it. */
	for (size_t i = 0; i < n; i++) {
		if (res[i].err)
			continue;
		if (!res[i].missing)
			total += 1;
		else if (!(specs[i].flags & (BB_R_SHM | BB_R_BPFBOX_STATE | BB_R_UNIX_ALLOW)))
			total += 1 + (res[i].missing < BB_NAME_CHAIN ? res[i].missing : BB_NAME_CHAIN);
	}
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

int sandbox_maps_load_rules(const struct bpf_state *st, uint64_t id, const struct rule_spec *specs,
			    const struct resolve_result *res, size_t n,
			    void (*note)(void *ctx, const struct rule_spec *spec, const char *what), void *ctx,
			    uint32_t *written, struct errmsg *em)
{
	int inode_fd = st->maps.inode_rules;
	int name_fd = st->maps.name_rules;
	uint32_t allow = BB_R_ALLOW_READ | BB_R_ALLOW_WRITE | BB_R_UNIX_ALLOW;
	int err;

	for (size_t i = 0; i < n; i++) {
		struct bb_inode_key ik = {
			.sandbox = id, .ino = res[i].ino, .dev = res[i].dev, .dir = S_ISDIR(res[i].mode)
		};
		struct bb_name_key nk = { .sandbox = id, .ino = res[i].ino, .dev = res[i].dev };
		uint32_t flags = specs[i].flags, missing = res[i].missing;

		if (res[i].err == -ELOOP && specs[i].no_links)
			return errmsg_set(em, res[i].err, "resolving %s in the kernel: a symbolic link is now on the "
					  "way of the administrator's grant, which follows none (remove it and run again)",
					  specs[i].path);
		if (res[i].err)
			return errmsg_set(em, res[i].err, "resolving %s in the kernel", specs[i].path);
		if (!missing) {
			err = merge_rule(inode_fd, &ik, flags, specs[i].rule, specs[i].layer, written);
			if (err)
				return errmsg_set(em, err, "loading the rule for %s (rule map full? limit %d)",
						  specs[i].path, BB_MAX_RULES);
			continue;
		}
		if (flags & (BB_R_SHM | BB_R_BPFBOX_STATE))
			continue; /* marks on existing directories only */
		if (flags & BB_R_UNIX_ALLOW) {
			/* Peers are matched by the socket file's identity, which does not exist yet. */
			if (note)
				note(ctx, &specs[i], "socket does not exist at launch; the rule cannot apply");
			continue;
		}
		if (missing > BB_NAME_CHAIN) {
			if (flags & allow) {
				if (note)
					note(ctx, &specs[i], "more missing path components than the kernel matches "
							     "by name; this allow rule is not loaded");
				continue;
			}
			/* A deny may cover more than asked: fail closed. */
			if (note)
				note(ctx, &specs[i], "too many missing path components; denying from the first "
						     "missing ones down");
			missing = BB_NAME_CHAIN;
		}
		nk.depth = missing;
		{
			char trimmed[4096];
			const char *path = specs[i].path;
			uint32_t extra = res[i].missing - missing;

			/* When a deny was widened, drop the components beyond the chain. */
			snprintf(trimmed, sizeof(trimmed), "%s", path);
			for (uint32_t k = 0; k < extra; k++) {
				char *slash = strrchr(trimmed, '/');

				if (slash)
					*slash = 0;
			}
			err = missing_chain(trimmed, missing, &nk.hash);
			/* The names leading to the rule, so renames cannot carry content past it. */
			for (uint32_t d = 1; !err && d < missing; d++) {
				struct bb_name_key pk = nk;
				char prefix[4096];

				snprintf(prefix, sizeof(prefix), "%s", trimmed);
				for (uint32_t k = d; k < missing; k++)
					strip_last(prefix);
				pk.depth = d;
				err = missing_chain(prefix, d, &pk.hash);
				if (!err)
					err = merge_rule(name_fd, &pk, BB_R_PREFIX, 0, RULE_LAYER_OWN, written);
			}
		}
		if (!err)
			err = merge_rule(name_fd, &nk, flags, specs[i].rule, specs[i].layer, written);
		if (!err)
			err = merge_rule(inode_fd, &ik, BB_R_ANCHOR, 0, RULE_LAYER_OWN, written);
		if (err)
			return errmsg_set(em, err, "loading the rule for %s (rule map full? limit %d)", specs[i].path,
					  BB_MAX_RULES);
	}
	return 0;
}

int sandbox_maps_allow_unix_names(const struct bpf_state *st, uint64_t id, const char *const *names, size_t n,
				  struct errmsg *em)
{
	uint32_t allowed = 1;

	for (size_t i = 0; i < n; i++) {
		struct bb_unix_name_key key = { .sandbox = id };
		size_t len = strlen(names[i]);

		if (!len || len > BB_UNIX_NAME_MAX)
			return errmsg_set(em, -EINVAL, "abstract socket name @%s: 1 to %d bytes", names[i],
					  BB_UNIX_NAME_MAX);
		key.len = (uint32_t)len;
		memcpy(key.name, names[i], len);
		if (bpf_map_update_elem(st->maps.unix_names, &key, &allowed, BPF_ANY))
			return errmsg_set(em, -errno, "loading abstract socket name @%s (map full? limit %d)",
					  names[i], BB_MAX_UNIX_NAMES);
	}
	return 0;
}

int sandbox_maps_enforce(const struct bpf_state *st, uint64_t id, const struct sandbox_ports *ports,
			 struct errmsg *em)
{
	int fd = st->maps.sandboxes;
	struct bb_sandbox sb;

	if (bpf_map_lookup_elem(fd, &id, &sb))
		return errmsg_set(em, -errno, "looking up the sandbox");
	sb.state = BB_STATE_ENFORCING;
	sb.proxy_port = ports->proxy;
	sb.socks_port = ports->socks;
	sb.dns_port4 = (bb_u16)ports->dns4;
	sb.dns_port6 = (bb_u16)ports->dns6;
	sb.tport4 = (bb_u16)ports->transparent4;
	sb.tport6 = (bb_u16)ports->transparent6;
	sb.own_proxy_port = (bb_u16)ports->own_proxy;
	if (bpf_map_update_elem(fd, &id, &sb, BPF_EXIST))
		return errmsg_set(em, -errno, "switching the sandbox to enforcement");
	bpf_map_delete_elem(st->maps.resolve_slots, &id);
	return 0;
}

int sandbox_maps_counters(const struct bpf_state *st, uint64_t id, uint64_t *lost, uint64_t *denied)
{
	struct bb_sandbox sb;

	if (bpf_map_lookup_elem(st->maps.sandboxes, &id, &sb))
		return -errno;
	*lost = sb.lost;
	*denied = sb.denied;
	return 0;
}

void sandbox_maps_pending(const struct bpf_state *st, uint64_t id,
			  void (*fn)(void *ctx, uint32_t op, uint32_t rule, uint64_t count), void *ctx)
{
	int fd = st->maps.rate_limit;
	struct bb_rate_key key, next;
	struct bb_rate v;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.sandbox != id || bpf_map_lookup_elem(fd, &key, &v) || !v.pending)
			continue;
		fn(ctx, key.op, key.rule, v.pending);
		/* Iteration restarts when another sandbox deletes prev: report each count once. */
		v.pending = 0;
		bpf_map_update_elem(fd, &key, &v, BPF_EXIST);
	}
}

/* What a sweep reads must fit its buffers (map_sweep.h): checked here, where the types are chosen. */
_Static_assert(sizeof(struct bb_unix_name_key) <= MAP_SWEEP_MAX, "key too large for map_sweep");
_Static_assert(sizeof(struct bb_name_key) <= MAP_SWEEP_MAX, "key too large for map_sweep");
_Static_assert(sizeof(struct bb_inode_key) <= MAP_SWEEP_MAX, "key too large for map_sweep");
_Static_assert(sizeof(struct bb_learned_key) <= MAP_SWEEP_MAX, "key too large for map_sweep");
_Static_assert(sizeof(struct bb_dns_peer_key) <= MAP_SWEEP_MAX, "key too large for map_sweep");
_Static_assert(sizeof(struct bb_tconn) <= MAP_SWEEP_MAX, "value too large for map_sweep");

/* Every per-sandbox key starts with the sandbox id; these maps name it in the value. */
static void sweep_by_key(int fd, uint64_t id, size_t key_size)
{
	map_sweep(fd, key_size, 0, map_sweep_key_is_id, &id);
}

/* A rule map's key starts with a rules key: the sandbox's id with any generation (BB_RULES_KEY). */
static bool key_is_sandbox_rules(const void *key, const void *value, const void *id)
{
	uint64_t k;

	memcpy(&k, key, sizeof(k));
	return (k & BB_ID_MASK) == *(const uint64_t *)id;
}

static void sweep_rules(const struct bpf_state *st, uint64_t id, map_sweep_match match)
{
	map_sweep(st->maps.inode_rules, sizeof(struct bb_inode_key), 0, match, &id);
	map_sweep(st->maps.name_rules, sizeof(struct bb_name_key), 0, match, &id);
	map_sweep(st->maps.unix_names, sizeof(struct bb_unix_name_key), 0, match, &id);
	map_sweep(st->maps.device_allow, sizeof(struct bb_device_key), 0, match, &id);
}

int sandbox_maps_switch_rules(const struct bpf_state *st, uint64_t id, uint64_t key, struct errmsg *em)
{
	if (bpf_map_update_elem(st->maps.rule_keys, &id, &key, BPF_ANY))
		return errmsg_set(em, -errno, "switching the sandbox's rules to generation %llu",
				  (unsigned long long)(key >> BB_GEN_SHIFT));
	return 0;
}

void sandbox_maps_remove_rules(const struct bpf_state *st, uint64_t key)
{
	sweep_rules(st, key, map_sweep_key_is_id);
}

static void sweep_by_value(int fd, uint64_t id, size_t key_size, size_t value_size)
{
	map_sweep(fd, key_size, value_size, map_sweep_value_is_id, &id);
}

void sandbox_maps_remove(const struct bpf_state *st, uint64_t id)
{
	/* sigio_owners is keyed by file address, tconns by the client's address. */
	sweep_by_value(st->maps.sigio_owners, id, sizeof(uint64_t), sizeof(uint64_t));
	/* Every generation of its rules, however far a live update took them. */
	sweep_rules(st, id, key_is_sandbox_rules);
	bpf_map_delete_elem(st->maps.rule_keys, &id);
	sweep_by_key(st->maps.rate_limit, id, sizeof(struct bb_rate_key));
	sweep_by_key(st->maps.learned, id, sizeof(struct bb_learned_key));
	sweep_by_value(st->maps.tconns, id, sizeof(struct bb_tconn_key), sizeof(struct bb_tconn));
	sweep_by_key(st->maps.dns_peers, id, sizeof(struct bb_dns_peer_key));
	sweep_by_key(st->maps.git_made, id, sizeof(struct bb_inode_key));
	/* Its share goes once its entries are gone: a reservation never finds them still there. */
	quota_release(st, id);
	bpf_map_delete_elem(st->maps.resolve_slots, &id);
	/* The sandbox goes first, so no program finds its ring buffer once given back. */
	bpf_map_delete_elem(st->maps.sandboxes, &id);
	ring_pool_release(st, id);
}

/* Strips the last component of path in place; false at "/". */
static bool strip_last(char *path)
{
	char *slash = strrchr(path, '/');

	if (!slash || (slash == path && !path[1]))
		return false;
	if (slash == path)
		slash[1] = 0;
	else
		*slash = 0;
	return true;
}

/* The open the resolver hook sees; a guarded path follows no symlink, magic ones included. */
static int resolve_open(const char *path, bool no_links)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	if (!no_links)
		return open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

void sandbox_resolve_paths(const struct bpf_state *st, uint64_t id, const char *const *paths, const bool *no_links,
			   size_t n, struct resolve_result *out)
{
	int slot_fd = st->maps.resolve_slots;
	struct bb_resolve slot = { 0 };
	uint64_t seq = 0;
	char buf[4096];
	int fd;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(paths[i]);

		memset(&out[i], 0, sizeof(out[i]));
		if (len >= sizeof(buf)) {
			out[i].err = -ENAMETOOLONG;
			continue;
		}
		memcpy(buf, paths[i], len + 1);
		for (;;) {
			/* The kernel records the inode and refuses the open: nothing is opened. */
			fd = resolve_open(buf, no_links && no_links[i]);
			if (fd >= 0) {
				close(fd);
				out[i].err = -EPROTO; /* the resolver hook did not run */
				break;
			}
			if (errno == EPERM) {
				if (bpf_map_lookup_elem(slot_fd, &id, &slot) || slot.seq != seq + 1) {
					out[i].err = -EPROTO;
					break;
				}
				seq = slot.seq;
				out[i].dev = slot.dev;
				out[i].ino = slot.ino;
				out[i].mode = slot.mode;
				break;
			}
			if ((errno != ENOENT && errno != ENOTDIR) || !strip_last(buf)) {
				out[i].err = -errno;
				break;
			}
			out[i].missing++;
		}
	}
}
