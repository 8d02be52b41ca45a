#!/usr/bin/env bash
# Nothing outside the sandbox can be signalled: a root process, the user's own
# process, the supervisor, another sandbox; through kill, kill(-1),
# pidfd_send_signal and SIGIO to an owner set with F_SETOWN. Signals inside
# keep working (stop, continue, terminate a child; a shell's job control;
# SIGIO to itself). On the terminal TIOCSTI is refused, other ioctls are not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/users_lib.sh"

state() { awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
alive() { [ -e "/proc/$1" ] && [ "$(state "$1")" != Z ]; }

# Victims outside every sandbox: a root process and one of alice's own, and a root
# process that records SIGWINCH (ignored by everything else, so harmless if kill(-1) leaked).
sleep 1000 &
ROOTV=$!
rm -f "$S/winch"
$PY -c 'import signal, sys, time
signal.signal(signal.SIGWINCH, lambda s, f: open(sys.argv[1], "a").write("GOT\n"))
open(sys.argv[1] + ".ready", "w").close()
time.sleep(1000)' "$S/winch" &
WINCHV=$!
setpriv --reuid=alice58 --regid=alice58 --init-groups sleep 1000 &
ALICEV=$!
# Another sandbox of alice's, which says its pid.
OTHER_LOG=$S/other.ndjson
rm -f "$PROJ/other.pid"
(cd "$PROJ" && env SUDO_USER=alice58 SUDO_UID="$AUID" SUDO_GID="$AGID" "$BPFBOX" exec --policy "$P" \
	--log-file "$OTHER_LOG" -- /bin/sh -c 'echo $$ >other.pid; exec sleep 1000') &
OTHERBB=$!
end=$((SECONDS + 120))
while [ $SECONDS -lt $end ] && ! [ -s "$PROJ/other.pid" ]; do sleep 0.5; done
OTHERV=$(cat "$PROJ/other.pid" 2>/dev/null)
while [ $SECONDS -lt $end ] && ! [ -e "$S/winch.ready" ]; do sleep 0.5; done
[ -n "$OTHERV" ] && t_ok "another sandbox runs (pid $OTHERV)" || t_fail "another sandbox runs" "$(cat "$OTHER_LOG")"

# A uid 0 command (no sudo, no --user): the kernel's own checks would let every signal through.
cat >"$S/root_kills.py" <<'PY'
import fcntl, os, signal, socket, sys, time
root_victim = int(sys.argv[1])
def attempt(name, f):
    try:
        f()
        print(name, "DELIVERED")
    except PermissionError:
        print(name, "EPERM")
attempt("STOP", lambda: os.kill(root_victim, signal.SIGSTOP))
# kill(-1) reports success even when every target refused (the kernel counts only other errors).
attempt("KILL-1", lambda: os.kill(-1, signal.SIGWINCH))
try:
    fd = os.pidfd_open(root_victim)
    attempt("PIDFD", lambda: signal.pidfd_send_signal(fd, signal.SIGCONT))
    print("PIDFD-PROBE", signal.pidfd_send_signal(fd, 0))
except PermissionError as e:
    print("PIDFD-OPEN", e)
attempt("PARENT", lambda: os.kill(os.getppid(), signal.SIGTERM))
# SIGIO's default action would end the victim.
a, b = socket.socketpair()
fcntl.fcntl(a, fcntl.F_SETOWN, root_victim)
fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
b.send(b"x")
time.sleep(0.3)
print("SIGIO SENT")
PY
chmod 0644 "$S/root_kills.py"
fresh
t_exec as_root -- $PY "$S/root_kills.py" "$ROOTV"
assert_contains "$T_OUT" '^STOP EPERM$' "uid 0 command: kill -STOP of a root process outside is refused"
sleep 0.3
[ "$(state $ROOTV)" != T ] && t_ok "the root process was not stopped" || { t_fail "the root process was not stopped"; kill -CONT $ROOTV; }
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ROOTV and .bpfbox.signal.name == \"SIGSTOP\" and .bpfbox.signal.number == 19 and .rule.name == \"builtin:signal-outside-sandbox\" and .event.outcome == \"failure\" and (.process.name | test(\"python\"))" \
	"the refusal names the target pid and the signal"
[ -e "$S/winch.ready" ] && ! [ -e "$S/winch" ] && t_ok "kill(-1) from a command alone in its sandbox reaches nobody" ||
	t_fail "kill(-1) reaches nobody outside" "ready: $(ls "$S"/winch* 2>&1)"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $WINCHV and .bpfbox.signal.name == \"SIGWINCH\"" \
	"kill(-1): the outside process is named"
if grep -q '^PIDFD-OPEN' "$T_OUT"; then
	# From 6.9 a pidfd is a pidfs file opened read-write, which the file rules refuse.
	t_skip "pidfd_send_signal to a process outside is refused" "pidfd_open itself is refused in the sandbox here"
	t_skip "signal 0 (a probe that the pid exists) is let through" "no pidfd"
else
	assert_contains "$T_OUT" '^PIDFD EPERM$' "pidfd_send_signal to a process outside is refused"
	assert_contains "$T_OUT" '^PIDFD-PROBE None$' "signal 0 (a probe that the pid exists) is let through"
fi
assert_contains "$T_OUT" '^PARENT EPERM$' "the command cannot SIGTERM its supervisor"
assert_ev '.event.action == "signal" and .bpfbox.signal.name == "SIGTERM"' "event for the signal to the supervisor"
assert_ev '.event.action == "sandbox-exit" and .bpfbox.exit.ended_by == "exit"' "the supervisor went on to a normal exit"
assert_contains "$T_OUT" '^SIGIO SENT$' "F_SETOWN + O_ASYNC: the I/O itself works"
sleep 0.3
alive $ROOTV && t_ok "SIGIO to an outside owner the sandbox set is not delivered" ||
	t_fail "SIGIO to an outside owner the sandbox set is not delivered"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ROOTV and .bpfbox.signal.name == \"SIGIO\"" \
	"SIGIO: event naming the owner and SIGIO"

# alice's command: her own process, her other sandbox, her supervisor (SIGCONT within a
# session passes the kernel's own check); inside, signals work.
cat >"$S/user_kills.py" <<'PY'
import fcntl, os, signal, socket, subprocess, sys, time
def attempt(name, f):
    try:
        f()
        print(name, "DELIVERED")
    except PermissionError:
        print(name, "EPERM")
attempt("OWN", lambda: os.kill(int(sys.argv[1]), signal.SIGTERM))
attempt("OTHER", lambda: os.kill(int(sys.argv[2]), signal.SIGKILL))
attempt("CONT-PARENT", lambda: os.kill(os.getppid(), signal.SIGCONT))
c = subprocess.Popen(["sleep", "100"])
os.kill(c.pid, signal.SIGSTOP)
time.sleep(0.2)
st = open("/proc/%d/status" % c.pid).read().split("State:")[1].split()[0]
os.kill(c.pid, signal.SIGCONT)
os.kill(c.pid, signal.SIGTERM)
print("CHILD", "STOPPED" if st == "T" else "NOT-STOPPED", c.wait())
got = []
signal.signal(signal.SIGIO, lambda s, f: got.append(s))
a, b = socket.socketpair()
fcntl.fcntl(a, fcntl.F_SETOWN, os.getpid())
fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
b.send(b"x")
time.sleep(0.3)
print("SIGIO-SELF", len(got) > 0)
PY
chmod 0644 "$S/user_kills.py"
fresh
t_exec as_sudo -- $PY "$S/user_kills.py" "$ALICEV" "$OTHERV"
assert_contains "$T_OUT" '^OWN EPERM$' "alice's command cannot signal alice's own process outside"
alive $ALICEV && t_ok "alice's outside process survives" || t_fail "alice's outside process survives"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ALICEV and .bpfbox.signal.name == \"SIGTERM\" and .user.name == \"alice58\" and .process.user.id == \"$AUID\"" \
	"event for the signal to alice's own process, with the user"
assert_contains "$T_OUT" '^OTHER EPERM$' "a sandbox cannot kill another sandbox of the same user"
alive "$OTHERV" && t_ok "the other sandbox survives" || t_fail "the other sandbox survives"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $OTHERV and .bpfbox.signal.name == \"SIGKILL\"" \
	"event for the signal to another sandbox"
assert_contains "$T_OUT" '^CONT-PARENT EPERM$' "alice's command cannot SIGCONT its supervisor (same session)"
assert_ev '.event.action == "signal" and .bpfbox.signal.name == "SIGCONT"' "event for SIGCONT to the supervisor"
assert_contains "$T_OUT" '^CHILD STOPPED -15$' "inside: SIGSTOP, SIGCONT, SIGTERM to a child work"
assert_contains "$T_OUT" '^SIGIO-SELF True$' "inside: SIGIO to the command's own process works"
if ev ".event.action == \"signal\" and (.bpfbox.target.pid | IN($ALICEV, $OTHERV) | not) and .bpfbox.signal.name != \"SIGCONT\""; then
	t_fail "no refusal for signals inside" "$(cat "$T_TMP/ev")"
else
	t_ok "no refusal for signals inside"
fi
fresh
t_exec as_sudo -- /bin/bash -c 'set -m; sleep 100 & kill %1; wait %1; echo "JOB=$?"'
assert_contains "$T_OUT" '^JOB=143$' "inside: a shell with job control kills its background job (its process group)"
if ev '.event.action == "signal"'; then t_fail "job control: no refusal" "$(cat "$T_TMP/ev")"; else t_ok "job control: no refusal"; fi

kill -KILL $ROOTV $ALICEV $WINCHV 2>/dev/null
kill -TERM $OTHERBB 2>/dev/null
wait $ROOTV $ALICEV $WINCHV $OTHERBB 2>/dev/null

# --- the terminal ---
cat >"$S/tty_probe.py" <<'PY'
import fcntl, struct, termios
fd = 0
print("WINSZ", struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))[:2])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 99, 0, 0))
print("WINSZ-SET", struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))[:2])
attr = termios.tcgetattr(fd)
termios.tcsetattr(fd, termios.TCSANOW, attr)
print("TCATTR ok")
try:
    fcntl.ioctl(fd, termios.TIOCSTI, b"X")
    print("TIOCSTI accepted")
