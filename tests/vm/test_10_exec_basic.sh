#!/usr/bin/env bash
# The walking skeleton end to end: doctor, a real command under bpfbox exec,
# a denyRead refusal with its JSON event, exit status passthrough, cleanup.
. "$(dirname "$0")/lib.sh"

P=$T_TMP/policy.json
LOG=$T_TMP/log.ndjson
mkdir -p "$T_TMP/secret" "$T_TMP/work"
echo classified >"$T_TMP/secret/key"
echo public >"$T_TMP/work/readme"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": {
    "denyRead": ["$T_TMP/secret"],
    "allowWrite": ["$T_TMP/work"],
    "denyWrite": []
  }
}
JSON

assert_succeeds "doctor passes every check in the VM" "$BPFBOX" doctor
assert_not_contains "$T_OUT" '^FAIL' "doctor reports no FAIL"
assert_succeeds "doctor --json says enforceable" "$BPFBOX" doctor --json
assert_contains "$T_OUT" '"enforceable":true'

assert_succeeds "a readable file is read" "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- cat "$T_TMP/work/readme"
assert_contains "$T_OUT" '^public$' "its content reaches stdout"

assert_status "a denyRead file is refused (cat exits 1)" 1 \
	"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- cat "$T_TMP/secret/key"
assert_contains "$T_OUT" 'Operation not permitted' "cat sees EPERM"
assert_not_contains "$T_OUT" classified "the secret does not leak"
assert_contains "$LOG" '"action":"open-read".*"outcome":"failure"' "the refusal is a JSON event"
assert_contains "$LOG" "\"path\":\"$T_TMP/secret/key\"" "the event names the path"
assert_contains "$LOG" "\"name\":\"denyRead:$T_TMP/secret\"" "the event names the rule"
assert_succeeds "every log line is JSON" bash -c "jq -e . '$LOG' >/dev/null"
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"

assert_status "the command's exit status passes through" 7 "$BPFBOX" exec --policy "$P" -- sh -c 'exit 7'
assert_status "death by signal gives 128+N" 143 "$BPFBOX" exec --policy "$P" -- sh -c 'kill -TERM $$'
assert_status "a missing command gives 127" 127 "$BPFBOX" exec --policy "$P" -- /nonexistent/cmd
assert_status "a non-executable file gives 126" 126 "$BPFBOX" exec --policy "$P" -- "$T_TMP/work/readme"
assert_status "a broken policy gives 125 and runs nothing" 125 \
	"$BPFBOX" exec --policy /nonexistent.json -- touch "$T_TMP/work/ran"
assert_succeeds "the command did not run" test ! -e "$T_TMP/work/ran"

assert_eq "" "$(ls /sys/fs/cgroup/bpfbox | grep '^bb-')" "no sandbox cgroup is left behind"
assert_eq "" "$(ls /tmp | grep '^bpfbox-')" "no sandbox TMPDIR is left behind"
