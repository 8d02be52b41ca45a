/* SPDX-License-Identifier: MIT */
/*
 * Redirected sockets after the cgroup connect and sendmsg programs: an
 * established connection is filed for the proxy that accepts it, and a DNS
 * socket's release marks its sender's entry.
 */
#ifndef BPFBOX_NET_REDIRECT_BPF_H
#define BPFBOX_NET_REDIRECT_BPF_H

#include "lib/sandbox.bpf.h"
#include "lib/net.bpf.h"

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

#endif
