#!/usr/bin/env bash
# Objects that have no path (pidfds, memfds, SysV shm, pipes, sockets, anon
# inodes, ...) are not files under a rule: every ordinary way of making and
# using them works confined exactly as unconfined, and nothing is logged. A
# path reached through /proc/self/fd/N is still decided on the object it
# points to, and only a real refusal is logged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

escape_fixture
PL=$T_ROOT/build/helpers/pathless
[ -x "$PL" ] || t_skip_all "build/helpers/pathless is missing (make all)"

# Refusals in $LOG, one compact line each (none is empty output). A command's
# own failure (sandbox-exit with a non-zero status) is not a refusal.
refusals() {
	[ -f "$LOG" ] || return 0
	jq -c 'select(.event.outcome == "failure" and (.event.type | index("denied"))) |
		[.event.action, .file.path, .rule.name]' "$LOG"
}

# assert_refusals N NAME: exactly N refusals in the log.
assert_refusals() {
	local got
	got=$(refusals)
	[ "$(printf '%s' "$got" | grep -c .)" -eq "$1" ] && t_ok "$2" && return 0
	t_fail "$2" "expected $1 refusals; the log holds:" "$got"
}

assert_no_refusal() {
	local got
	got=$(refusals)
	[ -z "$got" ] && t_ok "$1" && return 0
	t_fail "$1" "refusals in the log:" "$got"
}

# The default policy (srt's: writes only to the private TMPDIR, /dev/null, /dev/tty).
bb_default() { env -u BPFBOX_POLICY "$BPFBOX" exec --log-file "$LOG" "$@"; }

# 1. The probe, unconfined (without capabilities, as the sandbox runs) and confined.
mkdir -p "$T_TMP/free"
"$PL" --drop-caps probe "$T_TMP/free" >"$T_TMP/unconfined" 2>&1
fresh
# shellcheck disable=SC2016 # TMPDIR is the sandbox's own
assert_succeeds "the probe runs under the default policy" bb_default -- sh -c '"$0" probe "$TMPDIR"' "$PL"
cp "$T_OUT" "$T_TMP/confined"
assert_eq "$(cat "$T_TMP/unconfined")" "$(cat "$T_TMP/confined")" \
	"every operation gives the same result confined as unconfined"
for op in pidfd_open_self pidfd_open_child clone3_pidfd pidfd_send_signal memfd memfd_meta \
	memfd_reopen sysv_shm shared_anon eventfd_epoll timerfd signalfd inotify \
	pipe_reopen file_reopen socketpair io_uring dev_null proc_self; do
	assert_contains "$T_TMP/confined" "^$op ok\$" "$op works confined"
done
# Compared above; whether they work depends on the kernel, not on bpfbox (O_TMPFILE: on the
# file system of the directory, which is overlayfs, without O_TMPFILE before 6.6, when the
# work tree lives under the host's /tmp and the guest keeps its overlay /tmp).
for op in memfd_xattr fanotify userfaultfd tmpfile; do
	if grep -q "^$op ok\$" "$T_TMP/confined"; then
		t_ok "$op works confined"
	else
		t_skip "$op works confined" "$(grep "^$op " "$T_TMP/unconfined") unconfined too"
	fi
done
assert_no_refusal "the probe leaves no refusal in the log"

# POSIX shared memory needs /dev/shm writable, which the default policy is not.
cat >"$T_TMP/shm.json" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["/dev/shm"], "denyWrite": [] }
}
JSON
fresh
assert_succeeds "POSIX shm runs with /dev/shm writable" \
	"$BPFBOX" exec --policy "$T_TMP/shm.json" --log-file "$LOG" -- "$PL" probe /dev/shm posix_shm
assert_contains "$T_OUT" '^posix_shm ok$' "shm_open, ftruncate, mmap and shm_unlink work confined"
assert_no_refusal "POSIX shm: no refusal in the log"

# 2. /proc/self/fd/N and /proc/PID/fd/N decide on the object they point to.
echo guarded >"$W/a/prot/f"
fresh
assert_succeeds "reopen of a read-denied file through /proc/self/fd runs" bb -- "$PL" reopen "$S/key" r
assert_contains "$T_OUT" '^reopen EPERM$' "reading a read-denied file through /proc/self/fd is refused"
assert_not_contains "$T_OUT" classified "/proc/self/fd read: nothing leaks"
assert_event "open-read" "$S/key" "denyRead:$S" "/proc/self/fd read: the event names the file and its rule"
assert_refusals 1 "/proc/self/fd read: one refusal, nothing else"
fresh
assert_succeeds "reopen of a write-denied file as fopen \"w\" through /proc/self/fd runs" \
	bb -- "$PL" reopen "$W/a/prot/f" w
