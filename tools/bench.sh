#!/usr/bin/env bash
# Usage: tools/bench.sh   (make bench runs it after building bpfbox)
#
# Measures bpfbox against a bare baseline and against bwrap and srt, all in
# one QEMU guest on one kernel (BENCH_KERNEL, default 6.1), because this host
# refuses BPF-LSM programs. Writes build/bench/results.md and results.json,
# plus the guest's raw console in build/bench/run.log.
# Knobs: BENCH_KERNEL, BENCH_MEM, BENCH_TIMEOUT, and BPFBOX_BENCH_* (see
# tools/bench/guest.sh) for fewer samples while developing.
set -euo pipefail

cd "$(dirname "$0")/.."
out=build/bench
kernel=${BENCH_KERNEL:-6.1}
say() { echo "bench: $*" >&2; }

# Bench-only packages come from Debian here rather than from install-deps.sh:
# make test does not need them. srt runs on bubblewrap, socat and ripgrep.
pkgs=(bubblewrap socat ripgrep tinyproxy)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	say "installing ${missing[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
mkdir -p "$out"
srt_version=0.0.81
srt_pkg=$out/srt/node_modules/@anthropic-ai/sandbox-runtime/package.json
if [ "$(jq -r .version "$srt_pkg" 2>/dev/null || true)" != "$srt_version" ]; then
	say "installing srt $srt_version from npm"
	npm install --silent --no-audit --no-fund --prefix "$out/srt" \
		"@anthropic-ai/sandbox-runtime@$srt_version" ||
		say "srt could not be installed; the run goes on without it"
fi

# A copy of the binary under test: a rebuild by someone else during the run
# must not change it under the guest.
cp build/bpfbox "$out/bpfbox"
for p in fileops timeit httpload; do
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror \
		"tools/bench/$p.c" -o "$out/$p" -lpthread
done

say "running in a QEMU TCG guest on kernel $kernel; this takes a few minutes"
# The console shows progress; the samples are kept for the report.
set +e
tools/vm/run.sh --kernel "$kernel" --mem "${BENCH_MEM:-2G}" --timeout "${BENCH_TIMEOUT:-3600}" \
	-- tools/bench/guest.sh 2>&1 | tee "$out/run.log" | grep -v '^BENCH'
rc=${PIPESTATUS[0]}
set -e
# The console may carry CRs; keep only the sample lines.
tr -d '\r' <"$out/run.log" | grep '^BENCH' >"$out/samples.txt" || true
if [ ! -s "$out/samples.txt" ]; then
	say "the guest produced no samples (see $out/run.log)"
	exit 1
fi
# What was measured: the commit, and whether the tree had local changes.
echo "BENCH meta source text $(git describe --always --dirty 2>/dev/null || echo unknown)" >>"$out/samples.txt"
tools/bench/report.sh "$out/samples.txt" "$out/results.json" "$out/results.md"
cat "$out/results.md"
say "wrote $out/results.md and $out/results.json"
exit "$rc"
