/* SPDX-License-Identifier: MIT */
/*
 * Network: cgroup sock_addr programs, attached once to the cgroup that holds
 * every sandbox, let nothing out of a sandbox but its own proxy on loopback
 * (DNS goes to the sandbox's resolver, learned addresses to its transparent
 * proxy, which recvmsg and getpeername hide again); bind programs keep
 * servers on loopback.
 */
#ifndef BPFBOX_NET_SOCK_ADDR_BPF_H
#define BPFBOX_NET_SOCK_ADDR_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/net.bpf.h"

#define CGROUP_ALLOW 1
#define CGROUP_DENY 0

/*
 * No sandbox of this build: a sandbox of another build under the shared
 * parent cgroup (an upgrade, a second install), whose own programs, attached
 * beside these, decide; or a task that is not the socket's owner (a socket
 * handed out of a sandbox), which could make its own. Each sandbox's tasks
 * are found by their cgroup, which they cannot leave.
 */
#define NOT_OURS CGROUP_ALLOW

/*
 * Is the socket at this loopback destination one the sandbox bound itself?
 * Looked up live, so only a socket that is still there and still the
 * sandbox's counts.
 */
static __always_inline bool own_socket_at(struct bpf_sock_addr *ctx, __u64 sb_id, const __u32 *ip6, __u32 ip4,
					  bool is_v4, __u32 port, __u32 type)
{
	struct bpf_sock_tuple tuple = {};
	struct bpf_sock *sk;
	__u64 *owner;
	bool own = false;
	__u32 size;

	if (is_v4) {
		tuple.ipv4.daddr = bpf_htonl(ip4);
		tuple.ipv4.dport = bpf_htons(port);
		size = sizeof(tuple.ipv4);
	} else {
		__builtin_memcpy(tuple.ipv6.daddr, ip6, 16);
		tuple.ipv6.dport = bpf_htons(port);
		size = sizeof(tuple.ipv6);
	}
	if (type == SOCK_STREAM)
		sk = bpf_sk_lookup_tcp(ctx, &tuple, size, BPF_F_CURRENT_NETNS, 0);
	else if (type == SOCK_DGRAM)
		sk = bpf_sk_lookup_udp(ctx, &tuple, size, BPF_F_CURRENT_NETNS, 0);
	else
		return false;
	if (!sk)
		return false;
	owner = bpf_sk_storage_get(&sock_owner, sk, 0, 0);
	own = owner && *owner == sb_id;
	bpf_sk_release(sk);
	return own;
}

static __always_inline int net_refuse(struct bb_sandbox *sb, __u64 sb_id, __u32 op, __u32 rule, __u32 family,
				      const __u32 *addr, __u32 port, __u32 proto)
{
	report_net(sb, sb_id, op, rule, family, addr, port, proto);
	__sync_fetch_and_add(&sb->denied, 1);
	return (sb->flags & BB_SB_AUDIT) ? CGROUP_ALLOW : CGROUP_DENY;
}

#define DNS_PORT 53

/* DNS is redirected over TCP and UDP only (not SCTP, not UDP-Lite). */
static __always_inline bool dns_transport(__u32 type, __u32 proto)
{
	return (type == SOCK_STREAM && proto == IPPROTO_TCP_) || (type == SOCK_DGRAM && proto == IPPROTO_UDP_);
}

/*
 * Keeps with the socket where it wanted to go and where it was sent, so that
 * recvmsg and getpeername can show the original. False when it cannot be
 * kept: the caller refuses rather than redirect without a way back.
 */
static __always_inline struct bb_redirect *remember_redirect(struct bpf_sock *sk, __u64 sb_id, __u32 kind,
							     __u32 family, const __u32 *orig, __u32 orig_port,
							     const __u32 *via, __u32 via_port)
{
	struct bb_redirect *r;

	if (!sk)
		return NULL;
	r = bpf_sk_storage_get(&sock_redirect, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!r)
		return NULL;
	__builtin_memcpy(r->orig_addr, orig, 16);
	__builtin_memcpy(r->via_addr, via, 16);
	r->sandbox = sb_id;
	r->orig_port = orig_port;
	r->via_port = via_port;
	r->family = family;
	r->kind = kind;
	fill_peer(&r->peer);
	return r;
}

