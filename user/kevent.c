// SPDX-License-Identifier: MIT
/* Turning the kernel's refusal records into log events. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpfbox.h"
#include "kevent.h"
#include "mandatory.h"

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
	[BB_OP_CONNECT] = "connect",	     [BB_OP_SENDMSG] = "sendmsg",
	[BB_OP_BIND] = "bind",		     [BB_OP_SOCKET] = "socket-create",
	[BB_OP_UNIX_CONNECT] = "unix-connect", [BB_OP_UNIX_SEND] = "unix-send",
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
	if (rule < k->n_rules && k->rule_names[rule])
		return k->rule_names[rule];
	return "unknown";
}

static const char *category_of(uint32_t kind)
{
	switch (kind) {
	case BB_EV_FILE:
		return "file";
	case BB_EV_NET:
	case BB_EV_UNIX:
		return "network";
	default:
		return "process";
	}
}

static void set_destination(struct log_event *le, const struct bb_event *ev, char *text, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "";

	if (ev->family == AF_INET)
		inet_ntop(AF_INET, ev->addr, addr, sizeof(addr));
	else if (ev->family == AF_INET6)
		inet_ntop(AF_INET6, ev->addr, addr, sizeof(addr));
	if (ev->op == BB_OP_SOCKET) {
		log_event_set_int(le, "bpfbox.socket.family", ev->family);
		log_event_set_int(le, "bpfbox.socket.type", ev->port);
		snprintf(text, len, "socket family %u type %u", ev->family, ev->port);
		return;
	}
	log_event_set_str(le, "destination.address", addr);
	log_event_set_str(le, "destination.ip", addr);
	log_event_set_int(le, "destination.port", ev->port);
	log_event_set_str(le, "network.transport", ev->proto == 17 ? "udp" : ev->proto == 6 ? "tcp" : "other");
	log_event_set_str(le, "network.type", ev->family == AF_INET6 ? "ipv6" : "ipv4");
	snprintf(text, len, ev->family == AF_INET6 ? "[%s]:%u" : "%s:%u", addr, ev->port);
}

int kevent_handle(void *ctx, void *data, size_t size)
{
	struct kevent_ctx *k = ctx;
	const struct bb_event *ev = data;
	bool audit = ev->flags & BB_EVF_AUDIT;
	char target[PATH_MAX + 64], exe[PATH_MAX], link[64];
	const char *action, *rule;
	struct log_event *le;
	ssize_t n;

	if (size < sizeof(*ev))
		return 0;
	k->received++;
	k->refusals += ev->count ? ev->count : 1;
	action = kevent_action(ev->op);
	rule = kevent_rule_name(k, ev->rule);
	le = log_event_new(LOG_WARN, "event", category_of(ev->kind),
			   ev->kind == BB_EV_NET || ev->kind == BB_EV_UNIX ? "connection,denied" : "access,denied",
			   action, "failure");
	log_event_set_int(le, "process.pid", ev->pid);
	log_event_set_int(le, "process.thread.id", ev->tid);
	log_event_set_bytes(le, "process.name", ev->comm, strnlen(ev->comm, sizeof(ev->comm)));
	snprintf(target, sizeof(target), "%u", ev->uid);
	log_event_set_str(le, "process.user.id", target);
	snprintf(link, sizeof(link), "/proc/%u/exe", ev->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		log_event_set_str(le, "process.executable", exe);
	} else if (ev->exe[0]) {
		log_event_set_bytes(le, "process.executable", ev->exe, strnlen(ev->exe, sizeof(ev->exe)));
	}
	log_event_set_str(le, "rule.name", rule);
	log_event_set_int(le, "bpfbox.count", ev->count ? ev->count : 1);
	if (ev->error)
		log_event_set_errno(le, ev->error);
	switch (ev->kind) {
	case BB_EV_FILE:
		log_event_set_bytes(le, "file.path", ev->path, strnlen(ev->path, sizeof(ev->path)));
		if (ev->flags & BB_EVF_PATH_TRUNCATED)
			log_event_set_bool(le, "bpfbox.truncated", true);
		snprintf(target, sizeof(target), "%.*s", (int)strnlen(ev->path, sizeof(ev->path)), ev->path);
		break;
	case BB_EV_UNIX:
		log_event_set_bytes(le, "destination.address", ev->path, strnlen(ev->path, sizeof(ev->path)));
		log_event_set_str(le, "network.type", "unix");
		snprintf(target, sizeof(target), "unix:%.*s", (int)strnlen(ev->path, sizeof(ev->path)), ev->path);
		break;
	case BB_EV_NET:
		set_destination(le, ev, target, sizeof(target));
		break;
	default:
		if (ev->op == BB_OP_PTRACE && ev->port) {
			log_event_set_int(le, "bpfbox.target.pid", ev->port);
			snprintf(target, sizeof(target), "pid %u", ev->port);
		} else if (ev->op == BB_OP_BPF) {
			log_event_set_int(le, "bpfbox.bpf.cmd", ev->port);
			snprintf(target, sizeof(target), "command %u", ev->port);
		} else {
			target[0] = 0;
		}
		break;
	}
	log_event_message(le, "%s %s%s%s by %.*s (pid %u) under rule %s%s", audit ? "would deny" : "denied", action,
			  target[0] ? " " : "", target, (int)strnlen(ev->comm, sizeof(ev->comm)), ev->comm, ev->pid,
			  rule, ev->count > 1 ? " (repeated)" : "");
	if (audit)
		log_event_audit(le);
	log_event_violation(le);
	log_emit(k->log, le);
	return 0;
}

void kevent_report_pending(void *ctx, uint32_t op, uint32_t rule, uint64_t count)
{
	struct kevent_ctx *k = ctx;
	struct log_event *le;
	const char *action = kevent_action(op), *name = kevent_rule_name(k, rule);

	k->refusals += count;
	le = log_event_new(LOG_WARN, "event",
			   op >= BB_OP_CONNECT	? "network"
			   : op >= BB_OP_MOUNT	? "process"
						: "file",
			   op >= BB_OP_CONNECT ? "connection,denied" : "access,denied", action, "failure");
	log_event_set_str(le, "rule.name", name);
	log_event_set_int(le, "bpfbox.count", (long long)count);
	log_event_message(le, "denied %s %llu more times under rule %s (identical refusals folded)", action,
			  (unsigned long long)count, name);
	log_event_violation(le);
	log_emit(k->log, le);
}
