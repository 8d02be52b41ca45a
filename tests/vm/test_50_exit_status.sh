#!/usr/bin/env bash
# Exit statuses (the command's own, 128+N, 127, 126, 125), the events that go
# with them, stdio left to the command, no descriptor leaked into it, SIGPIPE,
# and a non-root caller refused before anything runs.
. "$(dirname "$0")/lib.sh"
# Its subject is the supervisor in user space (statuses, stdio), not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 2

P=$T_TMP/policy.json
W=$T_TMP/work
mkdir -p "$W"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] }
}
JSON

# bb LOG ARGS...: bpfbox exec with the test policy, JSON log in LOG.
bb() {
	local log=$1
	shift
	"$BPFBOX" exec --policy "$P" --log-file "$log" "$@"
}
# The last event with action $2 in log $1, one JSON object, in $T_TMP/ev.
last_event() {
	jq -c "select(.event.action == \"$2\")" "$1" | tail -n 1 >"$T_TMP/ev"
}

L=$T_TMP/l1.ndjson
assert_status "exit status 0 passes through" 0 bb "$L" -- true
last_event "$L" sandbox-exit
assert_contains "$T_TMP/ev" '"ended_by":"exit"' "the exit event says the command exited"
assert_contains "$T_TMP/ev" '"outcome":"success"' "a zero status is a success"
assert_status "exit status 3 passes through" 3 bb "$L" -- sh -c 'exit 3'
assert_status "exit status 255 passes through" 255 bb "$L" -- sh -c 'exit 255'

L=$T_TMP/l2.ndjson
assert_status "death by SIGKILL gives 137" 137 bb "$L" -- sh -c 'kill -KILL $$'
last_event "$L" sandbox-exit
assert_contains "$T_TMP/ev" '"signal":9' "the exit event carries the signal"
assert_contains "$T_TMP/ev" '"signal_name":"SIGKILL"' "and its name"
assert_contains "$T_TMP/ev" '"ended_by":"signal"' "ended_by is signal"
assert_contains "$T_TMP/ev" '"outcome":"failure"' "death by signal is a failure"
assert_status "death by SIGSEGV gives 139" 139 bb "$L" -- sh -c 'kill -SEGV $$'

L=$T_TMP/l3.ndjson
assert_status "a command not on PATH gives 127" 127 bb "$L" -- no-such-command-bpfbox
assert_contains "$T_OUT" 'no-such-command-bpfbox: command not found' "with a message on stderr"
last_event "$L" exec-failed
assert_contains "$T_TMP/ev" '"level":"error"' "an ERROR exec-failed event"
assert_contains "$T_TMP/ev" '"exit_code":127' "naming status 127"
assert_not_contains "$L" '"action":"sandbox-exit".*"outcome":"success"' "a failed exec is never a success"

L=$T_TMP/l4.ndjson
printf 'not a program\n' >"$W/data"
assert_status "a file without x permission gives 126" 126 bb "$L" -- "$W/data"
chmod +x "$W/data"
printf '\x7fELF garbage' >"$W/data"
assert_status "an executable that is no program gives 126" 126 bb "$L" -- "$W/data"
assert_status "a directory gives 126" 126 bb "$L" -- "$W"
assert_equal_events=$(jq -c 'select(.event.action == "exec-failed")' "$L" | wc -l)
assert_eq 3 "$assert_equal_events" "each failed exec has its exec-failed event"
assert_not_contains "$L" '"action":"sandbox-exit".*"outcome":"success"' "none is reported as a success"

L=$T_TMP/l5.ndjson
assert_status "a policy that does not parse gives 125" 125 \
	"$BPFBOX" exec --policy "$W/data" -- touch "$W/ran1"
assert_status "an unknown option gives 125" 125 "$BPFBOX" exec --no-such-option -- touch "$W/ran2"
assert_status "a bad duration gives 125" 125 "$BPFBOX" exec --policy "$P" --timeout soon -- touch "$W/ran3"
assert_status "no command gives 125" 125 "$BPFBOX" exec --policy "$P"
assert_eq "" "$(ls "$W" | grep '^ran')" "none of those ran the command"

