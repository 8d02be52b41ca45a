#!/usr/bin/env bash
# Live policy from outside the sandbox (issue 32): `bpfbox update` and the daemon's reload.
#   d. root: `bpfbox update ID --policy FILE` denies a file a long-running command reads (the
#      next reads are refused), --allow-domain / --deny-domain edit the document in force; a
#      field that cannot change live, a bad name and an unknown id are refused and change
#      nothing (ignoreViolations and bpfbox.log among them); the control socket is root's alone
#      and gone when the sandbox ends.
#   e. the daemon's callers: carol updates her own sandbox within the administrator's policy
#      (her wider grant is cut with the start's message, her narrowing applies); dave cannot
#      update carol's; root's update of carol's sandbox is cut by the ceiling too; carol's
#      `exec --control-fd` through the daemon, each line cut by the ceiling.
#   f. the administrator's policy changed and the daemon sent SIGHUP: carol's running sandbox
#      is narrowed to it; an invalid policy is refused loudly and the one before stays (for
#      running and new sandboxes); a ceiling the running sandbox cannot take (a field fixed
#      while it runs) stops that sandbox.
#   g. reloads fail closed: a ceiling that changes a field taken at start (requireHostMatch)
#      stops the sandbox; the administrator's file removed makes the built-in default the
#      running sandbox's ceiling; a daemon killed and restarted over a narrower file narrows the
#      sandbox its predecessor left; a sandbox still being set up when a reload went by does not
#      run its command (125, saying why); sandboxes that do not answer a reload (stalled) do not
#      delay another user's being narrowed.
# The subject is user space switching the kernel's rules (test_76 has the switch itself on
# both kernels): the file is shared out (tests/vm/lib.sh t_share, docs/vm.md).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

if ! t_share 2; then
	t_skip_all "bpfbox update and the daemon's reload are user space over test_76's switch: they run in $(t_share_where 2)"
fi

S=$(mktemp -d /tmp/bb77.XXXXXX)
chmod 0755 "$S"
DPID='' BOX_PIDS=()
cleanup77() {
	local p
	touch "$S"/stop-d "$S"/stop-e "$S"/stop-e2 2>/dev/null
	[ -z "${E2FD-}" ] || exec {E2FD}>&- 2>/dev/null
	for p in "${BOX_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	[ "$T_FAIL" -eq 0 ] || tail -n 30 "$S/daemon.out" 2>/dev/null | sed 's/^/# daemon: /'
	rm -rf "$S"
}
trap 'rc=$?; cleanup77; (exit $rc); t_summary' EXIT

id carol77 >/dev/null 2>&1 || useradd -m -s /bin/sh carol77
id dave77 >/dev/null 2>&1 || useradd -m -s /bin/sh dave77
CUID=$(id -u carol77)
REFUSED='^(EACCES|EPERM)$'

# The checker: every INTERVAL s, each r:PATH read once, a line "ITERATION r PATH RESULT"
# (ok or the errno's name); it stops when STOP exists (or after 280 s).
cat >"$S/checker.py" <<'PY'
import errno, os, sys, time
interval, stop = float(sys.argv[1]), sys.argv[2]
paths = [a.split(":", 1)[1] for a in sys.argv[3:]]
end = time.monotonic() + 280
i = 0
while not os.path.exists(stop) and time.monotonic() < end:
    i += 1
    for p in paths:
        try:
            with open(p) as f:
                f.read()
            res = "ok"
        except OSError as e:
            res = errno.errorcode.get(e.errno, str(e.errno))
        print(i, "r", p, res, flush=True)
    time.sleep(interval)
PY
chmod 0644 "$S/checker.py"
CHECK=$S/checker.py

wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}
lines() { [ -e "$1" ] && wc -l <"$1" || echo 0; }
# The results of reading PATH in OUT after line AFTER, the first skipped (it may have been under way).
results_after() { awk -v l="$2" -v a="$3" 'NR > l && $3 == a { if (seen++) print $4 }' "$1"; }
has_results() { [ "$(results_after "$@" | wc -l)" -ge 3 ]; }
# assert_reads NAME OUT PATH REGEX: the next 3 reads of PATH (from now) all match REGEX.
assert_reads() {
	local name=$1 out=$2 path=$3 want=$4 after got
	after=$(lines "$out")
	if ! wait_until 30 has_results "$out" "$after" "$path"; then
		t_fail "$name" "no 3 reads of $path within 30 s" "$(tail -n 5 "$out" 2>&1)"
		return 1
	fi
	got=$(results_after "$out" "$after" "$path" | head -n 3 | xargs)
	if [ "$(results_after "$out" "$after" "$path" | head -n 3 | grep -Evc -- "$want")" -eq 0 ]; then
		t_ok "$name"
	else
		t_fail "$name" "expected reads matching /$want/; got: $got"
	fi
}
# policy-updated events of LOG for sandbox ID.
updates() {
	jq -c --arg id "$2" 'select(.event.action == "policy-updated" and .bpfbox.sandbox.id == $id)' "$1" 2>/dev/null | wc -l
}
assert_ev() {
	if jq -e -s "any(.[]; $3)" "$1" >/dev/null 2>&1; then
		t_ok "$2"
	else
		t_fail "$2" "no event of $1 satisfies: $3" "$(tail -n 5 "$1" 2>&1)"
	fi
}
added() { echo "any((.bpfbox.policy.update.added // [])[]; contains(\"$1\"))"; }
removed() { echo "any((.bpfbox.policy.update.removed // [])[]; contains(\"$1\"))"; }
# find_box MARK: FOUND_ID is the id of the sandbox whose command holds MARK.
find_box() {
	FOUND_ID=$("$BPFBOX" ps --json 2>/dev/null | jq -r --arg m "$1" '[.[] | select(.command | contains($m)) | .id][0] // empty')
	[ -n "$FOUND_ID" ]
}
# wait_exit PID: its status in $BOX_RC (SIGTERM after 30 s).
wait_exit() {
	for _ in $(seq 150); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.2
	done
	kill -0 "$1" 2>/dev/null && kill -TERM "$1"
	wait "$1"
	BOX_RC=$?
}

SRV=$S/srv
mkdir -p "$SRV/pub" "$SRV/secret"
echo one >"$SRV/pub/one"
echo two >"$SRV/pub/two"
echo topsecret >"$SRV/secret/file"
chmod -R a+rX "$SRV"

