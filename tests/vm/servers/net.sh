# shellcheck shell=bash
# Network fixtures for tests/vm/test_6*.sh (source after lib.sh; guest only).
#   net_remote_up           network namespace "bbremote" behind a veth pair:
#                           guest 10.200.0.1/24, remote 10.200.0.2/24
#   net_hosts NAME... IP    /etc/hosts lines (the guest's root is an overlay)
#   net_serve NS MODE ARGS  starts tests/vm/servers/serve.py (in netns NS, or
#                           "-" for the guest itself) and waits until it listens
#   net_dnsmasq LOG RECORD...  dnsmasq on 10.200.0.2:53 in bbremote logging every
#                           query to LOG (--host-record=NAME,ADDR... or --cname=...)
#   net_resolver_is IP      /etc/resolv.conf names only IP, /etc/hosts only
#                           localhost (both restored at exit; /etc/hosts is learned
#                           at launch, earlier tests leave names behind)
#   net_upstream_asked LOG NAME  dnsmasq's LOG shows a query for NAME
# Everything started is stopped and removed when the test file exits.

NET_SERVERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NET_PIDS=()
NET_REMOTE=10.200.0.2

net_cleanup() {
	local p
	for p in "${NET_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	[ -f "$T_TMP/resolv.conf.saved" ] && cp "$T_TMP/resolv.conf.saved" /etc/resolv.conf
	[ -f "$T_TMP/hosts.saved" ] && cp "$T_TMP/hosts.saved" /etc/hosts
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

net_dnsmasq() {
	local log=$1
	shift
	ip netns exec bbremote dnsmasq --conf-file=/dev/null --pid-file= --keep-in-foreground --no-resolv --no-hosts \
		--bind-interfaces --listen-address="$NET_REMOTE" --user=root --log-queries --log-facility="$log" \
		"$@" 2>>"$T_TMP/servers.log" &
	NET_PIDS+=($!)
	for _ in $(seq 100); do
		python3 "$NET_SERVERS/client.py" resolve udp "$NET_REMOTE" 53 dnsmasq.probe >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

net_resolver_is() {
	cp /etc/resolv.conf "$T_TMP/resolv.conf.saved" 2>/dev/null || : >"$T_TMP/resolv.conf.saved"
	cp /etc/hosts "$T_TMP/hosts.saved"
	echo "nameserver $1" >/etc/resolv.conf
	printf '127.0.0.1 localhost\n::1 localhost\n' >/etc/hosts
}

net_upstream_asked() {
	grep -q "query\[[A-Z]*\] $2 from" "$1"
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

# assert_event_by_command NAME JQ_CONDITION COMM: some event of $LOG satisfies
# the condition and names the sandboxed command itself: COMM, with the pid its
# sandbox's start event gives, a thread and a uid.
assert_event_by_command() {
	if jq -e -s --arg c "$3" '[.[] | select(.event.action == "sandbox-start")] as $s |
		any(.[]; ('"$2"') and (. as $e | .process.name == $c and (.process.user.id | type) == "string" and
		    .process.thread.id > 0 and
		    any($s[]; .bpfbox.sandbox.id == $e.bpfbox.sandbox.id and .process.pid == $e.process.pid)))' \
		"$LOG" >/dev/null 2>&1; then
		t_ok "$1"
	else
		t_fail "$1" "no event of $LOG satisfies $2 with the sandboxed $3's pid, thread and uid"
	fi
}
