/* SPDX-License-Identifier: MIT */
/*
 * The walk behind every file decision: one bounded walk up the dentry chain (crossing mounts),
 * matching each ancestor by (device, inode) and the names below an anchor by
 * hash. Its cost grows with the path depth, never with the number of rules.
 * Pointers are read with probe reads because crossing a mount goes through
 * struct mount, which no hook hands out as a typed pointer.
 */
#ifndef BPFBOX_FS_WALK_BPF_H
#define BPFBOX_FS_WALK_BPF_H

#include "lib/sandbox.bpf.h"

#define WALK_READ 1u
#define WALK_WRITE 2u
/* The write puts an existing object or a link at the name (rename, link, symlink). */
#define WALK_PLACE 4u

#define SPECIAL_NONE 0
#define SPECIAL_NOT_A_PATH 1 /* on a kernel-internal mount: pidfds, memfds, pipes, sockets, ... */
#define SPECIAL_PROTECTED 2 /* cgroupfs, securityfs, debugfs, tracefs */
#define SPECIAL_BPFFS 3 /* bpffs: protected, and its pins are not read either (map contents) */

/*
 * One rule layer's view of the walk: its deepest read rule, any denyWrite,
 * some allowWrite (whose rule id no decision names, so it is not kept: the
 * hooks' stack is at the verifier's limit).
 */
struct walk_layer {
	__u32 read_rule;
	__u32 write_deny_rule;
	__u8 read_decided;
	__u8 read_allowed;
	__u8 write_denied;
	__u8 write_allowed;
};

struct walk_result {
	struct walk_layer layer[BB_LAYERS]; /* BB_LAYER_OWN, BB_LAYER_CEILING */
	__u32 mandatory_rule;
	__u8 mandatory;
	__u8 too_deep;
	__u8 special;
	__u8 prefix; /* the object itself lies on a missing rule path, above its end */
	__u8 other_tmpdir; /* below (or at) another sandbox's TMPDIR */
	__u8 bpfbox_state; /* below (or at) bpfbox's run directory */
	__u8 under_shm; /* strictly below /dev/shm */
	__u8 shm_child; /* directly in /dev/shm */
	__u8 ceiling; /* the sandbox has an administrator's layer (BB_SB_CEILING) */
};

struct walk_names {
	__u64 name[BB_NAME_CHAIN]; /* name[0] is the child of the node being visited */
	__u16 len[BB_NAME_CHAIN]; /* d_name.len is 32 bits; a component is far shorter than PATH_MAX */
	__u32 below; /* components seen below the node being visited, saturating at BB_NAME_CHAIN */
};

static __always_inline __u64 component_hash(__u64 name, __u32 len)
{
	__u64 words[BB_NAME_HASHED / 8] = {};
	__u32 n = len;

	if (n > BB_NAME_HASHED)
		n = BB_NAME_HASHED;
	bpf_probe_read_kernel(words, n, (const void *)name);
	return bb_name_hash_words(words, len);
}

/* One layer's flags (in layer-0 positions) applied to that layer's results. */
static __always_inline void apply_layer(__u32 flags, __u32 read_rule, __u32 write_rule, __u32 mask,
					struct walk_layer *l)
{
	if ((mask & WALK_READ) && !l->read_decided && (flags & (BB_R_DENY_READ | BB_R_ALLOW_READ))) {
		/* The deepest rule of the layer decides; at one node allowRead wins (srt). */
		l->read_decided = 1;
		l->read_allowed = !!(flags & BB_R_ALLOW_READ);
		l->read_rule = read_rule;
	}
	if (!(mask & WALK_WRITE))
		return;
	if ((flags & BB_R_DENY_WRITE) && !l->write_denied) {
		l->write_denied = 1;
		l->write_deny_rule = write_rule;
	}
	if (flags & BB_R_ALLOW_WRITE)
		l->write_allowed = 1;
}

/* Each layer's bits go to its own results: one layer never decides for the other. */
static __always_inline void apply_rule(const struct bb_rule *rule, __u32 mask, struct walk_result *r)
{
	__u32 flags = rule->flags;

	apply_layer(flags, rule->read_rule[BB_LAYER_OWN], rule->write_rule[BB_LAYER_OWN], mask,
		    &r->layer[BB_LAYER_OWN]);
	if (flags & (BB_R_DECISIONS << BB_R_CEIL_SHIFT))
		apply_layer(flags >> BB_R_CEIL_SHIFT, rule->read_rule[BB_LAYER_CEILING],
			    rule->write_rule[BB_LAYER_CEILING], mask, &r->layer[BB_LAYER_CEILING]);
}