# ------------------------------------------------------------------------------------------
# d. root's bpfbox update
# ------------------------------------------------------------------------------------------
PD=$S/d.json
cat >"$PD" <<'JSON'
{
  "network": { "allowedDomains": ["kept77.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] }
}
JSON
LOG=$T_TMP/d.ndjson OUT=$T_TMP/d.out
"$BPFBOX" exec --policy "$PD" --log-file "$LOG" -- python3 "$CHECK" 0.2 "$S/stop-d" "r:$SRV/pub/one" \
	>"$OUT" 2>"$T_TMP/d.err" </dev/null &
DBOX=$!
BOX_PIDS+=("$DBOX")
assert_succeeds "d: the sandbox is listed" wait_until 60 find_box "$S/stop-d"
ID=$FOUND_ID
assert_reads "d: at the start the file is read" "$OUT" "$SRV/pub/one" '^ok$'
assert_eq "drwx------ root" "$(stat -c '%A %U' /run/bpfbox/control)" "d: the control sockets' directory is root's alone"
assert_succeeds "d: the sandbox has a control socket" test -S "/run/bpfbox/control/$ID"
t_exec runuser -u dave77 -- python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('/run/bpfbox/control/$ID')"
assert_contains "$T_OUT" 'PermissionError' "d: another user cannot reach the control socket"

jq ".filesystem.denyRead = [\"$SRV/pub/one\"]" "$PD" >"$S/d-deny.json"
t_exec "$BPFBOX" update "$ID" --policy "$S/d-deny.json"
assert_eq 0 "$T_RC" "d: update --policy is accepted (exit 0)"
assert_contains "$T_OUT" "$ID: policy updated \\(generation 1\\)" "d: it says the generation"
assert_reads "d: the next reads of the file are refused" "$OUT" "$SRV/pub/one" "$REFUSED"
assert_ev "$LOG" "d: one policy-updated event, source update, naming the denyRead" \
	".event.action == \"policy-updated\" and .bpfbox.policy.update.source == \"update\" and $(added "$SRV/pub/one")"

t_exec "$BPFBOX" update "$ID" --allow-domain new77.test
assert_eq 0 "$T_RC" "d: --allow-domain is accepted"
assert_ev "$LOG" "d: the event names the domain added" ".event.action == \"policy-updated\" and $(added new77.test)"
assert_reads "d: the document edited is the one in force: the file is still refused" "$OUT" "$SRV/pub/one" "$REFUSED"
t_exec "$BPFBOX" update "$ID" --deny-domain kept77.test
assert_eq 0 "$T_RC" "d: --deny-domain is accepted"
assert_ev "$LOG" "d: the event names the domain revoked" ".event.action == \"policy-updated\" and $(removed kept77.test)"
N=$(updates "$LOG" "$ID")
assert_eq 3 "$N" "d: three updates, three events"

# fixed_refused WHAT JQ FIELD-REGEX: d-deny.json edited by JQ is refused (exit 1), the message naming the field.
fixed_refused() {
	jq "$2" "$S/d-deny.json" >"$S/d-fixed.json"
	t_exec "$BPFBOX" update "$ID" --policy "$S/d-fixed.json"
	assert_eq 1 "$T_RC" "d: $1: refused (exit 1)"
	assert_contains "$T_OUT" "$3 cannot change while the sandbox runs" "d: $1: the message names the field"
}
fixed_refused "a field that cannot change live" '.network.allowAllUnixSockets = true' allowAllUnixSockets
# A field the sandbox took at start (its cgroup's limit): refused, not reported as applied.
fixed_refused "a new memory limit" '.bpfbox.limits.memory = "512M"' 'bpfbox.limits.memory'
# What shapes the sandbox's log is fixed too (outside srt's live set): named, not dropped.
fixed_refused "new ignoreViolations" '.ignoreViolations = {"*": ["one"]}' 'ignoreViolations[^ ]*'
fixed_refused "a new bpfbox.log" '.bpfbox.log.format = "text"' 'bpfbox.log.format'
t_exec "$BPFBOX" update "$ID" --allow-domain 'bad name!'
assert_eq 1 "$T_RC" "d: a bad domain name: refused"
assert_contains "$T_OUT" 'bad name!' "d: the message names it"
echo '{"network": ' >"$S/d-bad.json"
t_exec "$BPFBOX" update "$ID" --policy "$S/d-bad.json"
assert_eq 1 "$T_RC" "d: a document that is not JSON: refused"
t_exec "$BPFBOX" update bb-ffffffffffff --allow-domain x.test
assert_eq 1 "$T_RC" "d: an unknown id: exit 1"
assert_contains "$T_OUT" 'no such running sandbox' "d: the message says so"
t_exec "$BPFBOX" update ../../etc --allow-domain x.test
assert_contains "$T_OUT" 'not a sandbox id' "d: an id that names a path is refused as such"
assert_eq "$N" "$(updates "$LOG" "$ID")" "d: no refused update made an event"
assert_reads "d: after the refusals the file is still refused" "$OUT" "$SRV/pub/one" "$REFUSED"
touch "$S/stop-d"
wait_exit "$DBOX"
assert_eq 0 "$BOX_RC" "d: the sandbox exits 0"
assert_fails "d: its control socket is gone" test -e "/run/bpfbox/control/$ID"

# ------------------------------------------------------------------------------------------
# e. the daemon's callers
# ------------------------------------------------------------------------------------------
SOCK=$S/run/bpfbox.sock
ALOG=$S/admin/events.ndjson
ADMIN=$S/admin/policy.json
mkdir -p "$S/admin" && chmod 0700 "$S/admin"
cat >"$ADMIN" <<JSON
{
  "network": { "allowedDomains": ["e77.test"], "deniedDomains": [], "allowLocalBinding": true },
  "filesystem": { "denyRead": ["$SRV/secret"], "allowWrite": [], "denyWrite": [] }
}
JSON
"$BPFBOX" daemon --socket "$SOCK" --config "$ADMIN" --log-file "$ALOG" >>"$S/daemon.out" 2>&1 &
DPID=$!
wait_until 20 test -S "$SOCK"
assert_succeeds "e: the daemon listens" test -S "$SOCK"
as() {
	local u=$1
	shift
	(cd "$(getent passwd "$u" | cut -d: -f6)" && runuser -u "$u" -- env BPFBOX_SOCKET="$SOCK" "$@")
}
CP=$S/carol.json
cat >"$CP" <<'JSON'
{
  "network": { "allowedDomains": ["e77.test"], "deniedDomains": [], "allowLocalBinding": true },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] }
}
JSON
chmod 0644 "$CP"
EOUT=$T_TMP/e.out
touch "$EOUT" && chmod 0666 "$EOUT"
as carol77 "$BPFBOX" exec --policy "$CP" --log-file /dev/null -- python3 "$CHECK" 0.2 "$S/stop-e" \
	"r:$SRV/pub/one" "r:$SRV/pub/two" "r:$SRV/secret/file" >"$EOUT" 2>"$T_TMP/e.err" </dev/null &
