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

# sums FILE SANDBOX-ID: "reported lost denied events_lost lines" for one sandbox's lines.
sums() {
	jq -rn --arg id "$2" '
		[inputs | select(.bpfbox.sandbox.id == $id)] as $l
		| ($l | map(select((.event.type | index("denied")) and .event.action == "create") | .bpfbox.count) | add // 0) as $rep
		| ($l | map(select(.event.action == "sandbox-exit")) | first) as $exit
		| ($l | map(select(.event.action == "events-lost") | .bpfbox.lost) | add // 0) as $el
		| "\($rep) \($exit.bpfbox.counts.lost // -1) \($exit.bpfbox.counts.denied // -1) \($el) \($l | length)"' "$1"
}

# --- one sandbox, N distinct refusals
LOG=$T_TMP/flood.ndjson
t0=$(date +%s%N)
assert_succeeds "$N distinct refusals in one sandbox" \
	"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$FLOOD" "$T_TMP/ro" "$N"
t1=$(date +%s%N)
assert_contains "$T_OUT" "^refused $N of $N\$" "the command saw $N refusals"
id=$(jq -r 'select(.event.action == "sandbox-start") | .bpfbox.sandbox.id' "$LOG")
read -r reported lost denied events_lost lines < <(sums "$LOG" "$id")
echo "# $N refusals in $(((t1 - t0) / 1000000)) ms: $lines lines, bpfbox.count sum $reported, lost $lost"
assert_eq "$N" "$denied" "the kernel counted $N refusals (bpfbox.counts.denied)"
assert_eq "$N" "$((reported + lost))" "sum(bpfbox.count) + lost = $N exactly"
assert_eq "$lost" "$events_lost" "an events-lost line reports the lost count (or none was lost)"
assert_succeeds "no path appears on two unfolded lines (each refusal reported once)" \
	jq -ne '[inputs | select(.event.action == "create" and .bpfbox.count == 1) | .file.path]
		| length == (unique | length)' "$LOG"
assert_succeeds "every flood line passes jq -e ." sh -c "jq -e . '$LOG' >/dev/null"
# The Python validator takes minutes for 100,000 lines under TCG: every line
# that is not a create refusal, the first 2000 and every 50th of the rest.
awk 'NR <= 2000 || NR % 50 == 0 || !/"action":"create"/' "$LOG" >"$T_TMP/sample.ndjson"
assert_succeeds "flood lines validate against the schema ($(wc -l <"$T_TMP/sample.ndjson") sampled)" \
	"$PY" "$T_ROOT/tests/tools/validate-events.py" "$T_TMP/sample.ndjson"

