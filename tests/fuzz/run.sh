#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs each fuzz target for SECONDS from the unit-table seeds plus the corpus
# kept from earlier runs; a crash leaves its input in DIR/crashes and fails.
# usage: run.sh DIR SECONDS TARGET...
set -uo pipefail
dir=$1 seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir/seeds"
python3 "$here/seeds.py" "$dir/seeds" >/dev/null || exit 1
mkdir -p "$dir/crashes"
failed=()
for t in "$@"; do
	mkdir -p "$dir/corpus/$t"
	log="$dir/fuzz_$t.log"
	# -timeout: one input taking a second is a hang worth keeping.
	if "$dir/fuzzers/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-dict="$here/$t.dict" -artifact_prefix="$dir/crashes/$t-" -print_final_stats=1 \
		"$dir/corpus/$t" "$dir/seeds/$t" >"$log" 2>&1; then
		echo "fuzz $t: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | \
			grep -o '[0-9]*$') runs in ${seconds}s, corpus $(ls "$dir/corpus/$t" | wc -l), no crash"
	else
		echo "fuzz $t: FAILED (see $log)"
		grep -m 20 -E 'ERROR|invariant|runtime error|SUMMARY|Test unit written' "$log"
		failed+=("$t")
	fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failed: ${failed[*]}"; exit 1; }