EBOX=$!
BOX_PIDS+=("$EBOX")
assert_succeeds "e: carol's sandbox is listed" wait_until 60 find_box "$S/stop-e"
EID=$FOUND_ID
assert_reads "e: at the start carol reads one" "$EOUT" "$SRV/pub/one" '^ok$'
assert_reads "e: and the administrator's denyRead holds" "$EOUT" "$SRV/secret/file" "$REFUSED"

# carol narrows her own (one denied) and tries to widen past the ceiling (the secret allowed).
jq ".filesystem.denyRead = [\"$SRV/pub/one\"] | .filesystem.allowRead = [\"$SRV/secret\"]" "$CP" >"$S/carol-2.json"
chmod 0644 "$S/carol-2.json"
t_exec as carol77 "$BPFBOX" update "$EID" --policy "$S/carol-2.json"
assert_eq 0 "$T_RC" "e: carol's update of her own sandbox is accepted"
assert_contains "$T_OUT" "allowRead\\[0\\] \"$SRV/secret\": inside the administrator's denyRead .*not granted" "e: her grant past the ceiling is cut, with the start's message"
assert_reads "e: her narrowing applies: one is refused" "$EOUT" "$SRV/pub/one" "$REFUSED"
assert_reads "e: the ceiling holds: the secret is still refused" "$EOUT" "$SRV/secret/file" "$REFUSED"
assert_reads "e: two is still read" "$EOUT" "$SRV/pub/two" '^ok$'
assert_ev "$ALOG" "e: the administrator's log has the update, source update, for carol" \
	".event.action == \"policy-updated\" and .bpfbox.sandbox.id == \"$EID\" and .user.name == \"carol77\" and $(added "$SRV/pub/one")"
N=$(updates "$ALOG" "$EID")

t_exec as dave77 "$BPFBOX" update "$EID" --policy "$CP"
assert_eq 1 "$T_RC" "e: dave cannot update carol's sandbox (exit 1)"
assert_contains "$T_OUT" 'no such sandbox of yours' "e: he is told it is none of his"
t_exec as dave77 "$BPFBOX" update "$EID" --allow-domain dave77.test
assert_eq 1 "$T_RC" "e: nor with --allow-domain"
assert_eq "$N" "$(updates "$ALOG" "$EID")" "e: dave's attempts made no update"
assert_reads "e: carol's sandbox is as she left it (one refused)" "$EOUT" "$SRV/pub/one" "$REFUSED"

