/* SPDX-License-Identifier: MIT */
/*
 * LSM hooks on sockets: the allowed socket families, listening, the sender
 * of DNS on a connected UDP socket, and Unix-socket peers.
 */
#ifndef BPFBOX_NET_SOCKET_HOOKS_BPF_H
#define BPFBOX_NET_SOCKET_HOOKS_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/net.bpf.h"
#include <bpf/bpf_tracing.h> /* BPF_PROG */

#define AF_RDS_ 21
#define AF_PACKET_ 17
#define AF_CAN_ 29
#define AF_TIPC_ 30
#define AF_BLUETOOTH_ 31
#define AF_ALG_ 38
#define AF_VSOCK_ 40
#define AF_KCM_ 41
#define AF_XDP_ 44
#define SOCK_SEQPACKET_ 5
#define SOCK_TYPE_MASK_ 0xf /* the rest of type is SOCK_NONBLOCK | SOCK_CLOEXEC */
#define IPPROTO_ICMP_ 1
#define IPPROTO_ICMPV6_ 58
#define IPPROTO_SCTP_ 132
#define IPPROTO_UDPLITE_ 136
#define IPPROTO_MPTCP_ 262
#define NETLINK_ROUTE_ 0

/*
 * What a socket is, for the allow-list: 0 when every sandbox may open it,
 * else the BB_SOCK_* bit a policy opts in with (BB_SOCK_NEVER: none).
 * TCP and UDP are decided again at connect, bind and sendmsg; MPTCP's
 * connect runs the same cgroup connect program on its first subflow.
 * NETLINK_ROUTE only reads without CAP_NET_ADMIN (getaddrinfo's
 * AI_ADDRCONFIG, getifaddrs). SCTP and ping sockets run no cgroup program
 * at all, which is why they are refused here.
 */
static __always_inline __u32 socket_kind(int family, int type, int protocol)
{
	if (family == AF_UNIX)
		return 0; /* decided on the peer (unix_stream_connect, unix_may_send) */
	if (family == AF_NETLINK)
		return protocol == NETLINK_ROUTE_ ? 0 : BB_SOCK_NETLINK;
	if (family == AF_INET || family == AF_INET6) {
		if (type == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP_ || protocol == IPPROTO_MPTCP_))
			return 0;
		if (type == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP_))
			return 0;
		if (protocol == IPPROTO_SCTP_ && (type == SOCK_STREAM || type == SOCK_SEQPACKET_))
			return BB_SOCK_SCTP;
		if (type == SOCK_DGRAM && protocol == (family == AF_INET ? IPPROTO_ICMP_ : IPPROTO_ICMPV6_))
			return BB_SOCK_PING;
		if (type == SOCK_DGRAM && protocol == IPPROTO_UDPLITE_)
			return BB_SOCK_UDPLITE;
		return type == SOCK_RAW ? BB_SOCK_RAW : BB_SOCK_NEVER;
	}
	switch (family) {
	case AF_PACKET_:
		return BB_SOCK_PACKET;
	case AF_VSOCK_:
		return BB_SOCK_VSOCK;
	case AF_ALG_:
		return BB_SOCK_ALG;
	case AF_BLUETOOTH_:
		return BB_SOCK_BLUETOOTH;
	case AF_CAN_:
		return BB_SOCK_CAN;
	case AF_TIPC_:
		return BB_SOCK_TIPC;
	case AF_RDS_:
		return BB_SOCK_RDS;
	case AF_KCM_:
		return BB_SOCK_KCM;
	case AF_XDP_:
		return BB_SOCK_XDP;
	}
	return BB_SOCK_NEVER;
}

/*
 * The allow-list of socket families, types and protocols. Every way a task
 * makes a socket (socket, socketpair, io_uring's IORING_OP_SOCKET) comes
 * through here; kernel-internal sockets (kern) are not the task's.
 */
SEC("lsm/socket_create")
int BPF_PROG(bb_socket_create, int family, int type, int protocol, int kern)
{
	__u32 addr[4] = {};
	struct bb_sandbox *sb;
	__u32 kind;
	__u64 id;
	int base = type & SOCK_TYPE_MASK_;

	if (kern)
		return 0;
	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING)
		return 0;
	kind = socket_kind(family, base, protocol);
	if (!kind || (kind & sb->sock_allow))
		return 0;
	report_net(sb, id, BB_OP_SOCKET, BB_RULE_NET_FAMILY, family, addr, base, protocol);
	return refusal(sb, EPERM);
}

SEC("lsm/socket_listen")
int BPF_PROG(bb_socket_listen, struct socket *sock, int backlog)
{
	__u32 addr[4] = {};
	struct bb_sandbox *sb;
	unsigned short family;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb || sb->state != BB_STATE_ENFORCING || (sb->flags & BB_SB_ALLOW_LOCAL_BIND))
		return 0;
	family = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;
	report_net(sb, id, BB_OP_BIND, BB_RULE_BIND, family, addr, 0, 6);
	return refusal(sb, EPERM);
}

