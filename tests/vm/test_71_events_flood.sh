#!/usr/bin/env bash
# Completeness under load: 100,000 distinct refusals in one sandbox are all
# accounted for exactly: reported one by one, folded into bpfbox.count, or
# counted as lost (bpfbox.counts.lost and an events-lost line).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
N=${BPFBOX_FLOOD_N:-100000}
P=$T_TMP/policy.json
FLOOD=$T_TMP/refusal-flood
mkdir -p "$T_TMP/work" "$T_TMP/ro"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$T_TMP/work"], "denyWrite": [] }
}
JSON
assert_succeeds "the flood helper builds" gcc -O2 -o "$FLOOD" "$T_ROOT/tests/tools/refusal-flood.c" ||
	t_skip_all "cannot build the flood helper"

# --- one sandbox, N distinct refusals
LOG=$T_TMP/flood.ndjson
t0=$(date +%s%N)
assert_succeeds "$N distinct refusals in one sandbox" \
	"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$FLOOD" "$T_TMP/ro" "$N"
t1=$(date +%s%N)
assert_contains "$T_OUT" "^refused $N of $N\$" "the command saw $N refusals"
# One jq pass (TCG is slow): every line must parse, and the sums come out.
# Prints "reported lost denied events_lost lines unique_paths unfolded_lines".
jq -rn '[inputs] as $l
	| ($l | map(select((.event.type | index("denied")) and .event.action == "create"))) as $r
	| ($l | map(select(.event.action == "sandbox-exit")) | first) as $exit
	| ($r | map(select(.bpfbox.count == 1 and (.bpfbox.folded | not)) | .file.path)) as $unfolded
	| [($r | map(.bpfbox.count) | add // 0), ($exit.bpfbox.counts.lost // -1),
	   ($exit.bpfbox.counts.denied // -1),
	   ($l | map(select(.event.action == "events-lost") | .bpfbox.lost) | add // 0),
	   ($l | length), ($unfolded | unique | length), ($unfolded | length)] | map(tostring) | join(" ")' \
	"$LOG" >"$T_TMP/sums"
assert_eq 0 "$?" "every flood line parses as JSON (jq)"
read -r reported lost denied events_lost lines unique unfolded <"$T_TMP/sums"
echo "# $N refusals in $(((t1 - t0) / 1000000)) ms: $lines lines, bpfbox.count sum $reported, lost $lost"
assert_eq "$N" "$denied" "the kernel counted $N refusals (bpfbox.counts.denied)"
assert_eq "$N" "$((reported + lost))" "sum(bpfbox.count) + lost = $N exactly"
assert_eq "$lost" "$events_lost" "an events-lost line reports the lost count (or none was lost)"
assert_eq "$unfolded" "$unique" "no path appears on two unfolded lines (each refusal reported once)"
# The Python validator takes minutes for 100,000 lines under TCG: every line
# that is not a create refusal, the first 1000 and every 100th of the rest.
awk 'NR <= 1000 || NR % 100 == 0 || !/"action":"create"/' "$LOG" >"$T_TMP/sample.ndjson"
assert_succeeds "flood lines validate against the schema ($(wc -l <"$T_TMP/sample.ndjson") sampled)" \
	"$PY" "$T_ROOT/tests/tools/validate-events.py" "$T_TMP/sample.ndjson"

