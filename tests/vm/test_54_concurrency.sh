#!/usr/bin/env bash
# Concurrent sandboxes, each confined by its own policy only, each event stream
# attributed to its own sandbox; many sequential and parallel runs leave no
# cgroup, pin, map entry, BPF map, program or link, process, tmpdir or registry
# entry behind.
#   BPFBOX_TEST_SEQ_RUNS (default 24), BPFBOX_TEST_PAR_RUNS (default 12); the soak (test_90,
#   make soak) repeats runs by the hundred
# The state is compared exactly, so a leak of every run shows after one; 40 in a row catch
# one run in a few, and `make soak` (test_90's thousand runs) the rarer ones.
. "$(dirname "$0")/lib.sh"

SEQ=${BPFBOX_TEST_SEQ_RUNS:-24}
PAR=${BPFBOX_TEST_PAR_RUNS:-12}
W=$T_TMP/work
mkdir -p "$W" "$T_TMP/a" "$T_TMP/b"
echo alpha >"$T_TMP/a/file"
echo beta >"$T_TMP/b/file"
policy() { # FILE DENIED-DIR
	cat >"$1" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$2"], "allowWrite": ["$W"], "denyWrite": [] }
}
JSON
}
policy "$T_TMP/pa.json" "$T_TMP/a"
policy "$T_TMP/pb.json" "$T_TMP/b"

# Each reads both files for a while, after both have started.
READER="touch \"$W/ready-\$1\"; for i in \$(seq 600); do [ -e '$W/ready-A' ] && [ -e '$W/ready-B' ] && break; sleep 0.05; done
for i in 1 2 3 4 5; do cat '$T_TMP/a/file' '$T_TMP/b/file' 2>&1; sleep 0.1; done; echo \$BPFBOX_SANDBOX_ID"
"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$T_TMP/la" -- sh -c "$READER" sh A >"$W/outA" 2>&1 &
pa=$!
"$BPFBOX" exec --policy "$T_TMP/pb.json" --log-file "$T_TMP/lb" -- sh -c "$READER" sh B >"$W/outB" 2>&1 &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
assert_eq "0 0" "$ra $rb" "both concurrent sandboxes ran and exited 0"
assert_eq 5 "$(grep -c '^beta$' "$W/outA")" "A reads B's file every time"
assert_eq 0 "$(grep -c '^alpha$' "$W/outA")" "A never reads its denied file"
assert_eq 5 "$(grep -c '^alpha$' "$W/outB")" "B reads A's file every time"
assert_eq 0 "$(grep -c '^beta$' "$W/outB")" "B never reads its denied file"
ida=$(tail -n 1 "$W/outA")
idb=$(tail -n 1 "$W/outB")
assert_succeeds "the two ran at the same time" test -e "$W/ready-A" -a -e "$W/ready-B"
assert_contains "$T_TMP/la" "\"path\":\"$T_TMP/a/file\"" "A's log has A's refusals"
assert_not_contains "$T_TMP/la" "\"path\":\"$T_TMP/b/file\"" "and none of B's"
assert_contains "$T_TMP/lb" "\"path\":\"$T_TMP/b/file\"" "B's log has B's refusals"
assert_not_contains "$T_TMP/lb" "\"path\":\"$T_TMP/a/file\"" "and none of A's"
assert_eq 0 "$(jq -r '.bpfbox.sandbox.id' "$T_TMP/la" | grep -vc "^$ida\$")" "every line of A's log is A's"
assert_eq 0 "$(jq -r '.bpfbox.sandbox.id' "$T_TMP/lb" | grep -vc "^$idb\$")" "every line of B's log is B's"

# What a run could leave behind, counted system-wide.
state() {
	echo "cgroups=$(find /sys/fs/cgroup/bpfbox -mindepth 1 -maxdepth 1 -type d | wc -l)" \
		"pins=$(find /sys/fs/bpf/bpfbox | wc -l)" "map_entries=$(bpfbox_map_entries)" \
		"processes=$(ps -e -o args= | grep -vc '^\[')" "tmpdirs=$(ls /tmp | grep -c '^bpfbox-')" \
		"registry=$(ls /run/bpfbox/sandboxes 2>/dev/null | wc -l)" \
		"bpf_maps=$(bpftool -j map list | jq '[.[] | select(.name != "bb_events")] | length')" \
		"bpf_progs=$(bpftool -j prog list | jq length)" \
		"bpf_links=$(bpftool -j link list | jq length)"
}
# $after: the state after runs, once freed kernel objects (maps go after an
# RCU grace period) are gone. Not in a $(...) of its own: ps would count the
# extra subshell.
settle() {
	local i
	for i in 1 2 3 4 5 6; do
		after=$(state)
		[ "$after" = "$before" ] && return
		sleep 0.5
	done
}
# Event buffers in the pool: one per sandbox that ran at the same time, kept for the next ones.
pool() { bpftool -j map list | jq '[.[] | select(.name == "bb_events")] | length'; }