jq ".filesystem.allowRead = [\"$SRV/secret\"]" "$CP" >"$S/root-e.json"
t_exec "$BPFBOX" update "$EID" --policy "$S/root-e.json"
assert_eq 0 "$T_RC" "e: root's update of carol's sandbox is accepted"
assert_contains "$T_OUT" "allowRead\\[0\\] \"$SRV/secret\": inside the administrator's denyRead .*not granted" "e: and cut by the ceiling like hers"
assert_reads "e: root's document applies (one read again)" "$EOUT" "$SRV/pub/one" '^ok$'
assert_reads "e: the secret stays refused: root's update cannot lift the ceiling either" "$EOUT" "$SRV/secret/file" "$REFUSED"

# srt's --control-fd through the daemon: the caller's descriptor, read by its worker, each line
# cut by the ceiling as at start.
mkfifo -m 0600 "$S/e2.ctl"
E2OUT=$T_TMP/e2.out
as carol77 "$BPFBOX" exec --policy "$CP" --log-file /dev/null --control-fd 3 -- python3 "$CHECK" 0.2 "$S/stop-e2" \
	"r:$SRV/pub/one" "r:$SRV/secret/file" 3<"$S/e2.ctl" >"$E2OUT" 2>"$T_TMP/e2.err" </dev/null &
E2BOX=$!
BOX_PIDS+=("$E2BOX")
exec {E2FD}>"$S/e2.ctl"
assert_reads "e2: through the daemon with --control-fd, one is read at the start" "$E2OUT" "$SRV/pub/one" '^ok$'
(jq -c ".filesystem.denyRead = [\"$SRV/pub/one\"]" "$CP" >&"$E2FD") 2>/dev/null
assert_reads "e2: a control line denying one applies" "$E2OUT" "$SRV/pub/one" "$REFUSED"
(jq -c ".filesystem.allowRead = [\"$SRV/secret\"]" "$CP" >&"$E2FD") 2>/dev/null
assert_reads "e2: a line granting past the ceiling applies what it may (one read again)" "$E2OUT" "$SRV/pub/one" '^ok$'
assert_reads "e2: and the ceiling holds (the secret refused)" "$E2OUT" "$SRV/secret/file" "$REFUSED"
assert_contains "$T_TMP/e2.err" "allowRead\\[0\\] \"$SRV/secret\": inside the administrator's denyRead .*not granted" \
	"e2: the cut is said on the caller's stderr, as at start"
(jq -c '.network.allowAllUnixSockets = true' "$CP" >&"$E2FD") 2>/dev/null
wait_until 20 grep -q 'Invalid config on control fd 3' "$T_TMP/e2.err"
assert_contains "$T_TMP/e2.err" 'Invalid config on control fd 3: ignored, previous config still in force' \
	"e2: a field fixed while it runs is refused with srt's message"
touch "$S/stop-e2"
exec {E2FD}>&-
wait_exit "$E2BOX"
assert_eq 0 "$BOX_RC" "e2: the sandbox exits 0"

# ------------------------------------------------------------------------------------------
# f. the administrator's policy reloaded
# ------------------------------------------------------------------------------------------
jq ".filesystem.denyRead += [\"$SRV/pub/two\"]" "$ADMIN" >"$S/admin/next.json"
cp "$S/admin/next.json" "$ADMIN"
kill -HUP "$DPID"
assert_reads "f: after SIGHUP carol's running sandbox is narrowed: two is refused" "$EOUT" "$SRV/pub/two" "$REFUSED"
assert_reads "f: one is still read" "$EOUT" "$SRV/pub/one" '^ok$'
wait_until 20 jq -e -s 'any(.[]; .event.action == "ceiling-reloaded")' "$ALOG" >/dev/null
assert_ev "$ALOG" "f: the administrator's log says the sandbox was narrowed" \
	".event.action == \"ceiling-reload-sandbox\" and (.message | contains(\"$EID\")) and (.message | contains(\"narrowed\"))"