except OSError as e:
    print("TIOCSTI refused", e.errno)
PY
cat >"$S/drive_pty.py" <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
end = time.time() + 120
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(st))
PY
chmod 0644 "$S/tty_probe.py" "$S/drive_pty.py"
fresh
t_exec sh -c "cd $PROJ && env SUDO_USER=alice58 SUDO_UID=$AUID SUDO_GID=$AGID $PY $S/drive_pty.py $BPFBOX exec --policy $P --log-file $LOG -- $PY $S/tty_probe.py"
assert_contains "$T_OUT" "TIOCSTI refused 1" "TIOCSTI on the terminal is refused with EPERM (real pty)"
assert_contains "$T_OUT" "WINSZ-SET \(33, 99\)" "window size ioctls work on the terminal"
assert_contains "$T_OUT" "TCATTR ok" "termios get/set works on the terminal"
assert_ev '.event.action == "tty-ioctl" and .bpfbox.ioctl.name == "TIOCSTI" and .rule.name == "builtin:terminal-input" and .user.name == "alice58"' \
	"TIOCSTI: event"
if ev '.event.action == "tty-ioctl" and .bpfbox.ioctl.name != "TIOCSTI"'; then
	t_fail "only TIOCSTI was refused" "$(cat "$T_TMP/ev")"
else
	t_ok "only TIOCSTI was refused"
fi

users_finish "$OTHER_LOG"
