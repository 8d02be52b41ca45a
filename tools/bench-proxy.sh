#!/usr/bin/env bash
# Proxy throughput and connection rate: bpfbox's sandbox proxy against a
# direct loopback connection and against tinyproxy, measured inside the test
# VM (the proxy only runs under `bpfbox exec`, which needs BPF-LSM).
#
#   tools/bench-proxy.sh [--kernel 6.1|6.12] [--size MIB] [--seconds S] [--only transparent|tls]
#   tools/bench-proxy.sh --in-vm ...     (what the VM runs; also usable there directly)
#
# Prints one JSON object on stdout (everything else goes to stderr):
#   throughput_mib_s  {direct, bpfbox_connect, bpfbox_http, tinyproxy_connect, tinyproxy_http}
#   connections_per_s {direct, bpfbox, tinyproxy}    (a fresh connection per request)
#   ratios            bpfbox / direct and bpfbox / tinyproxy for each
#   transparent       the transparent path against a server in a network namespace
#                     (the path needs an address the sandbox learned, never loopback):
#                     throughput_mib_s {direct, explicit_http, transparent_http},
#                     connections_per_s {direct, explicit, transparent},
#                     dns_answer_ms {upstream, sandbox, sandbox_cached} (dnsmasq asked
#                     directly; through the sandbox's resolver, each query asked of
#                     dnsmasq; the same for a name with a TTL, answered from the
#                     resolver's cache after the first), with ratios
#   tls               TLS termination against the same HTTPS tunnelled:
#                     throughput_mib_s {tunnelled, terminated},
#                     handshakes_per_s {tunnelled_1, terminated_1, tunnelled_32,
#                     terminated_32} (a fresh CONNECT and handshake per request), ratios
# Throughput is the best of three downloads of SIZE MiB; the client is curl.
# --only transparent runs that part alone (the reduced run in docs/benchmarks.md);
# --only tls runs the TLS termination rows alone (terminated against tunnelled
# HTTPS: throughput, handshakes per second with 1 and 32 clients).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kernel=6.1 size=256 seconds=5 in_vm=false only=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--size) size=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--in-vm) in_vm=true ;;
	--only) only=$2; shift ;;
	*) echo "usage: $0 [--kernel 6.1|6.12] [--size MIB] [--seconds S] [--only transparent|tls] [--in-vm]" >&2; exit 2 ;;
	esac
	shift
done

if ! $in_vm; then
	# The guest's console mixes everything; the result is the line tagged below.
	out=$(BPFBOX_BENCH_PROXY_TAG=1 "$root/tools/vm/run.sh" --kernel "$kernel" -- \
		"$root/tools/bench-proxy.sh" --in-vm --size "$size" --seconds "$seconds" ${only:+--only "$only"} |
		tee /dev/stderr)
	line=$(printf '%s\n' "$out" | tr -d '\r' | sed -n 's/^BENCH-PROXY-RESULT //p' | tail -n 1)
	[ -n "$line" ] || { echo "bench-proxy: no result from the VM" >&2; exit 1; }
	printf '%s\n' "$line"
	exit 0
fi

bpfbox=${BPFBOX:-$root/build/bpfbox}
helper=$root/tools/bench-proxy.py
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	ip netns del bbbench 2>/dev/null || true
	ip link del bbbveth0 2>/dev/null || true
	[ -f "$tmp/resolv.conf" ] && cp "$tmp/resolv.conf" /etc/resolv.conf
	[ -f "$tmp/hosts" ] && cp "$tmp/hosts" /etc/hosts
	rm -rf "$tmp"
}
trap cleanup EXIT
SRC=127.0.0.1:18080
TP=127.0.0.1:18888
bytes=$((size * 1024 * 1024))

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "null" }'; }

