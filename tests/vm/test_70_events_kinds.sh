#!/usr/bin/env bash
# Every kind of line bpfbox writes, from real runs: file, process, network,
# Unix-socket refusals, proxy decisions, lifecycle, exec-failed,
# setup-failed, audit mode and ignoreViolations. Each line must validate
# against schema/events.schema.json and pass `jq -e .`.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
P=$T_TMP/policy.json
LOG=$T_TMP/all.ndjson
mkdir -p "$T_TMP/secret" "$T_TMP/work" "$T_TMP/ro"
echo classified >"$T_TMP/secret/key"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": ["localhost"], "deniedDomains": [] },
  "filesystem": {
    "denyRead": ["$T_TMP/secret"],
    "allowWrite": ["$T_TMP/work"],
    "denyWrite": []
  },
  "ignoreViolations": { "*": ["ignored-marker"] }
}
JSON

# has_line NAME JQ-CONDITION [FILE]: some line of FILE (default $LOG) satisfies it.
has_line() {
	assert_succeeds "$1" jq -se "any(.[]; $2)" "${3:-$LOG}"
}
# no_line NAME JQ-CONDITION [FILE]
no_line() {
	assert_succeeds "$1" jq -se "all(.[]; ($2) | not)" "${3:-$LOG}"
}
run() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" "$@"; }

# --- file refusals
assert_status "reading a denyRead file fails" 1 run -- cat "$T_TMP/secret/key"
has_line "open-read refusal: path, rule, pid, WARN, failure, message" \
	".event.action == \"open-read\" and .file.path == \"$T_TMP/secret/key\" and
	 .rule.name == \"denyRead:$T_TMP/secret\" and .log.level == \"warn\" and
	 .event.outcome == \"failure\" and (.event.type | index(\"denied\")) and
	 .process.name == \"cat\" and (.process.pid > 0) and .bpfbox.count == 1 and
	 .message == \"denied open-read of $T_TMP/secret/key\""
assert_fails "creating a file outside allowWrite fails" run -- sh -c "echo x > '$T_TMP/ro/new'"
assert_succeeds "the file was not created" test ! -e "$T_TMP/ro/new"
has_line "create refusal is a file creation" \
	".event.action == \"create\" and .file.path == \"$T_TMP/ro/new\" and
	 .event.type == [\"creation\", \"denied\"] and .event.category == [\"file\"]"

# --- process refusals
assert_fails "mount is refused" run -- mount -t tmpfs none "$T_TMP/work"
has_line "mount refusal" '.event.action == "mount" and .event.category == ["process"] and .log.level == "warn"'
# Yama (scope 1) would refuse first, before bpfbox's hook sees the access.
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo)
[ -n "$scope" ] && echo 0 >/proc/sys/kernel/yama/ptrace_scope
# The target has no capabilities either: otherwise the capability LSM, which
# runs first, refuses a capless prober and bpfbox's hook never sees it.
setpriv --bounding-set=-all sleep 120 &
outsider=$!
# Until it is sleep: setpriv itself, still capable, would be refused by the capability LSM first.
for _ in $(seq 100); do
	[ "$(cat "/proc/$outsider/comm" 2>/dev/null)" = sleep ] && break
	sleep 0.05
done
assert_fails "reading the environ of a process outside the sandbox is refused" \
	run -- cat "/proc/$outsider/environ"
has_line "ptrace refusal names the target pid" \
	".event.action == \"ptrace\" and .bpfbox.target.pid == $outsider and
	 .message == \"denied ptrace of pid $outsider outside the sandbox\""
kill "$outsider" 2>/dev/null
[ -n "$scope" ] && echo "$scope" >/proc/sys/kernel/yama/ptrace_scope
assert_fails "a user namespace is refused" run -- unshare -U true
has_line "userns-create refusal" '.event.action == "userns-create"'
BPF_CALL='import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); r=l.syscall(321,0,None,0); sys.exit(0 if r>=0 else ctypes.get_errno())'
assert_fails "bpf() is refused" run -- "$PY" -c "$BPF_CALL"
# Before 6.5 the kernel refused unprivileged bpf() itself, before the LSM hook ran.
if [ "$(printf '%s\n' "$(uname -r)" 6.5 | sort -V | head -1)" = 6.5 ]; then
	has_line "bpf refusal names the command" '.event.action == "bpf" and .bpfbox.bpf.cmd == 0'
