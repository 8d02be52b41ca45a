#!/usr/bin/env bash
# Soak: many sandboxes in a row, then many 16 at a time, cycling through every
# way a run can end: a normal exit, a non-zero exit, --timeout, SIGKILL of the
# command, SIGKILL of bpfbox itself followed by `bpfbox gc`, and through the
# daemon as a user who is not root (a normal end, and SIGKILL of the client). Afterwards
# nothing is left: cgroups, pins, map entries, BPF maps, programs and links,
# processes, descriptors, tmpdirs, registry entries.
#   BPFBOX_TEST_SOAK_RUNS (default 60; `make soak` runs 1000), BPFBOX_TEST_SOAK_PAR (16)
# Run i ends the (i mod 7)th way. In `make vm-test` the exit paths are shared out between the
# kernels (BPFBOX_KERNEL_SHARE, tests/vm/lib.sh t_share): each guest runs the runs of its
# paths only, as many of each as alone, and checks on its own kernel that they leave nothing.
. "$(dirname "$0")/lib.sh"

RUNS=${BPFBOX_TEST_SOAK_RUNS:-60}
PAR=${BPFBOX_TEST_SOAK_PAR:-16}
KINDS=(normal non-zero timeout command-sigkill bpfbox-sigkill+gc daemon daemon-client-sigkill)
# Each path's share number (t_share): with two kernels the odd ones run on the first.
SHARE=(1 2 2 1 2 1 2)
MINE=() MINE_NAMES=()
for k in "${!KINDS[@]}"; do
	if t_share "${SHARE[k]}"; then
		MINE+=("$k") MINE_NAMES+=("${KINDS[k]}")
	else
		t_skip "exit path ${KINDS[k]}" "runs in $(t_share_where "${SHARE[k]}")"
	fi
done
# The runs of this guest: 0..RUNS-1 whose path is one of MINE.
SEL=()
for i in $(seq 0 $((RUNS - 1))); do
	for k in "${MINE[@]}"; do [ $((i % 7)) -eq "$k" ] && SEL+=("$i"); done
done
N=${#SEL[@]}
# Only root writes here (the daemon refuses a socket in a directory another user could change); the
# caller writes in $W.
D=$(mktemp -d /tmp/soak.XXXXXX)
chmod 0755 "$D"
W=$D/work
mkdir -p "$W" && chmod 0777 "$W"
P=$D/policy.json
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] }
}
JSON
chmod 0644 "$P"
id bbsoak >/dev/null 2>&1 || useradd -M -d /tmp bbsoak
SUID=$(id -u bbsoak) SGID=$(id -g bbsoak)
SOCK=$D/daemon.sock
"$BPFBOX" daemon --socket "$SOCK" --config "$P" --log-file "$D/admin.ndjson" --max-per-user 0 \
	>"$D/daemon.out" 2>&1 &
DPID=$!
trap 'kill -TERM $DPID 2>/dev/null; wait $DPID 2>/dev/null; [ "$T_FAIL" -eq 0 ] || sed "s/^/# daemon: /" "$D/daemon.out" | head -n 40; rm -rf "$D"; t_summary' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
assert_succeeds "the soak's daemon listens" test -S "$SOCK" || { sed "s/^/# daemon: /" "$D/daemon.out"; exit 1; }
# setpriv execs (runuser would fork).
as_user() { setpriv --reuid="$SUID" --regid="$SGID" --init-groups env BPFBOX_SOCKET="$SOCK" "$@"; }