/* Rules on names that did not exist at launch, hanging below an existing anchor. */
static __always_inline void check_anchor(__u64 sb_id, const struct bb_inode_key *anchor,
					 const struct walk_names *wn, __u32 mask, struct walk_result *r)
{
	struct bb_name_key key = { .sandbox = sb_id, .ino = anchor->ino, .dev = anchor->dev };
	__u64 chain[BB_NAME_CHAIN] = {};
	__u64 h = 0;
	struct bb_rule *rule;
	int j;

	for (j = 0; j < BB_NAME_CHAIN; j++) {
		if (j >= wn->below)
			break;
		h = bb_chain_hash(h, component_hash(wn->name[j], wn->len[j]));
		chain[j] = h;
	}
	/* Deepest first, so the most specific read rule decides. */
	for (j = BB_NAME_CHAIN - 1; j >= 0; j--) {
		if (j >= wn->below)
			continue;
		key.depth = j + 1;
		key.hash = chain[j];
		rule = bpf_map_lookup_elem(&name_rules, &key);
		if (!rule)
			continue;
		if ((rule->flags & BB_R_PREFIX) && j + 1 == wn->below)
			r->prefix = 1;
		apply_rule(rule, mask, r);
	}
}

static __always_inline void mandatory_hit(struct walk_result *r, __u32 rule)
{
	if (!r->mandatory) {
		r->mandatory = 1;
		r->mandatory_rule = rule;
	}
}

/* The walk's state lives on the caller's stack; bpf_loop runs one level per call. */
struct walk_ctx {
	__u64 sb_id;
	__u64 rules_id; /* where its rules are filed (rules_key) */
	__u64 d;
	__u64 mnt; /* struct mount *, 0 when the hook gave no mount */
	__u64 mnt_root;
	__u32 sb_flags;
	__u16 mask;
	__u16 done;
	struct walk_names wn;
	struct walk_result r;
};

/* Whether the sandbox made this .git (git_made): key is the visited node's identity. */
static __always_inline bool git_made_here(__u64 sb_id, struct bb_inode_key *key)
{
	__u64 own = key->sandbox;
	bool made;

	key->sandbox = sb_id;
	made = bpf_map_lookup_elem(&git_made, key) != NULL;
	key->sandbox = own;
	return made;
}

/*
 * Whether d lies directly in a directory holding a .git the sandbox made.
 * key is the walk's own, reused (the verifier limits the stack): the caller
 * has no further use for it.
 */
static __always_inline bool new_worktree_here(__u64 sb_id, struct dentry *d, struct bb_inode_key *key)
{
	struct inode *dir = BPF_CORE_READ(d, d_parent, d_inode);

	if (!dir)
		return false;
	key->sandbox = sb_id;
	key->dir = BB_GIT_WORKTREE;
	key->dev = BPF_CORE_READ(dir, i_sb, s_dev);
	key->ino = BPF_CORE_READ(dir, i_ino);
	return bpf_map_lookup_elem(&git_made, key) != NULL;
}

/*
 * In a .git the sandbox made, hooks/ is git's to create and fill with the
 * *.sample files its templates hold, names git never runs. Anything else
 * directly in hooks/, and placing an object or a link at hooks/ itself,
 * could run outside the sandbox later.
 */
static __always_inline bool new_git_hook_allowed(const struct walk_names *wn, __u32 mask)
{
	char tail[8] = {};
	__u32 len;

	if (wn->below == 1)
		return !(mask & WALK_PLACE);
	len = wn->len[1];
	if (len <= 7)
		return false;
	bpf_probe_read_kernel(tail, 7, (const void *)(wn->name[1] + len - 7));
	return tail[0] == '.' && tail[1] == 's' && tail[2] == 'a' && tail[3] == 'm' && tail[4] == 'p' &&
	       tail[5] == 'l' && tail[6] == 'e';
}

/* The mandatory deny set, matched by name at any depth. */
static __always_inline void check_mandatory(struct walk_ctx *w, struct dentry *d, __u64 name, __u32 len,
					    struct inode *inode, struct bb_inode_key *self)
{
	struct walk_names *wn = &w->wn;
	struct walk_result *r = &w->r;
	struct bb_mandatory *m, *child;
	char first = 0;
	bool made = false;
	__u64 h;