/* A UDP sendto has its port by now (the kernel binds before this hook): file its sender. */
static __always_inline void file_dns_sendto(struct bpf_sock *sk, struct bb_redirect *r, __u32 op, __u32 proto,
					    __u32 listener, __u32 family)
{
	if (op != BB_OP_SENDMSG || proto != IPPROTO_UDP_ || !sk)
		return;
	file_dns_peer(r, sk->src_port, listener, family, proto, &r->peer);
}

/* Did the kernel send this socket's DNS to the resolver's port (IPv4-mapped, the only case asked)? */
static __always_inline bool redirected_to_dns(struct bpf_sock *sk, __u32 port)
{
	struct bb_redirect *r = bpf_sk_storage_get(&sock_redirect, sk, 0, 0);

	return r && r->kind == BB_REDIRECT_DNS && r->family == AF_INET6 && r->via_port == port &&
	       r->via_addr[2] == bpf_htonl(0xffff) && r->via_addr[3] == bpf_htonl(LOOPBACK4);
}

/*
 * Did the sandbox learn this address (for a name its policy allows), on a
 * port that name's rules allow? Expired entries count as never learned.
 */
static __always_inline bool learned_allows(__u64 sb_id, bool is_v4, const __u32 *ip6, __u32 raw_ip4, __u32 port)
{
	struct bb_learned_key key = {};
	struct bb_learned *l;

	key.sandbox = sb_id;
	if (is_v4) {
		key.family = AF_INET;
		__builtin_memcpy(key.addr, &raw_ip4, 4);
	} else {
		key.family = AF_INET6;
		__builtin_memcpy(key.addr, ip6, 16);
	}
	l = bpf_map_lookup_elem(&learned, &key);
	if (!l)
		return false;
	if (l->expires_ns && l->expires_ns < bpf_ktime_get_ns())
		return false;
	return !l->port || l->port == port;
}

/* Where may this sandbox send to? Only its proxies, or loopback sockets it bound itself. */
static __always_inline bool destination_allowed(struct bpf_sock_addr *ctx, struct bpf_sock *sk, __u32 family,
						struct bb_sandbox *sb, __u64 sb_id, const __u32 *ip6, __u32 ip4,
						bool is_v4, bool v6_lo, __u32 port, __u32 type)
{
	if (is_v4 && ip4 == LOOPBACK4 && type == SOCK_STREAM &&
	    ((sb->proxy_port && port == sb->proxy_port) || (sb->socks_port && port == sb->socks_port))) {
		/*
		 * Who connects to bpfbox's own proxy goes with the socket, for its
		 * events (never a reason to refuse); an external proxy would never
		 * take the entry.
		 */
		if (port == sb->own_proxy_port)
			remember_redirect(sk, sb_id, BB_REDIRECT_PROXY, family, ip6, port, ip6, port);
		return true;
	}
	if ((sb->flags & BB_SB_ALLOW_LOCAL_BIND) && ((is_v4 && loopback4(ip4)) || v6_lo) &&
	    own_socket_at(ctx, sb_id, ip6, ip4, is_v4, port, type))
		return true;
	return false;
}

