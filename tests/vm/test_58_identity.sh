#!/usr/bin/env bash
# Who the command runs as: under sudo the user who ran it (uid, gid, groups,
# home, files), --user overriding that, uid 0 without capabilities otherwise;
# ~ meaning that user's home even when HOME=/root. Nothing outside the sandbox
# can be signalled (a root process, the user's own process, the supervisor,
# another sandbox, through kill, kill(-1), pidfd and SIGIO) while signals
# inside work; TIOCSTI on the terminal is refused, other tty ioctls are not.
. "$(dirname "$0")/lib.sh"

command -v useradd >/dev/null || t_skip_all "useradd is missing"
PY=/usr/bin/python3
[ -x $PY ] || t_skip_all "$PY is missing"

# Real users in the guest (its root is an overlay: nothing reaches the host).
groupadd -f bb58devs
id alice58 >/dev/null 2>&1 || useradd -m -s /bin/bash -G bb58devs alice58
id bob58 >/dev/null 2>&1 || useradd -m -s /bin/sh bob58
AUID=$(id -u alice58) AGID=$(id -g alice58) BUID=$(id -u bob58) DEVS=$(getent group bb58devs | cut -d: -f3)
AH=$(getent passwd alice58 | cut -d: -f6)
PROJ=$AH/project
mkdir -p "$PROJ" "$AH/.ssh" "$AH/.config"
echo key >"$AH/.ssh/id_test"
echo mine >"$AH/.config/secret"
chmod 0700 "$AH/.ssh" && chmod 0600 "$AH/.ssh/id_test" "$AH/.config/secret"
chmod 0755 "$AH" "$PROJ"
chown -R alice58:alice58 "$AH"

# Scripts and logs every user can read; $T_TMP is root's alone.
S=$(mktemp -d /tmp/bb58.XXXXXX)
chmod 0755 "$S"
P=$S/policy.json
cat >"$P" <<'JSON'
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["~/.ssh"], "allowWrite": ["~/project"], "denyWrite": [] }
}
JSON
LOG=$S/log.ndjson
fresh() {
	cat "$LOG" >>"$S/all.keep" 2>/dev/null
	: >"$LOG"
}
# as_sudo CMD...: bpfbox started the way sudo starts it for alice58 (sudo's variables, HOME=/root).
as_sudo() {
	(cd "$PROJ" && env HOME=/root SUDO_USER=alice58 SUDO_UID="$AUID" SUDO_GID="$AGID" \
		SUDO_COMMAND="$BPFBOX exec" "$BPFBOX" exec --policy "$P" --log-file "$LOG" "$@")
}
as_root() { (cd "$PROJ" && env -u SUDO_UID -u SUDO_USER -u SUDO_GID "$BPFBOX" exec --policy "$P" --log-file "$LOG" "$@"); }
# ev JQ-FILTER: the log has a line matching it.
ev() { jq -e -c "select($1)" "$LOG" >"$T_TMP/ev" 2>/dev/null && [ -s "$T_TMP/ev" ]; }
assert_ev() {
	if ev "$1"; then t_ok "$2"; else t_fail "$2" "no line matches $1" "$(cat "$LOG")"; fi
}
status_of() { grep -E "^$1:" "$T_TMP/out" | awk '{print $2, $3, $4, $5}'; }

ID_SCRIPT='grep -E "^(Uid|Gid|Groups|CapEff|CapPrm|NoNewPrivs):" /proc/self/status;
echo "HOME=$HOME USER=$USER LOGNAME=$LOGNAME SHELL=$SHELL"; echo "PWD=$(pwd)";
rm -f made; touch made && echo "MADE=$(stat -c %U:%G made)"; echo "TMPOWNER=$(stat -c %U "$TMPDIR")"'

