/* SPDX-License-Identifier: MIT */
/*
 * Types shared by the BPF programs and user space: map keys and values,
 * the kernel event record, and the component-name hash both sides compute.
 */
#ifndef BPFBOX_SHARED_H
#define BPFBOX_SHARED_H

#ifdef __bpf__
typedef __u8 bb_u8;
typedef __u16 bb_u16;
typedef __u32 bb_u32;
typedef __u64 bb_u64;
typedef __s32 bb_s32;
#else
#include <stdint.h>
typedef uint8_t bb_u8;
typedef uint16_t bb_u16;
typedef uint32_t bb_u32;
typedef uint64_t bb_u64;
typedef int32_t bb_s32;
#endif

/* Bounds of the dentry walk; deeper paths are denied (fail closed). */
#define BB_MAX_DEPTH 48
/* A rule whose path did not exist at launch may name at most this many missing components. */
#define BB_NAME_CHAIN 4
/* Bytes of a component that feed its hash (names sharing them and their length collide). */
#define BB_NAME_HASHED 64
/* Path bytes carried in an event. */
#define BB_EVENT_PATH 1024

#define BB_MAX_SANDBOXES 1024
#define BB_MAX_RULES 65536
#define BB_MAX_UNIX_NAMES 4096
#define BB_MAX_DEVICES 4096
/* .git directories and files one sandbox may make: each is checked when it ends. */
#define BB_MAX_NEW_GIT 64
/* Bytes of a sandbox's event ring buffer. */
#define BB_RINGBUF_BYTES (1 << 20)
/* Bytes of an abstract Unix socket name after its leading NUL. */
#define BB_UNIX_NAME_MAX 107

/* Sandbox flags (struct bb_sandbox.flags). */
#define BB_SB_AUDIT (1u << 0)
#define BB_SB_ALLOW_GIT_CONFIG (1u << 1)
#define BB_SB_FS_DISABLED (1u << 2)
#define BB_SB_ALLOW_ALL_UNIX (1u << 3)
#define BB_SB_ALLOW_LOCAL_BIND (1u << 4)
#define BB_SB_ALLOW_USERNS (1u << 5)
/* An administrator's ceiling: writes also need an allowWrite of the ceiling layer. */
#define BB_SB_CEILING (1u << 6)
/*
 * A caller's audit under a ceiling: only a file refusal of the caller's own
 * layer that the administrator's layer (and every check of no layer) lets
 * through is audited; every other refusal stays enforced.
 */
#define BB_SB_AUDIT_OWN (1u << 7)
/* bpfbox.git.newRepositories "refuse": a .git the sandbox makes is not recorded, so it is protected like any. */
#define BB_SB_GIT_NO_NEW (1u << 8)

/*
 * Socket kinds outside the default allow-list (Unix; NETLINK_ROUTE; TCP,
 * MPTCP and UDP over IPv4 and IPv6) that bpfbox.network.allowSocketProtocols
 * may open. None of them is decided by address: opting in lets that protocol
 * reach whatever the host's network reaches.
 */
#define BB_SOCK_SCTP (1u << 0)
#define BB_SOCK_PING (1u << 1) /* ICMP and ICMPv6 echo sockets (SOCK_DGRAM) */
#define BB_SOCK_UDPLITE (1u << 2)
#define BB_SOCK_RAW (1u << 3) /* SOCK_RAW over IPv4 and IPv6 */
#define BB_SOCK_PACKET (1u << 4) /* AF_PACKET */
#define BB_SOCK_NETLINK (1u << 5) /* every netlink protocol, not only NETLINK_ROUTE */
#define BB_SOCK_VSOCK (1u << 6)
#define BB_SOCK_ALG (1u << 7)
#define BB_SOCK_BLUETOOTH (1u << 8)
#define BB_SOCK_CAN (1u << 9)
#define BB_SOCK_TIPC (1u << 10)
#define BB_SOCK_RDS (1u << 11)
#define BB_SOCK_KCM (1u << 12)
#define BB_SOCK_XDP (1u << 13)
#define BB_SOCK_ALL ((1u << 14) - 1)
#define BB_SOCK_NEVER (1u << 15) /* no policy opens it: no bit of sock_allow is ever set here */