static __always_inline int sock_addr4(struct bpf_sock_addr *ctx, __u32 op)
{
	/* Every context field is read once, up front: the verifier refuses reads through a moved ctx pointer. */
	__u32 raw_ip = ctx->user_ip4, raw_port = ctx->user_port, type = ctx->type, proto = ctx->protocol;
	__u32 addr[4] = { raw_ip }, ip4 = bpf_ntohl(raw_ip), port = bpf_ntohs(raw_port);
	struct bpf_sock *sk = ctx->sk;
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb)
		return NOT_OURS;
	if (port == DNS_PORT && sb->dns_port4 && dns_transport(type, proto)) {
		__u32 via[4] = { bpf_htonl(LOOPBACK4) };
		struct bb_redirect *r;

		/*
		 * An IPv6 socket's datagram to an IPv4-mapped server comes through
		 * this hook: keep it in the socket's own layout, which recvmsg6 and
		 * getpeername6 restore.
		 */
		if (sk && sk->family == AF_INET6) {
			__u32 orig6[4] = { 0, 0, bpf_htonl(0xffff), raw_ip };
			__u32 via6[4] = { 0, 0, bpf_htonl(0xffff), via[0] };

			r = remember_redirect(sk, id, BB_REDIRECT_DNS, AF_INET6, orig6, port, via6, sb->dns_port4);
		} else {
			r = remember_redirect(sk, id, BB_REDIRECT_DNS, AF_INET, addr, port, via, sb->dns_port4);
		}
		if (!r)
			return net_refuse(sb, id, op, BB_RULE_NET_DEFAULT, AF_INET, addr, port, proto);
		file_dns_sendto(sk, r, op, proto, sb->dns_port4, AF_INET);
		ctx->user_ip4 = via[0];
		ctx->user_port = bpf_htons(sb->dns_port4);
		return CGROUP_ALLOW;
	}
	/*
	 * Each send on an IPv6 UDP socket connected to an IPv4-mapped server
	 * comes here with the address the connect hook put there: the
	 * sandbox's resolver. Only that socket's own redirect passes.
	 */
	if (op == BB_OP_SENDMSG && ip4 == LOOPBACK4 && port == sb->dns_port4 && port && sk && sk->family == AF_INET6 &&
	    redirected_to_dns(sk, port))
		return CGROUP_ALLOW;
	if (destination_allowed(ctx, sk, AF_INET, sb, id, addr, ip4, true, false, port, type))
		return CGROUP_ALLOW;
	if (op == BB_OP_CONNECT && sb->tport4 && type == SOCK_STREAM && proto == IPPROTO_TCP_ &&
	    learned_allows(id, true, addr, raw_ip, port)) {
		__u32 via[4] = { bpf_htonl(LOOPBACK4) };

		if (!remember_redirect(sk, id, BB_REDIRECT_TRANSPARENT, AF_INET, addr, port, via, sb->tport4))
			return net_refuse(sb, id, op, BB_RULE_NET_DEFAULT, AF_INET, addr, port, proto);
		ctx->user_ip4 = via[0];
		ctx->user_port = bpf_htons(sb->tport4);
		return CGROUP_ALLOW;
	}
	return net_refuse(sb, id, op, BB_RULE_NET_DEFAULT, AF_INET, addr, port, proto);
}

static __always_inline int sock_addr6(struct bpf_sock_addr *ctx, __u32 op)
{
	__u32 ip6[4], raw_port = ctx->user_port, type = ctx->type, proto = ctx->protocol, port;
	struct bpf_sock *sk = ctx->sk;
	struct bb_sandbox *sb;
	bool mapped;
	__u64 id;

	ip6[0] = ctx->user_ip6[0];
	ip6[1] = ctx->user_ip6[1];
	ip6[2] = ctx->user_ip6[2];
	ip6[3] = ctx->user_ip6[3];
	port = bpf_ntohs(raw_port);
	sb = current_sandbox(&id);
	if (!sb)
		return NOT_OURS;
	mapped = v4_mapped(ip6);
	if (port == DNS_PORT && dns_transport(type, proto) && (mapped ? sb->dns_port4 : sb->dns_port6)) {
		/* An IPv4-mapped server is reached at ::ffff:127.0.0.1, any other at ::1. */
		__u32 via[4] = { 0, 0, mapped ? bpf_htonl(0xffff) : 0, bpf_htonl(mapped ? LOOPBACK4 : 1) };
		__u32 via_port = mapped ? sb->dns_port4 : sb->dns_port6;
		struct bb_redirect *r;

		r = remember_redirect(sk, id, BB_REDIRECT_DNS, AF_INET6, ip6, port, via, via_port);
		if (!r)
			return net_refuse(sb, id, op, BB_RULE_NET_DEFAULT, AF_INET6, ip6, port, proto);
		file_dns_sendto(sk, r, op, proto, via_port, mapped ? AF_INET : AF_INET6);
		ctx->user_ip6[0] = via[0];
		ctx->user_ip6[1] = via[1];
		ctx->user_ip6[2] = via[2];
		ctx->user_ip6[3] = via[3];
		ctx->user_port = bpf_htons(via_port);
		return CGROUP_ALLOW;
	}
	if (destination_allowed(ctx, sk, AF_INET6, sb, id, ip6, bpf_ntohl(ip6[3]), mapped, !mapped && v6_loopback(ip6),
				port, type))
		return CGROUP_ALLOW;
	if (op == BB_OP_CONNECT && type == SOCK_STREAM && proto == IPPROTO_TCP_ && (mapped ? sb->tport4 : sb->tport6) &&
	    learned_allows(id, mapped, ip6, ip6[3], port)) {
		__u32 via[4] = { 0, 0, mapped ? bpf_htonl(0xffff) : 0, bpf_htonl(mapped ? LOOPBACK4 : 1) };
		__u32 via_port = mapped ? sb->tport4 : sb->tport6;

		if (!remember_redirect(sk, id, BB_REDIRECT_TRANSPARENT, AF_INET6, ip6, port, via, via_port))
			return net_refuse(sb, id, op, BB_RULE_NET_DEFAULT, AF_INET6, ip6, port, proto);
		ctx->user_ip6[0] = via[0];
		ctx->user_ip6[1] = via[1];
		ctx->user_ip6[2] = via[2];
		ctx->user_ip6[3] = via[3];
		ctx->user_port = bpf_htons(via_port);
		return CGROUP_ALLOW;
	}
	return net_refuse(sb, id, op, BB_RULE_NET_DEFAULT, AF_INET6, ip6, port, proto);
}

