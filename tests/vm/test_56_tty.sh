#!/usr/bin/env bash
# A terminal passes through: the command sees a TTY on stdio, interactive
# programs read it, job control works inside (^Z, bg, kill %1), and ^C typed
# on the terminal reaches the command without cancelling bpfbox.
. "$(dirname "$0")/lib.sh"
# Its subject is the terminal relay in user space, not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 2

W=$T_TMP/work
mkdir -p "$W"
P=$T_TMP/policy.json
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] }
}
JSON

# pty.py SCRIPT -- CMD...: runs CMD on a new terminal; SCRIPT lines are
# "send TEXT" (\n, \x03 ^C, \x1a ^Z as escapes), "expect REGEX" (10s),
# "sleep S". Prints the transcript; exits with CMD's status (99: expect failed).
cat >"$T_TMP/drive_pty.py" <<'PY'
import os, pty, re, select, sys, time
script = open(sys.argv[1]).read().splitlines()
cmd = sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "dumb"
    os.execvp(cmd[0], cmd)
buf = b""
def pump(t):
    global buf
    r, _, _ = select.select([fd], [], [], t)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            return False
        if not data:
            return False
        buf += data
    return True
failed = False
for line in script:
    op, _, arg = line.partition(" ")
    if op == "send":
        os.write(fd, arg.encode().decode("unicode_escape").encode())
    elif op == "sleep":
        end = time.time() + float(arg)
        while time.time() < end:
            pump(0.05)
    elif op == "expect":
        end = time.time() + 10
        while not re.search(arg.encode(), buf) and time.time() < end:
            if not pump(0.1):
                break
        if not re.search(arg.encode(), buf):
            sys.stdout.write("EXPECT FAILED: %s\n" % arg)
            failed = True
            break
end = time.time() + 15
while time.time() < end and pump(0.1):
    pass
sys.stdout.write(buf.decode(errors="replace"))
try:
    _, st = os.waitpid(pid, 0)
except ChildProcessError:
    st = 0
sys.exit(99 if failed else os.waitstatus_to_exitcode(st))
PY
drive() { # SCRIPT-FILE CMD...
	local s=$1
	shift
	python3 "$T_TMP/drive_pty.py" "$s" -- "$@"
}
BB=("$BPFBOX" exec --policy "$P" --log-file "$T_TMP/log")

printf '%s\n' 'expect END' >"$T_TMP/s1"
assert_succeeds "stdio of the command is the terminal" drive "$T_TMP/s1" "${BB[@]}" -- \
	sh -c 'tty; test -t 0 && test -t 1 && test -t 2 && echo ALL-TTY; echo END'
assert_contains "$T_OUT" '^/dev/pts/[0-9]+' "tty names the pseudo-terminal"
assert_contains "$T_OUT" 'ALL-TTY' "stdin, stdout and stderr are terminals"
assert_not_contains "$T_OUT" 'sandbox-start|sandbox-exit' "bpfbox's log is not on the terminal"

cat >"$T_TMP/s2" <<'S'
expect name\?
send world\n
expect hello world
S
assert_succeeds "an interactive program reads the terminal" drive "$T_TMP/s2" "${BB[@]}" -- \
	sh -c 'printf "name? "; read n; echo "hello $n"'

cat >"$T_TMP/s3" <<'S'
send echo READ""Y\n
expect READY
send sleep 30\n
sleep 1
send \x1a
expect Stopped
send bg\n
expect Running|sleep 30 &
send jobs\n
expect \[1\]\+ +Running
send kill %1\n
sleep 0.5
send sleep 30\n
sleep 1
send \x03
sleep 0.5
send echo AFTER-INT $?\n
expect AFTER-INT 130
send exit 7\n
S
drive "$T_TMP/s3" "${BB[@]}" -- bash --norc --noprofile -i >"$T_OUT" 2>&1
rc=$?
assert_contains "$T_OUT" 'Stopped' "^Z stops a job of an interactive shell inside"
assert_contains "$T_OUT" '\[1\]\+ +Running' "bg resumes it, jobs lists it"
assert_contains "$T_OUT" 'AFTER-INT 130' "^C kills the foreground job, the shell and the sandbox go on"
assert_eq 7 "$rc" "the shell's exit status passes through the terminal session"

cat >"$T_TMP/s4" <<'S'
expect WAITING
send \x03
expect CAUGHT
S
assert_status "^C on the terminal is the command's to handle, not a cancellation" 0 drive "$T_TMP/s4" "${BB[@]}" -- \
	python3 -c '
import time
print("WAITING", flush=True)
try:
    time.sleep(30)
except KeyboardInterrupt:
    print("CAUGHT", flush=True)'
cat >"$T_TMP/s5" <<'S'
expect WAITING
send \x03
S
assert_status "^C to a command that does not catch it gives 130" 130 drive "$T_TMP/s5" "${BB[@]}" -- \
	sh -c 'echo WAITING; sleep 30'