# --- sudo ---
fresh
as_sudo -- /bin/sh -c "$ID_SCRIPT" >"$T_TMP/out" 2>&1
rc=$?
cp "$T_TMP/out" "$T_TMP/sudo.out"
assert_eq 0 "$rc" "sudo: the command runs"
assert_eq "$AUID $AUID $AUID $AUID" "$(status_of Uid)" "sudo: real, effective, saved and fs uid are alice's"
assert_eq "$AGID $AGID $AGID $AGID" "$(status_of Gid)" "sudo: all four gids are alice's"
assert_contains "$T_TMP/out" "^Groups:.*\b$DEVS\b" "sudo: alice's supplementary group (initgroups)"
assert_contains "$T_TMP/out" '^CapEff:[[:space:]]+0+$' "sudo: no effective capability"
assert_contains "$T_TMP/out" '^CapPrm:[[:space:]]+0+$' "sudo: no permitted capability"
assert_contains "$T_TMP/out" '^NoNewPrivs:[[:space:]]+1$' "sudo: no new privileges"
assert_contains "$T_TMP/out" "^HOME=$AH USER=alice58 LOGNAME=alice58 SHELL=/bin/bash\$" \
	"sudo: HOME, USER, LOGNAME, SHELL from the passwd entry, not HOME=/root"
assert_contains "$T_TMP/out" "^PWD=$PROJ\$" "sudo: the working directory is kept"
assert_contains "$T_TMP/out" '^MADE=alice58:alice58$' "sudo: a file made in the user's project is the user's"
assert_contains "$T_TMP/out" '^TMPOWNER=alice58$' "sudo: the private TMPDIR belongs to the user"
assert_ev ".event.action == \"sandbox-start\" and .user.id == \"$AUID\" and .user.name == \"alice58\" and (.message | test(\"as alice58\"))" \
	"sudo: the start event names the user (user.id, user.name)"
assert_ev ".event.action == \"sandbox-exit\" and .user.name == \"alice58\"" "sudo: the exit event carries user.name"

# ~ is alice's home although HOME=/root: her key is protected, her own 0600 file readable.
fresh
t_exec as_sudo -- /bin/cat "$AH/.ssh/id_test"
[ "$T_RC" -ne 0 ] && grep -q 'Operation not permitted' "$T_OUT" && t_ok "sudo: ~/.ssh in the policy protects alice's key (HOME=/root)" ||
	t_fail "sudo: ~/.ssh protects alice's key" "$(t_cmd_diag cat)"
assert_ev ".event.action == \"open-read\" and .rule.name == \"denyRead:$AH/.ssh\" and .user.id == \"$AUID\" and .user.name == \"alice58\" and .process.user.id == \"$AUID\"" \
	"sudo: the refusal names rule denyRead:~/.ssh resolved to alice's home, and user.id/user.name"
assert_succeeds "sudo: alice reads her own 0600 file (uid 0 without capabilities could not)" as_sudo -- /bin/cat "$AH/.config/secret"
fresh
assert_fails "sudo: writing outside ~/project is refused" as_sudo -- /bin/sh -c "echo x >$AH/outside"
assert_succeeds "sudo: writing in ~/project works" as_sudo -- /bin/sh -c "echo x >$PROJ/inside"
assert_eq "alice58" "$(stat -c %U "$PROJ/inside")" "sudo: the file written belongs to alice"

# Mismatched or incomplete variables: nothing runs.
fresh
t_exec env SUDO_USER=bob58 SUDO_UID="$AUID" SUDO_GID="$AGID" "$BPFBOX" exec --policy "$P" -- /bin/touch "$S/ran"
assert_eq 125 "$T_RC" "SUDO_USER not matching SUDO_UID's name: exit 125"
assert_contains "$T_OUT" "SUDO_USER=bob58 does not match SUDO_UID=$AUID.*alice58" "the mismatch is named"
[ -e "$S/ran" ] && t_fail "the mismatched run ran nothing" || t_ok "the mismatched run ran nothing"

# The user cannot enter the launch directory: 125 with a clear message.
LOCKED=$S/locked
mkdir -p "$LOCKED" && chmod 0700 "$LOCKED"
t_exec sh -c "cd $LOCKED && env SUDO_USER=alice58 SUDO_UID=$AUID SUDO_GID=$AGID $BPFBOX exec --policy $P -- /bin/true"
assert_eq 125 "$T_RC" "a working directory the user cannot enter: exit 125"
assert_contains "$T_OUT" "user alice58 \(uid $AUID\) cannot enter the working directory $LOCKED: Permission denied" \
	"the message names the user and the directory"

