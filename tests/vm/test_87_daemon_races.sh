#!/usr/bin/env bash
# Races against what root does for a caller of the daemon. An ordinary user
# (ruth87) runs sandboxes through the daemon; while they end, a process of hers
# keeps swapping the directories inside her TMPDIR, or the TMPDIR itself, for
# symlinks to a root-only directory of victim files. Root's teardown, and gc of
# a sandbox whose supervisor was SIGKILLed, must remove her TMPDIR and nothing
# else. Also: the registry is root's alone (ps still works through the daemon),
# and a PATH naming a root-only directory answers the same whether or not the
# command is there.
# The races and the PATH search run on both kernels (openat2 and the sandbox's hooks
# are the kernel's); the registry's modes and ps are user space (t_share 1).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
command -v useradd >/dev/null || t_skip_all "useradd is missing"
command -v python3 >/dev/null || t_skip_all "python3 is missing"

S=$(mktemp -d /tmp/bb87.XXXXXX)
chmod 0755 "$S"
# Root's own: ruth cannot even look inside (mktemp -d makes it 0700).
V=$(mktemp -d /root/bb87.XXXXXX)
DPID=
trap 'rc=$?; [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null; [ "$T_FAIL" -eq 0 ] || tail -20 "$S/daemon.out" | sed "s/^/# daemon: /"; rm -rf "$S" "$V" /tmp/bpfbox-*.away; (exit $rc); t_summary' EXIT
id ruth87 >/dev/null 2>&1 || useradd -M -d /tmp ruth87
RUID=$(id -u ruth87) RGID=$(id -g ruth87)
SOCK=$S/bpfbox.sock
ruth() { setpriv --reuid="$RUID" --regid="$RGID" --init-groups env BPFBOX_SOCKET="$SOCK" "$@"; }

# The victims: files by the names the TMPDIR holds, at the top and one level down.
mkdir "$V/victims" "$V/bin"
for d in '' d0/ d1/ d2/ d3/; do
	mkdir -p "$V/victims/$d"
	for i in $(seq -w 0 39); do echo "victim $d$i" >"$V/victims/${d}f$i"; done
done
printf '#!/bin/sh\necho probed\n' >"$V/bin/probe"
chmod 0755 "$V/bin/probe"
(cd "$V/victims" && find . -type f | sort | xargs sha256sum) >"$S/victims.before"

cat >"$S/admin.json" <<'JSON'
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
# A registry directory left looser by an older bpfbox: the daemon tightens it at startup.
mkdir -p /run/bpfbox/sandboxes && chmod 0755 /run/bpfbox/sandboxes
"$BPFBOX" daemon --socket "$SOCK" --config "$S/admin.json" --log-file "$S/admin.ndjson" >"$S/daemon.out" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
assert_succeeds "the daemon listens" test -S "$SOCK"
echo "# the daemon listens at ${SECONDS}s (the first in a fresh guest loads the programs)"

# ruth's racer: fills her TMPDIR, writes "go" (the sandbox then ends), and swaps
# entries for symlinks to the victims until the TMPDIR is gone or SECONDS pass
# (up to a few hundred swaps a second, sleeping half the time).
cat >"$S/race.py" <<'PY'
import os, sys, time
mode, top, victim, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
dirs = ["d%d" % k for k in range(4)]
names = ["f%02d" % i for i in range(40)]
for d in [""] + dirs:
    if d:
        os.mkdir(os.path.join(top, d))
    for f in names:
        with open(os.path.join(top, d, f), "w") as out:
            out.write("mine\n")
open(os.path.join(top, "go"), "w").close()
end, swaps = time.time() + seconds, 0
def step(fn, *a):
    try:
        fn(*a)
        return True
    except OSError:
        return False
