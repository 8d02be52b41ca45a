#!/usr/bin/env bash
# Usage: proxy-round.sh CONNECT_TO ORIGIN
# One round of the proxy benchmark from one client environment: every test
# of tools/bench/guest.sh's proxy section, one after the other, so that a
# contender with a slow start (srt: seconds under TCG) starts once per round,
# not once per test. Prints "TEST UNIT bytes B requests R seconds S" per test.
set -euo pipefail

[ $# -eq 2 ] || { sed -n '2p' "$0" | sed 's/^# //' >&2; exit 2; }
hl=$(cd "$(dirname "$0")/../.." && pwd)/build/bench/httpload
# test, unit, answer size, clients, requests per client: 64 MiB in all for
# throughput; 100-byte answers, a connection each, for the request rate.
while read -r test unit size clients requests; do
	if out=$("$hl" get "$1" "$2" "$size" "$clients" "$requests"); then
		echo "$test $unit $out"
	else
		echo "proxy-round: $test failed" >&2
	fi
done <<TESTS
throughput-1-client MB/s $((16 << 20)) 1 4
throughput-32-clients MB/s $((2 << 20)) 32 1
requests-1-client req/s 100 1 50
requests-32-clients req/s 100 32 4
TESTS
