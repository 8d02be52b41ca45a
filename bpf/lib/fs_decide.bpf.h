/* SPDX-License-Identifier: MIT */
/*
 * File decisions from a walk's result: what each rule layer refuses, the
 * objects no policy opens, /dev/shm ownership, the audit of the caller's own
 * layer, and the check (decide, report, refuse) the file hooks call.
 */
#ifndef BPFBOX_FS_DECIDE_BPF_H
#define BPFBOX_FS_DECIDE_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/fs_walk.bpf.h"
#include "lib/fs_event.bpf.h" /* report_file */

static __always_inline bool walk_read_denied(const struct walk_result *r, __u32 *rule)
{
	if (r->special == SPECIAL_NOT_A_PATH)
		return false;
	if (r->special == SPECIAL_BPFFS) {
		*rule = BB_RULE_PROTECTED_FS;
		return true;
	}
	if (r->too_deep) {
		*rule = BB_RULE_TOO_DEEP;
		return true;
	}
	/* Both layers must allow; the caller's rule is named first when both refuse. */
	if (r->layer[BB_LAYER_OWN].read_decided && !r->layer[BB_LAYER_OWN].read_allowed) {
		*rule = r->layer[BB_LAYER_OWN].read_rule;
		return true;
	}
	if (r->layer[BB_LAYER_CEILING].read_decided && !r->layer[BB_LAYER_CEILING].read_allowed) {
		*rule = r->layer[BB_LAYER_CEILING].read_rule;
		return true;
	}
	return false;
}

static __always_inline bool walk_write_denied(const struct walk_result *r, __u32 *rule)
{
	if (r->special == SPECIAL_NOT_A_PATH)
		return false;
	if (r->special == SPECIAL_PROTECTED || r->special == SPECIAL_BPFFS) {
		*rule = BB_RULE_PROTECTED_FS;
		return true;
	}
	if (r->too_deep) {
		*rule = BB_RULE_TOO_DEEP;
		return true;
	}
	if (r->mandatory) {
		*rule = r->mandatory_rule;
		return true;
	}
	if (r->layer[BB_LAYER_OWN].write_denied) {
		*rule = r->layer[BB_LAYER_OWN].write_deny_rule;
		return true;
	}
	if (r->layer[BB_LAYER_CEILING].write_denied) {
		*rule = r->layer[BB_LAYER_CEILING].write_deny_rule;
		return true;
	}
	if (!r->layer[BB_LAYER_OWN].write_allowed) {
		*rule = BB_RULE_DEFAULT_WRITE;
		return true;
	}
	/* Without a ceiling the administrator's layer is empty and must not default-deny. */
	if (r->ceiling && !r->layer[BB_LAYER_CEILING].write_allowed) {
		*rule = BB_RULE_CEILING_DEFAULT_WRITE;
		return true;
	}
	return false;
}

/* A missing allowWrite of either layer: what a device of the sandbox's device set does not need. */
static __always_inline bool default_write_rule(__u32 rule)
{
	return rule == BB_RULE_DEFAULT_WRITE || rule == BB_RULE_CEILING_DEFAULT_WRITE;
}

/*
 * What no policy opens: another sandbox's TMPDIR, bpfbox's own state, and a
 * path too deep to tell (fail closed). Checked even with filesystem.disabled.
 */
static __always_inline bool walk_private_denied(const struct walk_result *r, __u32 *rule)
{
	if (r->bpfbox_state) {
		*rule = BB_RULE_BPFBOX_STATE;
		return true;
	}
	if (r->other_tmpdir) {
		*rule = BB_RULE_OTHER_TMPDIR;
		return true;
	}
	if (r->too_deep && r->special != SPECIAL_NOT_A_PATH) {
		*rule = BB_RULE_TOO_DEEP;
		return true;
	}
	return false;
}

#define SHM_NONE 0 /* not a /dev/shm object: the policy decides */
#define SHM_OWN 1 /* the sandbox's own object, or a new name it creates there */
#define SHM_OTHER 2 /* somebody else's object: out of reach */

/*
 * /dev/shm needs no policy entry: the sandbox may create objects directly in
 * it and use what it created (d_instantiate records the creator on the
 * inode); whatever it did not create is neither read nor written. inode must
 * be the hook's own (trusted) pointer to d's inode, which inode storage needs.
 */
static __always_inline int shm_verdict(const struct walk_result *r, __u64 sb_id, struct dentry *d,
				       struct inode *inode, bool creating)
{
	struct bb_owner *o;

	if (!r->under_shm)
		return SHM_NONE;
	/*
	 * Whether the name exists comes from a plain read: 6.12's verifier
	 * takes a pointer loaded from a hook argument as never NULL and drops
	 * the test on it.
	 */
	if (!BPF_CORE_READ(d, d_inode))
		return creating && r->shm_child ? SHM_OWN : SHM_NONE;
	o = bpf_inode_storage_get(&shm_owner, inode, 0, 0);
	return o && o->sandbox == sb_id ? SHM_OWN : SHM_OTHER;
}

/* What fs_refused decides. */
#define FS_ALLOWED 0
#define FS_REFUSED 1
#define FS_REFUSED_OWN 2 /* under BB_SB_AUDIT_OWN: only the caller's own layer refuses */

/*
 * Whether the administrator's layer refuses the access on its own: its
 * denyRead, its denyWrite, or no allowWrite of its own (which a device of
 * the sandbox's device set does not need); rule names its reason.
 */