SEC("cgroup/connect4")
int bb_connect4(struct bpf_sock_addr *ctx)
{
	return sock_addr4(ctx, BB_OP_CONNECT);
}

SEC("cgroup/connect6")
int bb_connect6(struct bpf_sock_addr *ctx)
{
	return sock_addr6(ctx, BB_OP_CONNECT);
}

SEC("cgroup/sendmsg4")
int bb_sendmsg4(struct bpf_sock_addr *ctx)
{
	return sock_addr4(ctx, BB_OP_SENDMSG);
}

SEC("cgroup/sendmsg6")
int bb_sendmsg6(struct bpf_sock_addr *ctx)
{
	return sock_addr6(ctx, BB_OP_SENDMSG);
}

/*
 * A redirected socket's peer shows as the address the application asked for:
 * glibc and musl drop an answer whose source is not the server they asked.
 * These programs only rewrite, never refuse (recvmsg and getpeername must return 1).
 */
static __always_inline int restore_peer4(struct bpf_sock_addr *ctx)
{
	__u32 ip = ctx->user_ip4, port = ctx->user_port;
	struct bpf_sock *sk = ctx->sk;
	struct bb_redirect *r;

	if (!sk)
		return 1;
	r = bpf_sk_storage_get(&sock_redirect, sk, 0, 0);
	if (!r || r->family != AF_INET || ip != r->via_addr[0] || bpf_ntohs(port) != r->via_port)
		return 1;
	ctx->user_ip4 = r->orig_addr[0];
	ctx->user_port = bpf_htons(r->orig_port);
	return 1;
}

static __always_inline int restore_peer6(struct bpf_sock_addr *ctx)
{
	__u32 ip6[4], port = ctx->user_port;
	struct bpf_sock *sk = ctx->sk;
	struct bb_redirect *r;

	ip6[0] = ctx->user_ip6[0];
	ip6[1] = ctx->user_ip6[1];
	ip6[2] = ctx->user_ip6[2];
	ip6[3] = ctx->user_ip6[3];
	if (!sk)
		return 1;
	r = bpf_sk_storage_get(&sock_redirect, sk, 0, 0);
	if (!r || r->family != AF_INET6 || bpf_ntohs(port) != r->via_port || ip6[0] != r->via_addr[0] ||
	    ip6[1] != r->via_addr[1] || ip6[2] != r->via_addr[2] || ip6[3] != r->via_addr[3])
		return 1;
	ctx->user_ip6[0] = r->orig_addr[0];
	ctx->user_ip6[1] = r->orig_addr[1];
	ctx->user_ip6[2] = r->orig_addr[2];
	ctx->user_ip6[3] = r->orig_addr[3];
	ctx->user_port = bpf_htons(r->orig_port);
	return 1;
}

