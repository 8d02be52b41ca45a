#!/usr/bin/env bash
# Usage: tests/check-units.sh [BUILD]
#
# `systemd-analyze verify` on tools/systemd/bpfbox.{socket,service} as they would be
# installed: in a scratch root holding the host's own units, /bin/kill and BUILD/bpfbox as
# /usr/bin/bpfbox (verify checks that every Exec*= program exists). Skipped, with a
# message, where systemd-analyze is not installed. Run by `make test` (make units-check).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
if ! command -v systemd-analyze >/dev/null; then
	echo "check-units: SKIP: systemd-analyze is not installed (apt-get install systemd)"
	exit 0
fi
[ -x "$build/bpfbox" ] || { echo "check-units: $build/bpfbox missing (make all)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/usr/bin" "$tmp/bin" "$tmp/lib/systemd"
cp -a /lib/systemd/system "$tmp/lib/systemd/"
cp "$build/bpfbox" "$tmp/usr/bin/bpfbox"
cp "$(type -P kill)" "$tmp/bin/kill"
cp "$root/tools/systemd/bpfbox.socket" "$root/tools/systemd/bpfbox.service" "$tmp/lib/systemd/system/"
# verify prints its findings (warnings included) on stderr; any finding is a failure.
if ! out=$(systemd-analyze verify --man=no --root="$tmp" \
	/lib/systemd/system/bpfbox.socket /lib/systemd/system/bpfbox.service 2>&1) || [ -n "$out" ]; then
	echo "check-units: systemd-analyze verify rejects the units:"
	printf '%s\n' "$out"
	exit 1
fi
echo "check-units: systemd-analyze verify accepts bpfbox.socket and bpfbox.service"