# Every process with its descriptor count, so a differing state names who changed. In
# bash alone: four execs a process cost seconds under TCG.
proc_table() {
	local d pid args fds c
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = "$BASHPID" ] && continue
		[ -s "$d/cmdline" ] || continue # kernel threads come and go
		mapfile -d '' -t args <"$d/cmdline" 2>/dev/null || continue
		c="${args[*]}"
		fds=("$d"/fd/*)
		[ -e "${fds[0]}" ] || [ -L "${fds[0]}" ] || fds=()
		echo "$pid ${c:0:80}: ${#fds[@]} fds"
	done
}
proc_diff() { diff "$1" "$2" | grep '^[<>]' | sed 's/^/#   /'; }

P=$T_TMP/pa.json
"$BPFBOX" exec --policy "$P" --log-file /dev/null -- true
sleep 0.5
before=$(state)
pool_before=$(pool)
proc_table >"$T_TMP/procs-before"
start=$(date +%s%N)
fails=0
for i in $(seq "$SEQ"); do
	"$BPFBOX" exec --policy "$P" --log-file /dev/null -- sh -c 'sleep 0.01 & exit 0' || fails=$((fails + 1))
done
el=$((($(date +%s%N) - start) / 1000000))
echo "# $SEQ sequential runs took ${el}ms ($((el / SEQ))ms each)"
assert_eq 0 "$fails" "$SEQ sequential runs all succeed"
sleep 0.5
settle
assert_eq "$before" "$after" "$SEQ sequential runs leave nothing behind"
[ "$before" = "$after" ] || { proc_table >"$T_TMP/procs-after"; proc_diff "$T_TMP/procs-before" "$T_TMP/procs-after"; }
assert_eq "$pool_before" "$(pool)" "sequential runs reuse one pooled event buffer"

start=$(date +%s%N)
pids=()
for i in $(seq "$PAR"); do
	"$BPFBOX" exec --policy "$P" --log-file "$W/par-$i" -- sh -c 'sleep 0.5; echo $BPFBOX_SANDBOX_ID' \
		>"$W/pout-$i" 2>&1 &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
el=$((($(date +%s%N) - start) / 1000000))
echo "# $PAR parallel runs took ${el}ms"
assert_eq 0 "$fails" "$PAR parallel runs all succeed"
assert_eq "$PAR" "$(cat "$W"/pout-* | sort -u | grep -c '^bb-')" "each had its own sandbox id"
# One jq over every log (an exec costs about a second under TCG): "FILE ID" per line.
declare -A ids=()
while read -r f id; do
	ids[$f]+="$id "
done < <(jq -r '"\(input_filename) \(.bpfbox.sandbox.id)"' "$W"/par-* | sort -u)
bad=0
for i in $(seq "$PAR"); do
	read -r id <"$W/pout-$i"
	[ "${ids[$W/par-$i]-}" = "$id " ] || bad=$((bad + 1))
done
assert_eq 0 "$bad" "each parallel run's log speaks of its own sandbox only"
sleep 0.5
settle
assert_eq "$before" "$after" "$PAR parallel runs leave nothing behind"
[ "$before" = "$after" ] || { proc_table >"$T_TMP/procs-after"; proc_diff "$T_TMP/procs-before" "$T_TMP/procs-after"; }
n=$(pool)
[ "$n" -ge 2 ] && [ "$n" -le $((pool_before + PAR)) ] &&
	t_ok "the pool grew to at most one event buffer per concurrent sandbox ($n)" ||
	t_fail "the pool grew to at most one event buffer per concurrent sandbox" "$n buffers, $pool_before before"
assert_succeeds "bpfbox gc frees the idle event buffers" "$BPFBOX" gc
assert_contains "$T_OUT" "freed $n idle event buffer"
# The maps go after an RCU grace period.
for _ in $(seq 20); do
	left=$(pool)
	[ "$left" = 0 ] && break
	sleep 0.1
done
assert_eq 0 "$left" "none is left"
assert_succeeds "a sandbox runs after that" "$BPFBOX" exec --policy "$P" --log-file /dev/null -- true