# --- --user ---
t_exec as_sudo --user bob58 -- /bin/sh -c 'grep ^Uid: /proc/self/status; echo "HOME=$HOME"; cd / && ls'
assert_contains "$T_OUT" "^Uid:[[:space:]]+$BUID[[:space:]]" "--user overrides the sudo variables"
assert_contains "$T_OUT" "^HOME=/home/bob58\$" "--user: bob's home"
t_exec as_root --user "$AUID:bb58devs" -- /bin/sh -c 'grep -E "^(Uid|Gid):" /proc/self/status'
assert_contains "$T_OUT" "^Uid:[[:space:]]+$AUID[[:space:]]" "--user UID:GROUP: the uid"
assert_contains "$T_OUT" "^Gid:[[:space:]]+$DEVS[[:space:]]+$DEVS" "--user UID:GROUP: the group as primary gid"
fresh
t_exec as_sudo --user root -- /bin/sh -c 'grep -E "^(Uid|CapEff):" /proc/self/status'
assert_contains "$T_OUT" '^Uid:[[:space:]]+0[[:space:]]+0' "--user root keeps uid 0"
assert_contains "$T_OUT" '^CapEff:[[:space:]]+0+$' "--user root: still no capability"
assert_status "--user of an unknown user: 125" 125 as_root --user nosuchuser58 -- /bin/true
assert_contains "$T_OUT" "no user 'nosuchuser58'" "--user: the unknown user is named"

# --- neither: uid 0 without capabilities, and said so ---
fresh
t_exec as_root -- /bin/sh -c 'grep -E "^(Uid|CapEff):" /proc/self/status'
assert_contains "$T_OUT" '^Uid:[[:space:]]+0[[:space:]]+0' "no sudo, no --user: uid 0"
assert_contains "$T_OUT" '^CapEff:[[:space:]]+0+$' "no sudo, no --user: no capability"
assert_ev '.event.action == "sandbox-start" and .user.id == "0" and (.message | test("uid 0 without capabilities: no sudo user and no --user"))' \
	"the start event says the command runs as uid 0 without capabilities"
assert_succeeds "--help" "$BPFBOX" exec --help
assert_contains "$T_OUT" "otherwise uid 0, always without capabilities" "--help says who the command runs as"
assert_contains "$T_OUT" "--user NAME\|UID\[:GROUP\]" "--help documents --user"

# --- real sudo, when the guest can run it (setuid over 9p and overlay) ---
if command -v sudo >/dev/null; then
	echo 'alice58 ALL=(root) NOPASSWD: ALL' >/etc/sudoers.d/bb58 && chmod 0440 /etc/sudoers.d/bb58
	if (cd "$PROJ" && setpriv --reuid=alice58 --regid=alice58 --init-groups sudo -n true) >/dev/null 2>&1; then
		t_exec sh -c "cd $PROJ && setpriv --reuid=alice58 --regid=alice58 --init-groups sudo -n $BPFBOX exec --policy $P -- /bin/sh -c 'id -u; id -G; echo \$HOME; pwd'"
		assert_contains "$T_OUT" "^$AUID\$" "real sudo: the command runs as the user who ran sudo"
		assert_contains "$T_OUT" "(^| )$DEVS( |\$)" "real sudo: with the user's groups"
		assert_contains "$T_OUT" "^$AH\$" "real sudo: HOME is the user's"
		assert_contains "$T_OUT" "^$PROJ\$" "real sudo: in the user's directory"
	else
		t_skip "real sudo" "sudo cannot run in this guest: $(cd "$PROJ" && setpriv --reuid=alice58 --regid=alice58 --init-groups sudo -n true 2>&1 | head -1)"
	fi
	rm -f /etc/sudoers.d/bb58
else
	t_skip "real sudo" "sudo is not installed (tools/install-deps.sh installs it)"
fi

# --- signals ---
# Victims outside every sandbox: a root process and one of alice's own.
sleep 1000 &
ROOTV=$!
setpriv --reuid=alice58 --regid=alice58 --init-groups sleep 1000 &
ALICEV=$!
# Another sandbox of alice's, which says its pid.
OTHER_LOG=$S/other.ndjson
rm -f "$PROJ/other.pid"
(cd "$PROJ" && env SUDO_USER=alice58 SUDO_UID="$AUID" SUDO_GID="$AGID" "$BPFBOX" exec --policy "$P" --log-file "$OTHER_LOG" \
	-- /bin/sh -c 'echo $$ >other.pid; exec sleep 1000') &
