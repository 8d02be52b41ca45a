// SPDX-License-Identifier: MIT
/* Turning the kernel's refusal records into log events. */
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bpfbox.h"
#include "kevent.h"
#include "sandbox_git.h"
#include "policy/mandatory.h"

static const char *const actions[BB_OP_MAX] = {
	[BB_OP_OPEN_READ] = "open-read",     [BB_OP_OPEN_WRITE] = "open-write",
	[BB_OP_EXEC] = "exec",		     [BB_OP_CREATE] = "create",
	[BB_OP_UNLINK] = "unlink",	     [BB_OP_RMDIR] = "rmdir",
	[BB_OP_MKDIR] = "mkdir",	     [BB_OP_MKNOD] = "mknod",
	[BB_OP_SYMLINK] = "symlink",	     [BB_OP_LINK] = "link",
	[BB_OP_RENAME] = "rename",	     [BB_OP_TRUNCATE] = "truncate",
	[BB_OP_CHMOD] = "chmod",	     [BB_OP_CHOWN] = "chown",
	[BB_OP_SETXATTR] = "setxattr",	     [BB_OP_REMOVEXATTR] = "removexattr",
	[BB_OP_SETATTR] = "setattr",	     [BB_OP_MOUNT] = "mount",
	[BB_OP_UMOUNT] = "umount",	     [BB_OP_CHROOT] = "chroot",
	[BB_OP_PIVOT_ROOT] = "pivot-root",   [BB_OP_PTRACE] = "ptrace",
	[BB_OP_BPF] = "bpf",		     [BB_OP_USERNS] = "userns-create",
	[BB_OP_SIGNAL] = "signal",	     [BB_OP_TTY_IOCTL] = "tty-ioctl",
	[BB_OP_CONNECT] = "connect",	     [BB_OP_SENDMSG] = "sendmsg",
	[BB_OP_BIND] = "bind",		     [BB_OP_SOCKET] = "socket-create",
	[BB_OP_UNIX_CONNECT] = "unix-connect", [BB_OP_UNIX_SEND] = "unix-send",
	[BB_OP_KEY] = "key-access",
};

const char *kevent_action(uint32_t op)
{
	return op < BB_OP_MAX && actions[op] ? actions[op] : "unknown";
}

const char *kevent_rule_name(const struct kevent_ctx *k, uint32_t rule)
{
	const char *name = special_rule_name(rule);

	if (name)
		return name;
	{
		unsigned odd = !!(rule & BB_RULE_GEN_BIT);
		uint32_t i = rule & ~BB_RULE_GEN_BIT;

		if (i < k->n_rules[odd] && k->rule_names[odd][i])
			return k->rule_names[odd][i];
	}
	return "unknown";
}

/* ECS category of an operation; the ops are ordered file, process, network. */
static const char *category_of(uint32_t op)
{
	if (op == BB_OP_KEY)
		return "process";
	if (op >= BB_OP_CONNECT)
		return "network";
	return op >= BB_OP_MOUNT ? "process" : "file";
}

/* ECS event.type of a refusal of op (docs/events.md, Taxonomy). */
static const char *type_of(uint32_t op)
{
	switch (op) {
	case BB_OP_OPEN_READ:
	case BB_OP_EXEC:
	case BB_OP_BIND:
	case BB_OP_SOCKET:
		return "access,denied";
	case BB_OP_CREATE:
	case BB_OP_MKDIR:
	case BB_OP_MKNOD:
	case BB_OP_SYMLINK:
	case BB_OP_LINK:
		return "creation,denied";
	case BB_OP_UNLINK:
	case BB_OP_RMDIR:
		return "deletion,denied";
	case BB_OP_KEY:
		return "access,denied";
	case BB_OP_CONNECT:
	case BB_OP_SENDMSG:
	case BB_OP_UNIX_CONNECT:
	case BB_OP_UNIX_SEND:
		return "connection,denied";
	default:
		return op >= BB_OP_MOUNT ? "access,denied" : "change,denied";
	}
}

/* The kernel stamps CLOCK_MONOTONIC; the log wants wall-clock time. */
static void set_kernel_time(struct log_event *le, uint64_t ts_ns)
{
	struct timespec mono, real, at;
	long long ns;

	if (clock_gettime(CLOCK_MONOTONIC, &mono) || clock_gettime(CLOCK_REALTIME, &real))
		return;
	ns = (real.tv_sec - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec) + (long long)ts_ns;
	at.tv_sec = ns / 1000000000LL;
	at.tv_nsec = ns % 1000000000LL;
	log_event_set_time(le, &at);
}

/*
 * The executable's full path while the process lives, else the kernel's file
 * name. One readlink per process: a flood comes from few of them.
 */
