#!/usr/bin/env bash
# The socket allow-list (lsm/socket_create): SCTP, ICMP and ICMPv6 ping
# sockets, UDP-Lite, raw, packet, netlink beyond NETLINK_ROUTE and other
# families are refused at creation with an event naming family, type and
# protocol, whatever type flags come with them; the remote namespace saw
# nothing of them. MPTCP opens but its connect to an unlearned address is
# refused in the kernel like TCP's (so it is on the list). A policy opting in
# with bpfbox.network.allowSocketProtocols reaches the same servers, which
# shows each "saw nothing" could have failed; an administrator's ceiling
# without the name takes it away.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
trap 'rc=$?; net_cleanup; [ -n "${PING_RANGE-}" ] && sysctl -qw net.ipv4.ping_group_range="$PING_RANGE"; (exit $rc); t_summary' EXIT

CLIENT=$T_ROOT/tests/vm/servers/client.py
LOG=$T_TMP/log.ndjson
REMOTE6=fd00:200::2

# SCTP is a module on Debian's kernels; this cache's copy (tools/vm/fetch-kernel.sh).
kdir=
for d in "${BPFBOX_VM_CACHE:-/var/cache/bpfbox-vm}"/*/; do
	[ "$(cat "$d/release" 2>/dev/null)" = "$(uname -r)" ] && kdir=$d
done
if [ -n "$kdir" ] && [ -f "$kdir/modules/extra-order" ]; then
	while read -r m; do
		[ -f "$kdir/modules/$m.ko" ] && insmod "$kdir/modules/$m.ko" 2>/dev/null
	done <"$kdir/modules/extra-order"
fi
assert_succeeds "SCTP is available in the guest" python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)'
# What systemd does on every host: any group may open ping sockets.
PING_RANGE=$(sysctl -n net.ipv4.ping_group_range | tr '\t' ' ')
sysctl -qw net.ipv4.ping_group_range="0 2147483647"

assert_succeeds "a remote network namespace is set up" net_remote_up
ip addr add fd00:200::1/64 dev bbveth0 nodad
ip -n bbremote addr add "$REMOTE6/64" dev bbveth1 nodad
assert_succeeds "SCTP, UDP-Lite and TCP echo servers run in it" \
	net_serve bbremote sctp :: 9132 , udplite :: 9136 , echo 0.0.0.0 9080
assert_succeeds "outside the sandbox, SCTP reaches the remote server" python3 "$CLIENT" kinds "$NET_REMOTE" "$REMOTE6" 0 sctp4
assert_contains "$T_OUT" '^sctp4 ok SSH-2.0-bpfbox-test-echo'

# What the remote namespace received: IPv4 packets at all, ICMPv6 echo requests, SCTP packets.
read_counters() {
	ip netns exec bbremote awk '
		$1 == "Ip:" && $2 ~ /^[0-9]/ { ip = $4 }
		$1 == "Icmp6InEchos" { e6 = $2 }
		$1 == "SctpInSCTPPacks" { sctp = $2 }
		END { print ip + 0, e6 + 0, sctp + 0 }' /proc/net/snmp /proc/net/snmp6 /proc/net/sctp/snmp
}

# Once they stop moving: an association's last packets come after its client exited, later on
# a slow guest (half a second without a change, at most ten seconds).
remote_counters() {
	local prev cur
	cur=$(read_counters)
	for _ in $(seq 20); do
		sleep 0.5
		prev=$cur
		cur=$(read_counters)
		[ "$cur" = "$prev" ] && break
	done
	echo "$cur"
}

policy() { # policy FILE [ALLOWSOCKETPROTOCOLS]
	cat >"$1" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] },
  "bpfbox": { "network": { "allowSocketProtocols": [${2-}] } }
}
JSON
}
policy "$T_TMP/default.json"
policy "$T_TMP/optin.json" '"sctp", "ping", "udplite"'
# kinds POLICY CASE...: every case in one sandbox, the sandbox's proxy port as
# PROXYPORT; the output is kept in $T_TMP/out-N (N counts the runs) and $OUT names it.
RUNS=0
kinds() {
	local p=$1
	shift
	t_exec "$BPFBOX" exec --policy "$p" --log-file "$LOG" "${CEILING[@]}" -- \
		sh -c 'h=$1 h6=$2; shift 2; exec python3 "$0" kinds "$h" "$h6" "${BPFBOX_PROXY#*:}" "$@"' \
		"$CLIENT" "$NET_REMOTE" "$REMOTE6" "$@"
	RUNS=$((RUNS + 1))
	OUT=$T_TMP/out-$RUNS
	cp "$T_OUT" "$OUT"
}
CEILING=()

before=$(remote_counters)
REFUSED="sctp4 sctp6 sctp4-seqpacket sctp4-flags ping4 ping6 ping4-flags udplite4 udplite6 raw4 raw6 packet
	inet-seqpacket inet-rdm netlink-diag vsock alg rxrpc"
# shellcheck disable=SC2086
kinds "$T_TMP/default.json" $REFUSED tcp-flags udp-flags netlink-route mptcp4 mptcp6 mptcp-proxy
for c in $REFUSED; do
	assert_contains "$OUT" "^$c EPERM" "$c is refused at creation with EPERM"
done
assert_contains "$OUT" '^tcp-flags ok' "TCP with SOCK_NONBLOCK|SOCK_CLOEXEC opens"
assert_contains "$OUT" '^udp-flags ok' "UDP over IPv6 with type flags opens"
assert_contains "$OUT" '^netlink-route ok' "NETLINK_ROUTE opens (getaddrinfo, getifaddrs)"
assert_contains "$OUT" '^mptcp4 EPERM' "MPTCP to an unlearned IPv4 address: its connect is refused"
assert_contains "$OUT" '^mptcp6 EPERM' "MPTCP to an unlearned IPv6 address: its connect is refused"
assert_contains "$OUT" '^mptcp-proxy ok HTTP/1\.[01] 400' "MPTCP where TCP may go works: the sandbox's proxy (400 to a bad request)"
assert_eq "$before" "$(remote_counters)" "the remote namespace received nothing (IPv4 packets, ICMPv6 echos, SCTP)"

socket_event() { # socket_event NAME FAMILY TYPE PROTOCOL TRANSPORT
	assert_event "$1" '.event.action == "socket-create" and .bpfbox.socket.family == '"$2"' and
		.bpfbox.socket.type == '"$3"' and .bpfbox.socket.protocol == '"$4"' and
		.network.transport == "'"$5"'" and .process.name == "python3" and .rule.name == "builtin:socket-family"'
}
socket_event "SCTP's event names ipv4, stream, sctp" 2 1 132 sctp
socket_event "SCTP over IPv6: its event" 10 1 132 sctp
socket_event "SCTP seqpacket: its event" 2 5 132 sctp
socket_event "the ping socket's event names ipv4, dgram, icmp" 2 2 1 icmp
socket_event "the ICMPv6 ping socket's event" 10 2 58 icmpv6
socket_event "UDP-Lite's event" 2 2 136 udplite
assert_event "netlink sock_diag's event names the netlink protocol" \
	'.event.action == "socket-create" and .network.type == "netlink" and .bpfbox.socket.protocol == 4'
assert_event "vsock's event names the family" '.event.action == "socket-create" and .network.type == "vsock"'
assert_event "the message says family, type and protocol by name and number" \
	'.event.action == "socket-create" and (.message | test("family ipv4 \\(2\\) type stream \\(1\\) protocol sctp \\(132\\)"))'
assert_event "MPTCP's refused connect is an event naming the address" \
	'.event.action == "connect" and .destination.ip == "'"$NET_REMOTE"'" and .destination.port == 9080'

# The policy opts in: the same calls reach the servers, and the counters move.
before=$(remote_counters)
kinds "$T_TMP/optin.json" sctp4 sctp6 ping4 ping6 udplite4 raw4 packet
assert_contains "$OUT" '^sctp4 ok SSH-2.0-bpfbox-test-echo' "opted in, SCTP reaches the remote server"
assert_contains "$OUT" '^sctp6 ok SSH-2.0-bpfbox-test-echo' "opted in, SCTP over IPv6 too"
assert_contains "$OUT" '^ping4 ok reply type 0 ping4-payload' "opted in, an ICMP echo with its payload comes back"
assert_contains "$OUT" '^ping6 ok reply type 129 ping6-payload' "opted in, an ICMPv6 echo too"
assert_contains "$OUT" '^udplite4 EPERM' "opted in, UDP-Lite opens but its sendto is decided as UDP's (refused)"
assert_contains "$OUT" '^raw4 EPERM' "raw stays refused (not opted in)"
assert_contains "$OUT" '^packet EPERM' "packet stays refused (not opted in)"
read -r ip_before e6_before sctp_before <<<"$before"
read -r ip_after e6_after sctp_after <<<"$(remote_counters)"
assert_succeeds "the remote namespace counted the opted-in IPv4 packets" test "$ip_after" -gt "$ip_before"
assert_succeeds "and the ICMPv6 echo request" test "$e6_after" -gt "$e6_before"
assert_succeeds "and the SCTP packets" test "$sctp_after" -gt "$sctp_before"
assert_event "the opted-in UDP-Lite send is refused by the cgroup sendmsg program, with its event" \
	'.event.action == "sendmsg" and .destination.port == 9136'

# The ceiling narrows: the administrator's policy does not open SCTP (a user-space composition: one kernel).
if t_share 1; then
	policy "$T_TMP/admin.json" '"ping"'
	: >"$LOG"
	CEILING=(--ceiling "$T_TMP/admin.json")
	kinds "$T_TMP/optin.json" sctp4 ping4
	assert_contains "$OUT" '^sctp4 EPERM' "under a ceiling without sctp, the caller's sctp is refused"
	assert_contains "$OUT" '^ping4 ok reply' "and the ping both allow works"
	assert_contains "$OUT" 'allowSocketProtocols "sctp": not allowed by the administrator' "the cut is reported"
	socket_event "the ceiling's refusal is an event" 2 1 132 sctp
else
	t_skip "the ceiling narrows allowSocketProtocols" "user-space composition: it runs in $(t_share_where 1)"
fi