/*
 * A sandbox's file, Unix socket and device rules are filed under a rules
 * key: its id with the generation of its rule set in the top bits. A live
 * update (sandbox/run_update.c) writes the next generation beside the
 * current one, switches rule_keys in one map update, then removes the old
 * entries; the kernel never sees half of each. Cgroup ids stay below
 * BB_ID_MASK (checked at start), so a sweep by id finds every generation.
 */
#define BB_GEN_SHIFT 48
#define BB_ID_MASK ((1ULL << BB_GEN_SHIFT) - 1)
#define BB_GEN_MAX 0xffffu
#define BB_RULES_KEY(id, gen) (((bb_u64)(id) & BB_ID_MASK) | ((bb_u64)(gen) << BB_GEN_SHIFT))
/* Rule ids of odd generations carry this bit: an event in flight is named by the set that decided it. */
#define BB_RULE_GEN_BIT (1u << 24)

/* Sandbox states: the launcher resolves rule paths in the kernel before enforcing. */
#define BB_STATE_RESOLVING 1
#define BB_STATE_ENFORCING 2

struct bb_sandbox {
	bb_u64 id; /* cgroup id of the sandbox */
	bb_u32 flags;
	bb_u32 state;
	bb_u32 proxy_port; /* host byte order; 0 = no proxy */
	bb_u32 socks_port; /* an external SOCKS proxy's port; 0 = none */
	bb_u32 ring_slot; /* the sandbox's ring buffer in sandbox_events */
	/* The sandbox's DNS resolver (host byte order; 0 = none): port 53 is sent there. */
	bb_u16 dns_port4; /* UDP and TCP on 127.0.0.1 */
	bb_u16 dns_port6; /* UDP and TCP on ::1 */
	/* The proxy's transparent listeners (0 = none): TCP to a learned address goes there. */
	bb_u16 tport4; /* on 127.0.0.1 */
	bb_u16 tport6; /* on ::1 */
	bb_u16 own_proxy_port; /* bpfbox's own explicit proxy (0 = none): who connects to it is kept */
	bb_u16 sock_allow; /* BB_SOCK_* kinds the policy opts in to beyond the default allow-list */
	bb_u32 git_new; /* .git directories and files this sandbox made (BB_MAX_NEW_GIT recorded) */
	bb_u32 pad0;
	bb_u64 lost; /* events dropped because the ring buffer was full */
	bb_u64 denied; /* refusals counted in the kernel */
};

/*
 * Where a sandbox socket really wanted to go, kept with the socket when the
 * kernel sent it elsewhere (DNS to the sandbox's resolver, TCP to a learned
 * address to the proxy's transparent listener): recvmsg and getpeername
 * show the application the address it asked for.
 */
#define BB_REDIRECT_DNS 1
#define BB_REDIRECT_TRANSPARENT 2
#define BB_REDIRECT_PROXY 3 /* not redirected: a connect to the sandbox's own proxy, kept for who made it */

/* The task that connected (or last sent), as the kernel saw it: the proxy's events name it. */
struct bb_peer {
	bb_u32 pid; /* thread group id */
	bb_u32 tid;
	bb_u32 uid;
	bb_u32 pad;
	char comm[16];
};

struct bb_redirect {
	bb_u64 sandbox;
	bb_u32 orig_addr[4]; /* IPv4 in [0]; IPv6 sockets keep all 16 bytes, mapped or not */
	bb_u32 via_addr[4]; /* where the kernel sent it, same layout */
	bb_u16 orig_port; /* host byte order */
	bb_u16 via_port;
	bb_u16 family; /* the socket's family */
	bb_u16 kind; /* BB_REDIRECT_* */
	bb_u32 dns_port; /* the client port its DNS sender is filed under (dns_peers); 0 = none */
	bb_u32 pad;
	struct bb_peer peer;
};