assert_ev "$ALOG" "f: and the reload's summary" '.event.action == "ceiling-reloaded"'
assert_ev "$ALOG" "f: the update event's source is ceiling-reload" \
	".event.action == \"policy-updated\" and .bpfbox.sandbox.id == \"$EID\" and .bpfbox.policy.update.source == \"ceiling-reload\" and $(added "$SRV/pub/two")"

echo '{"filesystem": {"denyRead": [' >"$ADMIN"
kill -HUP "$DPID"
wait_until 20 jq -e -s 'any(.[]; .event.action == "ceiling-reload-refused")' "$ALOG" >/dev/null
assert_ev "$ALOG" "f: an invalid policy is refused, loudly" '.event.action == "ceiling-reload-refused" and .log.level == "error"'
assert_reads "f: the running sandbox keeps the policy before (two refused)" "$EOUT" "$SRV/pub/two" "$REFUSED"
assert_reads "f: and runs on (one read)" "$EOUT" "$SRV/pub/one" '^ok$'
t_exec as carol77 "$BPFBOX" exec --log-file /dev/null -- /bin/sh -c "cat $SRV/pub/one && (cat $SRV/pub/two || echo TWO-REFUSED)"
assert_eq 0 "$T_RC" "f: a new sandbox still starts under the policy loaded before"
assert_contains "$T_OUT" '^TWO-REFUSED$' "f: the one loaded before, not the invalid file, nor none"

# A ceiling the running sandbox cannot take: a field fixed while it runs.
jq '.network.allowLocalBinding = false' "$S/admin/next.json" >"$ADMIN"
kill -HUP "$DPID"
wait_exit "$EBOX"
assert_fails "f: a ceiling that changes a fixed field stops carol's sandbox" test "$BOX_RC" -eq 0
assert_ev "$ALOG" "f: the administrator's log says why it was stopped" \
	'.event.action == "sandbox-stopped-by-ceiling" and (.message | contains("allowLocalBinding"))'
t_exec as carol77 "$BPFBOX" exec --policy "$CP" --log-file /dev/null -- /bin/true
assert_eq 0 "$T_RC" "f: carol can start again (her allowLocalBinding cut at start, as any grant)"

# ------------------------------------------------------------------------------------------
# g. reloads that must not leave a sandbox on the policy before (each fails closed)
# ------------------------------------------------------------------------------------------
# start_g MARK: carol's sandbox reading one and two every 0.2 s into $T_TMP/MARK.out; GBOX, GID, GOUT.
start_g() {
	GOUT=$T_TMP/$1.out
	touch "$GOUT" && chmod 0666 "$GOUT"
	as carol77 "$BPFBOX" exec --policy "$CP" --log-file /dev/null -- python3 "$CHECK" 0.2 "$S/stop-$1" \
		"r:$SRV/pub/one" "r:$SRV/pub/two" >"$GOUT" 2>"$T_TMP/$1.err" </dev/null &
	GBOX=$!
	BOX_PIDS+=("$GBOX")
	wait_until 60 find_box "$S/stop-$1"
	GID=$FOUND_ID
}
reloaded() { jq -e -s --arg id "$1" --arg m "$2" 'any(.[]; .event.action == "ceiling-reload-sandbox" and (.message | contains($id)) and (.message | contains($m)))' "$ALOG" >/dev/null 2>&1; }

# hup_and_wait: SIGHUP for a changed file, and the reload's walk done (a start during it would be refused).
hup_and_wait() {
	local n
	n=$(jq -s '[.[] | select(.event.action == "ceiling-reloaded")] | length' "$ALOG")
	kill -HUP "$DPID"
	wait_until 30 test "$(jq -s '[.[] | select(.event.action == "ceiling-reloaded")] | length' "$ALOG")" -gt "$n"
}

