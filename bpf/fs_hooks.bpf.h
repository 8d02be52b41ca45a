/* SPDX-License-Identifier: MIT */
/* LSM hooks for file access: every read and write operation a sandbox can make. */
#ifndef BPFBOX_FS_HOOKS_BPF_H
#define BPFBOX_FS_HOOKS_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/fs_walk.bpf.h"
#include "lib/fs_decide.bpf.h"
#include "lib/devices.bpf.h"
#include <bpf/bpf_tracing.h> /* BPF_PROG */

/*
 * Kernel-internal work on a task's behalf (overlayfs copy-up and backing
 * files) runs with overridden credentials; the access that caused it was
 * already checked on the path the task used.
 */
static __always_inline bool creds_overridden(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, cred) != BPF_CORE_READ(task, real_cred);
}

/* While resolving, the launcher's child opens each rule path: record its identity, open nothing. */
static __always_inline int resolve_open(__u64 sb_id, struct file *file)
{
	struct bb_resolve *slot = bpf_map_lookup_elem(&resolve_slots, &sb_id);
	struct inode *inode = BPF_CORE_READ(file, f_path.dentry, d_inode);

	if (slot && inode) {
		slot->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		slot->ino = BPF_CORE_READ(inode, i_ino);
		slot->mode = BPF_CORE_READ(inode, i_mode);
		__sync_fetch_and_add(&slot->seq, 1);
	}
	return -EPERM;
}

/*
 * open(O_CREAT) asks path_mknod before the kernel has looked the name up
 * (lookup_open), and ignores the answer when the name exists. So a create
 * refused on a name not looked up yet is parked here, not logged; the open
 * then settles it: file_open (the name existed, or in audit mode was
 * created), or file_free_security of the file an open failed to open. An
 * audited create (BB_OP_AUDITED in op) is settled like one in audit mode.
 */
static __always_inline __u32 dcache_par_lookup(void)
{
	if (bpf_core_enum_value_exists(enum dentry_flags, DCACHE_PAR_LOOKUP))
		return bpf_core_enum_value(enum dentry_flags, DCACHE_PAR_LOOKUP);
	return DCACHE_PAR_LOOKUP;
}

static __always_inline bool park_create(__u64 sb_id, struct dentry *dentry, struct vfsmount *mnt, __u32 op,
					__u32 rule)
{
	struct pending_create *p;

	p = bpf_task_storage_get(&pending_creates, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p)
		return false;
	p->sandbox = sb_id;
	p->dentry = (__u64)dentry;
	p->mnt = (__u64)mnt;
	p->op = op;
	p->rule = rule;
	return true;
}

/* Logs a parked refusal when it took effect (took), and forgets it either way. */
static __always_inline void settle_create(struct bb_sandbox *sb, __u64 sb_id, struct pending_create *p, bool took)
{
	struct dentry *d = (struct dentry *)p->dentry;

	p->dentry = 0;
	if (!took || p->sandbox != sb_id)
		return;
	__sync_fetch_and_add(&sb->denied, 1);
	report_file(sb, p->op, p->rule, d, (struct vfsmount *)p->mnt);
}

static __always_inline struct pending_create *parked_create(void)
{
	struct pending_create *p = bpf_task_storage_get(&pending_creates, bpf_get_current_task_btf(), 0, 0);

	return p && p->dentry ? p : NULL;
}

/* Whether d is named .git. Out of line: its hash buffer stays off the hook's stack. */
static __noinline int dentry_is_dot_git(struct dentry *d)
{
	struct bb_mandatory *m;
	__u64 name = (__u64)BPF_CORE_READ(d, d_name.name);
	__u32 len = BPF_CORE_READ(d, d_name.len);
	__u64 h;

	if (len != 4)
		return 0;
	h = component_hash(name, len);
	m = bpf_map_lookup_elem(&mandatory_names, &h);
	return m && (m->flags & BB_M_GIT) ? 1 : 0;
}

/*
 * Records a .git the sandbox just made, so git may build its files in it:
 * in git_made, and in an event for the check at the end. Either both or
 * neither: a .git the launcher would not hear of keeps the full protection
 * of one that existed before.
 */
static __noinline int git_record(struct bb_sandbox *sb, struct dentry *d, struct inode *inode,
				 struct vfsmount *mnt, __u32 op)
{
	struct bb_inode_key key = {};
	struct bb_event *ev;
	struct inode *dir;
	__u8 one = 1;
	__u64 ino, id;