/*
 * An address the sandbox's DNS answered for an allowed name (or that the
 * policy or /etc/hosts gave at launch): TCP connects to it go to the proxy.
 * IPv4 (and IPv4-mapped IPv6) as family AF_INET in addr[0..3].
 */
#define BB_MAX_LEARNED 65536
struct bb_learned_key {
	bb_u64 sandbox;
	bb_u8 addr[16];
	bb_u32 family;
	bb_u32 pad;
};

struct bb_learned {
	bb_u64 expires_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns); 0 = while the sandbox lives */
	bb_u32 port; /* the only port the names' rules allow; 0 = any */
	bb_u32 pad;
};

/*
 * The ledger of shares (user/sandbox/quota.c): what one sandbox holds of the
 * host-wide rule maps (inode_rules and name_rules together) and of learned,
 * under which uid. User space only; written under /run/bpfbox/quota.lock.
 */
struct bb_quota {
	bb_u32 uid; /* the caller's (a daemon sandbox) or 0 (root's own run) */
	bb_u32 rules; /* entries reserved in inode_rules and name_rules */
	bb_u32 learned; /* entries reserved in learned */
	bb_u32 pad;
};

/*
 * A sandbox's TCP connection to its proxy as the proxy accepts it (one the
 * kernel redirected to a transparent listener, or one made to the explicit
 * proxy): the client's address and port and the listener's port, filled
 * when the connection is established (sock_ops), taken by the proxy after
 * accept.
 */
#define BB_MAX_TCONNS 16384
struct bb_tconn_key {
	bb_u8 addr[16]; /* the client's own address: 127.0.0.1 in [0..3], or ::1 / ::ffff:127.0.0.1 */
	bb_u32 family; /* of the client's socket */
	bb_u16 port; /* the client's port, host byte order */
	bb_u16 listener; /* the listener's port */
};

struct bb_tconn {
	bb_u64 sandbox;
	bb_u8 orig_addr[16]; /* same layout as bb_redirect (the proxy's own for BB_REDIRECT_PROXY) */
	bb_u16 orig_port;
	bb_u16 family;
	bb_u16 kind; /* BB_REDIRECT_TRANSPARENT or BB_REDIRECT_PROXY */
	bb_u16 pad;
	struct bb_peer peer;
};

/*
 * Who sent a DNS query the kernel redirected to a sandbox's resolver, filed
 * under the client's port as the resolver sees it (the address is always
 * loopback) when the query leaves: at sendto (cgroup sendmsg), at each send
 * on a connected UDP socket (lsm socket_sendmsg) and when a TCP connection is
 * established (sock_ops). The resolver's events name the task; the supervisor
 * deletes the sandbox's entries when it ends.
 */
#define BB_MAX_DNS_PEERS 8192
struct bb_dns_peer_key {
	bb_u64 sandbox;
	bb_u16 port; /* the client's port, host byte order */
	bb_u16 listener; /* the resolver's port */
	bb_u8 family; /* of the resolver's socket that receives it: IPv4-mapped clients reach the IPv4 one */
	bb_u8 proto; /* IPPROTO_UDP or IPPROTO_TCP */
	bb_u16 pad;
};

/*
 * A query can still wait in the resolver's queue when its socket is closed
 * (one that does not wait for the answer): a released entry stays, marked,
 * and counts for this long after the release; then it names nobody, so a
 * later socket on the same port that somehow sent unfiled is never taken
 * for the old one.
 */
#define BB_DNS_PEER_GRACE_NS 2000000000ULL
struct bb_dns_peer {
	struct bb_peer peer;
	bb_u64 released_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) when its socket went; 0 = open */
};