static void set_executable(struct kevent_ctx *k, struct log_event *le, const struct bb_event *ev)
{
	size_t klen = strnlen(ev->exe, sizeof(ev->exe));
	const char *base;
	char link[64];
	ssize_t n;

	base = strrchr(k->exe_path, '/');
	if (k->exe_pid != ev->pid || !base || strncmp(base + 1, ev->exe, klen) || base[1 + klen]) {
		k->exe_pid = 0;
		snprintf(link, sizeof(link), "/proc/%u/exe", ev->pid);
		n = readlink(link, k->exe_path, sizeof(k->exe_path) - 1);
		if (n > 0) {
			k->exe_path[n] = 0;
			k->exe_pid = ev->pid;
		}
	}
	if (k->exe_pid == ev->pid)
		log_event_set_str(le, "process.executable", k->exe_path);
	else if (klen)
		log_event_set_bytes(le, "process.executable", ev->exe, klen);
}

static const char *transport(uint32_t proto)
{
	return proto == 17 ? "udp" : proto == 6 ? "tcp" : proto == 1 || proto == 58 ? "icmp" : "other";
}

/* Names of socket(2) numbers, for a socket-create refusal; NULL when not one of these. */
static const char *family_name(uint32_t family)
{
	static const char *const names[] = {
		[AF_UNIX] = "unix",	   [AF_INET] = "ipv4",	  [AF_INET6] = "ipv6",	      [AF_NETLINK] = "netlink",
		[AF_PACKET] = "packet",	   [AF_KEY] = "key",	  [AF_RDS] = "rds",	      [AF_CAN] = "can",
		[AF_TIPC] = "tipc",	   [AF_BLUETOOTH] = "bluetooth", [AF_RXRPC] = "rxrpc", [AF_ALG] = "alg",
		[AF_VSOCK] = "vsock",	   [AF_KCM] = "kcm",	  [AF_QIPCRTR] = "qipcrtr",   [AF_SMC] = "smc",
		[AF_XDP] = "xdp",	   [AF_APPLETALK] = "appletalk", [AF_X25] = "x25",     [AF_AX25] = "ax25",
	};

	return family < sizeof(names) / sizeof(names[0]) ? names[family] : NULL;
}

