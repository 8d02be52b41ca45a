#!/usr/bin/env bash
# Where lines go and which: stderr by default (JSON when not a terminal,
# text on one, JSON when asked), --log-fd, --log-level filtering, and the
# levels of start, exit and refusals.
. "$(dirname "$0")/lib.sh"
# Its subject is where the log writer sends lines, not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 2

PY=/usr/bin/python3
P=$T_TMP/policy.json
mkdir -p "$T_TMP/work" "$T_TMP/ro"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$T_TMP/work"], "denyWrite": [] }
}
JSON
deny="echo x > '$T_TMP/ro/f'"

# --- stderr, not a terminal: JSON
"$BPFBOX" exec --policy "$P" -- sh -c "{ $deny; } 2>/dev/null; exit 0" >"$T_TMP/out" 2>"$T_TMP/err"
assert_eq 0 "$?" "exit status 0 with a refusal inside"
grep -v '^sh: ' "$T_TMP/err" >"$T_TMP/err.json"
assert_succeeds "stderr lines are JSON by default when not a terminal" sh -c "jq -e . '$T_TMP/err.json' >/dev/null"
assert_succeeds "they validate against the schema" "$PY" "$T_ROOT/tests/tools/validate-events.py" "$T_TMP/err.json"
assert_eq "info warn info" "$(jq -r .log.level "$T_TMP/err.json" | tr '\n' ' ' | sed 's/ $//')" \
	"levels: start INFO, refusal WARN, exit 0 INFO"

# --- stderr on a terminal: text, or JSON when asked
# The command's own message goes elsewhere: two writers on one terminal interleave.
script -qec "'$BPFBOX' exec --policy '$P' -- sh -c \"exec 2>/dev/null; $deny\"" /dev/null | tr -d '\r' >"$T_TMP/tty"
assert_contains "$T_TMP/tty" '^bpfbox: INFO sandbox started: sh -c ' "a terminal gets text: start"
assert_contains "$T_TMP/tty" "^bpfbox: WARN denied create of $T_TMP/ro/f \[rule [^]]+\] \[pid [0-9]+ sh\]\$" \
	"a terminal gets text: the refusal with rule and pid"
assert_contains "$T_TMP/tty" '^bpfbox: ERROR sandbox exited with status [12] after [0-9.]+ s \(1 refusal\)( \[pid [0-9]+\])?$' \
	"a terminal gets text: non-zero exit at ERROR"
assert_not_contains "$T_TMP/tty" '^\{' "no JSON on the terminal"
script -qec "'$BPFBOX' exec --log-format json --policy '$P' -- true" /dev/null | tr -d '\r' >"$T_TMP/tty2"
assert_succeeds "--log-format json on a terminal writes JSON" sh -c "jq -e . '$T_TMP/tty2' >/dev/null"

# --- --log-fd
"$BPFBOX" exec --policy "$P" --log-fd 7 -- sh -c "$deny" 7>"$T_TMP/fd.ndjson" 2>"$T_TMP/fd.err"
assert_eq 3 "$(wc -l <"$T_TMP/fd.ndjson")" "--log-fd 7 gets start, refusal and exit"
assert_not_contains "$T_TMP/fd.err" '"event"' "nothing JSON on stderr then"
assert_succeeds "--log-fd lines validate" "$PY" "$T_ROOT/tests/tools/validate-events.py" "$T_TMP/fd.ndjson"
assert_succeeds "the sandboxed command does not inherit the log fd" \
	"$BPFBOX" exec --policy "$P" --log-fd 7 -- sh -c 'test ! -e /proc/self/fd/7' 7>>"$T_TMP/fd.ndjson"

# --- --log-level
L=$T_TMP/level.ndjson
"$BPFBOX" exec --policy "$P" --log-file "$L" --log-level warn -- sh -c "$deny; exit 0"
assert_eq "warn" "$(jq -r .log.level "$L" | sort -u | tr -d '\n')" "--log-level warn drops INFO start and exit"
: >"$L"
"$BPFBOX" exec --policy "$P" --log-file "$L" --log-level error -- sh -c "$deny; exit 4"
assert_eq "sandbox-exit" "$(jq -r .event.action "$L" | tr -d '\n')" "--log-level error keeps only the failed exit"
assert_succeeds "which still counts the filtered refusal" jq -e '.bpfbox.counts.denied == 1 and .bpfbox.counts.warnings == 1' "$L"
assert_status "a bad --log-level is refused" 125 "$BPFBOX" exec --policy "$P" --log-level loud -- true
