#!/usr/bin/env bash
# Proxy throughput and connection rate: bpfbox's sandbox proxy against a
# direct loopback connection and against tinyproxy, measured inside the test
# VM (the proxy only runs under `bpfbox exec`, which needs BPF-LSM).
#
#   tools/bench-proxy.sh [--kernel 6.1|6.12] [--size MIB] [--seconds S]
#   tools/bench-proxy.sh --in-vm ...     (what the VM runs; also usable there directly)
#
# Prints one JSON object on stdout (everything else goes to stderr):
#   throughput_mib_s  {direct, bpfbox_connect, bpfbox_http, tinyproxy_connect, tinyproxy_http}
#   connections_per_s {direct, bpfbox, tinyproxy}    (a fresh connection per request)
#   ratios            bpfbox / direct and bpfbox / tinyproxy for each
# Throughput is the best of three downloads of SIZE MiB; the client is curl.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kernel=6.1 size=256 seconds=5 in_vm=false
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--size) size=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--in-vm) in_vm=true ;;
	*) echo "usage: $0 [--kernel 6.1|6.12] [--size MIB] [--seconds S] [--in-vm]" >&2; exit 2 ;;
	esac
	shift
done

if ! $in_vm; then
	# The guest's console mixes everything; the result is the line tagged below.
	out=$(BPFBOX_BENCH_PROXY_TAG=1 "$root/tools/vm/run.sh" --kernel "$kernel" -- \
		"$root/tools/bench-proxy.sh" --in-vm --size "$size" --seconds "$seconds" | tee /dev/stderr)
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
	rm -rf "$tmp"
}
trap cleanup EXIT
SRC=127.0.0.1:18080
TP=127.0.0.1:18888
bytes=$((size * 1024 * 1024))

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

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "null" }'; }
result=$(printf '{"bench":"proxy","kernel":"%s","size_mib":%s,"seconds":%s,' "$(uname -r)" "$size" "$seconds")
result+=$(printf '"throughput_mib_s":{"direct":%s,"bpfbox_connect":%s,"bpfbox_http":%s,"tinyproxy_connect":%s,"tinyproxy_http":%s},' \
	"$direct" "$bc" "$bh" "$tp_connect" "$tp_http")
result+=$(printf '"connections_per_s":{"direct":%s,"bpfbox":%s,"tinyproxy":%s},' "$direct_rate" "$br" "$tp_rate")
result+=$(printf '"ratios":{"throughput_connect_vs_direct":%s,"throughput_http_vs_direct":%s,' \
	"$(ratio "$bc" "$direct")" "$(ratio "$bh" "$direct")")
result+=$(printf '"throughput_connect_vs_tinyproxy":%s,"throughput_http_vs_tinyproxy":%s,' \
	"$(ratio "$bc" "$tp_connect")" "$(ratio "$bh" "$tp_http")")
result+=$(printf '"connections_vs_direct":%s,"connections_vs_tinyproxy":%s}}' \
	"$(ratio "$br" "$direct_rate")" "$(ratio "$br" "$tp_rate")")
if [ -n "${BPFBOX_BENCH_PROXY_TAG:-}" ]; then
	echo "BENCH-PROXY-RESULT $result"
else
	echo "$result"
fi
