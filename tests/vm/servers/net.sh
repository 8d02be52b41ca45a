# shellcheck shell=bash
# Network fixtures for tests/vm/test_6*.sh (source after lib.sh; guest only).
#   net_remote_up           network namespace "bbremote" behind a veth pair:
#                           guest 10.200.0.1/24, remote 10.200.0.2/24
#   net_hosts NAME... IP    /etc/hosts lines (the guest's root is an overlay)
#   net_serve NS MODE ARGS  starts tests/vm/servers/serve.py (in netns NS, or
#                           "-" for the guest itself) and waits until it listens
# Everything started is stopped and removed when the test file exits.

NET_SERVERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NET_PIDS=()
NET_REMOTE=10.200.0.2

net_cleanup() {
	local p
	for p in "${NET_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	ip netns del bbremote 2>/dev/null
	ip link del bbveth0 2>/dev/null
	return 0
}

net_remote_up() {
	ip netns add bbremote &&
		ip link add bbveth0 type veth peer name bbveth1 &&
		ip link set bbveth1 netns bbremote &&
		ip addr add 10.200.0.1/24 dev bbveth0 &&
		ip link set bbveth0 up &&
		ip -n bbremote addr add "$NET_REMOTE/24" dev bbveth1 &&
		ip -n bbremote link set bbveth1 up &&
		ip -n bbremote link set lo up
}

net_hosts() {
	local ip=${!#} n
	for n in "${@:1:$#-1}"; do
		printf '%s %s\n' "$ip" "$n" >>/etc/hosts
	done
}

net_serve() {
	local ns=$1 fifo
	shift
	fifo=$(mktemp -u "$T_TMP/serve.XXXXXX")
	mkfifo "$fifo"
	if [ "$ns" = - ]; then
		python3 "$NET_SERVERS/serve.py" "$@" >"$fifo" 2>>"$T_TMP/servers.log" &
	else
		ip netns exec "$ns" python3 "$NET_SERVERS/serve.py" "$@" >"$fifo" 2>>"$T_TMP/servers.log" &
	fi
	NET_PIDS+=($!)
	# The first line is "ready" once the socket listens.
	timeout 60 head -n 1 "$fifo" | grep -q ready
}

# assert_event NAME JQ_CONDITION: some event of $LOG satisfies the condition
# (field order in a line does not matter). $T_OUT is left alone.
assert_event() {
	if jq -e -s "any(.[]; $2)" "$LOG" >/dev/null 2>&1; then
		t_ok "$1"
	else
		t_fail "$1" "no event of $LOG satisfies: $2"
	fi
}