	bpf_probe_read_kernel(&first, 1, (const void *)name);
	if (first != '.')
		return;
	h = component_hash(name, len);
	m = bpf_map_lookup_elem(&mandatory_names, &h);
	if (!m)
		return;
	if ((m->flags & BB_M_PROTECT) &&
	    !((m->flags & BB_M_NEW_WORKTREE) && wn->below == 0 && new_worktree_here(w->sb_id, d, self)))
		mandatory_hit(r, m->rule);
	/* Only .git and .claude read on (and self, which new_worktree_here may reuse, is theirs). */
	if (!(m->flags & (BB_M_GIT | BB_M_CLAUDE)))
		return;
	if ((m->flags & BB_M_GIT) && inode)
		made = git_made_here(w->sb_id, self);
	if (wn->below == 0) {
		/*
		 * A .git file is a worktree pointer: protect the file itself, unless
		 * the sandbox made it. Nothing is placed at a .git name (a symbolic
		 * link, a hard link, an exchange): git would follow it elsewhere.
		 */
		if ((m->flags & BB_M_GIT) && (((w->mask & WALK_PLACE)) ||
					      (inode && S_ISREG(BPF_CORE_READ(inode, i_mode)) && !made)))
			mandatory_hit(r, BB_RULE_MANDATORY_GIT_FILE);
		return;
	}
	h = component_hash(wn->name[0], wn->len[0]);
	child = bpf_map_lookup_elem(&mandatory_names, &h);
	if (!child)
		return;
	if ((m->flags & BB_M_GIT) && (child->flags & BB_M_CHILD_HOOKS) &&
	    !(made && new_git_hook_allowed(wn, w->mask)))
		mandatory_hit(r, BB_RULE_MANDATORY_GIT_HOOKS);
	/* config and config.worktree, each named by its own entry. */
	if ((m->flags & BB_M_GIT) && (child->flags & BB_M_CHILD_CONFIG) &&
	    !(w->sb_flags & BB_SB_ALLOW_GIT_CONFIG) && !made)
		mandatory_hit(r, child->rule);
	if ((m->flags & BB_M_GIT) && (child->flags & BB_M_CHILD_COMMONDIR))
		mandatory_hit(r, child->rule);
	/* The child's own entry names it: mandatory:.claude/commands or .claude/agents. */
	if ((m->flags & BB_M_CLAUDE) && (child->flags & BB_M_CHILD_AGENT_DIR))
		mandatory_hit(r, child->rule);
}

static __always_inline struct mount *real_mount(struct vfsmount *vmnt)
{
	return (struct mount *)((void *)vmnt - bpf_core_field_offset(struct mount, mnt));
}

/*
 * Whether every mount of sb is one the kernel made for itself (kern_mount:
 * pidfs, the shmem mount behind memfd_create, shmget and shared anonymous
 * maps, anon inodes, nsfs, pipefs, sockfs, ...). Such a mount is never
 * attached to any namespace's tree (clone_mnt drops MNT_INTERNAL, so no
 * bind or move can put it there), so no path a policy could name leads to
 * its objects. A superblock that also has a user-visible mount (mqueue's,
 * an nsfs file bound to /run/netns/x) is not: its objects keep their rules.
 */
static __always_inline bool internal_only_sb(struct super_block *sb)
{
	struct mount *m;

	if (bpf_core_field_exists(struct mount___mount_chain, mnt_next_for_sb)) {
		struct super_block___mount_chain *chain = (void *)sb;

		m = BPF_CORE_READ(chain, s_mounts);
		if (!m || BPF_CORE_READ((struct mount___mount_chain *)m, mnt_next_for_sb))
			return false;
	} else {
		__u64 head = (__u64)sb + bpf_core_field_offset(struct super_block, s_mounts);
		__u64 first = (__u64)BPF_CORE_READ(sb, s_mounts.next);

		if (first == head || first != (__u64)BPF_CORE_READ(sb, s_mounts.prev))
			return false;
		m = (struct mount *)(first - bpf_core_field_offset(struct mount, mnt_instance));
	}
	return BPF_CORE_READ(m, mnt.mnt_flags) & MNT_INTERNAL;
}

/*
 * Objects without a name are told by their mounts' flags, so whatever
 * internal filesystem a newer kernel adds is covered. The protected
 * filesystems are ordinary user mounts that no flag tells apart: magic
 * numbers are the only way to recognise them.
 */
static __always_inline int special_fs(struct dentry *d)
{
	struct super_block *sb = BPF_CORE_READ(d, d_sb);
	unsigned long magic = BPF_CORE_READ(sb, s_magic);

	if (magic == BPF_FS_MAGIC)
		return SPECIAL_BPFFS;
	if (magic == CGROUP2_SUPER_MAGIC || magic == CGROUP_SUPER_MAGIC ||
	    magic == SECURITYFS_MAGIC || magic == DEBUGFS_MAGIC || magic == TRACEFS_MAGIC)
		return SPECIAL_PROTECTED;
	if (internal_only_sb(sb))
		return SPECIAL_NOT_A_PATH;
	return SPECIAL_NONE;
}