	if (!sb || !inode)
		return 0;
	/*
	 * Counted before the check: racing makes pass the bound by the CPUs'
	 * count at most, and a full map leaves a .git unrecorded (protected).
	 */
	__sync_fetch_and_add(&sb->git_new, 1);
	if (sb->git_new > BB_MAX_NEW_GIT)
		return 0;
	id = sb->id;
	ino = BPF_CORE_READ(inode, i_ino);
	key.sandbox = id;
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key.ino = ino;
	key.dir = S_ISDIR(BPF_CORE_READ(inode, i_mode));
	ev = event_reserve(sb, id, 1);
	if (!ev)
		return 0;
	if (bpf_map_update_elem(&git_made, &key, &one, BPF_NOEXIST)) {
		bpf_ringbuf_discard(ev, 0);
		return 0;
	}
	/* Its work tree: .gitmodules there is git's to write (git submodule add). */
	dir = BPF_CORE_READ(d, d_parent, d_inode);
	if (dir) {
		struct bb_inode_key wt = { .sandbox = id, .dir = BB_GIT_WORKTREE };

		wt.dev = BPF_CORE_READ(dir, i_sb, s_dev);
		wt.ino = BPF_CORE_READ(dir, i_ino);
		bpf_map_update_elem(&git_made, &wt, &one, BPF_ANY);
	}
	event_fill_task(ev, id, BB_EV_GIT, op, 0, 0, 1, false);
	ev->rdev = key.dev;
	__builtin_memcpy(ev->addr, &ino, sizeof(ino));
	event_set_path(ev, d, mnt);
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(bb_file_open, struct file *file)
{
	/* A typed pointer: ptys and /dev/shm objects carry their owner in inode storage. */
	struct inode *inode = file->f_inode;
	struct pending_create *pending;
	struct bb_sandbox *sb;
	struct dentry *d;
	struct vfsmount *mnt;
	umode_t imode;
	bool device = false;
	fmode_t mode;
	__u64 id;
	int ret;

	sb = current_sandbox(&id);
	if (!sb)
		return 0;
	if (sb->state == BB_STATE_RESOLVING)
		return resolve_open(id, file);
	mode = BPF_CORE_READ(file, f_mode);
	pending = parked_create();
	if (pending)
		/* The name existed: the create was not needed. Audit mode let it happen. */
		settle_create(sb, id, pending, mode & FMODE_CREATED);
	if (creds_overridden())
		return 0;
	d = BPF_CORE_READ(file, f_path.dentry);
	mnt = BPF_CORE_READ(file, f_path.mnt);
	mode = BPF_CORE_READ(file, f_mode);
	/* A worktree's or submodule's .git file this open made: git writes its pointer next. */
	if ((mode & FMODE_CREATED) && sb->state == BB_STATE_ENFORCING && !(sb->flags & BB_SB_GIT_NO_NEW) && inode &&
	    S_ISREG(BPF_CORE_READ(inode, i_mode)) && dentry_is_dot_git(d)) {
		if (sb->git_new >= BB_MAX_NEW_GIT) {
			report_file(sb, BB_OP_CREATE, BB_RULE_GIT_LIMIT, d, mnt);
			return refusal(sb, EPERM);
		}
		git_record(sb, d, inode, mnt, BB_OP_CREATE);
	}
	imode = inode ? BPF_CORE_READ(inode, i_mode) : 0;
	if (inode && (S_ISCHR(imode) || S_ISBLK(imode))) {
		ret = device_check(sb, id, file, inode);
		if (ret)
			return ret;
		device = true;
	}
	if (mode & FMODE_WRITE) {
		ret = fs_check_open(sb, id, d, inode, mnt, BB_OP_OPEN_WRITE,
				    WALK_WRITE | ((mode & FMODE_READ) ? WALK_READ : 0), device);
		if (ret)
			return ret;
	}
	/* Before 6.8 exec marks only f_flags (__FMODE_EXEC, the same bit value). */
	if ((mode & FMODE_EXEC) || (BPF_CORE_READ(file, f_flags) & FMODE_EXEC))
		return fs_check(sb, id, d, inode, mnt, BB_OP_EXEC, WALK_READ);
	if (mode & FMODE_READ)
		return fs_check(sb, id, d, inode, mnt, BB_OP_OPEN_READ, WALK_READ);
	return 0;
}

/* The shape shared by every "change this name in that directory" hook. */
#define WRITE_IN_DIR_HOOK(hook, op, ...)                                               \
	SEC("lsm/" #hook)                                                              \
	int BPF_PROG(bb_##hook, const struct path *dir, struct dentry *dentry, ##__VA_ARGS__) \
	{                                                                              \
		struct bb_sandbox *sb;                                                 \
		__u64 id;                                                              \
		sb = current_sandbox(&id);                                             \
		if (!sb || sb->state != BB_STATE_ENFORCING)                            \
			return 0;                                                      \
		return fs_check(sb, id, dentry, dentry->d_inode, BPF_CORE_READ(dir, mnt), op, WALK_WRITE); \
	}

WRITE_IN_DIR_HOOK(path_unlink, BB_OP_UNLINK)
WRITE_IN_DIR_HOOK(path_rmdir, BB_OP_RMDIR)

SEC("lsm/path_symlink")
int BPF_PROG(bb_path_symlink, const struct path *dir, struct dentry *dentry, const char *old_name)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	return fs_check(sb, id, dentry, dentry->d_inode, BPF_CORE_READ(dir, mnt), BB_OP_SYMLINK,
			WALK_WRITE | WALK_PLACE);
}

/*
 * mkdir of a .git the policy lets through is parked until d_instantiate
 * binds its inode. Past BB_MAX_NEW_GIT it is refused: the end-of-run check
 * has a bound.
 */
SEC("lsm/path_mkdir")
int BPF_PROG(bb_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode)
{
	struct pending_create *p;
	struct bb_sandbox *sb;
	struct vfsmount *mnt;
	__u64 id;
	int ret;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	mnt = BPF_CORE_READ(dir, mnt);
	ret = fs_check(sb, id, dentry, dentry->d_inode, mnt, BB_OP_MKDIR, WALK_WRITE);
	if (ret)
		return ret;
	/* Whatever an earlier mkdir parked is over: only this one's dentry may be bound next. */
	p = bpf_task_storage_get(&pending_creates, bpf_get_current_task_btf(), 0, 0);
	if (p)
		p->git_dentry = 0;
	if ((sb->flags & BB_SB_GIT_NO_NEW) || !dentry_is_dot_git(dentry))
		return 0;
	if (sb->git_new >= BB_MAX_NEW_GIT) {
		report_file(sb, BB_OP_MKDIR, BB_RULE_GIT_LIMIT, dentry, mnt);
		return refusal(sb, EPERM);
	}
	p = bpf_task_storage_get(&pending_creates, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (p) {
		p->git_dentry = (__u64)dentry;
		p->git_parent = (__u64)BPF_CORE_READ(dentry, d_parent);
		p->git_mnt = (__u64)mnt;
	}
	return 0;
}

/* Without create or atomic_open the kernel refuses every new file in dir itself. */
static __always_inline bool dir_cannot_create(const struct path *dir)
{
	const struct inode_operations *ops = BPF_CORE_READ(dir, dentry, d_inode, i_op);

	return ops && !BPF_CORE_READ(ops, create) && !BPF_CORE_READ(ops, atomic_open);
}

SEC("lsm/path_mknod")
int BPF_PROG(bb_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode, unsigned int dev)
{
	struct bb_sandbox *sb;
	struct vfsmount *mnt;
	__u32 op, rule = 0;
	__u64 id;
	int how;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		report_file(sb, BB_OP_MKNOD, BB_RULE_DEVICE_NODE, dentry, BPF_CORE_READ(dir, mnt));
		return refusal(sb, EPERM);
	}
	/*
	 * Regular files made by open(O_CREAT) come here too, before the kernel
	 * has looked the name up: an existing name opens whatever this returns.
	 * A directory that cannot create a file (procfs, so /proc/self/fd/N
	 * opened for writing) creates nothing either way; file_open then decides
	 * on the object the name leads to, and only a refusal there is logged.
	 */
	if (S_ISREG(mode) && dir_cannot_create(dir))
		return 0;
	mnt = BPF_CORE_READ(dir, mnt);
	op = S_ISREG(mode) ? BB_OP_CREATE : BB_OP_MKNOD;
	how = fs_refused(sb, id, dentry, dentry->d_inode, mnt, op, WALK_WRITE, false, &rule);
	if (how == FS_ALLOWED)
		return 0;
	/* A parked create keeps its audit mark in op: settle_create reports it as it was decided. */
	op = file_report_op(op, how);
	if (S_ISREG(mode) && (BPF_CORE_READ(dentry, d_flags) & dcache_par_lookup()) &&
	    park_create(id, dentry, mnt, op, rule)) {
		if (how == FS_REFUSED_OWN)
			return 0;
		return (sb->flags & BB_SB_AUDIT) ? 0 : -EPERM;
	}
	report_file(sb, op, rule, dentry, mnt);
	return file_refusal(sb, how);
}

/* The end of an open that failed: a parked create refused it if its name was missing. */
SEC("lsm/file_free_security")
int BPF_PROG(bb_file_free, struct file *file)
{
	struct pending_create *pending;
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || (BPF_CORE_READ(file, f_mode) & FMODE_OPENED))
		return 0;
	/*
	 * A name that existed was bound to its inode during the lookup
	 * (d_instantiate, which forgot the parked create), so one still parked
	 * was missing and the open failed for the refusal. The dentry itself
	 * may be gone by now (tmpfs drops negative dentries at once): it is
	 * not consulted.
	 */
	pending = parked_create();
	if (pending)
		settle_create(sb, id, pending, true);
	return 0;
}

#define WRITE_PATH_HOOK(hook, op, ...)                                                 \
	SEC("lsm/" #hook)                                                              \
	int BPF_PROG(bb_##hook, const struct path *path, ##__VA_ARGS__)                \
	{                                                                              \
		struct bb_sandbox *sb;                                                 \
		__u64 id;                                                              \
		sb = current_sandbox(&id);                                             \
		if (!sb || sb->state != BB_STATE_ENFORCING)                            \
			return 0;                                                      \
		return fs_check(sb, id, BPF_CORE_READ(path, dentry), path->dentry->d_inode, \
				BPF_CORE_READ(path, mnt), op, WALK_WRITE);             \
	}

WRITE_PATH_HOOK(path_truncate, BB_OP_TRUNCATE)
WRITE_PATH_HOOK(path_chmod, BB_OP_CHMOD, umode_t mode)
WRITE_PATH_HOOK(path_chown, BB_OP_CHOWN, __u32 uid, __u32 gid)

/*
 * Names that lead to protected entries may not be renamed to or from. Out of
 * line: its hash buffer stays off the hook's stack.
 */
static __noinline int mandatory_parent_name(struct dentry *d)
{
	struct bb_mandatory *m;
	__u64 name = (__u64)BPF_CORE_READ(d, d_name.name);
	__u32 len = BPF_CORE_READ(d, d_name.len);
	char first = 0;
	__u64 h;

	bpf_probe_read_kernel(&first, 1, (const void *)name);
	if (first != '.')
		return 0;
	h = component_hash(name, len);
	m = bpf_map_lookup_elem(&mandatory_names, &h);
	return m && (m->flags & (BB_M_GIT | BB_M_CLAUDE)) ? 1 : 0;
}

/*
 * Moving or linking must not make an object looser: both ends writable, and
 * nothing read-denied may reach a readable place. Neither end may be another
 * sandbox's TMPDIR or somebody else's /dev/shm object; a move of the
 * sandbox's own /dev/shm object within /dev/shm needs no rule.
 */
static __always_inline int move_check(struct bb_sandbox *sb, __u64 id, struct dentry *old_dentry,
				      struct vfsmount *old_mnt, struct dentry *new_dentry,
				      struct vfsmount *new_mnt, __u32 op)
{
	/* One walk context for both ends, one after the other: the verifier limits the stack. */
	struct walk_ctx w;
	__u32 rule = 0, src_write_rule = 0;
	bool src_write_denied, src_read_denied, src_loose, src_mandatory;
	int shm_src, shm_dst;
	__u8 src_special;

	/* Both ends place an object: RENAME_EXCHANGE moves the destination's to the source's name. */
	fs_walk(id, sb, old_dentry, old_mnt, WALK_READ | WALK_WRITE | WALK_PLACE, &w);
	if (walk_private_denied(&w.r, &rule))
		goto deny_src;
	src_special = w.r.special;
	shm_src = shm_verdict(&w.r, id, old_dentry, old_dentry->d_inode, false);
	src_write_denied = walk_write_denied(&w.r, &src_write_rule);
	src_read_denied = walk_read_denied(&w.r, &rule);
	src_loose = w.r.prefix;
	src_mandatory = w.r.mandatory;

	fs_walk(id, sb, new_dentry, new_mnt, WALK_READ | WALK_WRITE | WALK_PLACE, &w);
	if (walk_private_denied(&w.r, &rule))
		goto deny_dst;
	if (sb->flags & BB_SB_FS_DISABLED) {
		rule = BB_RULE_PROTECTED_FS;
		if (src_special == SPECIAL_PROTECTED || src_special == SPECIAL_BPFFS)
			goto deny_src;
		if (w.r.special == SPECIAL_PROTECTED || w.r.special == SPECIAL_BPFFS)
			goto deny_dst;
		return 0;
	}
	if (mandatory_parent_name(old_dentry) || mandatory_parent_name(new_dentry)) {
		rule = BB_RULE_MANDATORY_RENAME;
		goto deny_src;
	}
	if (shm_src == SHM_OTHER) {
		rule = BB_RULE_SHM_OTHER;
		goto deny_src;
	}
	shm_dst = shm_verdict(&w.r, id, new_dentry, new_dentry->d_inode, shm_src == SHM_OWN);
	if (shm_dst == SHM_OTHER) {
		rule = BB_RULE_SHM_OTHER;
		goto deny_dst;
	}
	if (shm_src == SHM_OWN && shm_dst == SHM_OWN && !src_mandatory && !w.r.mandatory)
		return 0;
	if (src_write_denied) {
		rule = src_write_rule;
		goto deny_src;
	}
	if (walk_write_denied(&w.r, &rule))
		goto deny_dst;
	/* Moving a directory onto or off a missing rule path would carry content past its rule. */
	if (src_loose || w.r.prefix) {
		rule = BB_RULE_RENAME_LOOSER;
		goto deny_dst;
	}
	if (src_read_denied && !walk_read_denied(&w.r, &rule)) {
		rule = BB_RULE_RENAME_LOOSER;
		goto deny_dst;
	}
	return 0;
deny_src:
	report_file(sb, op, rule, old_dentry, old_mnt);
	return refusal(sb, EPERM);
deny_dst:
	report_file(sb, op, rule, new_dentry, new_mnt);
	return refusal(sb, EPERM);
}

SEC("lsm/path_rename")
int BPF_PROG(bb_path_rename, const struct path *old_dir, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	/* RENAME_EXCHANGE moves both ways; checking both ends as writable covers it. */
	return move_check(sb, id, old_dentry, BPF_CORE_READ(old_dir, mnt), new_dentry, BPF_CORE_READ(new_dir, mnt),
			  BB_OP_RENAME);
}

SEC("lsm/path_link")
int BPF_PROG(bb_path_link, struct dentry *old_dentry, const struct path *new_dir, struct dentry *new_dentry)
{
	struct bb_sandbox *sb;
	struct vfsmount *mnt;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	/* A hard link never crosses a mount, so the source lives on new_dir's mount. */
	mnt = BPF_CORE_READ(new_dir, mnt);
	return move_check(sb, id, old_dentry, mnt, new_dentry, mnt, BB_OP_LINK);
}

/*
 * Records who made an object directly in the sandbox's /dev/shm: a create,
 * mknod or O_TMPFILE there binds the new inode to its name here. A hard link
 * binds an existing inode too, but path_link only lets the sandbox link its
 * own objects, and an owner once recorded is never replaced.
 */
static __always_inline void shm_record_owner(__u64 id, struct dentry *dentry, struct inode *inode)
{
	struct bb_inode_key key = {};
	struct inode *dir;
	struct bb_rule *rule;
	struct bb_owner *o;

	dir = BPF_CORE_READ(dentry, d_parent, d_inode);
	if (!dir)
		return;
	key.sandbox = rules_key(id);
	key.dev = BPF_CORE_READ(dir, i_sb, s_dev);
	key.ino = BPF_CORE_READ(dir, i_ino);
	key.dir = 1;
	rule = bpf_map_lookup_elem(&inode_rules, &key);
	if (!rule || !(rule->flags & BB_R_SHM))
		return;
	o = bpf_inode_storage_get(&shm_owner, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (o && !o->sandbox)
		o->sandbox = id;
}

/* A new inode bound to a name: parked creates of names that existed, the sandbox's own ptys and /dev/shm objects. */
SEC("lsm/d_instantiate")
int BPF_PROG(bb_d_instantiate, struct dentry *dentry, struct inode *inode)
{
	struct pending_create *pending;
	struct bb_sandbox *sb;
	unsigned long magic;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || !inode)
		return 0;
	pending = bpf_task_storage_get(&pending_creates, bpf_get_current_task_btf(), 0, 0);
	/*
	 * The inode bound to a parked .git mkdir's own dentry, in the same
	 * directory, a fresh directory (an existing .git has more links).
	 * Others pass by: overlayfs binds the upper filesystem's dentry first.
	 * The next mkdir of the task ends the park, so one that failed leaves
	 * nothing for long.
	 */
	if (pending && pending->git_dentry == (__u64)dentry &&
	    pending->git_parent == (__u64)BPF_CORE_READ(dentry, d_parent)) {
		struct vfsmount *mnt = (struct vfsmount *)pending->git_mnt;

		pending->git_dentry = 0;
		if (S_ISDIR(BPF_CORE_READ(inode, i_mode)) && BPF_CORE_READ(inode, i_nlink) <= 2 &&
		    dentry_is_dot_git(dentry))
			git_record(sb, dentry, inode, mnt, BB_OP_MKDIR);
	}
	/*
	 * The lookup found the name a parked create asked for: that refusal had
	 * no effect. An audited create made the name itself: file_open settles it.
	 */
	if (!(sb->flags & BB_SB_AUDIT)) {
		if (pending && pending->dentry && pending->dentry == (__u64)dentry &&
		    !(pending->op & BB_OP_AUDITED))
			settle_create(sb, id, pending, false);
	}
	magic = BPF_CORE_READ(inode, i_sb, s_magic);
	if (magic == DEVPTS_SUPER_MAGIC)
		pty_record_owner(id, inode);
	else if (magic == TMPFS_MAGIC && sb->state == BB_STATE_ENFORCING)
		shm_record_owner(id, dentry, inode);
	return 0;
}

/* Hooks that only carry a dentry: the walk stops at that filesystem's root. */
#define WRITE_DENTRY_HOOK(hook, op)                                                    \
	SEC("lsm/" #hook)                                                              \
	int BPF_PROG(bb_##hook, void *idmap, struct dentry *dentry)                    \
	{                                                                              \
		struct bb_sandbox *sb;                                                 \
		__u64 id;                                                              \
		sb = current_sandbox(&id);                                             \
		if (!sb || sb->state != BB_STATE_ENFORCING || creds_overridden())     \
			return 0;                                                      \
		return fs_check(sb, id, dentry, dentry->d_inode, NULL, op, WALK_WRITE); \
	}

WRITE_DENTRY_HOOK(inode_setxattr, BB_OP_SETXATTR)
WRITE_DENTRY_HOOK(inode_removexattr, BB_OP_REMOVEXATTR)

/* Timestamps only: size, mode and owner changes have path hooks above. */
#define SETATTR_TIMES (ATTR_ATIME | ATTR_MTIME | ATTR_ATIME_SET | ATTR_MTIME_SET)

static __always_inline int setattr_check(struct dentry *dentry, struct iattr *attr)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING || creds_overridden())
		return 0;
	if (!(BPF_CORE_READ(attr, ia_valid) & SETATTR_TIMES) ||
	    (BPF_CORE_READ(attr, ia_valid) & (ATTR_SIZE | ATTR_MODE | ATTR_UID | ATTR_GID)))
		return 0;
	return fs_check(sb, id, dentry, dentry->d_inode, NULL, BB_OP_SETATTR, WALK_WRITE);
}

/* inode_setattr gained an idmap argument in 6.3; the loader picks the program that fits. */
SEC("lsm/inode_setattr")
int BPF_PROG(bb_inode_setattr_old, struct dentry *dentry, struct iattr *attr)
{
	return setattr_check(dentry, attr);
}

SEC("lsm/inode_setattr")
int BPF_PROG(bb_inode_setattr_idmap, void *idmap, struct dentry *dentry, struct iattr *attr)
{
	return setattr_check(dentry, attr);
}

#endif
