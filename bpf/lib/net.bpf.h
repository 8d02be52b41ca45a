/* SPDX-License-Identifier: MIT */
/*
 * What the network programs share: address tests, the refusal event, and
 * the record of who sends a DNS query through the sandbox's resolver.
 */
#ifndef BPFBOX_NET_BPF_H
#define BPFBOX_NET_BPF_H

#include <bpf/bpf_endian.h>
#include "lib/sandbox.bpf.h"

#define LOOPBACK4 0x7f000001u

static __always_inline bool loopback4(__u32 ip)
{
	return (ip >> 24) == 127;
}

static __always_inline void report_net(struct bb_sandbox *sb, __u64 sb_id, __u32 op, __u32 rule, __u32 family,
				       const __u32 *addr, __u32 port, __u32 proto)
{
	struct bb_event *ev;
	__u32 count;
	__u64 object = ((__u64)addr[0] << 32) ^ addr[3] ^ ((__u64)port << 16) ^ family ^ ((__u64)proto << 48);

	if (!rate_limit_pass(sb_id, op, rule, object, &count))
		return;
	ev = event_reserve(sb, sb_id, count);
	if (!ev)
		return;
	event_fill_task(ev, sb_id, BB_EV_NET, op, rule, EPERM, count, sb->flags & BB_SB_AUDIT);
	ev->family = family;
	ev->port = port;
	ev->proto = proto;
	__builtin_memcpy(ev->addr, addr, 16);
	bpf_ringbuf_submit(ev, 0);
}

/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is treated as the IPv4 address. */
static __always_inline bool v4_mapped(const __u32 *ip6)
{
	return ip6[0] == 0 && ip6[1] == 0 && ip6[2] == bpf_htonl(0xffff);
}

static __always_inline bool v6_loopback(const __u32 *ip6)
{
	return ip6[0] == 0 && ip6[1] == 0 && ip6[2] == 0 && ip6[3] == bpf_htonl(1);
}

#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17

static __always_inline void fill_peer(struct bb_peer *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	p->pid = pid_tgid >> 32;
	p->tid = (__u32)pid_tgid;
	p->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(p->comm, sizeof(p->comm));
}

/*
 * Files who sends a DNS query from this port, for the resolver's events
 * (never a reason to refuse); the socket's redirect keeps the port, for
 * the entry to go with the socket (bb_sock_release).
 */
static __always_inline void file_dns_peer(struct bb_redirect *r, __u32 port, __u32 listener, __u32 family,
					  __u32 proto, const struct bb_peer *peer)
{
	struct bb_dns_peer_key key = {};
	struct bb_dns_peer v = {};

	if (!port)
		return;
	r->dns_port = port;
	key.sandbox = r->sandbox;
	key.port = port;
	key.listener = listener;
	key.family = family;
	key.proto = proto;
	v.peer = *peer;
	bpf_map_update_elem(&dns_peers, &key, &v, BPF_ANY);
}

/* The resolver's family for a redirect: an IPv6 socket sent to ::ffff:127.0.0.1 reaches its IPv4 socket. */
static __always_inline __u32 dns_listener_family(const struct bb_redirect *r)
{
	return r->family == AF_INET || r->via_addr[2] == bpf_htonl(0xffff) ? AF_INET : AF_INET6;
}

#endif