# A non-root caller with no daemon listening is refused, clearly, before anything is set up.
NB=$(mktemp -d /tmp/t50bin.XXXXXX)
cp "$BPFBOX" "$NB/bpfbox" && chmod 755 "$NB" "$NB/bpfbox"
chmod 755 "$T_TMP" && chmod 777 "$W"
assert_status "a non-root user gets 125" 125 \
	setpriv --reuid=65534 --regid=65534 --clear-groups env BPFBOX_SOCKET="$T_TMP/no-daemon.sock" \
	"$NB/bpfbox" exec --policy "$P" -- touch "$W/ran4"
assert_contains "$T_OUT" 'bpfbox needs root, or the bpfbox daemon' "with a message saying why (and how to start the daemon)"
assert_succeeds "and the command did not run" test ! -e "$W/ran4"
rm -rf "$NB"

# stdio: the command's stdout is its own; bpfbox's log never goes there.
printf 'line one\nline two\n' >"$W/in"
"$BPFBOX" exec --policy "$P" -- sh -c 'cat; echo to-err >&2; ls /nonexistent-x' \
	<"$W/in" >"$W/stdout" 2>"$W/stderr"
assert_eq "$(printf 'line one\nline two')" "$(cat "$W/stdout")" "stdin reaches the command, its stdout is untouched"
assert_contains "$W/stderr" '^to-err$' "the command's stderr passes through"
assert_contains "$W/stderr" '"action":"sandbox-exit"' "bpfbox's log goes to stderr"
assert_not_contains "$W/stdout" 'sandbox|bpfbox' "and never to stdout"
head -c 1000000 /dev/urandom >"$W/blob"
"$BPFBOX" exec --policy "$P" --log-file "$T_TMP/l6.ndjson" -- cat <"$W/blob" >"$W/blob.out"
assert_succeeds "binary data passes through a pipe unchanged" cmp "$W/blob" "$W/blob.out"

# SIGPIPE: the reader goes away, the writer dies of it, bpfbox says so.
assert_status "a writer to a closed pipe dies of SIGPIPE (141)" 141 bash -c \
	"set -o pipefail; '$BPFBOX' exec --policy '$P' --log-file '$T_TMP/l7.ndjson' -- yes | head -n 1 >/dev/null"
last_event "$T_TMP/l7.ndjson" sandbox-exit
assert_contains "$T_TMP/ev" '"signal_name":"SIGPIPE"' "the exit event names SIGPIPE"

# Descriptors: only stdio, plus what --pass-fd names.
assert_succeeds "the command sees only 0 1 2" bash -c \
	"exec 7>'$W/seven' 9<'$P'; '$BPFBOX' exec --policy '$P' --log-file '$T_TMP/l8.ndjson' -- sh -c 'ls /proc/\$\$/fd' </dev/null"
assert_eq "0 1 2" "$(sort -n "$T_OUT" | tr '\n' ' ' | sed 's/ $//')" "no descriptor of bpfbox or its caller leaks in"
assert_succeeds "--pass-fd passes a descriptor" bash -c \
	"exec 5>'$W/five'; '$BPFBOX' exec --policy '$P' --log-file '$T_TMP/l8.ndjson' --pass-fd 5 -- sh -c 'echo through-five >&5; ls /proc/\$\$/fd'"
assert_eq "through-five" "$(cat "$W/five")" "the command wrote through it"
assert_eq "0 1 2 5" "$(sort -n "$T_OUT" | tr '\n' ' ' | sed 's/ $//')" "and it has nothing else"

assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$T_TMP"/l*.ndjson
assert_eq "" "$(ls /sys/fs/cgroup/bpfbox | grep '^bb-')" "no sandbox cgroup is left behind"
assert_eq "" "$(ls /run/bpfbox/sandboxes 2>/dev/null)" "no registry entry is left behind"
