#!/usr/bin/env bash
# Usage: tools/bench/report.sh SAMPLES RESULTS.json RESULTS.md
# Aggregates the "BENCH <test> <contender> <unit> <value>" lines of a
# benchmark run into min, median and max per test and contender, and the ratio
# of each median to the baseline's median of the same test (the contender
# named bare or direct): absolute numbers under QEMU TCG mean little, the
# ratio against a baseline measured in the same run is the result.
set -euo pipefail

[ $# -eq 3 ] || { sed -n '2p' "$0" | sed 's/^# //' >&2; exit 2; }
samples=$1 json=$2 md=$3

jq -R -n --arg date "$(date -u +%Y-%m-%dT%H:%MZ)" \
	--arg cpu "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" '
def median: sort | length as $n
	| if $n == 0 then null elif $n % 2 == 1 then .[($n - 1) / 2]
	  else (.[$n / 2 - 1] + .[$n / 2]) / 2 end;
def r3: . * 1000 | round / 1000;
[inputs] as $lines
# BENCHJSON <name> <json>: the result of another script, kept as it is.
| ([$lines[] | select(startswith("BENCHJSON ")) | capture("^BENCHJSON (?<k>[^ ]+) (?<v>.*)$")
   | { key: .k, value: (.v | fromjson? // .v) }] | from_entries) as $external
| [$lines[] | select(startswith("BENCH ")) | split(" ")
 | { test: .[1], contender: .[2], unit: .[3], value: (.[4:] | join(" ")) }] as $s
| ($s | map(select(.unit != "text" and .unit != "count" or .test != "meta"))) as $all
| [$s[] | select(.test == "meta")] as $meta
| [$all[] | select(.test != "meta" and .unit != "text")] as $num
| [$all[] | select(.test != "meta" and .unit == "text")] as $text
# Keep the order in which tests and contenders first appeared.
| ([$num[] | .test] | reduce .[] as $t ([]; if index([$t]) then . else . + [$t] end)) as $tests
| [ $tests[] as $t
    | [$num[] | select(.test == $t)] as $rows
    | ([$rows[] | .contender] | reduce .[] as $c ([]; if index([$c]) then . else . + [$c] end)) as $whos
    | [$rows[] | select(.contender == "bare" or .contender == "direct") | .value | tonumber] as $bv
    | ($bv | median) as $base | ($bv | min) as $bmin
    | $whos[] as $w
    | [$rows[] | select(.contender == $w) | .value | tonumber] as $v
    | { test: $t, contender: $w, unit: ([$rows[] | select(.contender == $w) | .unit][0]),
        n: ($v | length), min: ($v | min), median: ($v | median), max: ($v | max),
        ratio: (if $base and $base != 0 then (($v | median) / $base | r3) else null end),
        delta: (if $base then (($v | median) - $base | r3) else null end),
        # Best against best: for microbenchmarks on a shared machine the
        # minimum is the sample least disturbed by others.
        ratio_min: (if $bmin and $bmin != 0 then (($v | min) / $bmin | r3) else null end) } ]
| { generated: $date, machine: { cpu: $cpu, emulation: "QEMU TCG, 2 vCPUs" },
    run: ($meta | map({ key: .contender, value: .value }) | from_entries),
    results: .,
    external: $external,
    notes: ($text | map({ key: "\(.test)/\(.contender)", value: .value }) | from_entries) }
' <"$samples" >"$json"

jq -r '
def fmt: if . == null then "" elif (. | fabs) >= 100 then (. | round | tostring)
	 else (. * 100 | round / 100 | tostring) end;
"# bpfbox benchmark results",
"",
"Generated \(.generated) on \(.machine.cpu) under \(.machine.emulation), guest kernel \(.run.kernel // "?"), \(.run.repeat // "?") samples per contender.",
"Ratio: median against the median of the same test'"'"'s baseline (bare or direct); lower is better for times, higher for MB/s and req/s.",
"",
"| test | contender | unit | n | min | median | max | ratio | median - baseline | ratio of minima |",
"|---|---|---|---|---|---|---|---|---|---|",
(.results[] | "| \(.test) | \(.contender) | \(.unit) | \(.n) | \(.min | fmt) | \(.median | fmt) | \(.max | fmt) | \(.ratio | fmt) | \(.delta | fmt) | \(.ratio_min | fmt) |"),
"",
(if (.notes | length) > 0 then ("| note | value |", "|---|---|", (.notes | to_entries[] | "| \(.key) | \(.value) |"), "") else empty end),
(.external | to_entries[] | "Result of `\(.key)`:", "",
 "| key | value |", "|---|---|",
 (.value | paths(scalars) as $p | "| \($p | map(tostring) | join(".")) | \(getpath($p) | if type == "number" then fmt else tostring end) |"), "")
' "$json" >"$md"
