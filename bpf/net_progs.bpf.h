/* SPDX-License-Identifier: MIT */
/*
 * Network: cgroup sock_addr programs on each sandbox cgroup let nothing out
 * but the sandbox's own proxy on loopback; LSM hooks restrict socket families,
 * listening and Unix-socket peers.
 */
#ifndef BPFBOX_NET_PROGS_BPF_H
#define BPFBOX_NET_PROGS_BPF_H

#include <bpf/bpf_endian.h>
#include "lib/sandbox.bpf.h"

#define LOOPBACK4 0x7f000001u
#define CGROUP_ALLOW 1
#define CGROUP_DENY 0

static __always_inline bool loopback4(__u32 ip)
{
	return (ip >> 24) == 127;
}

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

static __always_inline int net_refuse(struct bb_sandbox *sb, __u64 sb_id, __u32 op, __u32 rule, __u32 family,
				      const __u32 *addr, __u32 port, __u32 proto)
{
	report_net(sb, sb_id, op, rule, family, addr, port, proto);
	__sync_fetch_and_add(&sb->denied, 1);
	return (sb->flags & BB_SB_AUDIT) ? CGROUP_ALLOW : CGROUP_DENY;
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

#define DNS_PORT 53
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17

/* DNS is redirected over TCP and UDP only (not SCTP, not UDP-Lite). */
static __always_inline bool dns_transport(__u32 type, __u32 proto)
{
	return (type == SOCK_STREAM && proto == IPPROTO_TCP_) || (type == SOCK_DGRAM && proto == IPPROTO_UDP_);
}

static __always_inline void fill_peer(struct bb_peer *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	p->pid = pid_tgid >> 32;
	p->tid = (__u32)pid_tgid;
	p->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(p->comm, sizeof(p->comm));
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

/* The resolver's family for a redirect: an IPv6 socket sent to ::ffff:127.0.0.1 reaches its IPv4 socket. */
static __always_inline __u32 dns_listener_family(const struct bb_redirect *r)
{
	return r->family == AF_INET || r->via_addr[2] == bpf_htonl(0xffff) ? AF_INET : AF_INET6;
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
		return CGROUP_DENY; /* only sandbox cgroups carry this program: fail closed */
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
		return CGROUP_DENY;
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

/*
 * A redirected TCP connection is established: file its original destination
 * under the client's address and port, where the proxy finds it after
 * accept. Runs in whatever context the handshake completes in, so the
 * socket's own storage says which sandbox it belongs to.
 */
SEC("sockops")
int bb_sockops(struct bpf_sock_ops *skops)
{
	struct bb_tconn_key key = {};
	struct bb_tconn v = {};
	struct bb_redirect *r;
	struct bpf_sock *sk;
	__u32 family;

	if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB)
		return 1;
	sk = skops->sk;
	if (!sk)
		return 1;
	r = bpf_sk_storage_get(&sock_redirect, sk, 0, 0);
	if (!r || (r->kind != BB_REDIRECT_TRANSPARENT && r->kind != BB_REDIRECT_PROXY && r->kind != BB_REDIRECT_DNS))
		return 1;
	family = skops->family;
	key.family = family;
	if (family == AF_INET) {
		__u32 ip = skops->local_ip4;

		__builtin_memcpy(key.addr, &ip, 4);
	} else {
		__u32 ip6[4];

		ip6[0] = skops->local_ip6[0];
		ip6[1] = skops->local_ip6[1];
		ip6[2] = skops->local_ip6[2];
		ip6[3] = skops->local_ip6[3];
		if (v4_mapped(ip6)) {
			/* An IPv6 socket sent to ::ffff:127.0.0.1: the proxy accepts it as IPv4. */
			key.family = AF_INET;
			__builtin_memcpy(key.addr, &ip6[3], 4);
		} else {
			__builtin_memcpy(key.addr, ip6, 16);
		}
	}
	key.port = skops->local_port;
	key.listener = r->via_port;
	if (r->kind == BB_REDIRECT_DNS) {
		file_dns_peer(r, key.port, key.listener, key.family, IPPROTO_TCP_, &r->peer);
		return 1;
	}
	v.sandbox = r->sandbox;
	__builtin_memcpy(v.orig_addr, r->orig_addr, 16);
	v.orig_port = r->orig_port;
	v.family = r->family;
	v.kind = r->kind;
	v.peer = r->peer;
	bpf_map_update_elem(&tconns, &key, &v, BPF_ANY);
	return 1;
}

/*
 * A socket that sent DNS goes away: its sender's entry is marked, and names
 * nobody once BB_DNS_PEER_GRACE_NS have passed (a query it sent may still
 * wait for the resolver). The supervisor deletes the entries at the end.
 */
SEC("cgroup/sock_release")
int bb_sock_release(struct bpf_sock *sk)
{
	struct bb_dns_peer_key key = {};
	struct bb_redirect *r;
	struct bb_dns_peer *v;

	r = bpf_sk_storage_get(&sock_redirect, sk, 0, 0);
	if (!r || r->kind != BB_REDIRECT_DNS || !r->dns_port)
		return 1;
	key.sandbox = r->sandbox;
	key.port = r->dns_port;
	key.listener = r->via_port;
	key.family = dns_listener_family(r);
	key.proto = sk->protocol;
	v = bpf_map_lookup_elem(&dns_peers, &key);
	if (v)
		v->released_ns = bpf_ktime_get_ns();
	return 1;
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
		return CGROUP_DENY;
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
		return CGROUP_DENY;
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
		return CGROUP_DENY;
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
		if (abstract_name_allowed(id, ua, sun_path))
			return 0;
		rule_id = BB_RULE_UNIX_ABSTRACT;
	} else {
		inode = BPF_CORE_READ(peer, path.dentry, d_inode);
		if (inode) {
			key.sandbox = id;
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