else
	t_skip "bpf refusal names the command" "kernel $(uname -r) refuses unprivileged bpf() before the LSM hook"
fi

# --- network refusals
assert_fails "a direct connect to 1.2.3.4 is refused" run -- curl -s -m 5 --noproxy '*' http://1.2.3.4/
has_line "connect refusal names the destination" \
	'.event.action == "connect" and .destination.address == "1.2.3.4" and .destination.port == 80 and
	 .network.transport == "tcp" and .message == "denied connect to 1.2.3.4:80/tcp"'

# --- Unix socket refusals
SOCK=$T_TMP/srv.sock
"$PY" -c "import socket,time; s=socket.socket(socket.AF_UNIX); s.bind('$SOCK'); s.listen(); time.sleep(60)" &
srv=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
assert_fails "connecting to a Unix socket outside the policy is refused" \
	run -- "$PY" -c "import socket; socket.socket(socket.AF_UNIX).connect('$SOCK')"
kill "$srv" 2>/dev/null
has_line "unix-connect refusal names the socket" \
	".event.action == \"unix-connect\" and .destination.address == \"$SOCK\" and .network.type == \"unix\""

# --- proxy decisions
mkdir -p "$T_TMP/www" && echo hello-from-upstream >"$T_TMP/www/index.html"
"$PY" -m http.server 18080 --bind 127.0.0.1 --directory "$T_TMP/www" >/dev/null 2>&1 &
web=$!
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18080/ && break; sleep 0.1; done
assert_succeeds "an allowed domain is reached through the proxy" \
	run -- sh -c 'curl -s -m 20 --noproxy "" -x "$HTTP_PROXY" http://localhost:18080/'
assert_contains "$T_OUT" hello-from-upstream "the upstream answered"
has_line "proxy allowed: INFO, success" \
	'(.event.action | startswith("proxy-")) and .event.outcome == "success" and .log.level == "info" and
	 .destination.domain == "localhost"'
assert_fails "a domain not allowed is refused by the proxy" \
	run -- sh -c 'curl -sf -m 20 --noproxy "" -x "$HTTP_PROXY" http://blocked.example/'
has_line "proxy denied: WARN, failure" \
	'(.event.action | startswith("proxy-")) and .event.outcome == "failure" and .log.level == "warn" and
	 .destination.domain == "blocked.example"'
kill "$web" 2>/dev/null

# --- lifecycle, exec-failed, setup-failed
assert_status "a command exits 3" 3 run -- sh -c 'exit 3'
has_line "sandbox-start: INFO, digest, argv" \
	'.event.action == "sandbox-start" and .log.level == "info" and .process.args == ["sh", "-c", "exit 3"] and
	 (.bpfbox.policy.digest | test("^sha256:[0-9a-f]{64}$"))'
has_line "exit 3: ERROR with status and duration" \
	'.event.action == "sandbox-exit" and .process.exit_code == 3 and .log.level == "error" and
	 .event.outcome == "failure" and (.event.duration > 0) and .bpfbox.counts.denied == 0'
assert_succeeds "a command exits 0" run -- true
has_line "exit 0: INFO, success" \
	'.event.action == "sandbox-exit" and .process.exit_code == 0 and .log.level == "info" and
	 (.message | startswith("sandbox exited with status 0 after"))'
assert_status "a command killed by SIGKILL" 137 run -- sh -c 'kill -KILL $$'
has_line "killed: ERROR with the signal" \
	'.event.action == "sandbox-exit" and .bpfbox.exit.signal == 9 and .bpfbox.exit.signal_name == "SIGKILL" and
	 .log.level == "error" and (.message | startswith("sandbox killed by SIGKILL"))'
assert_status "a missing command gives 127" 127 run -- /nonexistent/cmd
has_line "exec-failed: ERROR with errno" \
	'.event.action == "exec-failed" and .log.level == "error" and .error.code == "ENOENT"'
