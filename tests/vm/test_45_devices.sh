#!/usr/bin/env bash
# Device nodes: the sandbox's device set (null, zero, full, random, urandom,
# tty, ptmx, its own pts and the terminal it was given) works, read and
# write, without allowWrite; every other device node is refused by its
# number, wherever its path, with a builtin:device event; the policy's
# bpfbox.devices.allow adds devices; a pty of the host or of another sandbox
# stays out of reach.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

P=$T_TMP/policy.json
LOG=$T_TMP/log.ndjson
ALL=$T_TMP/all.ndjson
S=$T_TMP/secret
W=$T_TMP/work
mkdir -p "$S" "$W"
policy() { # FILE [DEVICES-JSON-ARRAY]
	cat >"$1" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$S"], "allowWrite": ["$W"], "denyWrite": [] },
  "bpfbox": { "devices": { "allow": ${2:-[]} } }
}
JSON
}
policy "$P"

# assert_device_event PATH MAJOR MINOR TYPE NAME: a builtin:device refusal naming the node.
assert_device_event() {
	local q='[inputs | select(.event.outcome == "failure" and .rule.name == "builtin:device" and
		.file.path == $p and .file.type == $t and .bpfbox.device.major == ($ma | tonumber) and
		.bpfbox.device.minor == ($mi | tonumber))] | length > 0'

	jq -e -n --arg p "$1" --arg ma "$2" --arg mi "$3" --arg t "$4" "$q" "$LOG" >/dev/null 2>&1 &&
		t_ok "$5" && return 0
	t_fail "$5" "no builtin:device refusal of $1 ($4 $2:$3) in $LOG; refusals:" \
		"$(jq -c 'select(.event.outcome == "failure") | [.event.action, .file.path, .rule.name, .file.type,
			.bpfbox.device]' "$LOG" 2>&1 | tail -n 20)"
}

assert_no_refusal() {
	local n
	n=$(jq -n '[inputs | select(.rule.name)] | length' "$LOG" 2>&1)
	[ "$n" = 0 ] && t_ok "$1" && return 0
	t_fail "$1" "refusals in $LOG:" "$(jq -c 'select(.rule.name) | [.event.action, .file.path, .rule.name]' "$LOG")"
}

# The built-in set, read and write, none of it under allowWrite.
fresh
assert_succeeds "null, zero, full, random and urandom open for read and write" sh_in '
	echo x >/dev/null && head -c4 /dev/zero | od >/dev/null && head -c4 /dev/urandom >/dev/null &&
	head -c4 /dev/random >/dev/null && exec 3>/dev/zero 4>/dev/urandom 5>/dev/full 6<>/dev/null'
assert_fails "writing /dev/full reaches the device" bb -- dd if=/dev/zero of=/dev/full bs=1 count=1
assert_contains "$T_OUT" 'No space left on device' "the device's own error (ENOSPC), not a refusal"
assert_no_refusal "the built-in set: no refusal"

# A pseudo-terminal made and used inside the sandbox.
fresh
assert_succeeds "python pty.openpty: the pts is reopened by path and carries data" bb -- python3 -c '
import os, pty
m, s = pty.openpty()
name = os.ttyname(s)
f = os.open(name, os.O_RDWR | os.O_NOCTTY)
os.write(f, b"through-the-pty\n")
assert b"through-the-pty" in os.read(m, 100)
print(name)'
assert_contains "$T_OUT" '^/dev/pts/[0-9]+$' "the pty is a devpts pty"
assert_succeeds "script -qc runs a command on a new terminal" bb -- script -qec 'tty; echo IN-SCRIPT' /dev/null
assert_contains "$T_OUT" '^/dev/pts/[0-9]+' "script's command sees a pts"
assert_contains "$T_OUT" 'IN-SCRIPT' "script's command ran"
assert_no_refusal "own ptys: no refusal"

# The terminal the command was given: reopened by path and through /dev/tty.
cat >"$T_TMP/on_pty.py" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
sys.stdout.write(out.decode(errors="replace"))
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
PY
fresh
assert_succeeds "the command's terminal reopens by its path and as /dev/tty" python3 "$T_TMP/on_pty.py" \
	"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- sh -c \
	't=$(tty) && echo "by-path" >"$t" && exec 3<>"$t" && echo via-dev-tty >/dev/tty'
assert_contains "$T_OUT" 'by-path' "written through the terminal's path"
assert_contains "$T_OUT" 'via-dev-tty' "written through /dev/tty"

# The host's pty, made before the sandbox, is not the sandbox's.
python3 -c 'import os, pty, time; m, s = pty.openpty(); print(os.ttyname(s), flush=True); time.sleep(60)' \
	>"$T_TMP/hostpty" &