/* Result of the in-kernel path resolution, one slot per sandbox. */
struct bb_resolve {
	bb_u64 seq;
	bb_u64 ino;
	bb_u32 dev;
	bb_u32 mode;
};

/* Rule flags on an inode or a missing name below an anchor inode. */
#define BB_R_DENY_READ (1u << 0)
#define BB_R_ALLOW_READ (1u << 1)
#define BB_R_ALLOW_WRITE (1u << 2)
#define BB_R_DENY_WRITE (1u << 3)
#define BB_R_ANCHOR (1u << 4) /* name rules hang below this inode */
#define BB_R_UNIX_ALLOW (1u << 5) /* a Unix socket bound here may be connected to */
#define BB_R_PREFIX (1u << 6) /* a missing rule path continues below this name */
#define BB_R_SHM (1u << 7) /* /dev/shm: objects there are the sandbox's own or out of reach */
#define BB_R_BPFBOX_STATE (1u << 8) /* bpfbox's run directory: out of reach of every sandbox */
/*
 * The administrator's layer (a caller under a ceiling): the four decision
 * flags again, shifted past every layer-free mark, with rule ids of their own.
 */
#define BB_R_CEIL_SHIFT 16
#define BB_R_DECISIONS (BB_R_DENY_READ | BB_R_ALLOW_READ | BB_R_ALLOW_WRITE | BB_R_DENY_WRITE)
#define BB_R_CEIL_DENY_READ (BB_R_DENY_READ << BB_R_CEIL_SHIFT)
#define BB_R_CEIL_ALLOW_READ (BB_R_ALLOW_READ << BB_R_CEIL_SHIFT)
#define BB_R_CEIL_ALLOW_WRITE (BB_R_ALLOW_WRITE << BB_R_CEIL_SHIFT)
#define BB_R_CEIL_DENY_WRITE (BB_R_DENY_WRITE << BB_R_CEIL_SHIFT)

struct bb_inode_key {
	bb_u64 sandbox;
	bb_u64 ino;
	bb_u32 dev;
	bb_u32 dir; /* 1 for directories: overlayfs over two filesystems numbers dirs apart from files */
};

struct bb_name_key {
	bb_u64 sandbox;
	bb_u64 ino; /* anchor */
	bb_u32 dev;
	bb_u32 depth; /* number of missing components */
	bb_u64 hash; /* chained hash of those components */
};

/* An abstract Unix socket name, the bytes after its leading NUL, zero-padded. */
struct bb_unix_name_key {
	bb_u64 sandbox;
	bb_u32 len;
	char name[BB_UNIX_NAME_MAX + 1];
};

/*
 * Kernel dev_t (major << 20 | minor): what the inode's i_rdev holds. User
 * space's st_rdev encodes differently; convert with BB_KDEV.
 */
#define BB_KDEV(major, minor) (((bb_u32)(major) << 20) | (bb_u32)(minor))
#define BB_KDEV_MAJOR(dev) ((dev) >> 20)
#define BB_KDEV_MINOR(dev) ((dev) & 0xfffffu)

/* Devices the policy adds to the sandbox's device set, and the terminal it was given. */
#define BB_DEV_CHAR 1u
#define BB_DEV_BLOCK 2u

struct bb_device_key {
	bb_u64 sandbox;
	bb_u32 rdev; /* kernel encoding */
	bb_u32 type; /* BB_DEV_CHAR or BB_DEV_BLOCK */
};

/* The sandbox that created an object in /dev/shm (inode storage), or a key (by address). */
struct bb_owner {
	bb_u64 sandbox;
};

/* Rule layers: the sandbox's own (or the caller's under a ceiling) and the administrator's. */
#define BB_LAYER_OWN 0
#define BB_LAYER_CEILING 1
#define BB_LAYERS 2