echo '{ "network": {' >"$T_TMP/broken.json"
assert_status "a broken policy gives 125" 125 \
	"$BPFBOX" exec --policy "$T_TMP/broken.json" --log-file "$LOG" -- true
has_line "setup-failed: ERROR, names the policy" \
	".event.action == \"setup-failed\" and .log.level == \"error\" and .bpfbox.policy.path == \"$T_TMP/broken.json\""

# --- refusal counts in the exit event
assert_fails "two refusals in one run" run -- sh -c "cat '$T_TMP/secret/key'; echo > '$T_TMP/ro/x'"
has_line "the exit event counts them" \
	'.event.action == "sandbox-exit" and .bpfbox.counts.denied == 2 and .bpfbox.counts.warnings == 2'

# --- ignoreViolations: not reported, still enforced
assert_fails "an ignored refusal is still enforced" run -- sh -c "echo x > '$T_TMP/ro/ignored-marker'"
assert_succeeds "the ignored file was not created" test ! -e "$T_TMP/ro/ignored-marker"
no_line "the ignored refusal is not logged" '(.message | contains("ignored-marker")) and .event.action != "sandbox-start" and .event.action != "sandbox-exit"'
has_line "the exit event counts it as ignored" \
	'.event.action == "sandbox-exit" and (.bpfbox.sandbox.command_line | contains("ignored-marker")) and
	 .bpfbox.counts.ignored == 1 and .bpfbox.counts.denied == 1'

# Every rule counts, the 65th of 65 too (they were once cut at 64).
jq '.ignoreViolations = ([range(0; 64) | {key: "cmd-\(.)", value: ["x"]}] | from_entries) + {"*": ["late-marker"]}' \
	"$P" >"$T_TMP/ignore65.json"
assert_fails "the 65th rule: its refusal is still enforced" \
	"$BPFBOX" exec --policy "$T_TMP/ignore65.json" --log-file "$LOG" -- sh -c "echo x > '$T_TMP/ro/late-marker'"
has_line "the 65th rule: the refusal is counted as ignored, not reported" \
	'.event.action == "sandbox-exit" and (.bpfbox.sandbox.command_line | contains("late-marker")) and
	 .bpfbox.counts.ignored == 1'
no_line "the 65th rule: no line reports it" '(.message | contains("late-marker")) and .event.action != "sandbox-start" and .event.action != "sandbox-exit"'

# --- audit mode: nothing refused, everything logged
for how in policy flag; do
	A=$T_TMP/audit-$how.json
	if [ $how = policy ]; then
		jq '. + {"bpfbox": {"mode": "audit"}}' "$P" >"$A"
		set -- "$BPFBOX" exec --policy "$A"
	else
		cp "$P" "$A"
		set -- "$BPFBOX" exec --audit --policy "$A"
	fi
	assert_succeeds "audit ($how): a write outside allowWrite succeeds" \
		"$@" --log-file "$LOG" -- sh -c "echo x > '$T_TMP/ro/audited-$how'"
	assert_succeeds "audit ($how): the file exists" test -e "$T_TMP/ro/audited-$how"
	has_line "audit ($how): logged as would-be refusal, outcome success" \
		".file.path == \"$T_TMP/ro/audited-$how\" and .bpfbox.audit == true and .event.outcome == \"success\" and
		 .log.level == \"warn\" and (.event.type | index(\"allowed\")) and (.event.type | index(\"denied\") | not) and
		 (.message | startswith(\"would deny\"))"
	has_line "audit ($how): sandbox-start says audit" \
		".event.action == \"sandbox-start\" and .bpfbox.audit == true and (.bpfbox.sandbox.command_line | contains(\"audited-$how\"))"
done

# --- every line: JSON, schema, per-writer sequence
assert_succeeds "every line passes jq -e ." sh -c "jq -e . '$LOG' >/dev/null"
assert_succeeds "every line validates against the schema (sequence numbers too)" \
	"$PY" "$T_ROOT/tests/tools/validate-events.py" --check-seq "$LOG"
[ "$T_RC" -eq 0 ] || cp "$LOG" /tmp/test_70.failed.ndjson