/*
 * One level of the walk. A global function is verified once, on its own,
 * whatever calls it; the loop that calls it then converges at once.
 */
__noinline int bb_walk_level(struct walk_ctx *w)
{
	struct bb_inode_key key = {};
	struct dentry *d, *parent;
	struct mount *mnt;
	struct inode *inode;
	struct bb_rule *rule;
	__u64 *owner;
	__u64 name;
	__u32 len;

	if (!w)
		return 1;
	key.sandbox = w->rules_id;
	d = (struct dentry *)w->d;
	mnt = (struct mount *)w->mnt;
	inode = BPF_CORE_READ(d, d_inode);
	if (inode) {
		key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		key.ino = BPF_CORE_READ(inode, i_ino);
		key.dir = S_ISDIR(BPF_CORE_READ(inode, i_mode));
		rule = bpf_map_lookup_elem(&inode_rules, &key);
		if (rule) {
			if ((rule->flags & BB_R_ANCHOR) && w->wn.below)
				check_anchor(w->rules_id, &key, &w->wn, w->mask, &w->r);
			if (rule->flags & BB_R_BPFBOX_STATE)
				w->r.bpfbox_state = 1;
			if ((rule->flags & BB_R_SHM) && w->wn.below) {
				w->r.under_shm = 1;
				if (w->wn.below == 1)
					w->r.shm_child = 1;
			}
			apply_rule(rule, w->mask, &w->r);
		}
		/* Another sandbox's TMPDIR, by identity: whatever the name or the path to it. */
		if (key.dir) {
			key.sandbox = 0;
			owner = bpf_map_lookup_elem(&private_dirs, &key);
			if (owner && *owner != w->sb_id)
				w->r.other_tmpdir = 1;
		}
	}
	if (mnt && w->d == w->mnt_root) {
		/* The mount's root stands for its mount point: cross without a name. */
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

		if (up == mnt) {
			w->done = 1;
			return 1;
		}
		w->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = (__u64)up;
		w->mnt_root = (__u64)BPF_CORE_READ(up, mnt.mnt_root);
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d) {
		w->done = 1;
		return 1;
	}
	name = (__u64)BPF_CORE_READ(d, d_name.name);
	len = BPF_CORE_READ(d, d_name.len);
	if (w->mask & WALK_WRITE)
		check_mandatory(w, d, name, len, inode, &key);
	w->wn.name[3] = w->wn.name[2];
	w->wn.len[3] = w->wn.len[2];
	w->wn.name[2] = w->wn.name[1];
	w->wn.len[2] = w->wn.len[1];
	w->wn.name[1] = w->wn.name[0];
	w->wn.len[1] = w->wn.len[0];
	w->wn.name[0] = name;
	w->wn.len[0] = len;
	/* Saturating, so the verifier sees the loop's states converge. */
	if (w->wn.below < BB_NAME_CHAIN)
		w->wn.below++;
	w->d = (__u64)parent;
	return 0;
}

static long walk_step(__u32 i, void *data)
{
	return bb_walk_level(data) ? 1 : 0;
}

/*
 * Walks from d (and its mount, when the hook has one) to the root. Without a
 * mount the walk stops at the root of d's filesystem: rules above that mount
 * point are then not seen, which can only deny (write is allow-only).
 */
static __always_inline void fs_walk(__u64 sb_id, const struct bb_sandbox *sb, struct dentry *d,
				    struct vfsmount *vmnt, __u32 mask, struct walk_ctx *w)
{
	/* The result stays in w: a copy would cost the stack the verifier limits. */
	__builtin_memset(w, 0, sizeof(*w));
	w->sb_id = sb_id;
	w->rules_id = rules_key(sb_id);
	w->d = (__u64)d;
	w->mask = mask;
	w->sb_flags = sb->flags;
	w->r.ceiling = !!(sb->flags & BB_SB_CEILING);
	w->r.special = special_fs(d);
	if (w->r.special != SPECIAL_NOT_A_PATH) {
		if (vmnt) {
			w->mnt = (__u64)real_mount(vmnt);
			w->mnt_root = (__u64)BPF_CORE_READ(vmnt, mnt_root);
		}
		bpf_loop(BB_MAX_DEPTH, walk_step, w, 0);
		if (!w->done)
			w->r.too_deep = 1;
	}
}

#endif