# System-wide counts of what a run could leave behind (as test_54), plus every
# descriptor of every process but this shell's subshells.
state() {
	echo "cgroups=$(find /sys/fs/cgroup/bpfbox -mindepth 1 -maxdepth 1 -type d | wc -l)" \
		"pins=$(find /sys/fs/bpf/bpfbox | wc -l)" "map_entries=$(bpfbox_map_entries)" \
		"processes=$(ps -e -o args= | grep -vc '^\[')" "tmpdirs=$(ls /tmp | grep -c '^bpfbox-')" \
		"registry=$(ls /run/bpfbox/sandboxes 2>/dev/null | wc -l)" \
		"bpf_maps=$(bpftool -j map list | jq '[.[] | select(.name != "bb_events")] | length')" \
		"bpf_progs=$(bpftool -j prog list | jq length)" \
		"bpf_links=$(bpftool -j link list | jq length)" \
		"fds=$(fd_total)"
}
# In bash alone: an ls and a wc per process cost seconds under TCG.
fd_total() {
	local d n=0 self=$BASHPID fds
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = "$self" ] || [ "${d#/proc/}" = "$$" ] && continue
		[ -e "$d/exe" ] || continue # kernel threads have no executable
		fds=("$d"/fd/*)
		[ -e "${fds[0]}" ] || [ -L "${fds[0]}" ] || fds=()
		n=$((n + ${#fds[@]}))
	done
	echo "$n"
}
settle() {
	local i
	for i in $(seq 10); do
		after=$(state)
		[ "$after" = "$before" ] && return
		sleep 0.5
	done
}

# What a sandbox left, with its events in the daemon's log, for the diagnosis.
leftovers() {
	local c id
	for c in /sys/fs/cgroup/bpfbox/bb-*; do
		[ -d "$c" ] || continue
		id=$(basename "$c")
		echo "left: $id procs=[$(xargs <"$c/cgroup.procs")] events=[$(xargs <"$c/cgroup.events")]"
		grep "\"$id\"" "$D/admin.ndjson" | jq -c '{a: .event.action, m: .message}'
	done | t_diag
}

# One run ending the Nth way; prints "<kind> <want> <got>" and returns 0 when they agree.
run_one() { # N LOG
	local n=$1 log=$2 rc pid i
	case $((n % 7)) in
	0)
		"$BPFBOX" exec --policy "$P" --log-file "$log" -- true
		rc=$?
		[ $rc -eq 0 ] || { echo "normal 0 $rc"; return 1; } ;;
	1)
		"$BPFBOX" exec --policy "$P" --log-file "$log" -- sh -c 'exit 3'
		rc=$?
		[ $rc -eq 3 ] || { echo "non-zero 3 $rc"; return 1; } ;;
	2)
		"$BPFBOX" exec --policy "$P" --log-file "$log" --timeout 300ms -- sleep 30
		rc=$?
		[ $rc -eq 124 ] || { echo "timeout 124 $rc"; return 1; } ;;
	3)
		"$BPFBOX" exec --policy "$P" --log-file "$log" -- sh -c 'sleep 0.05 & kill -KILL $$'
		rc=$?
		[ $rc -eq 137 ] || { echo "command-sigkill 137 $rc"; return 1; } ;;
	4)
		# The command tells us it runs; then bpfbox dies without cleaning up.
		rm -f "$W/up-$n"
		"$BPFBOX" exec --policy "$P" --log-file "$log" -- sh -c "touch '$W/up-$n'; sleep 1000" &
		pid=$!
		for i in $(seq 300); do [ -e "$W/up-$n" ] && break; sleep 0.05; done
		kill -KILL $pid 2>/dev/null
		wait $pid 2>/dev/null
		# A setup that failed (e.g. undone by a concurrent gc) is a failure too.
		[ -e "$W/up-$n" ] || { echo "bpfbox-sigkill+gc: the command never ran"; return 1; }
		"$BPFBOX" gc >/dev/null 2>&1 || { echo "bpfbox-sigkill+gc 0 $?"; return 1; } ;;
	5)
		as_user "$BPFBOX" exec --policy "$P" --log-file "$log" -- sh -c 'exit 5'
		rc=$?
		[ $rc -eq 5 ] || { echo "daemon 5 $rc"; return 1; } ;;
	6)
		# Through the daemon, and the client is killed: its sandbox goes with it.
		rm -f "$W/up-$n"
		# Not through as_user: $! must be the client itself, not a subshell around it.
		setpriv --reuid="$SUID" --regid="$SGID" --init-groups env BPFBOX_SOCKET="$SOCK" \
			"$BPFBOX" exec --policy "$P" --kill-after 200ms --log-file "$log" -- \
			sh -c "touch '$W/up-$n'; sleep 1000" &
		pid=$!
		for i in $(seq 300); do [ -e "$W/up-$n" ] && break; sleep 0.05; done
		kill -KILL $pid 2>/dev/null
		wait $pid 2>/dev/null
		[ -e "$W/up-$n" ] || { echo "daemon-client-sigkill: the command never ran"; return 1; } ;;
	esac
	return 0
}

assert_succeeds "a first sandbox runs" "$BPFBOX" exec --policy "$P" --log-file /dev/null -- true
sleep 0.5
before=$(state)
echo "# before: $before"

start=$(date +%s%N)
fails=0
for i in "${SEL[@]}"; do
	run_one "$i" /dev/null >>"$T_TMP/seq-fails" || fails=$((fails + 1))
done
el=$((($(date +%s%N) - start) / 1000000))
echo "# $N runs in a row (${#MINE[@]} exit paths in turn: ${MINE_NAMES[*]}): ${el}ms ($((el / (N > 0 ? N : 1)))ms each)"
assert_eq 0 "$fails" "$N runs in a row each ended as expected" || head -n 20 "$T_TMP/seq-fails" | t_diag
settle
assert_eq "$before" "$after" "$N runs in a row leave nothing behind" || leftovers

start=$(date +%s%N)
fails=0
pids=()
for i in "${SEL[@]}"; do
	run_one "$i" /dev/null >"$T_TMP/par-$i" 2>&1 &
	pids+=($!)
	if [ ${#pids[@]} -ge "$PAR" ]; then
		wait "${pids[0]}" || fails=$((fails + 1))
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
el=$((($(date +%s%N) - start) / 1000000))
echo "# $N runs, $PAR at a time: ${el}ms"
assert_eq 0 "$fails" "$N runs $PAR at a time each ended as expected" || cat "$T_TMP"/par-* | head -n 20 | t_diag
settle
assert_eq "$before" "$after" "$N runs $PAR at a time leave nothing behind" || leftovers
assert_succeeds "bpfbox gc frees the idle event buffers" "$BPFBOX" gc
# The maps go after an RCU grace period.
for _ in $(seq 20); do
	left=$(bpftool -j map list | jq '[.[] | select(.name == "bb_events")] | length')
	[ "$left" = 0 ] && break
	sleep 0.1
done
assert_eq 0 "$left" "no event buffer is left"
assert_succeeds "a sandbox runs after all that" "$BPFBOX" exec --policy "$P" --log-file /dev/null -- true