struct bb_rule {
	bb_u32 flags;
	bb_u32 pad;
	bb_u32 read_rule[BB_LAYERS]; /* per layer: the rule id deciding reads at this node */
	bb_u32 write_rule[BB_LAYERS]; /* per layer: the rule id deciding writes at this node */
};

/* Mandatory name flags (global map keyed by name hash). */
#define BB_M_PROTECT (1u << 0) /* the name and everything below it is write-protected */
#define BB_M_GIT (1u << 1) /* ".git": protect children hooks/config, and the file itself */
#define BB_M_CLAUDE (1u << 2) /* ".claude": protect children commands/agents */
#define BB_M_CHILD_HOOKS (1u << 3)
#define BB_M_CHILD_CONFIG (1u << 4)
#define BB_M_CHILD_AGENT_DIR (1u << 5) /* commands, agents */
/* Writable directly in a work tree whose .git the sandbox made (.gitmodules). */
#define BB_M_NEW_WORKTREE (1u << 6)
/* .git/commondir: where git takes config and hooks/ from; a main repository has none. */
#define BB_M_CHILD_COMMONDIR (1u << 7)
/* bb_inode_key.dir of a git_made entry for the work tree holding a .git the sandbox made. */
#define BB_GIT_WORKTREE 2

struct bb_mandatory {
	bb_u32 flags;
	bb_u32 rule; /* rule id naming the entry */
};

/*
 * Rule ids: values below BB_RULE_SPECIAL index the launcher's rule table;
 * the others are built-in reasons.
 */
#define BB_RULE_SPECIAL 0xf0000000u
enum bb_special_rule {
	BB_RULE_DEFAULT_WRITE = BB_RULE_SPECIAL,
	BB_RULE_TOO_DEEP,
	BB_RULE_PROTECTED_FS, /* cgroupfs, bpffs, securityfs, debugfs */
	BB_RULE_DEVICE_NODE,
	BB_RULE_MOUNT,
	BB_RULE_PTRACE,
	BB_RULE_BPF,
	BB_RULE_USERNS,
	BB_RULE_RENAME_LOOSER,
	BB_RULE_LINK_SOURCE,
	BB_RULE_NET_DEFAULT,
	BB_RULE_NET_FAMILY,
	BB_RULE_UNIX_DEFAULT,
	BB_RULE_UNIX_ABSTRACT,
	BB_RULE_BIND,
	BB_RULE_MANDATORY_GIT_HOOKS,
	BB_RULE_MANDATORY_GIT_CONFIG,
	BB_RULE_MANDATORY_GIT_FILE,
	BB_RULE_MANDATORY_CLAUDE,
	BB_RULE_MANDATORY_RENAME,
	BB_RULE_DEVICE, /* open of a device node outside the sandbox's device set */
	BB_RULE_OTHER_TMPDIR, /* another sandbox's TMPDIR */
	BB_RULE_BPFBOX_STATE, /* bpfbox's registry and locks */
	BB_RULE_SHM_OTHER, /* a /dev/shm object the sandbox did not create */
	BB_RULE_KEY_OTHER, /* a key the sandbox did not create */
	BB_RULE_SIGNAL,
	BB_RULE_TTY_INJECT,
	BB_RULE_CEILING_DEFAULT_WRITE, /* no allowWrite of the administrator's layer */
	BB_RULE_GIT_LIMIT, /* a .git past BB_MAX_NEW_GIT */
	BB_RULE_SPECIAL_END,
};

/* Mandatory names matched anywhere: rule id = BB_RULE_MANDATORY_NAME + index in the launcher's table. */
#define BB_RULE_MANDATORY_NAME (BB_RULE_SPECIAL + 0x100u)

enum bb_event_kind {
	BB_EV_FILE = 1,
	BB_EV_PROCESS,
	BB_EV_NET,
	BB_EV_UNIX,
	BB_EV_KEY,
	/*
	 * Not a refusal: the sandbox made a .git (op BB_OP_MKDIR: a directory,
	 * BB_OP_CREATE: a worktree's or submodule's .git file) at path, whose
	 * inode number is in addr[0..7] and device (kernel encoding) in rdev.
	 */
	BB_EV_GIT,
};