host_pty_pid=$!
for _ in $(seq 1 50); do [ -s "$T_TMP/hostpty" ] && break; sleep 0.1; done
HP=$(cat "$T_TMP/hostpty")
fresh
assert_fails "the host's pty is refused for writing" sh_in "echo leak >$HP"
assert_device_event "$HP" 136 "${HP##*/}" char "the host's pty: event with its number"
fresh
assert_fails "the host's pty is refused for reading" sh_in "head -c1 <$HP"
assert_device_event "$HP" 136 "${HP##*/}" char "the host's pty, read: event"

# Another sandbox's pty: made there, refused here.
"$BPFBOX" exec --policy "$P" -- python3 -c '
import os, pty, time
m, s = pty.openpty()
print(os.ttyname(s), flush=True)
time.sleep(60)' >"$T_TMP/otherpty" 2>/dev/null &
other_pid=$!
for _ in $(seq 1 100); do [ -s "$T_TMP/otherpty" ] && break; sleep 0.1; done
OP=$(cat "$T_TMP/otherpty")
fresh
assert_contains "$T_TMP/otherpty" '^/dev/pts/[0-9]+$' "another sandbox made a pty"
assert_fails "another sandbox's pty is refused" sh_in "echo leak >$OP"
assert_device_event "$OP" 136 "${OP##*/}" char "another sandbox's pty: event"
kill "$other_pid" "$host_pty_pid" 2>/dev/null
wait "$other_pid" "$host_pty_pid" 2>/dev/null

# A pts number the sandbox once had, given to the host after the sandbox's pty
# closed: the ownership went with the old pty.
cat >"$T_TMP/reuse.py" <<PY
import os, pty, time
m, s = pty.openpty()
name = os.ttyname(s)
os.close(s); os.close(m)
open("$W/name", "w").write(name)
for _ in range(100):
    if os.path.exists("$W/host-ready"):
        break
    time.sleep(0.1)
try:
    os.close(os.open(name, os.O_RDWR | os.O_NOCTTY))
    print("OPENED", name)
except PermissionError:
    print("REFUSED", name)
PY
rm -f "$W/name" "$W/host-ready"
fresh
bb -- python3 "$T_TMP/reuse.py" >"$T_TMP/reuse.out" 2>&1 &
reuse_pid=$!
for _ in $(seq 1 100); do [ -s "$W/name" ] && break; sleep 0.1; done
python3 -c "import os, pty, time; m, s = pty.openpty(); print(os.ttyname(s), flush=True); time.sleep(30)" \
	>"$T_TMP/hostpty2" &
host2_pid=$!
for _ in $(seq 1 50); do [ -s "$T_TMP/hostpty2" ] && break; sleep 0.1; done
touch "$W/host-ready"
wait "$reuse_pid"
assert_eq "$(cat "$W/name")" "$(cat "$T_TMP/hostpty2")" "the host's new pty took the sandbox's old number"
assert_contains "$T_TMP/reuse.out" '^REFUSED' "the sandbox cannot open the host's pty under its old number"
OLD=$(cat "$W/name")
assert_device_event "$OLD" 136 "${OLD##*/}" char "the reused number: event"
kill "$host2_pid" 2>/dev/null
wait "$host2_pid" 2>/dev/null

# Virtual consoles (the text on every console) and the system console.
fresh
assert_fails "/dev/vcs1 is refused" bb -- head -c1 /dev/vcs1
assert_device_event /dev/vcs1 7 1 char "/dev/vcs1: event"
fresh
assert_fails "/dev/vcsa1 is refused" bb -- head -c1 /dev/vcsa1
assert_device_event /dev/vcsa1 7 129 char "/dev/vcsa1: event"
fresh
assert_fails "/dev/console is refused" sh_in 'echo x >/dev/console'
assert_device_event /dev/console 5 1 char "/dev/console: event"
fresh
assert_fails "/dev/mem, /dev/kmsg are refused" sh_in 'head -c1 /dev/kmsg || head -c1 /dev/mem'
assert_device_event /dev/kmsg 1 11 char "/dev/kmsg: event"

# A node elsewhere is judged by its number: bind mounts made outside.
touch "$T_TMP/vcs-copy"
mount --bind /dev/vcs1 "$T_TMP/vcs-copy"
# /tmp is nodev in the guest: the node goes on the root overlay.
NODE_DIR=$(mktemp -d /var/tmp/test_45.XXXXXX)
mknod "$NODE_DIR/vcs-node" c 7 1
fresh
assert_fails "a bind mount of /dev/vcs1 elsewhere is refused" bb -- head -c1 "$T_TMP/vcs-copy"
assert_device_event "$T_TMP/vcs-copy" 7 1 char "the copy's event names its path and number"
fresh
assert_succeeds "outside, the node made with /dev/vcs1's number opens" head -c1 "$NODE_DIR/vcs-node"
assert_fails "inside, that node is refused" bb -- head -c1 "$NODE_DIR/vcs-node"
assert_device_event "$NODE_DIR/vcs-node" 7 1 char "the node's event"
rm -rf "$NODE_DIR"
fresh
touch "$T_TMP/null-copy2"
mount --bind /dev/null "$T_TMP/null-copy2"
assert_succeeds "a bind mount of /dev/null outside allowWrite is writable" sh_in "echo x >$T_TMP/null-copy2"
umount "$T_TMP/vcs-copy" "$T_TMP/null-copy2"