static __always_inline bool walk_ceiling_denied(const struct walk_result *r, __u32 mask, bool device, __u32 *rule)
{
	const struct walk_layer *c = &r->layer[BB_LAYER_CEILING];

	if ((mask & WALK_WRITE) && c->write_denied) {
		*rule = c->write_deny_rule;
		return true;
	}
	if ((mask & WALK_WRITE) && !c->write_allowed && !device) {
		*rule = BB_RULE_CEILING_DEFAULT_WRITE;
		return true;
	}
	if ((mask & WALK_READ) && c->read_decided && !c->read_allowed) {
		*rule = c->read_rule;
		return true;
	}
	return false;
}

/*
 * A refusal under BB_SB_AUDIT_OWN: audited only when the refusal comes from
 * the caller's layer alone. Whatever no layer decides (a path too deep,
 * protected filesystems, the mandatory set) and whatever the administrator's
 * layer refuses is enforced, and then named by the administrator's rule.
 */
static __always_inline int refused_under_ceiling(const struct walk_result *r, __u32 mask, bool device, __u32 *rule)
{
	if (!r->ceiling || r->too_deep || r->special == SPECIAL_BPFFS)
		return FS_REFUSED;
	if ((mask & WALK_WRITE) && (r->special == SPECIAL_PROTECTED || r->mandatory))
		return FS_REFUSED;
	return walk_ceiling_denied(r, mask, device, rule) ? FS_REFUSED : FS_REFUSED_OWN;
}

/*
 * Decides one access to d (whose inode is inode, NULL if none yet): a
 * refusal (FS_REFUSED, or FS_REFUSED_OWN in a sandbox auditing the caller's
 * own layer) with the rule that refuses it, or FS_ALLOWED. A device of the
 * sandbox's device set (device) is writable without allowWrite; explicit
 * rules still apply to it.
 */
static __always_inline int fs_refused(struct bb_sandbox *sb, __u64 sb_id, struct dentry *d,
				      struct inode *inode, struct vfsmount *vmnt, __u32 op, __u32 mask,
				      bool device, __u32 *rule)
{
	struct walk_ctx w;
	int shm;

	fs_walk(sb_id, sb, d, vmnt, mask, &w);
	if (walk_private_denied(&w.r, rule))
		return FS_REFUSED;
	if (sb->flags & BB_SB_FS_DISABLED) {
		/* srt's "disabled" drops the policy, not bpfbox's self-protection. */
		if (w.r.special == SPECIAL_BPFFS || ((mask & WALK_WRITE) && w.r.special == SPECIAL_PROTECTED)) {
			*rule = BB_RULE_PROTECTED_FS;
			return FS_REFUSED;
		}
		return FS_ALLOWED;
	}
	shm = shm_verdict(&w.r, sb_id, d, inode, op == BB_OP_CREATE);
	if (shm == SHM_OTHER) {
		*rule = BB_RULE_SHM_OTHER;
		return FS_REFUSED;
	}
	if (shm == SHM_OWN && !((mask & WALK_WRITE) && w.r.mandatory))
		return FS_ALLOWED;
	if (!((mask & WALK_WRITE) && walk_write_denied(&w.r, rule) && !(device && default_write_rule(*rule))) &&
	    !((mask & WALK_READ) && walk_read_denied(&w.r, rule)))
		return FS_ALLOWED;
	/* Sandboxes without the caller's audit pay nothing more. */
	if (!(sb->flags & BB_SB_AUDIT_OWN))
		return FS_REFUSED;
	return refused_under_ceiling(&w.r, mask, device, rule);
}

/*
 * The return value of a file refusal: the error, or 0 when audited (the
 * whole sandbox audits, or the caller's layer alone refused under
 * BB_SB_AUDIT_OWN). Two returns rather than one expression: the compiler
 * turns the combined condition into arithmetic whose range the verifier
 * loses (an LSM program must return [-4095, 0]).
 */
static __always_inline int file_refusal(struct bb_sandbox *sb, int how)
{
	if (how == FS_REFUSED_OWN) {
		__sync_fetch_and_add(&sb->denied, 1);
		return 0;
	}
	return refusal(sb, EPERM);
}

/* The op to report a refusal under: marked when it is audited on the caller's layer alone. */
static __always_inline __u32 file_report_op(__u32 op, int how)
{
	return how == FS_REFUSED_OWN ? op | BB_OP_AUDITED : op;
}

/* Decides one access to d; returns 0 or the refusal, which it reports. */
static __always_inline int fs_check_open(struct bb_sandbox *sb, __u64 sb_id, struct dentry *d,
					 struct inode *inode, struct vfsmount *vmnt, __u32 op, __u32 mask,
					 bool device)
{
	__u32 rule = 0;
	int how;

	how = fs_refused(sb, sb_id, d, inode, vmnt, op, mask, device, &rule);
	if (how == FS_ALLOWED)
		return 0;
	report_file(sb, file_report_op(op, how), rule, d, vmnt);
	return file_refusal(sb, how);
}

static __always_inline int fs_check(struct bb_sandbox *sb, __u64 sb_id, struct dentry *d, struct inode *inode,
				    struct vfsmount *vmnt, __u32 op, __u32 mask)
{
	return fs_check_open(sb, sb_id, d, inode, vmnt, op, mask, false);
}

#endif