enum bb_op {
	BB_OP_OPEN_READ = 1,
	BB_OP_OPEN_WRITE,
	BB_OP_EXEC,
	BB_OP_CREATE,
	BB_OP_UNLINK,
	BB_OP_RMDIR,
	BB_OP_MKDIR,
	BB_OP_MKNOD,
	BB_OP_SYMLINK,
	BB_OP_LINK,
	BB_OP_RENAME,
	BB_OP_TRUNCATE,
	BB_OP_CHMOD,
	BB_OP_CHOWN,
	BB_OP_SETXATTR,
	BB_OP_REMOVEXATTR,
	BB_OP_SETATTR,
	BB_OP_MOUNT,
	BB_OP_UMOUNT,
	BB_OP_CHROOT,
	BB_OP_PIVOT_ROOT,
	BB_OP_PTRACE,
	BB_OP_BPF,
	BB_OP_USERNS,
	BB_OP_SIGNAL,
	BB_OP_TTY_IOCTL,
	BB_OP_CONNECT,
	BB_OP_SENDMSG,
	BB_OP_BIND,
	BB_OP_SOCKET,
	BB_OP_UNIX_CONNECT,
	BB_OP_UNIX_SEND,
	BB_OP_KEY, /* a kernel key: port = serial, proto = the permission asked */
	BB_OP_MAX,
};
/* On an op in a rate-limit key: those refusals were audited (BB_SB_AUDIT_OWN). Never in an event. */
#define BB_OP_AUDITED (1u << 31)

/* Event flags. */
#define BB_EVF_AUDIT (1u << 0) /* would have been refused; audit mode let it pass */
#define BB_EVF_PATH_TRUNCATED (1u << 1)
#define BB_EVF_BLOCK_DEVICE (1u << 2) /* rdev names a block device, else a character device */
#define BB_EVF_NO_TASK (1u << 3) /* raised outside the sandbox's tasks (SIGIO): no process fields */

struct bb_event {
	bb_u64 ts_ns; /* CLOCK_MONOTONIC */
	bb_u64 sandbox;
	bb_u32 kind;
	bb_u32 op;
	bb_u32 pid;
	bb_u32 tid;
	bb_u32 uid;
	bb_s32 error; /* errno returned to the task, 0 in audit mode */
	bb_u32 rule;
	bb_u32 flags;
	bb_u32 count; /* identical refusals folded into this one */
	bb_u32 path_len;
	char comm[16];
	char exe[64]; /* executable's file name */
	/* network: destination; process: target pid (or ioctl command) in port, signal in proto */
	bb_u32 family;
	bb_u32 port;
	bb_u32 proto;
	bb_u32 rdev; /* device refusals (builtin:device): the node's device number, kernel encoding */
	bb_u8 addr[16];
	char path[BB_EVENT_PATH]; /* path (or Unix socket path, or key description), NUL-terminated */
};

/*
 * Hash of a path component: the first BB_NAME_HASHED bytes, zero padded and
 * read as 64-bit words, mixed with the length. Both sides must agree exactly.
 */
static inline bb_u64 bb_mix64(bb_u64 h, bb_u64 v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	h ^= h >> 29;
	return h;
}

static inline bb_u64 bb_name_hash_words(const bb_u64 *words, bb_u32 len)
{
	bb_u64 h = 0xcbf29ce484222325ULL ^ len;

	for (int i = 0; i < BB_NAME_HASHED / 8; i++)
		h = bb_mix64(h, words[i]);
	return h;
}

/* Chains the hash of one more missing component below an anchor. */
static inline bb_u64 bb_chain_hash(bb_u64 chain, bb_u64 name_hash)
{
	return bb_mix64(chain * 31 + 7, name_hash);
}

#endif