# A block device: a loop device over a read-denied file.
printf 'loop-secret-%s\n' classified >"$S/disk.img"
truncate -s 1M "$S/disk.img"
kdir=
for d in "${BPFBOX_VM_CACHE:-/var/cache/bpfbox-vm}"/*/; do
	[ "$(cat "$d/release" 2>/dev/null)" = "$(uname -r)" ] && kdir=$d
done
[ -e /dev/loop-control ] || { [ -n "$kdir" ] && [ -f "$kdir/modules/loop.ko" ] && insmod "$kdir/modules/loop.ko"; }
LOOP=$(losetup -f --show "$S/disk.img" 2>/dev/null)
if [ -n "$LOOP" ] && [ -b "$LOOP" ]; then
	assert_succeeds "outside, the loop device shows the secret" grep -aq loop-secret-classified "$LOOP"
	fresh
	assert_fails "the backing file is read-denied" bb -- grep -aq loop-secret "$S/disk.img"
	fresh
	assert_fails "its loop device is refused" bb -- grep -aq loop-secret "$LOOP"
	assert_device_event "$LOOP" 7 "$(($(stat -c '0x%T' "$LOOP")))" block "the loop device: a block device event"
	fresh
	assert_fails "/dev/loop-control is refused" sh_in 'exec 3</dev/loop-control'
	assert_device_event /dev/loop-control 10 237 char "/dev/loop-control: event"
	policy "$T_TMP/allow-loop.json" "[\"$LOOP\"]"
	fresh
	assert_succeeds "bpfbox.devices.allow opens the loop device" \
		"$BPFBOX" exec --policy "$T_TMP/allow-loop.json" --log-file "$LOG" -- grep -aq loop-secret "$LOOP"
	losetup -d "$LOOP"
else
	t_skip "loop device tests" "no loop driver in this guest (loop.ko not in the VM kernel cache)"
fi

# The allow list, a missing entry, and policy explain.
policy "$T_TMP/allow.json" '["/dev/vcs1", "/dev/no-such-device"]'
fresh
assert_succeeds "bpfbox.devices.allow opens /dev/vcs1" \
	"$BPFBOX" exec --policy "$T_TMP/allow.json" --log-file "$LOG" -- head -c1 /dev/vcs1
assert_contains "$T_OUT" 'bpfbox.devices.allow\[1\]: "/dev/no-such-device": No such file' \
	"a missing device is a policy warning"
assert_contains "$LOG" 'bpfbox.devices.allow /dev/no-such-device: No such file' "and a warning event at launch"
assert_fails "an allowed device does not open the others" \
	"$BPFBOX" exec --policy "$T_TMP/allow.json" --log-file "$LOG" -- head -c1 /dev/vcs2
assert_succeeds "policy explain: the built-in set" "$BPFBOX" policy explain --write "$P" /dev/zero
assert_contains "$T_OUT" 'device /dev/zero \(char device 1:5\): allowed by builtin:device-set' \
	"explain names the built-in set"
assert_status "policy explain: a device outside the set" 1 "$BPFBOX" policy explain "$P" /dev/vcs1
assert_contains "$T_OUT" 'device /dev/vcs1 \(char device 7:1\): denied by builtin:device' \
	"explain names builtin:device"
assert_succeeds "policy explain: an allowed device" "$BPFBOX" policy explain "$T_TMP/allow.json" /dev/vcs1
assert_contains "$T_OUT" 'allowed by bpfbox.devices.allow \(entry "/dev/vcs1"\)' "explain names the entry"

# The start event names the command's uid and warns at uid 0.
assert_succeeds "the start event warns at uid 0" jq -e -s \
	'map(select(.event.action == "sandbox-start")) | length > 0 and
	 all(.process.user.id == "0" and (.message | contains("runs as uid 0")))' "$ALL" "$LOG"

# The allowed devices and terminals of ended sandboxes are gone from the kernel.
left=$(bpftool -j map dump pinned /sys/fs/bpf/bpfbox/*/device_allow 2>/dev/null | jq length)
assert_eq 0 "${left:-missing}" "no device_allow entries left behind"