# The transparent path: a source in a network namespace ("the internet"),
# found by a name /etc/hosts gives (learned at launch), and dnsmasq there as
# the upstream resolver. Prints the "transparent" JSON object (run it with
# stdout to a file, not in $(...): the servers it starts belong to cleanup).
transparent() {
	local rsrc=10.201.0.2:18080 tp=$tmp/tpolicy.json d dx dt rd rx rt qu qs qc
	ip netns add bbbench && ip link add bbbveth0 type veth peer name bbbveth1 &&
		ip link set bbbveth1 netns bbbench && ip addr add 10.201.0.1/24 dev bbbveth0 &&
		ip link set bbbveth0 up && ip -n bbbench addr add 10.201.0.2/24 dev bbbveth1 &&
		ip -n bbbench link set bbbveth1 up && ip -n bbbench link set lo up || return 1
	ip netns exec bbbench python3 "$helper" serve 18080 10.201.0.2 >"$tmp/rsrc.out" 2>>"$tmp/err" &
	pids+=($!)
	ip netns exec bbbench dnsmasq --conf-file=/dev/null --pid-file= --keep-in-foreground --no-resolv --no-hosts \
		--bind-interfaces --listen-address=10.201.0.2 --user=root --host-record=bench.test,10.201.0.2 \
		--host-record=cached.bench.test,10.201.0.2,3600 \
		>/dev/null 2>>"$tmp/err" &
	pids+=($!)
	for _ in $(seq 300); do
		grep -q ready "$tmp/rsrc.out" && python3 "$helper" dns 10.201.0.2 bench.test 1 >/dev/null 2>&1 && break
		sleep 0.1
	done
	cp /etc/resolv.conf "$tmp/resolv.conf" && cp /etc/hosts "$tmp/hosts"
	echo "nameserver 10.201.0.2" >/etc/resolv.conf
	echo "10.201.0.2 bench.test" >>/etc/hosts
	cat >"$tp" <<JSON
{ "network": { "allowedDomains": ["bench.test:18080", "cached.bench.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
	tboxed() { "$bpfbox" exec --policy "$tp" --log-file "$tmp/tlog" -- bash -c "$1" bench "${@:2}"; }
	echo "bench-proxy: transparent" >&2
	d=$(best_of fetch --noproxy '*' "http://bench.test:18080/$bytes")
	# shellcheck disable=SC2016 # expanded in the sandbox
	dx=$(best_of tboxed 'curl -sS -o /dev/null -w "%{speed_download}" --max-time 120 -x "http://$BPFBOX_PROXY" "$1"' \
		"http://bench.test:18080/$bytes")
	dt=$(best_of tboxed 'curl -sS -o /dev/null -w "%{speed_download}" --max-time 120 --noproxy "*" "$1"' \
		"http://bench.test:18080/$bytes")
	# By address: the guest outside a sandbox has no resolver of its own to answer bench.test fast.
	rd=$(python3 "$helper" rate "http://10.201.0.2:18080/16" "$seconds")
	# shellcheck disable=SC2016
	rx=$(tboxed 'python3 "$1" rate "$2" "$3" "$BPFBOX_PROXY"' "$helper" "http://bench.test:18080/16" "$seconds")
	rt=$(tboxed 'python3 "$1" rate "$2" "$3"' "$helper" "http://bench.test:18080/16" "$seconds")
	qu=$(python3 "$helper" dns 10.201.0.2 bench.test 200)
	# The same query from inside: the kernel sends it to the sandbox's resolver, which asks dnsmasq.
	# dnsmasq gives its host-records TTL 0, which the resolver never caches: each of these is asked of it.
	qs=$(tboxed 'python3 "$1" dns 10.201.0.2 bench.test 200' "$helper")
	# A name with a TTL: the first query is asked of dnsmasq, the other 199 come from the resolver's cache.
	qc=$(tboxed 'python3 "$1" dns 10.201.0.2 cached.bench.test 200' "$helper")
	printf '{"throughput_mib_s":{"direct":%s,"explicit_http":%s,"transparent_http":%s},' "$d" "$dx" "$dt"
	printf '"connections_per_s":{"direct":%s,"explicit":%s,"transparent":%s},' "$rd" "$rx" "$rt"
	printf '"dns_answer_ms":{"upstream":%s,"sandbox":%s,"sandbox_cached":%s},' "$qu" "$qs" "$qc"
	printf '"ratios":{"throughput_transparent_vs_direct":%s,"throughput_transparent_vs_explicit":%s,' \
		"$(ratio "$dt" "$d")" "$(ratio "$dt" "$dx")"
	printf '"connections_transparent_vs_direct":%s,"connections_transparent_vs_explicit":%s,' \
		"$(ratio "$rt" "$rd")" "$(ratio "$rt" "$rx")"
	printf '"dns_sandbox_vs_upstream":%s,"dns_cached_vs_upstream":%s}}' "$(ratio "$qs" "$qu")" "$(ratio "$qc" "$qu")"
}

# TLS termination (network.tlsTerminate) against the same HTTPS source tunnelled:
# an HTTPS source on loopback with a certificate for 127.0.0.1 from a throwaway
# CA; the tunnelled client trusts that CA, the terminated one the sandbox's
# bundle (the proxy trusts the CA through extraCaCertPaths). Prints the "tls"
# JSON object.
tls_rows() {
	local src=127.0.0.1:18443 d=$tmp/tls tt tm h1 m1 h32 m32
	mkdir -p "$d"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=bench-ca \
		-keyout "$d/ca.key" -out "$d/ca.pem" 2>>"$tmp/err" &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
			-keyout "$d/srv.key" -out "$d/srv.csr" 2>>"$tmp/err" &&
		printf 'subjectAltName=IP:127.0.0.1\n' >"$d/ext.cnf" &&
		openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
			-extfile "$d/ext.cnf" -out "$d/srv.pem" 2>>"$tmp/err" || return 1
	python3 "$helper" serve-tls "${src#*:}" "$d/srv.pem" "$d/srv.key" >"$tmp/tlssrc.out" 2>>"$tmp/err" &
	pids+=($!)
	for _ in $(seq 300); do
		grep -q ready "$tmp/tlssrc.out" && break
		sleep 0.1
	done
	cat >"$d/tunnel.json" <<JSON
{ "network": { "allowedDomains": ["$src"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
	cat >"$d/term.json" <<JSON
{ "network": { "allowedDomains": ["$src"], "deniedDomains": [],
               "tlsTerminate": { "extraCaCertPaths": ["$d/ca.pem"] } },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
	# NO_PROXY names loopback, where the source is: the client must still use the proxy.
	pboxed() {
		"$bpfbox" exec --policy "$1" --log-file "$tmp/tlslog" -- \
			env -u NO_PROXY -u no_proxy bash -c "$2" bench "${@:3}"
	}
	tunnel() { pboxed "$d/tunnel.json" "$@"; }
	term() { pboxed "$d/term.json" "$@"; }
	echo "bench-proxy: tls" >&2
	# shellcheck disable=SC2016 # expanded in the sandbox
	tt=$(best_of tunnel 'curl -sS -o /dev/null -w "%{speed_download}" --max-time 120 --cacert "$2" -x "http://$BPFBOX_PROXY" "$1"' \
		"https://$src/$bytes" "$d/ca.pem")
	# shellcheck disable=SC2016
	tm=$(best_of term 'curl -sS -o /dev/null -w "%{speed_download}" --max-time 120 -x "http://$BPFBOX_PROXY" "$1"' \
		"https://$src/$bytes")
	# shellcheck disable=SC2016
	h1=$(tunnel 'python3 "$1" rate-tls "$2" "$3" "$BPFBOX_PROXY" "$4" 1' "$helper" "https://$src/16" "$seconds" "$d/ca.pem")
	# shellcheck disable=SC2016
	m1=$(term 'python3 "$1" rate-tls "$2" "$3" "$BPFBOX_PROXY" "$SSL_CERT_FILE" 1' "$helper" "https://$src/16" "$seconds")
	# shellcheck disable=SC2016
	h32=$(tunnel 'python3 "$1" rate-tls "$2" "$3" "$BPFBOX_PROXY" "$4" 32' "$helper" "https://$src/16" "$seconds" "$d/ca.pem")
	# shellcheck disable=SC2016
	m32=$(term 'python3 "$1" rate-tls "$2" "$3" "$BPFBOX_PROXY" "$SSL_CERT_FILE" 32' "$helper" "https://$src/16" "$seconds")
	printf '{"throughput_mib_s":{"tunnelled":%s,"terminated":%s},' "$tt" "$tm"
	printf '"handshakes_per_s":{"tunnelled_1":%s,"terminated_1":%s,"tunnelled_32":%s,"terminated_32":%s},' \
		"${h1:-null}" "${m1:-null}" "${h32:-null}" "${m32:-null}"
	printf '"ratios":{"throughput_terminated_vs_tunnelled":%s,"handshakes_1_terminated_vs_tunnelled":%s,' \
		"$(ratio "$tm" "$tt")" "$(ratio "${m1:-0}" "${h1:-0}")"
	printf '"handshakes_32_terminated_vs_tunnelled":%s}}' "$(ratio "${m32:-0}" "${h32:-0}")"
}

# best_of CMD...: the highest of three speed_download values (bytes/s) printed by curl.
best_of() {
	local best=0 v
	for _ in 1 2 3; do
		v=$("$@" 2>>"$tmp/err" || echo 0)
		v=${v%%.*}
		[ "$v" -gt "$best" ] && best=$v
	done
	awk -v b="$best" 'BEGIN { printf "%.1f", b / 1048576 }'
}
fetch() { curl -sS -o /dev/null -w '%{speed_download}' --max-time 120 "$@"; }

emit() {
	if [ -n "${BPFBOX_BENCH_PROXY_TAG:-}" ]; then
		echo "BENCH-PROXY-RESULT $1"
	else
		echo "$1"
	fi
}

if [ "$only" = tls ]; then
	tls_rows >"$tmp/tls.json" || { echo "bench-proxy: the TLS setup failed: $(tail -n 3 "$tmp/err" 2>/dev/null)" >&2; exit 1; }
	emit "$(printf '{"bench":"proxy","kernel":"%s","size_mib":%s,"seconds":%s,"reduced":true,"tls":%s}' \
		"$(uname -r)" "$size" "$seconds" "$(cat "$tmp/tls.json")")"
	exit 0
fi
if [ "$only" = transparent ]; then
	transparent >"$tmp/t.json" || { echo "bench-proxy: the transparent setup failed: $(tail -n 3 "$tmp/err" 2>/dev/null)" >&2; exit 1; }
	emit "$(printf '{"bench":"proxy","kernel":"%s","size_mib":%s,"seconds":%s,"reduced":true,"transparent":%s}' \
		"$(uname -r)" "$size" "$seconds" "$(cat "$tmp/t.json")")"
	exit 0
fi

python3 "$helper" serve "${SRC#*:}" >"$tmp/src.out" &
pids+=($!)
cat >"$tmp/tinyproxy.conf" <<CONF
Port ${TP#*:}
Listen 127.0.0.1
Timeout 60
MaxClients 256
Allow 127.0.0.1
DisableViaHeader Yes
LogLevel Critical
PidFile "$tmp/tinyproxy.pid"
CONF
tinyproxy -d -c "$tmp/tinyproxy.conf" >"$tmp/tinyproxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do
	grep -q ready "$tmp/src.out" && ss -ltn | grep -q ":${TP#*:} " && break
	sleep 0.1
done


echo "bench-proxy: direct" >&2
direct=$(best_of fetch --noproxy '*' "http://$SRC/$bytes")
direct_rate=$(python3 "$helper" rate "http://$SRC/16" "$seconds")
echo "bench-proxy: tinyproxy" >&2
tp_connect=$(best_of fetch -p -x "http://$TP" "http://$SRC/$bytes")
tp_http=$(best_of fetch -x "http://$TP" "http://$SRC/$bytes")
tp_rate=$(python3 "$helper" rate "http://$SRC/16" "$seconds" "$TP")

echo "bench-proxy: bpfbox" >&2
cat >"$tmp/policy.json" <<JSON
{ "network": { "allowedDomains": ["$SRC"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
# Each run is its own sandbox, its client inside; the proxy is $BPFBOX_PROXY.
# The source on loopback is reachable because the policy allows it as a
# literal with its port (the address guard refuses loopback otherwise).
boxed() {
	"$bpfbox" exec --policy "$tmp/policy.json" --log-file "$tmp/log" -- \
		env -u NO_PROXY -u no_proxy bash -c "$1" bench "${@:2}"
}
# shellcheck disable=SC2016 # expanded in the sandbox
bc=$(best_of boxed 'curl -sS -o /dev/null -w "%{speed_download}" --max-time 120 -p -x "http://$BPFBOX_PROXY" "$1"' \
	"http://$SRC/$bytes")
# shellcheck disable=SC2016
bh=$(best_of boxed 'curl -sS -o /dev/null -w "%{speed_download}" --max-time 120 -x "http://$BPFBOX_PROXY" "$1"' \
	"http://$SRC/$bytes")
# shellcheck disable=SC2016
br=$(boxed 'python3 "$1" rate "$2" "$3" "$BPFBOX_PROXY"' "$helper" "http://$SRC/16" "$seconds")

result=$(printf '{"bench":"proxy","kernel":"%s","size_mib":%s,"seconds":%s,' "$(uname -r)" "$size" "$seconds")
result+=$(printf '"throughput_mib_s":{"direct":%s,"bpfbox_connect":%s,"bpfbox_http":%s,"tinyproxy_connect":%s,"tinyproxy_http":%s},' \
	"$direct" "$bc" "$bh" "$tp_connect" "$tp_http")
result+=$(printf '"connections_per_s":{"direct":%s,"bpfbox":%s,"tinyproxy":%s},' "$direct_rate" "$br" "$tp_rate")
result+=$(printf '"ratios":{"throughput_connect_vs_direct":%s,"throughput_http_vs_direct":%s,' \
	"$(ratio "$bc" "$direct")" "$(ratio "$bh" "$direct")")
result+=$(printf '"throughput_connect_vs_tinyproxy":%s,"throughput_http_vs_tinyproxy":%s,' \
	"$(ratio "$bc" "$tp_connect")" "$(ratio "$bh" "$tp_http")")
result+=$(printf '"connections_vs_direct":%s,"connections_vs_tinyproxy":%s},' \
	"$(ratio "$br" "$direct_rate")" "$(ratio "$br" "$tp_rate")")
transparent >"$tmp/t.json" || echo null >"$tmp/t.json"
result+=$(printf '"transparent":%s,' "$(cat "$tmp/t.json")")
tls_rows >"$tmp/tls.json" || echo null >"$tmp/tls.json"
result+=$(printf '"tls":%s}' "$(cat "$tmp/tls.json")")
emit "$result"
