#!/usr/bin/env bash
# Folded repeats add up exactly, and several sandboxes appending to one log
# file at once never interleave their lines.
. "$(dirname "$0")/lib.sh"
# Its subject is the log writer in user space (folding, one write per line), not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 2

PY=/usr/bin/python3
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

# --- folded repeats: one path refused many times within the rate window
LOG2=$T_TMP/fold.ndjson
assert_fails "500 refusals of one path" "$BPFBOX" exec --policy "$P" --log-file "$LOG2" -- \
	sh -c "i=0; while [ \$i -lt 500 ]; do true > '$T_TMP/ro/same' 2>/dev/null; i=\$((i+1)); done; exit 1"
id=$(jq -r 'select(.event.action == "sandbox-start") | .bpfbox.sandbox.id' "$LOG2")
read -r reported lost denied events_lost lines < <(sums "$LOG2" "$id")
assert_eq 500 "$denied" "the kernel counted 500"
assert_eq 500 "$((reported + lost))" "folded counts add up to 500 exactly"
assert_succeeds "repeats were folded into few lines" test "$lines" -lt 50
assert_succeeds "a line carries a folded count (bpfbox.count > 1 or bpfbox.folded)" \
	jq -se 'any(.[]; .bpfbox.count > 1 or .bpfbox.folded == true)' "$LOG2"
assert_succeeds "fold lines validate against the schema" "$PY" "$T_ROOT/tests/tools/validate-events.py" "$LOG2"

# --- several sandboxes appending to one file
SHARED=$T_TMP/shared.ndjson
K=6 M=500
pids=()
for i in $(seq "$K"); do
	mkdir -p "$T_TMP/ro/$i"
	"$BPFBOX" exec --policy "$P" --log-file "$SHARED" -- "$FLOOD" "$T_TMP/ro/$i" "$M" >"$T_TMP/c$i.out" 2>&1 &
	pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
assert_eq 0 "$failed" "$K concurrent sandboxes all ran"
assert_succeeds "every line of the shared file passes jq -e . (no interleaving)" \
	sh -c "jq -e . '$SHARED' >/dev/null"
assert_succeeds "every shared line validates; each writer's bpfbox.seq increases" \
	"$PY" "$T_ROOT/tests/tools/validate-events.py" --check-seq "$SHARED"
ids=$(jq -r 'select(.event.action == "sandbox-start") | .bpfbox.sandbox.id' "$SHARED")
assert_eq "$K" "$(echo "$ids" | grep -c .)" "$K sandbox-start lines"
for id in $ids; do
	read -r reported lost denied events_lost lines < <(sums "$SHARED" "$id")
	assert_eq "$M $M" "$denied $((reported + lost))" "sandbox $id: $M refusals, all accounted for"
done