while time.time() < end:
    if mode == "inside":
        if not os.path.lexists(top):
            break
        for d in dirs:
            p = os.path.join(top, d)
            if step(os.rename, p, p + ".x") and step(os.symlink, victim, p):
                swaps += 1
                time.sleep(0.001)
                step(os.unlink, p)
            step(os.rename, p + ".x", p)
        # Half the time a symlink, half the real directory; the guest's CPUs stay shared.
        time.sleep(0.004)
    else:
        away = top + ".away"
        if not os.path.lexists(top) and not os.path.lexists(away):
            break
        if step(os.rename, top, away) and step(os.symlink, victim, top):
            swaps += 1
            time.sleep(0.002)
            step(os.unlink, top)
        step(os.rename, away, top)
        time.sleep(0.002)
print(swaps)
PY
chmod 0644 "$S/race.py"

# Starts a sandbox of ruth's that prints its TMPDIR and, once her racer wrote "go"
# there, runs TAIL and ends.
start_sandbox() {
	local tag=$1 tail=$2
	ruth "$BPFBOX" exec --log-file /dev/null -- sh -c \
		"echo \"\$TMPDIR\"; cd \"\$TMPDIR\" && while [ ! -e go ]; do sleep 0.1; done; $tail" \
		>"$S/out.$tag" 2>"$S/err.$tag" </dev/null &
	echo $! >"$S/pid.$tag"
}
tmpdir_of() {
	for _ in $(seq 300); do
		[ -s "$S/out.$1" ] && head -1 "$S/out.$1" && return 0
		sleep 0.1
	done
	return 1
}
victims_intact() {
	(cd "$V/victims" && find . -type f | sort | xargs sha256sum) >"$S/victims.after"
	assert_succeeds "$1" cmp "$S/victims.before" "$S/victims.after"
	[ "$T_RC" -eq 0 ] || diff "$S/victims.before" "$S/victims.after" | head -5 | t_diag
}

# --- four sandboxes of ruth's at once: two end while she swaps directories inside their
# TMPDIRs, one while she swaps the TMPDIR itself; the fourth's supervisor is SIGKILLed
# and the next sandbox's setup collects it (gc) while she swaps inside it ---
for tag in in1 in2 top swap; do start_sandbox "$tag" "sleep 0.3"; done
start_sandbox gc "sleep 60"
# swap: the TMPDIR is renamed away for good and a symlink to the victims takes its place
# before the sandbox ends (its shell waits for "go" in its working directory, the TMPDIR
# wherever it is): the teardown must leave it and say so.
# shellcheck disable=SC2016 # expanded by ruth's sh
T=$(tmpdir_of swap) && echo "$T" >"$S/tmpdir.swap" &&
	ruth sh -c 'mv "$1" "$1.away" && ln -s "$2" "$1" && touch "$1.away/go"' sh "$T" "$V/victims"
for tag in in1 in2 top gc; do
	T=$(tmpdir_of "$tag") || { t_fail "sandbox $tag starts" "$(cat "$S/err.$tag")"; continue; }
	echo "$T" >"$S/tmpdir.$tag"
	mode=inside secs=4
	[ "$tag" = top ] && mode=top
	[ "$tag" = gc ] && secs=20
	ruth python3 "$S/race.py" "$mode" "$T" "$V/victims" "$secs" >"$S/swaps.$tag" 2>&1 &
	echo $! >"$S/race.$tag"
