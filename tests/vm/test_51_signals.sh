#!/usr/bin/env bash
# Signals: the six forwarded ones reach the command; SIGINT, SIGTERM and SIGHUP
# to bpfbox cancel the run (SIGTERM to the whole tree, grace, cgroup.kill) with
# 128+N; --timeout does the same with 124; what the command leaves behind
# (background jobs, daemons) is killed and reaped when it exits.
. "$(dirname "$0")/lib.sh"

P=$T_TMP/policy.json
W=$T_TMP/work
mkdir -p "$W"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] }
}
JSON

# catcher DIR: records every signal it gets in DIR/got, starts a background
# sleep (pid in DIR/bg), says DIR/ready, and exits 0 once DIR/stop exists.
# It ignores cancellation: only cgroup.kill ends it then.
cat >"$T_TMP/catcher.py" <<'PY'
import os, signal, subprocess, sys, time
d = sys.argv[1]
def rec(sig, frame):
    with open(d + "/got", "a") as f:
        f.write(signal.Signals(sig).name + "\n")
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(s, rec)
bg = subprocess.Popen(["sleep", "1000"])
open(d + "/bg", "w").write(str(bg.pid))
open(d + "/ready", "w").close()
for _ in range(600):
    if os.path.exists(d + "/stop"):
        sys.exit(0)
    time.sleep(0.1)
sys.exit(3)
PY

wait_for() { # FILE [PATTERN]: up to 20s
	for _ in $(seq 200); do
		if [ -n "${2:-}" ]; then grep -q "$2" "$1" 2>/dev/null && return 0
		elif [ -e "$1" ]; then return 0; fi
		sleep 0.1
	done
	return 1
}
gone() { # PID: no such process, not even a zombie
	! [ -e "/proc/$1" ]
}

for sig in INT TERM HUP QUIT USR1 USR2; do
	d=$W/$sig
	mkdir -p "$d"
	log=$T_TMP/$sig.ndjson
	start=$(date +%s%N)
	"$BPFBOX" exec --policy "$P" --log-file "$log" --kill-after 1s -- python3 "$T_TMP/catcher.py" "$d" &
	bb=$!
	if ! wait_for "$d/ready"; then
		t_fail "SIG$sig: the catcher started" "$(cat "$log")"
		kill -KILL $bb
		continue
	fi
	start=$(date +%s%N)
	kill -"$sig" $bb
	wait_for "$d/got" "^SIG$sig\$"
	assert_contains "$d/got" "^SIG$sig\$" "SIG$sig sent to bpfbox reaches the command"
	case $sig in
	INT | TERM | HUP)
		wait $bb
		rc=$?
		el=$((($(date +%s%N) - start) / 1000000))
		assert_eq $((128 + $(kill -l $sig))) "$rc" "SIG$sig cancels the run: bpfbox exits 128+N"
		assert_contains "$d/got" '^SIGTERM$' "SIG$sig: the tree got SIGTERM first"
		[ "$el" -lt 10000 ] && t_ok "SIG$sig: a command ignoring SIGTERM is killed after the grace (${el}ms)" ||
			t_fail "SIG$sig: killed after the grace" "took ${el}ms"
		jq -c 'select(.event.action == "sandbox-exit")' "$log" >"$T_TMP/ev"
		assert_contains "$T_TMP/ev" "\"ended_by\":\"cancelled:SIG$sig\"" "SIG$sig: the exit event says cancelled"
		assert_contains "$T_TMP/ev" '"outcome":"failure"' "SIG$sig: a cancelled run is no success"
		;;
	*)
		sleep 0.5
		assert_succeeds "SIG$sig does not end the run" kill -0 $bb
		touch "$d/stop"
		wait $bb
		assert_eq 0 $? "SIG$sig: the command then exits 0 and so does bpfbox"
		;;
	esac
	bgpid=$(cat "$d/bg")
	assert_succeeds "SIG$sig: the command's background child is gone" gone "$bgpid"
done

# --timeout: SIGTERM to the whole tree; a command that obeys ends at once.
L=$T_TMP/timeout1.ndjson
start=$(date +%s%N)
assert_status "--timeout stops the command with 124" 124 \
	"$BPFBOX" exec --policy "$P" --log-file "$L" --timeout 1s --kill-after 30s -- sh -c 'sleep 100 & sleep 100; exit 0'
el=$((($(date +%s%N) - start) / 1000000))
[ "$el" -lt 20000 ] && t_ok "an obedient tree ends without waiting for the 30s grace (${el}ms)" || t_fail "obedient tree" "${el}ms"
jq -c 'select(.event.action == "sandbox-exit")' "$L" >"$T_TMP/ev"
assert_contains "$T_TMP/ev" '"ended_by":"timeout"' "the exit event says timeout"

# A tree that ignores SIGTERM gets --kill-after, then cgroup.kill.
d=$W/timeout2
mkdir -p "$d"
cat >"$d/stubborn.sh" <<SH
trap 'echo SIGTERM >>"$d/got"' TERM
sleep 1000 & echo \$! >"$d/bg"
while :; do sleep 0.1; done
SH
start=$(date +%s%N)
assert_status "--timeout with a SIGTERM-ignoring command still ends, 124" 124 \
	"$BPFBOX" exec --policy "$P" --log-file "$T_TMP/timeout2.ndjson" --timeout 2s --kill-after 2s -- sh "$d/stubborn.sh"
el=$((($(date +%s%N) - start) / 1000000))
assert_contains "$d/got" '^SIGTERM$' "the command got SIGTERM at the timeout"
[ "$el" -ge 3900 ] && [ "$el" -lt 15000 ] && t_ok "it was killed after timeout + grace (${el}ms)" ||
	t_fail "timeout + grace" "${el}ms, expected about 4000"
assert_succeeds "its background child is gone" gone "$(cat "$d/bg")"

# Background jobs and double-forked daemons die when the command exits.
cat >"$W/leaver.sh" <<SH
sleep 1000 & echo \$! >'$W/job'
setsid sh -c 'sleep 1000 & echo \$! >"$W/daemon"' </dev/null >/dev/null 2>&1 &
nohup sleep 1000 >/dev/null 2>&1 & echo \$! >'$W/nohup'
for i in \$(seq 100); do [ -s '$W/daemon' ] && exit 0; sleep 0.1; done
exit 1
SH
assert_status "the command exits 0 leaving jobs behind" 0 \
	"$BPFBOX" exec --policy "$P" --log-file "$T_TMP/bg.ndjson" -- sh "$W/leaver.sh"
for f in job daemon nohup; do
	assert_succeeds "the $f is killed and reaped" gone "$(cat "$W/$f")"
done

assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$T_TMP"/*.ndjson
assert_eq "" "$(ls /sys/fs/cgroup/bpfbox | grep '^bb-')" "no sandbox cgroup is left behind"
assert_eq "" "$(ls /tmp | grep '^bpfbox-')" "no sandbox TMPDIR is left behind"