SEC("cgroup/recvmsg4")
int bb_recvmsg4(struct bpf_sock_addr *ctx)
{
	return restore_peer4(ctx);
}

SEC("cgroup/recvmsg6")
int bb_recvmsg6(struct bpf_sock_addr *ctx)
{
	return restore_peer6(ctx);
}

SEC("cgroup/getpeername4")
int bb_getpeername4(struct bpf_sock_addr *ctx)
{
	return restore_peer4(ctx);
}

SEC("cgroup/getpeername6")
int bb_getpeername6(struct bpf_sock_addr *ctx)
{
	return restore_peer6(ctx);
}

/* Binding: port 0 (a client's ephemeral port) always; a fixed port only on loopback with allowLocalBinding. */
static __always_inline int bind_check(struct bb_sandbox *sb, __u64 id, bool loopback, __u32 family,
				      const __u32 *addr, __u32 port, __u32 proto)
{
	if (port == 0 || (loopback && (sb->flags & BB_SB_ALLOW_LOCAL_BIND)))
		return CGROUP_ALLOW;
	return net_refuse(sb, id, BB_OP_BIND, BB_RULE_BIND, family, addr, port, proto);
}

SEC("cgroup/bind4")
int bb_bind4(struct bpf_sock_addr *ctx)
{
	__u32 raw_ip = ctx->user_ip4, raw_port = ctx->user_port, proto = ctx->protocol;
	__u32 addr[4] = { raw_ip };
	struct bb_sandbox *sb;
	__u64 id;

	sb = current_sandbox(&id);
	if (!sb)
		return NOT_OURS;
	return bind_check(sb, id, loopback4(bpf_ntohl(raw_ip)), AF_INET, addr, bpf_ntohs(raw_port), proto);
}

SEC("cgroup/bind6")
int bb_bind6(struct bpf_sock_addr *ctx)
{
	__u32 ip6[4], raw_port = ctx->user_port, proto = ctx->protocol;
	struct bb_sandbox *sb;
	__u64 id;

	ip6[0] = ctx->user_ip6[0];
	ip6[1] = ctx->user_ip6[1];
	ip6[2] = ctx->user_ip6[2];
	ip6[3] = ctx->user_ip6[3];
	sb = current_sandbox(&id);
	if (!sb)
		return NOT_OURS;
	return bind_check(sb, id, v6_loopback(ip6) || (v4_mapped(ip6) && loopback4(bpf_ntohl(ip6[3]))), AF_INET6,
			  ip6, bpf_ntohs(raw_port), proto);
}

/* Mark the loopback sockets a sandbox really bound, so it may connect to its own servers. */
static __always_inline int remember_owner(struct bpf_sock *sk, bool loopback)
{
	struct bb_sandbox *sb;
	__u64 id, *owner;

	sb = current_sandbox(&id);
	if (!sb)
		return NOT_OURS;
	if (loopback && (sb->flags & BB_SB_ALLOW_LOCAL_BIND)) {
		owner = bpf_sk_storage_get(&sock_owner, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!owner)
			return CGROUP_DENY; /* unmarked, it could not be reached: say so at bind */
		*owner = id;
	}
	return CGROUP_ALLOW;
}

SEC("cgroup/post_bind4")
int bb_post_bind4(struct bpf_sock *sk)
{
	return remember_owner(sk, loopback4(bpf_ntohl(sk->src_ip4)));
}

SEC("cgroup/post_bind6")
int bb_post_bind6(struct bpf_sock *sk)
{
	__u32 ip6[4];

	ip6[0] = sk->src_ip6[0];
	ip6[1] = sk->src_ip6[1];
	ip6[2] = sk->src_ip6[2];
	ip6[3] = sk->src_ip6[3];
	return remember_owner(sk, v6_loopback(ip6) || (v4_mapped(ip6) && loopback4(bpf_ntohl(ip6[3]))));
}

#endif