# g1. A field the sandbox took at start (the proxy's request rules): it is stopped, not told "narrowed".
cp "$ADMIN" "$S/admin/f-end.json"
start_g g1
assert_reads "g1: carol's sandbox runs (two refused by the administrator)" "$GOUT" "$SRV/pub/two" "$REFUSED"
jq '.network.requireHostMatch = true' "$ADMIN" >"$S/admin/g1.json" && cp "$S/admin/g1.json" "$ADMIN"
kill -HUP "$DPID"
wait_exit "$GBOX"
assert_fails "g1: requireHostMatch made by a reload stops the sandbox" test "$BOX_RC" -eq 0
assert_ev "$ALOG" "g1: the log names the field" \
	".event.action == \"sandbox-stopped-by-ceiling\" and (.message | contains(\"requireHostMatch\"))"
cp "$S/admin/f-end.json" "$ADMIN"
assert_succeeds "g1: the file before is read again" hup_and_wait

# g2. The administrator's file removed: the running sandbox takes the built-in default, as a new one would.
start_g g2
assert_reads "g2: two refused under the administrator's file" "$GOUT" "$SRV/pub/two" "$REFUSED"
mv "$ADMIN" "$S/admin/g2-saved.json"
kill -HUP "$DPID"
assert_reads "g2: with the file gone the default is the ceiling: two is read" "$GOUT" "$SRV/pub/two" '^ok$'
assert_succeeds "g2: the log says the sandbox took it" wait_until 20 reloaded "$GID" narrowed
mv "$S/admin/g2-saved.json" "$ADMIN"
kill -HUP "$DPID"
assert_reads "g2: the file back, two is refused again" "$GOUT" "$SRV/pub/two" "$REFUSED"

# g3. The daemon killed (SIGKILL) while g2's sandbox runs; a narrower file; a new daemon tells the sandbox.
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
rm -f "$SOCK"
jq ".filesystem.denyRead += [\"$SRV/pub/one\"]" "$ADMIN" >"$S/admin/g3.json" && cp "$S/admin/g3.json" "$ADMIN"
"$BPFBOX" daemon --socket "$SOCK" --config "$ADMIN" --log-file "$ALOG" >>"$S/daemon.out" 2>&1 &
DPID=$!
wait_until 20 test -S "$SOCK"
assert_reads "g3: the restarted daemon narrowed the sandbox its predecessor left: one is refused" \
	"$GOUT" "$SRV/pub/one" "$REFUSED"
touch "$S/stop-g2"
wait_exit "$GBOX"
assert_eq 0 "$BOX_RC" "g3: the sandbox then ends normally"

# g4. A reload while a sandbox is still being set up (carol's policy slow to load: wildcards over a
# large directory of hers): that sandbox does not run its command under the policy before.
as carol77 python3 -c "
import os
d = os.path.expanduser('~/big77')
os.makedirs(d, exist_ok=True)
for i in range(20000):
    open(os.path.join(d, 'f%05d' % i), 'w').close()"
jq '.filesystem.denyRead = [range(0; 120) | "~/big77/*.none\(.)"]' "$CP" >"$S/slow.json"
chmod 0644 "$S/slow.json"
t0=$SECONDS
t_exec as carol77 "$BPFBOX" exec --policy "$S/slow.json" --log-file /dev/null -- echo SLOW-RAN
echo "# g4: a start with the slow policy took $((SECONDS - t0)) s"
assert_contains "$T_OUT" '^SLOW-RAN$' "g4: the slow policy starts when nothing changes"
as carol77 "$BPFBOX" exec --policy "$S/slow.json" --log-file /dev/null -- echo SLOW-RAN >"$T_TMP/g4.out" 2>&1 &
G4=$!
sleep 1
jq ".filesystem.denyRead += [\"$SRV/pub/g4\"]" "$ADMIN" >"$S/admin/g4.json" && cp "$S/admin/g4.json" "$ADMIN"
kill -HUP "$DPID"
wait "$G4"
assert_eq 125 "$?" "g4: the sandbox set up across the reload exits 125"
assert_contains "$T_TMP/g4.out" 'was reloaded while this sandbox was being set up' "g4: saying why"
assert_not_contains "$T_TMP/g4.out" '^SLOW-RAN$' "g4: its command did not run"
t_exec as carol77 "$BPFBOX" exec --log-file /dev/null -- echo AFTER
assert_contains "$T_OUT" '^AFTER$' "g4: the next start runs"