OTHERBB=$!
for _ in $(seq 300); do [ -s "$PROJ/other.pid" ] && break; sleep 0.1; done
OTHERV=$(cat "$PROJ/other.pid" 2>/dev/null)
state() { awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

fresh
t_exec as_root -- /bin/kill -STOP "$ROOTV"
[ "$T_RC" -ne 0 ] && t_ok "uid 0 sandbox: kill -STOP of a root process outside is refused" || t_fail "kill -STOP of a root process refused" "$(t_cmd_diag kill)"
sleep 0.3
[ "$(state $ROOTV)" != T ] && t_ok "the root process was not stopped" || { t_fail "the root process was not stopped"; kill -CONT $ROOTV; }
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ROOTV and .bpfbox.signal.name == \"SIGSTOP\" and .bpfbox.signal.number == 19 and .rule.name == \"builtin:signal-outside-sandbox\" and .event.outcome == \"failure\"" \
	"the refusal names the target pid and the signal"

fresh
t_exec as_sudo -- /bin/kill -TERM "$ALICEV"
[ "$T_RC" -ne 0 ] && [ -e /proc/$ALICEV ] && t_ok "alice's sandbox cannot kill alice's own process outside" ||
	t_fail "alice's own outside process survives" "$(t_cmd_diag kill)"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ALICEV and .bpfbox.signal.name == \"SIGTERM\" and .user.name == \"alice58\"" \
	"event for the signal to alice's own process"

fresh
t_exec as_sudo -- /bin/kill -KILL "$OTHERV"
[ "$T_RC" -ne 0 ] && [ -e /proc/$OTHERV ] && t_ok "a sandbox cannot kill another sandbox of the same user" ||
	t_fail "the other sandbox survives" "$(t_cmd_diag kill)"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $OTHERV and .bpfbox.signal.name == \"SIGKILL\"" "event for the signal to another sandbox"

# The supervisor: uid 0 sandbox (a user's would already fail the kernel's own check, but
# SIGCONT within a session passes it, so try that one as alice too).
fresh
t_exec as_root -- /bin/sh -c 'kill -TERM $PPID'
[ "$T_RC" -ne 0 ] && t_ok "the command cannot SIGTERM its supervisor" || t_fail "the command cannot SIGTERM its supervisor" "$(t_cmd_diag)"
assert_ev '.event.action == "signal" and .bpfbox.signal.name == "SIGTERM"' "event for the signal to the supervisor"
assert_ev '.event.action == "sandbox-exit" and .bpfbox.exit.ended_by == "exit"' "the supervisor went on and reported a normal exit"
fresh
t_exec as_sudo -- /bin/sh -c 'kill -CONT $PPID'
[ "$T_RC" -ne 0 ] && t_ok "alice's command cannot SIGCONT its supervisor (same session)" || t_fail "SIGCONT to the supervisor refused" "$(t_cmd_diag)"
assert_ev '.event.action == "signal" and .bpfbox.signal.name == "SIGCONT"' "event for SIGCONT to the supervisor"

# kill(-1) and pidfd_send_signal (SIGCONT: harmless if it got through).
fresh
t_exec as_root -- $PY -c 'import os, signal
try:
    os.kill(-1, signal.SIGCONT); print("KILL-1 OK")
except PermissionError: print("KILL-1 EPERM")'
assert_contains "$T_OUT" "KILL-1 EPERM" "kill(-1) from a sandbox alone in its cgroup reaches nobody"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ROOTV and .bpfbox.signal.name == \"SIGCONT\"" "kill(-1): the outside root process is named"
fresh
t_exec as_root -- $PY -c "import os, signal
fd = os.pidfd_open($ROOTV)
try:
    signal.pidfd_send_signal(fd, signal.SIGCONT); print('PIDFD OK')
except PermissionError: print('PIDFD EPERM')"
assert_contains "$T_OUT" "PIDFD EPERM" "pidfd_send_signal to a process outside is refused"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ROOTV" "pidfd_send_signal: event"

# SIGIO to an outside owner set with F_SETOWN (SIGIO's default action would kill the victim).
fresh
t_exec as_root -- $PY -c "import fcntl, os, socket, time
a, b = socket.socketpair()
fcntl.fcntl(a, fcntl.F_SETOWN, $ROOTV)
fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
b.send(b'x'); time.sleep(0.3); print('SENT')"
sleep 0.3
assert_contains "$T_OUT" SENT "F_SETOWN + O_ASYNC: the I/O itself works"
[ -e /proc/$ROOTV ] && [ "$(state $ROOTV)" != Z ] && t_ok "SIGIO to an outside owner the sandbox set is not delivered" ||
	t_fail "SIGIO to an outside owner the sandbox set is not delivered"
assert_ev ".event.action == \"signal\" and .bpfbox.target.pid == $ROOTV and .bpfbox.signal.name == \"SIGIO\"" "SIGIO: event naming the owner and SIGIO"

# Inside the sandbox signals keep working: stop, continue, terminate a child; job control of a shell.
fresh
t_exec as_sudo -- $PY -c 'import os, signal, subprocess, time
c = subprocess.Popen(["sleep", "100"])
os.kill(c.pid, signal.SIGSTOP); time.sleep(0.2)
st = open("/proc/%d/status" % c.pid).read().split("State:")[1].split()[0]
os.kill(c.pid, signal.SIGCONT); os.kill(c.pid, signal.SIGTERM)
print("STOPPED" if st == "T" else "NOT-STOPPED", c.wait())
a, b = __import__("socket").socketpair()
import fcntl
got = []
signal.signal(signal.SIGIO, lambda s, f: got.append(s))
fcntl.fcntl(a, fcntl.F_SETOWN, os.getpid())
fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
b.send(b"x"); time.sleep(0.3)
print("SIGIO-SELF", len(got) > 0)'
assert_contains "$T_OUT" "^STOPPED -15$" "inside: SIGSTOP, SIGCONT, SIGTERM to a child work"
assert_contains "$T_OUT" "^SIGIO-SELF True$" "inside: SIGIO to the sandbox's own process works"
t_exec as_sudo -- /bin/bash -c 'set -m; sleep 100 & kill %1; wait %1; echo "JOB=$?"'
assert_contains "$T_OUT" '^JOB=143$' "inside: a shell with job control kills its background job (its process group)"
if ev '.event.action == "signal"'; then t_fail "no signal refusal for signals inside" "$(cat "$T_TMP/ev")"; else t_ok "no signal refusal for signals inside"; fi

kill -KILL $ROOTV $ALICEV 2>/dev/null
kill -TERM $OTHERBB 2>/dev/null
wait $ROOTV $ALICEV $OTHERBB 2>/dev/null

# --- the terminal ---
cat >"$S/tty.py" <<'PY'
import fcntl, struct, sys, termios
fd = 0
ws = fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
print("WINSZ", struct.unpack("HHHH", ws)[:2])
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
chmod 0644 "$S/tty.py"
cat >"$S/pty.py" <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
end = time.time() + 60
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
fresh
t_exec sh -c "cd $PROJ && env SUDO_USER=alice58 SUDO_UID=$AUID SUDO_GID=$AGID $PY $S/pty.py $BPFBOX exec --policy $P --log-file $LOG -- $PY $S/tty.py"
assert_contains "$T_OUT" "TIOCSTI refused 1" "TIOCSTI on the terminal is refused with EPERM (real pty)"
assert_contains "$T_OUT" "WINSZ-SET \(33, 99\)" "window size ioctls work on the terminal"
assert_contains "$T_OUT" "TCATTR ok" "termios get/set works on the terminal"
assert_ev '.event.action == "tty-ioctl" and .bpfbox.ioctl.name == "TIOCSTI" and .rule.name == "builtin:terminal-input" and .user.name == "alice58"' \
	"TIOCSTI: event"
if ev '.event.action == "tty-ioctl" and .bpfbox.ioctl.name != "TIOCSTI"'; then t_fail "only TIOCSTI was refused" "$(cat "$T_TMP/ev")"; else t_ok "only TIOCSTI was refused"; fi

fresh
cat "$S/all.keep" "$OTHER_LOG" >"$T_TMP/all.ndjson" 2>/dev/null
assert_succeeds "every line of these runs validates against the schema" python3 tests/tools/validate-events.py "$T_TMP/all.ndjson"
rm -rf "$S"