/*
 * Each send on a UDP socket connected to the sandbox's DNS (as the system
 * resolver does) files its sender: the connect hook ran before the socket had
 * a port. A send with an address is filed by cgroup sendmsg. Never refuses.
 */
SEC("lsm/socket_sendmsg")
int BPF_PROG(bb_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size)
{
	struct bb_peer peer = {};
	struct bb_redirect *r;
	struct bb_sandbox *sb;
	struct sock *sk;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb)
		return 0;
	sk = sock->sk;
	if (!sk || sk->sk_protocol != IPPROTO_UDP_ || msg->msg_name)
		return 0;
	r = bpf_sk_storage_get(&sock_redirect, sk, 0, 0);
	if (!r || r->kind != BB_REDIRECT_DNS || r->sandbox != id)
		return 0;
	fill_peer(&peer);
	file_dns_peer(r, sk->__sk_common.skc_num, r->via_port, dns_listener_family(r), IPPROTO_UDP_, &peer);
	return 0;
}

/* An abstract name is listed when its bytes after the leading NUL are, exactly. */
static __always_inline bool abstract_name_allowed(__u64 id, struct unix_address *ua, void *sun_path)
{
	struct bb_unix_name_key key = {};
	int len = BPF_CORE_READ(ua, len) - 3; /* sun_family and the leading NUL */

	if (len <= 0 || len > BB_UNIX_NAME_MAX)
		return false;
	key.sandbox = id;
	key.len = len;
	if (bpf_probe_read_kernel(key.name, len, sun_path + 1))
		return false;
	return bpf_map_lookup_elem(&unix_names, &key) != NULL;
}

/*
 * Unix sockets: decided on the peer, by the identity of the socket file it is
 * bound to, or by its creator being this sandbox.
 */
static __always_inline int unix_peer_check(struct bb_sandbox *sb, __u64 id, struct sock *other, __u32 op)
{
	struct unix_sock *peer = (struct unix_sock *)other;
	struct bb_inode_key key = {};
	struct unix_address *ua;
	struct bb_event *ev;
	struct inode *inode;
	struct bb_rule *rule;
	__u32 rule_id = BB_RULE_UNIX_DEFAULT, count;
	char first = 0;
	void *sun_path;

	if (sb->state != BB_STATE_ENFORCING || (sb->flags & BB_SB_ALLOW_ALL_UNIX))
		return 0;
	ua = BPF_CORE_READ(peer, addr);
	if (!ua)
		return 0; /* an unnamed peer: a socketpair the sandbox already holds */
	/* A socket the sandbox created itself reaches nothing outside it. */
	if (BPF_CORE_READ(other, sk_cgrp_data.cgroup, kn, id) == id)
		return 0;
	sun_path = (void *)ua + bpf_core_field_offset(struct unix_address, name) + 2;
	bpf_probe_read_kernel(&first, 1, sun_path);
	if (!first) {
		if (abstract_name_allowed(rules_key(id), ua, sun_path))
			return 0;
		rule_id = BB_RULE_UNIX_ABSTRACT;
	} else {
		inode = BPF_CORE_READ(peer, path.dentry, d_inode);
		if (inode) {
			key.sandbox = rules_key(id);
			key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
			key.ino = BPF_CORE_READ(inode, i_ino);
			rule = bpf_map_lookup_elem(&inode_rules, &key);
			if (rule && (rule->flags & BB_R_UNIX_ALLOW))
				return 0;
		}
	}
	if (rate_limit_pass(id, op, rule_id, (__u64)other, &count)) {
		ev = event_reserve(sb, id, count);
		if (ev) {
			event_fill_task(ev, id, BB_EV_UNIX, op, rule_id, EPERM, count, sb->flags & BB_SB_AUDIT);
			ev->family = AF_UNIX;
			if (first) {
				bpf_probe_read_kernel_str(ev->path, 108, sun_path);
			} else {
				/* Abstract names start with NUL: shown with a leading '@'. */
				ev->path[0] = '@';
				bpf_probe_read_kernel(&ev->path[1], 107, sun_path + 1);
				ev->path[108] = 0;
			}
			bpf_ringbuf_submit(ev, 0);
		}
	}
	return refusal(sb, EPERM);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(bb_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk)
{
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	return sb ? unix_peer_check(sb, id, other, BB_OP_UNIX_CONNECT) : 0;
}

SEC("lsm/unix_may_send")
int BPF_PROG(bb_unix_may_send, struct socket *sock, struct socket *other)
{
	struct bb_sandbox *sb;
	__u64 id;

	/* Outsiders pay the lookup only, not the read of the peer. */
	sb = current_sandbox(&id);
	return sb ? unix_peer_check(sb, id, BPF_CORE_READ(other, sk), BB_OP_UNIX_SEND) : 0;
}

#endif