static const char *type_name(uint32_t type)
{
	static const char *const names[] = {
		[SOCK_STREAM] = "stream", [SOCK_DGRAM] = "dgram",	    [SOCK_RAW] = "raw",
		[SOCK_RDM] = "rdm",	  [SOCK_SEQPACKET] = "seqpacket", [SOCK_PACKET] = "packet",
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

/* An IP protocol's name; netlink and other families number their protocols their own way. */
static const char *protocol_name(uint32_t family, uint32_t type, uint32_t proto)
{
	if (family == AF_NETLINK)
		return proto == NETLINK_ROUTE ? "route" : proto == NETLINK_SOCK_DIAG ? "sock-diag" :
		       proto == NETLINK_AUDIT ? "audit" : proto == NETLINK_KOBJECT_UEVENT ? "kobject-uevent" :
		       proto == NETLINK_GENERIC ? "generic" : proto == NETLINK_NETFILTER ? "netfilter" : NULL;
	if (family != AF_INET && family != AF_INET6)
		return NULL;
	switch (proto) {
	case 0:
		return type == SOCK_STREAM ? "tcp" : type == SOCK_DGRAM ? "udp" : "ip";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_MPTCP:
		return "mptcp";
	case IPPROTO_RAW:
		return "raw";
	}
	return NULL;
}

/* "ipv4 (2)", or the number alone when it has no name here. */
static void name_num(char *out, size_t len, const char *name, uint32_t n)
{
	if (name)
		snprintf(out, len, "%s (%u)", name, n);
	else
		snprintf(out, len, "%u", n);
}

/* A socket the allow-list refused: family, type and protocol, by number and by name. */
static void set_socket(struct log_event *le, const struct bb_event *ev, char *text, size_t len)
{
	const char *family = family_name(ev->family), *type = type_name(ev->port);
	const char *proto = protocol_name(ev->family, ev->port, ev->proto);
	char f[32], t[32], p[32];

	log_event_set_int(le, "bpfbox.socket.family", ev->family);
	log_event_set_int(le, "bpfbox.socket.type", ev->port);
	log_event_set_int(le, "bpfbox.socket.protocol", ev->proto);
	if (family)
		log_event_set_str(le, "network.type", family);
	if (proto)
		log_event_set_str(le, "network.transport", proto);
	name_num(f, sizeof(f), family, ev->family);
	name_num(t, sizeof(t), type, ev->port);
	name_num(p, sizeof(p), proto, ev->proto);
	snprintf(text, len, " of family %s type %s protocol %s (not in the socket allow-list, "
		 "see bpfbox.network.allowSocketProtocols)", f, t, p);
}

/* Destination fields of a network refusal; text receives what the message says. */
static void set_network(struct log_event *le, const struct bb_event *ev, char *text, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "";

	if (ev->op == BB_OP_SOCKET) {
		set_socket(le, ev, text, len);
		return;
	}
	log_event_set_str(le, "network.transport", transport(ev->proto));
	log_event_set_str(le, "network.type", ev->family == AF_INET6 ? "ipv6" : "ipv4");
	if (ev->op == BB_OP_BIND) {
		snprintf(text, len, " on a %s port (allowLocalBinding is off)", transport(ev->proto));
		return;
	}
	if (ev->family == AF_INET)
		inet_ntop(AF_INET, ev->addr, addr, sizeof(addr));
	else if (ev->family == AF_INET6)
		inet_ntop(AF_INET6, ev->addr, addr, sizeof(addr));
	log_event_set_str(le, "destination.address", addr[0] ? addr : "unknown");
	if (addr[0])
		log_event_set_str(le, "destination.ip", addr);
	log_event_set_int(le, "destination.port", ev->port);
	snprintf(text, len, ev->family == AF_INET6 ? " to [%s]:%u/%s" : " to %s:%u/%s", addr, ev->port,
		 transport(ev->proto));
}

/* A device node outside the sandbox's device set: its path and its number. */
static void set_device(struct log_event *le, const struct bb_event *ev, char *text, size_t len)
{
	const char *type = (ev->flags & BB_EVF_BLOCK_DEVICE) ? "block" : "char";
	int plen = (int)strnlen(ev->path, sizeof(ev->path));

	log_event_set_str(le, "file.type", type);
	log_event_set_int(le, "bpfbox.device.major", BB_KDEV_MAJOR(ev->rdev));
	log_event_set_int(le, "bpfbox.device.minor", BB_KDEV_MINOR(ev->rdev));
	snprintf(text, len, " of %.*s (%s device %u:%u, not in the sandbox's device set)", plen, ev->path, type,
		 BB_KDEV_MAJOR(ev->rdev), BB_KDEV_MINOR(ev->rdev));
}

/* include/linux/key.h, enum key_need_perm. */
static const char *key_permission_name(uint32_t perm)
{
	static const char *const names[] = { "unspecified", "view",   "read",	    "write",
					     "search",	    "link",   "setattr",    "unlink",
					     "sysadmin",    "authtoken", "deferred" };

	return perm < sizeof(names) / sizeof(names[0]) ? names[perm] : "unknown";
}

/* A signal to a process outside the sandbox; pid 0 when a full map refused an F_SETOWN. */
static void set_signal(struct log_event *le, const struct bb_event *ev, char *text, size_t len)
{
	const char *abbrev = ev->proto > 0 && ev->proto < NSIG ? sigabbrev_np((int)ev->proto) : NULL;
	char name[32];

	/* glibc names 29 POLL; the F_SETOWN signal is known as SIGIO. */
	if (ev->proto == SIGIO)
		abbrev = "IO";

	if (abbrev)
		snprintf(name, sizeof(name), "SIG%s", abbrev);
	else
		snprintf(name, sizeof(name), "signal %u", ev->proto);
	log_event_set_int(le, "bpfbox.signal.number", ev->proto);
	log_event_set_str(le, "bpfbox.signal.name", name);
	if (!ev->port) {
		snprintf(text, len, " %s owner: no room to track it", name);
		return;
	}
	log_event_set_int(le, "bpfbox.target.pid", ev->port);
	snprintf(text, len, " %s to pid %u outside the sandbox%s", name, ev->port,
		 ev->flags & BB_EVF_NO_TASK ? " (I/O signal whose owner the sandbox set)" : "");
}

/* Fields naming what was refused; text receives the rest of the message. */
static void set_object(struct log_event *le, const struct bb_event *ev, char *text, size_t len)
{
	int plen = (int)strnlen(ev->path, sizeof(ev->path));

	text[0] = 0;
	switch (ev->kind) {
	case BB_EV_FILE:
		log_event_set_bytes(le, "file.path", ev->path, (size_t)plen);
		if (ev->flags & BB_EVF_PATH_TRUNCATED)
			log_event_set_bool(le, "bpfbox.truncated", true);
		if (ev->rule == BB_RULE_DEVICE) {
			set_device(le, ev, text, len);
			break;
		}
		snprintf(text, len, " of %.*s", plen, ev->path);
		break;
	case BB_EV_UNIX:
		log_event_set_bytes(le, "destination.address", plen ? ev->path : "@", plen ? (size_t)plen : 1);
		log_event_set_str(le, "network.type", "unix");
		snprintf(text, len, " to %.*s", plen ? plen : 1, plen ? ev->path : "@");
		break;
	case BB_EV_NET:
		set_network(le, ev, text, len);
		break;
	case BB_EV_KEY:
		log_event_set_bytes(le, "bpfbox.key.description", ev->path, (size_t)plen);
		log_event_set_int(le, "bpfbox.key.serial", (int32_t)ev->port);
		log_event_set_str(le, "bpfbox.key.permission", key_permission_name(ev->proto));
		snprintf(text, len, " (%s) of key %d \"%.*s\", which the sandbox did not create",
			 key_permission_name(ev->proto), (int32_t)ev->port, plen, ev->path);
		break;
	default:
		if (ev->op == BB_OP_SIGNAL) {
			set_signal(le, ev, text, len);
		} else if (ev->op == BB_OP_TTY_IOCTL) {
			const char *name = ev->port == 0x5412 ? "TIOCSTI" : ev->port == 0x541C ? "TIOCLINUX" : "unknown";

			log_event_set_int(le, "bpfbox.ioctl.cmd", ev->port);
			log_event_set_str(le, "bpfbox.ioctl.name", name);
			snprintf(text, len, " %s on a terminal (input injection)", name);
		} else if (ev->op == BB_OP_PTRACE && ev->port) {
			log_event_set_int(le, "bpfbox.target.pid", ev->port);
			snprintf(text, len, " of pid %u outside the sandbox", ev->port);
		} else if (ev->op == BB_OP_BPF) {
			log_event_set_int(le, "bpfbox.bpf.cmd", ev->port);
			snprintf(text, len, " command %u", ev->port);
		}
		break;
	}
}

int kevent_handle(void *ctx, void *data, size_t size)
{
	struct kevent_ctx *k = ctx;
	const struct bb_event *ev = data;
	bool audit = ev->flags & BB_EVF_AUDIT;
	uint32_t count = ev->count ? ev->count : 1;
	char target[BB_EVENT_PATH + 64], uid[16];
	struct log_event *le;
	const char *action;

	if (size < sizeof(*ev) || ev->sandbox != k->sandbox_id)
		return 0;
	/* Not a refusal: a .git the sandbox made, checked when it ends. */
	if (ev->kind == BB_EV_GIT) {
		if (k->git)
			sandbox_git_note(k->git, ev);
		return 0;
	}
	k->received++;
	k->refusals += count;
	action = kevent_action(ev->op);
	le = log_event_new(LOG_WARN, "event", category_of(ev->op), type_of(ev->op), action, "failure");
	set_kernel_time(le, ev->ts_ns);
	/* SIGIO raised by someone else's I/O: the task at hand is not the sandbox's. */
	if (!(ev->flags & BB_EVF_NO_TASK)) {
		log_event_set_int(le, "process.pid", ev->pid);
		log_event_set_int(le, "process.thread.id", ev->tid);
		log_event_set_bytes(le, "process.name", ev->comm, strnlen(ev->comm, sizeof(ev->comm)));
		snprintf(uid, sizeof(uid), "%u", ev->uid);
		log_event_set_str(le, "process.user.id", uid);
		set_executable(k, le, ev);
	}
	log_event_set_str(le, "rule.name", kevent_rule_name(k, ev->rule));
	log_event_set_int(le, "bpfbox.count", count);
	if (ev->error)
		log_event_set_errno(le, ev->error);
	set_object(le, ev, target, sizeof(target));
	/* Rule, pid, process name and count are appended by the text line: not repeated here. */
	log_event_message(le, "%s %s%s%s", audit ? "would deny" : "denied", action, target,
			  audit ? " (audit mode)" : "");
	log_event_violation(le);
	if (audit)
		log_event_audit(le);
	log_emit(k->log, le);
	return 0;
}

void kevent_report_pending(void *ctx, uint32_t op, uint32_t rule, uint64_t count)
{
	struct kevent_ctx *k = ctx;
	/* Audited on the caller's layer alone (BB_SB_AUDIT_OWN): the mark is on the op. */
	bool audit = k->audit || (op & BB_OP_AUDITED);
	const char *action;
	struct log_event *le;

	op &= ~BB_OP_AUDITED;
	action = kevent_action(op);
	k->refusals += count;
	le = log_event_new(LOG_WARN, "event", category_of(op), type_of(op), action, "failure");
	log_event_set_str(le, "rule.name", kevent_rule_name(k, rule));
	log_event_set_int(le, "bpfbox.count", (long long)count);
	log_event_set_bool(le, "bpfbox.folded", true);
	log_event_message(le, "%s %s %llu more time%s, folded after an earlier line naming the same %s%s",
			  audit ? "would deny" : "denied", action, (unsigned long long)count, count == 1 ? "" : "s",
			  op == BB_OP_KEY	 ? "key" :
			  op >= BB_OP_CONNECT ? "destination" :
			  op >= BB_OP_MOUNT   ? "target" :
						"file",
			  audit ? " (audit mode)" : "");
	log_event_violation(le);
	if (audit)
		log_event_audit(le);
	log_emit(k->log, le);
}
