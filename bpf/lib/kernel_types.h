/* SPDX-License-Identifier: MIT */
/*
 * The few kernel-internal types bpfbox reads, declared by hand instead of a
 * generated vmlinux.h. Every struct is marked preserve_access_index, so field
 * offsets are CO-RE relocated against the running kernel's BTF at load time:
 * member order and the absence of other members here do not matter. This keeps
 * the build reproducible (no dependency on the build host's kernel) and the
 * same object loads on every kernel with BTF (see docs/design.md).
 */
#ifndef BPFBOX_KERNEL_TYPES_H
#define BPFBOX_KERNEL_TYPES_H

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef unsigned short umode_t;
typedef unsigned int fmode_t;
typedef u32 dev_t;
typedef int pid_t;
typedef _Bool bool;
#define true 1
#define false 0

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct qstr {
	union {
		struct {
			u32 hash;
			u32 len;
		};
		u64 hash_len;
	};
	const unsigned char *name;
};

struct list_head {
	struct list_head *next;
	struct list_head *prev;
};

struct super_block {
	dev_t s_dev;
	unsigned long s_magic;
	struct list_head s_mounts; /* every mount of this superblock, through mount.mnt_instance */
};

/* Later kernels (2025) keep the first mount in s_mounts, chained through mnt_next_for_sb. */
struct super_block___mount_chain {
	struct mount *s_mounts;
};

struct inode_operations {
	void *create;
	void *atomic_open;
};

struct inode {
	umode_t i_mode;
	unsigned int i_nlink; /* in an anonymous union: CO-RE finds it there */
	unsigned long i_ino;
	struct super_block *i_sb;
	dev_t i_rdev;
	const struct inode_operations *i_op;
};

struct dentry {
	unsigned int d_flags;
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
	struct super_block *d_sb;
};

struct vfsmount {
	struct dentry *mnt_root;
	struct super_block *mnt_sb;
	int mnt_flags;
};

struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
	struct list_head mnt_instance; /* on super_block.s_mounts (6.1, 6.12) */
};

struct mount___mount_chain {
	struct mount *mnt_next_for_sb;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
	fmode_t f_mode;
	unsigned int f_flags;
};

/* 6.12 allocates the owner apart from the file and points back at it. */
struct fown_struct {
	struct file *file;
};

/* Before 6.12 the owner is embedded in the file. */
struct file___owner_embedded {
	struct fown_struct f_owner;
};

struct iattr {
	unsigned int ia_valid;
};

struct kernfs_node {
	u64 id;
};

struct cgroup {
	struct kernfs_node *kn;
	int level;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct mm_struct {
	struct file *exe_file;
};

struct task_struct {
	const struct cred *cred;
	const struct cred *real_cred;
	pid_t pid;
	pid_t tgid;
	struct css_set *cgroups;
	struct mm_struct *mm;
};

struct cred {
	u32 uid;
};

struct sockaddr_un {
	unsigned short sun_family;
	char sun_path[108];
};

struct unix_address {
	int len;
	struct sockaddr_un name[];
};

struct sock_common {
	unsigned short skc_num; /* the local port, host byte order */
	unsigned short skc_family;
};

struct sock_cgroup_data {
	struct cgroup *cgroup; /* the creator's cgroup v2 (5.15+) */
};

struct sock {
	struct sock_common __sk_common;
	u16 sk_type;
	u16 sk_protocol;
	struct sock_cgroup_data sk_cgrp_data;
};

struct unix_sock {
	struct sock sk;
	struct unix_address *addr;
	struct path path;
};

struct socket {
	short type;
	struct sock *sk;
};

struct msghdr {
	void *msg_name; /* an address given with the send (sendto); NULL on a connected socket's send */
};

/* The description sits in an anonymous union in the kernel; CO-RE finds it by name. */
struct key {
	s32 serial;
	char *description;
};

#pragma clang attribute pop

/* From the kernel's fs.h and magic.h: stable ABI values. */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
/* A #define (BIT(28)) up to 6.12; later kernels carry it in BTF as this enum. */
enum dentry_flags {
	DCACHE_PAR_LOOKUP = 0x10000000, /* being looked up: d_in_lookup() */
};

#define FMODE_EXEC 0x20
#define FMODE_OPENED 0x80000
#define FMODE_CREATED 0x100000
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFREG 0100000
#define S_IFBLK 0060000
#define S_IFDIR 0040000
#define S_IFCHR 0020000
#define S_ISREG(m) (((m) & S_IFMT) == S_IFREG)
#define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#define S_ISCHR(m) (((m) & S_IFMT) == S_IFCHR)
#define S_ISBLK(m) (((m) & S_IFMT) == S_IFBLK)

#define ATTR_MODE (1 << 0)
#define ATTR_UID (1 << 1)
#define ATTR_GID (1 << 2)
#define ATTR_SIZE (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)
#define ATTR_CTIME (1 << 6)
#define ATTR_ATIME_SET (1 << 7)
#define ATTR_MTIME_SET (1 << 8)

/* A mount the kernel made for itself (kern_mount); never attached to a tree. */
#define MNT_INTERNAL 0x4000

#define CGROUP_SUPER_MAGIC 0x27e0eb
#define CGROUP2_SUPER_MAGIC 0x63677270
#define BPF_FS_MAGIC 0xcafe4a11
#define SECURITYFS_MAGIC 0x73636673
#define DEBUGFS_MAGIC 0x64626720
#define TRACEFS_MAGIC 0x74726163
#define NSFS_MAGIC 0x6e736673
#define DEVPTS_SUPER_MAGIC 0x1cd1
#define TMPFS_MAGIC 0x01021994

/* include/linux/key.h: the user's own keyrings, made on first use by whoever asks. */
#define KEY_ALLOC_UID_KEYRING 0x0010

#define F_SETOWN 8
#define F_SETOWN_EX 15
#define FIOSETOWN 0x8901
#define SIOCSPGRP 0x8902
#define TIOCSTI 0x5412
#define TIOCLINUX 0x541C

#define EPERM 1
#define EACCES 13

#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define AF_NETLINK 16
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3

#endif