done
echo "# sandboxes and racers started at ${SECONDS}s"
T=$(cat "$S/tmpdir.gc")
REG=
for _ in $(seq 100); do
	REG=$(grep -l "^tmpdir=$T\$" /run/bpfbox/sandboxes/* 2>/dev/null | head -1)
	[ -n "$REG" ] && grep -q '^child=[1-9]' "$REG" && break
	sleep 0.1
done
if t_share 1; then
	# The registry is root's: 0700, its files 0600, even where the directory was looser.
	assert_eq 700 "$(stat -c %a /run/bpfbox/sandboxes)" "registry: the directory is 0700 (was 0755)"
	assert_eq 600 "$(stat -c %a "$REG")" "registry: an entry is 0600"
	assert_fails "registry: ruth cannot read her own entry" ruth cat "$REG"
	assert_fails "registry: ruth cannot list the registry" ruth ls /run/bpfbox/sandboxes
	assert_succeeds "registry: ruth's bpfbox ps goes through the daemon" ruth "$BPFBOX" ps
	assert_contains "$T_OUT" "$(basename "$REG") .*sleep 60" "registry: ps shows ruth's sandbox"
else
	t_skip "registry modes and ps" "user space: it runs in $(t_share_where 1)"
fi
for _ in $(seq 100); do [ -e "$T/go" ] && break; sleep 0.1; done
echo "# registry checked, gc's racer going at ${SECONDS}s"
kill -KILL "$(sed -n 's/^supervisor=//p' "$REG")"
wait "$(cat "$S/pid.swap")"
for tag in in1 in2 top; do
	wait "$(cat "$S/pid.$tag")"
	wait "$(cat "$S/race.$tag")" 2>/dev/null
	echo "# $tag: $(cat "$S/swaps.$tag") swaps for symlinks while the sandbox ended, done at ${SECONDS}s"
done
wait "$(cat "$S/pid.gc")" 2>/dev/null
echo "# teardown races done at ${SECONDS}s"
victims_intact "teardown: every victim file is still there, unchanged"
for tag in in1 in2; do
	assert_fails "teardown: $tag's own TMPDIR is gone" test -e "$(cat "$S/tmpdir.$tag")"
	assert_succeeds "teardown: $tag's racer swapped" test "$(cat "$S/swaps.$tag")" -gt 0
done
assert_succeeds "teardown: the top racer swapped" test "$(cat "$S/swaps.top")" -gt 0
T=$(cat "$S/tmpdir.swap")
assert_succeeds "teardown: a symlink in the TMPDIR's place is left" test -L "$T"
assert_contains "$S/admin.ndjson" "TMPDIR not removed: $T is no longer the directory the sandbox was given" \
	"teardown: the administrator's log says why the TMPDIR was left"
rm -f "$T"

# A sandbox ruth may run: found in her PATH; its setup collects the dead supervisor's sandbox.
assert_status "PATH: a command ruth may run is found" 0 \
	ruth env PATH="$S:/usr/bin:/bin" "$BPFBOX" exec --log-file /dev/null -- true
for _ in $(seq 100); do [ -e "$T" ] || break; sleep 0.1; done
wait "$(cat "$S/race.gc")" 2>/dev/null
echo "# gc: $(cat "$S/swaps.gc") swaps for symlinks while gc collected the sandbox, done at ${SECONDS}s"
victims_intact "gc: every victim file is still there, unchanged"
assert_fails "gc: the dead sandbox's TMPDIR is gone" test -e "$T"
assert_fails "gc: its registry entry is gone" test -e "$REG"
assert_succeeds "gc: the racer swapped" test "$(cat "$S/swaps.gc")" -gt 0

# --- PATH naming a root-only directory: the same answer whether the command is there or not ---
assert_status "PATH: a command in a root-only directory is not found" 127 \
	ruth env PATH="$V/bin" "$BPFBOX" exec --log-file /dev/null -- probe
sed 's/probe/NAME/g' "$T_OUT" >"$S/path.there"
assert_status "PATH: a missing command is not found" 127 \
	ruth env PATH="$V/bin" "$BPFBOX" exec --log-file /dev/null -- absent
sed 's/absent/NAME/g' "$T_OUT" >"$S/path.missing"
assert_succeeds "PATH: the same message either way" cmp "$S/path.there" "$S/path.missing"
assert_contains "$S/path.missing" "NAME: command not found" "PATH: the message is 'command not found'"

# The top racer's TMPDIR stays where the teardown found a symlink in its place: ruth's to remove.
rm -rf "$(cat "$S/tmpdir.top")"