assert_contains "$T_OUT" '^reopen EPERM$' "writing a write-denied file through /proc/self/fd is refused"
assert_eq guarded "$(cat "$W/a/prot/f")" "/proc/self/fd write: the file is not truncated"
assert_event "open-write" "$W/a/prot/f" "denyWrite:$W/a/prot" \
	"/proc/self/fd write: the event names the file and its rule"
assert_refusals 1 "/proc/self/fd write: one refusal, no create of /proc/PID/fd/N"
fresh
assert_succeeds "reading a readable file through /proc/self/fd works" bb -- "$PL" reopen "$W/pub" r
assert_contains "$T_OUT" '^read: public$' "/proc/self/fd read of a readable file: content"
echo old >"$W/rw"
assert_succeeds "writing a writable file through /proc/self/fd works" bb -- "$PL" reopen "$W/rw" w
assert_contains "$T_OUT" '^reopen ok$' "/proc/self/fd write of a writable file: ok"
assert_eq "" "$(cat "$W/rw")" "/proc/self/fd write of a writable file: truncated as asked"
# The issue's case: fopen "w" of a pipe by its /proc name (here the shell's stdout, a pipe to cat).
# shellcheck disable=SC2016 # expanded by the sandboxed shell
assert_succeeds "a shell writes to its stdout pipe through /proc/PID/fd" \
	bash -c '"$0" exec --policy "$1" --log-file "$2" -- sh -c "echo via-proc >/proc/\$\$/fd/1" | cat' \
	"$BPFBOX" "$P" "$LOG"
assert_contains "$T_OUT" '^via-proc$' "/proc/PID/fd pipe: the line arrives"
assert_no_refusal "allowed reopens leave no refusal in the log"

# open(O_CREAT) of a name the dentry cache does not hold asks path_mknod before
# the lookup; only a create that the open really needed is logged. The files
# are on the 9p lower layer, so dropping the caches makes them uncached again.
ocreat() { bb -- python3 -c 'import os, sys; os.close(os.open(sys.argv[1], int(sys.argv[2]))); print("opened")' "$@"; }
uncached() { sync && echo 2 >/proc/sys/vm/drop_caches; }
fresh
uncached
assert_succeeds "O_CREAT | O_RDONLY of an existing file in a read-only place opens it" \
	ocreat "$T_ROOT/README.md" $((0100))
assert_no_refusal "O_CREAT of an existing file: no create refusal logged"
fresh
uncached
assert_fails "O_CREAT | O_WRONLY of an existing file in a read-only place is refused" \
	ocreat "$T_ROOT/README.md" $((01 | 0100 | 02000))
assert_event "open-write" "$T_ROOT/README.md" "default:write" "O_CREAT | O_WRONLY of an existing file: open-write event"
assert_refusals 1 "O_CREAT | O_WRONLY of an existing file: one refusal, no create"
fresh
uncached
assert_fails "O_CREAT of a missing name in a read-only place is refused" \
	ocreat "$T_ROOT/bb-missing-$$" $((0100))
assert_event "create" "$T_ROOT/bb-missing-$$" "default:write" "O_CREAT of a missing name: create event"
assert_refusals 1 "O_CREAT of a missing name: one refusal"

# 3. Real programs that spawn with pidfds.
fresh
assert_succeeds "clone3(CLONE_PIDFD) + exec + pidfd_send_signal + waitid(P_PIDFD) works confined" \
	bb_default -- "$PL" spawn
assert_contains "$T_OUT" '^spawn ok$' "spawn: the child ran, was signalled and reaped through its pidfd"
cat >"$T_TMP/pidfd.py" <<'PY'
import asyncio, os, signal, subprocess, sys

p = subprocess.Popen(["sleep", "30"])
fd = os.pidfd_open(p.pid)
signal.pidfd_send_signal(fd, signal.SIGTERM)
assert p.wait() == -signal.SIGTERM, p.returncode
os.close(fd)

async def child():
    proc = await asyncio.create_subprocess_exec("sh", "-c", "exit 5")
    return await proc.wait()

if sys.version_info >= (3, 12):
    rc = asyncio.run(child())  # the default child watcher is the pidfd one
else:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    watcher = asyncio.PidfdChildWatcher()
    watcher.attach_loop(loop)
    asyncio.set_child_watcher(watcher)
    rc = loop.run_until_complete(child())
    loop.close()
assert rc == 5, rc
print("python pidfd ok")
PY
assert_succeeds "python3: subprocess, os.pidfd_open, pidfd_send_signal and asyncio's pidfd watcher work confined" \
	bb_default -- python3 "$T_TMP/pidfd.py"
assert_contains "$T_OUT" '^python pidfd ok$' "python3 pidfd: every step ran"
assert_no_refusal "spawning with pidfds leaves no refusal in the log"

fresh
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$ALL"
