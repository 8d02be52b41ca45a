#!/usr/bin/env bash
# Resource limits from the policy on the per-invocation cgroup: pids, memory,
# cpu; a fork bomb is contained and reported; a limit whose controller is
# missing refuses to run (125).
. "$(dirname "$0")/lib.sh"

W=$T_TMP/work
mkdir -p "$W"
policy() { # FILE LIMITS-JSON
	cat >"$1" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] },
  "bpfbox": { "limits": $2 }
}
JSON
}
policy "$T_TMP/p1.json" '{ "pids": 32, "memory": "64M", "cpu": "50%" }'

CG='cat /proc/self/cgroup | sed "s|^0::|/sys/fs/cgroup|" | { read -r d; cat "$d/pids.max" "$d/memory.max" "$d/cpu.max"; }'
assert_succeeds "a limited sandbox runs" "$BPFBOX" exec --policy "$T_TMP/p1.json" --log-file "$T_TMP/l1" -- sh -c "$CG"
assert_eq "32
67108864
50000 100000" "$(cat "$T_OUT")" "pids.max, memory.max and cpu.max are the policy's"

# A fork bomb: contained by pids.max, reported, and the tree is gone after.
# The command watches its own pids.events with builtins only (no fork is
# possible once the bomb fills the cgroup) and exits once a fork was refused.
policy "$T_TMP/pb.json" '{ "pids": 16 }'
BOMB='d=$(sed "s|^0::|/sys/fs/cgroup|" /proc/self/cgroup)
b() { b | b & }; b
while read -r k n <"$d/pids.events"; [ "$n" = 0 ] && [ $SECONDS -lt 120 ]; do :; done
[ "$n" != 0 ]'
start=$(date +%s)
assert_status "a fork bomb is contained: the command itself goes on and exits 0" 0 \
	"$BPFBOX" exec --policy "$T_TMP/pb.json" --log-file "$T_TMP/l2" --timeout 150s -- bash -c "$BOMB"
echo "# the fork bomb run took $(($(date +%s) - start))s"
assert_contains "$T_TMP/l2" 'pids\.max=16.*"action":"warning"' "the refused forks are reported as an event"
assert_contains "$T_TMP/l2" '[0-9]+ fork\(s\) refused' "with their count"
assert_eq "" "$(ls /sys/fs/cgroup/bpfbox | grep '^bb-')" "the bomb's cgroup is gone"
assert_eq "" "$(pgrep -f 'b \| b')" "no bomb process survives"

# Memory: a hog is OOM-killed inside its cgroup, and that is reported.
policy "$T_TMP/p2.json" '{ "memory": "32M" }'
assert_fails "a memory hog beyond memory.max fails" "$BPFBOX" exec --policy "$T_TMP/p2.json" --log-file "$T_TMP/l3" -- \
	python3 -c 'x = bytearray(256 * 1024 * 1024); print(len(x))'
assert_contains "$T_TMP/l3" 'killed by memory\.max' "the OOM kill is reported"

# A controller that is not there (bound to a cgroup v1 hierarchy): fail closed.
# Taking it from cgroup v2 needs every cgroup that used it gone, dying ones too.
policy "$T_TMP/p4.json" '{ "pids": 100 }'
mkdir -p "$T_TMP/v1"
echo -pids >/sys/fs/cgroup/bpfbox/cgroup.subtree_control
echo -pids >/sys/fs/cgroup/cgroup.subtree_control
mounted=0
for _ in $(seq 30); do
	mount -t cgroup -o pids none "$T_TMP/v1" 2>/dev/null && mounted=1 && break
	sleep 1
done
if [ $mounted = 1 ]; then
	assert_status "a pids limit without the pids controller gives 125" 125 \
		"$BPFBOX" exec --policy "$T_TMP/p4.json" --log-file "$T_TMP/l4" -- touch "$W/ran"
	assert_contains "$T_OUT" 'pids controller is not available' "with a clear message"
	assert_succeeds "and the command did not run" test ! -e "$W/ran"
	umount "$T_TMP/v1"
else
	t_skip "missing controller refusal" "could not take the pids controller away from cgroup v2"
fi
assert_succeeds "after that, limits work again" "$BPFBOX" exec --policy "$T_TMP/p4.json" --log-file "$T_TMP/l5" -- true
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$T_TMP"/l[1235]
assert_eq "" "$(ls /sys/fs/cgroup/bpfbox | grep '^bb-')" "no sandbox cgroup is left behind"
