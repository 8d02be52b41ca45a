#!/usr/bin/env bash
# Hostile load on the daemon's socket, from a user who is not root: 1,000
# idle connections (slowloris), oversized and endless requests, too many
# descriptors, a connect flood, clients that never read. Meanwhile another
# user's sandboxes keep being served (their rate is measured against a quiet
# run), the daemon's memory stays bounded, and afterwards it holds no
# descriptor and no sandbox more than before.
# Its subject is the daemon in user space, not the kernel: `make vm-test` runs it on its
# second kernel only (BPFBOX_KERNEL_SHARE, tests/vm/lib.sh t_share_file), whose guest
# has the lighter share of agent sessions.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
t_share_file 2
command -v useradd >/dev/null || t_skip_all "useradd is missing"

S=$(mktemp -d /tmp/bb86.XXXXXX)
chmod 0755 "$S"
DPID=
trap 'rc=$?; [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null; [ "$T_FAIL" -eq 0 ] || tail -20 "$S/daemon.out" | sed "s/^/# daemon: /"; rm -rf "$S"; (exit $rc); t_summary' EXIT
id erin86 >/dev/null 2>&1 || useradd -M -d /tmp erin86
id mallory86 >/dev/null 2>&1 || useradd -M -d /tmp mallory86
EUID_=$(id -u erin86) EGID_=$(id -g erin86) MUID=$(id -u mallory86) MGID=$(id -g mallory86)
SOCK=$S/bpfbox.sock
cat >"$S/admin.json" <<'JSON'
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
"$BPFBOX" daemon --socket "$SOCK" --config "$S/admin.json" --log-file "$S/admin.ndjson" >"$S/daemon.out" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
assert_succeeds "the daemon listens" test -S "$SOCK"
erin() { setpriv --reuid="$EUID_" --regid="$EGID_" --init-groups env BPFBOX_SOCKET="$SOCK" "$@"; }
mallory() { setpriv --reuid="$MUID" --regid="$MGID" --init-groups "$@"; }
fds() { ls "/proc/$DPID/fd" | wc -l; }

# Erin's sandboxes, one after another for SECONDS: prints "runs failures".
erin_load() {
	local end=$(($(date +%s) + $1)) runs=0 bad=0
	while [ "$(date +%s)" -lt "$end" ]; do
		erin "$BPFBOX" exec --log-file /dev/null -- /bin/true </dev/null >/dev/null 2>&1 || bad=$((bad + 1))
		runs=$((runs + 1))
	done
	echo "$runs $bad"
}

erin "$BPFBOX" exec --log-file /dev/null -- /bin/true
sleep 1
FDS0=$(fds)
read -r quiet quiet_bad < <(erin_load 20)
echo "# quiet: $quiet sandboxes in 20 s ($quiet_bad failed)"
assert_eq 0 "$quiet_bad" "quiet: every sandbox of erin's runs"

cat >"$S/attack.py" <<'PY'
# Bounded in count and time; every connection is to the daemon's socket on this guest.
import array, os, socket, struct, sys, threading, time
path, seconds = sys.argv[1], float(sys.argv[2])
end = time.time() + seconds
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
def frame(body): return b"BBX1" + struct.pack(">I", len(body)) + body
counts = {"idle": 0, "refused_at_once": 0, "flood": 0, "oversized": 0, "endless": 0, "fds": 0, "noread": 0}
def idle():
    held = []
    for _ in range(1000):
        try:
            s = conn(); s.settimeout(0.05)
            try:
                if s.recv(1, socket.MSG_PEEK): counts["refused_at_once"] += 1
            except OSError: pass
            held.append(s); counts["idle"] += 1
        except OSError:
            pass
    while time.time() < end:
        for s in held[:50]:
            try: s.send(b"B")
            except OSError: pass
        time.sleep(1)
    for s in held: s.close()
def flood():
    while time.time() < end and counts["flood"] < 2000:
        try: conn().close(); counts["flood"] += 1
        except OSError: time.sleep(0.01)
def oversized():
    while time.time() < end:
        try:
            s = conn(); s.sendall(b"BBX1" + struct.pack(">I", 0xffffffff)); s.close(); counts["oversized"] += 1
            s = conn(); s.sendall(b"BBX1" + struct.pack(">I", 4 << 20) + b"{" * 65536); s.close()
        except OSError: pass
        time.sleep(0.2)
def endless():
    while time.time() < end:
        try:
            s = conn(); s.settimeout(2)
            s.sendall(b"BBX1" + struct.pack(">I", (4 << 20) - 1))
            for _ in range(64): s.sendall(b"x" * 65536)
            s.close(); counts["endless"] += 1
        except OSError: pass
def too_many_fds():
    while time.time() < end:
        try:
            fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(60)]
            s = conn()
            s.sendmsg([frame(b'{"v":1,"op":"ps"}')], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            for f in fds: os.close(f)
            s.close(); counts["fds"] += 1
        except OSError: pass
        time.sleep(0.2)
def never_reads():
    while time.time() < end:
        try:
            s = conn(); s.sendall(frame(b'{"v":1,"op":"ps"}')); counts["noread"] += 1
            time.sleep(0.5); s.close()
        except OSError: pass
ts = [threading.Thread(target=f) for f in (idle, flood, oversized, endless, too_many_fds, never_reads)]
for t in ts: t.start()
for t in ts: t.join()
print(" ".join(f"{k}={v}" for k, v in counts.items()))
PY
mallory sh -c "ulimit -n 4096 2>/dev/null; exec python3 $S/attack.py $SOCK 25" >"$S/attack.out" 2>&1 &
APID=$!
sleep 3
read -r loaded loaded_bad < <(erin_load 20)
peak=$(awk '/^VmHWM/ {print $2}' "/proc/$DPID/status")
wait "$APID"
echo "# attack: $(cat "$S/attack.out")"
echo "# under attack: $loaded sandboxes in 20 s ($loaded_bad failed); daemon peak RSS ${peak} kB"
assert_eq 0 "$loaded_bad" "under attack: every sandbox of erin's still runs"
ratio=$(awk -v a="$loaded" -v b="$quiet" 'BEGIN { printf "%.2f", b ? a / b : 0 }')
echo "# erin's rate under attack / quiet: $ratio"
assert_succeeds "under attack: erin is still served at a quarter of the quiet rate or more ($ratio)" \
	awk -v r="$ratio" 'BEGIN { exit !(r >= 0.25) }'
assert_succeeds "under attack: the daemon's peak RSS stays under 64 MiB (${peak} kB)" test "$peak" -lt 65536
assert_contains "$S/attack.out" 'idle=[0-9]' "the attack ran"
assert_succeeds "the attacker's refusals are in the administrator's log" \
	grep -q "\"daemon-request-refused\".*\"$MUID\"\|\"user\":{\"id\":\"$MUID\"" "$S/admin.ndjson"

# Afterwards: the daemon holds what it held before, and serves.
for _ in $(seq 40); do [ "$(fds)" -eq "$FDS0" ] && break; sleep 0.5; done
assert_eq "$FDS0" "$(fds)" "afterwards: the daemon holds no descriptor more than before"
assert_eq "" "$("$BPFBOX" ps | awk 'NR > 1')" "afterwards: no sandbox is left"
t_exec erin "$BPFBOX" exec --log-file /dev/null -- /bin/echo served
assert_contains "$T_OUT" '^served$' "afterwards: the daemon serves"
assert_succeeds "every line of the administrator's log validates against the schema" \
	python3 tests/tools/validate-events.py "$S/admin.ndjson"