# g5. Two of dave's sandboxes stalled (their supervisors stopped: no answer for up to 30 s), one
# started before carol's and one after (the registry is walked oldest or newest first by kernel):
# carol's sandbox is still narrowed at once; each sandbox is told by a process of its own.
echo five >"$SRV/pub/five"
chmod 0644 "$SRV/pub/five"
# stalled_box MARK: dave's sandbox, its supervisor stopped; its pid appended to STALLED.
STALLED=() STALL_CLIENTS=()
stalled_box() {
	local sup
	as dave77 "$BPFBOX" exec --log-file /dev/null -- sh -c 'sleep 120' "$1" >/dev/null 2>&1 </dev/null &
	BOX_PIDS+=("$!")
	STALL_CLIENTS+=("$!")
	wait_until 60 find_box "$1"
	sup=$("$BPFBOX" ps --json | jq -r --arg id "$FOUND_ID" '.[] | select(.id == $id) | .supervisor_pid')
	kill -STOP "$sup"
	STALLED+=("$sup")
}
stalled_box stall-g5a
GOUT=$T_TMP/g5.out
touch "$GOUT" && chmod 0666 "$GOUT"
as carol77 "$BPFBOX" exec --policy "$CP" --log-file /dev/null -- python3 "$CHECK" 0.2 "$S/stop-g5" \
	"r:$SRV/pub/five" >"$GOUT" 2>"$T_TMP/g5.err" </dev/null &
G5=$!
BOX_PIDS+=("$G5")
wait_until 60 find_box "$S/stop-g5"
stalled_box stall-g5b
assert_reads "g5: carol's sandbox reads five" "$GOUT" "$SRV/pub/five" '^ok$'
last_five() { awk -v a="$SRV/pub/five" '$3 == a { r = $4 } END { print r }' "$GOUT"; }
jq ".filesystem.denyRead += [\"$SRV/pub/five\"]" "$ADMIN" >"$S/admin/g5.json" && cp "$S/admin/g5.json" "$ADMIN"
t0=$SECONDS
kill -HUP "$DPID"
if wait_until 10 eval '[[ "$(last_five)" =~ $REFUSED ]]'; then
	t_ok "g5: carol's sandbox is narrowed within 10 s while two sandboxes do not answer ($((SECONDS - t0)) s)"
else
	t_fail "g5: carol's sandbox is narrowed within 10 s while two sandboxes do not answer" \
		"five still read after $((SECONDS - t0)) s" "$(tail -n 3 "$GOUT")"
fi
kill -CONT "${STALLED[@]}"
assert_succeeds "g5: the walk ends once the stalled sandboxes answer" \
	wait_until 40 jq -e -s '[.[] | select(.event.action == "ceiling-reloaded")] | last | .message | contains("told, 0 could not")' "$ALOG"
touch "$S/stop-g5"
wait_exit "$G5"
assert_eq 0 "$BOX_RC" "g5: carol's sandbox then ends normally"
"$BPFBOX" ps --json | jq -r '.[] | select(.command | contains("stall-g5")) | .id' | while read -r id; do
	"$BPFBOX" stop "$id" >/dev/null 2>&1
done
for p in "${STALL_CLIENTS[@]}"; do
	wait_exit "$p"
done

kill -TERM "$DPID"
wait "$DPID" 2>/dev/null
DPID=
assert_eq "" "$(find /run/bpfbox/control -mindepth 1 2>/dev/null)" "no control socket is left behind"
