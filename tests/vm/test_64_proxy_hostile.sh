#!/usr/bin/env bash
# Hostile load on the proxy, from inside the sandbox (tests/tools/proxy-hostile.py):
# 2,000 idle connections trickling unfinished heads (slowloris), oversized and
# endless heads, half-closed tunnels, clients that never read, a connect flood.
# A well-behaved client of the same sandbox keeps being served (its throughput
# during the attack against without it), the supervisor stays under the
# documented memory bound (VmHWM), and no descriptor, cgroup, registry entry,
# tmpdir or map entry is left afterwards.
#   BPFBOX_TEST_HOSTILE_FLOOR   least attack/baseline throughput ratio (default 0.05)
#   BPFBOX_TEST_HOSTILE_MEM_MB  most supervisor VmHWM growth in MiB (default 48)
# Its subject is the proxy in user space, not the kernel: `make vm-test` runs it on its
# second kernel only (BPFBOX_KERNEL_SHARE, tests/vm/lib.sh t_share_file; the first is the
# longer run).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
t_share_file 2
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
trap 'rc=$?; net_cleanup; (exit $rc); t_summary' EXIT

# On the 2-vCPU TCG guest the flood's loopback TCP work alone takes most of the CPU
# (measured ratios 0.09-0.19); without the eviction of waiting clients the ratio is 0.
FLOOR=${BPFBOX_TEST_HOSTILE_FLOOR:-0.05}
MEM_MB=${BPFBOX_TEST_HOSTILE_MEM_MB:-48}
LOG=$T_TMP/log.ndjson
P=$T_TMP/policy.json
W=$T_TMP/work
WWW=$T_TMP/www
mkdir -p "$W" "$WWW"
head -c $((1 << 20)) /dev/urandom >"$WWW/blob"
head -c $((32 << 20)) /dev/zero >"$WWW/big"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": ["127.0.0.1:8082", "127.0.0.1:8084"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] }
}
JSON

count_state() { # cgroups registry tmpdirs map-entries
	echo "$(ls /sys/fs/cgroup/bpfbox 2>/dev/null | grep -c '^bb-')" \
		"$(ls /run/bpfbox/sandboxes 2>/dev/null | wc -l)" \
		"$(bpfbox_new_tmpdirs "$T_TMP/tmpdirs.mark")" "$(bpfbox_map_entries)"
}
status_kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }
wait_file() { # FILE SECONDS
	local i
	for i in $(seq $(($2 * 10))); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

assert_succeeds "HTTP serves on 127.0.0.1:8082 and an echo server on :8084" \
	net_serve - http 127.0.0.1 8082 "$WWW" , echo 127.0.0.1 8084
# 2,000 client sockets in the sandbox; the supervisor holds at most max_clients.
ulimit -n 8192
assert_succeeds "a first sandbox runs" "$BPFBOX" exec --policy "$P" --log-file /dev/null -- true
bpfbox_tmpdirs_mark "$T_TMP/tmpdirs.mark"
base=$(count_state)

"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- \
	python3 "$T_ROOT/tests/tools/proxy-hostile.py" "$W" 8082 8084 >"$T_TMP/tool.out" 2>&1 &
bb=$!
if ! wait_file "$W/baseline-done" 120; then
	t_fail "the load tool measured the baseline" "$(cat "$T_TMP/tool.out")"
	kill -KILL $bb
	exit 1
fi
fds0=$(fds $bb) rss0=$(status_kb $bb VmRSS)
touch "$W/go"
if ! wait_file "$W/attack-done" 400; then
	t_fail "the attack finished" "$(tail -n 20 "$T_TMP/tool.out")"
	kill -KILL $bb
	exit 1
fi
# The proxy lingers up to 2 s after its own answers; then every client is gone.
sleep 4
fds1=$(fds $bb) rss1=$(status_kb $bb VmRSS) hwm=$(status_kb $bb VmHWM)
touch "$W/go"
wait $bb
assert_eq 0 $? "the sandboxed load tool exited 0"
R=$W/report.json
echo "# report: $(jq -c . "$R")"
echo "# supervisor: VmRSS ${rss0} kB before the attack, ${rss1} kB after, VmHWM ${hwm} kB; fds $fds0 -> $fds1"

assert_eq 0 "$(jq .baseline.errors "$R")" "the baseline client saw no error"
[ "$(jq .baseline.requests "$R")" -ge 3 ] && t_ok "the baseline client was served" ||
	t_fail "the baseline client was served" "$(jq -c .baseline "$R")"
[ "$(jq .stats.idle_open_max "$R")" -ge 2000 ] && t_ok "2,000 idle connections were open at once" ||
	t_fail "2,000 idle connections were open at once" "$(jq -c .stats "$R")"
[ "$(jq .stats.flood_connections "$R")" -ge 100 ] && t_ok "the connect flood ran" ||
	t_fail "the connect flood ran" "$(jq -c .stats "$R")"
[ "$(jq .attack.requests "$R")" -ge 3 ] && t_ok "the well-behaved client was served during the attack" ||
	t_fail "the well-behaved client was served during the attack" "$(jq -c .attack "$R")"
ratio=$(jq -r '.attack.mb_per_s / .baseline.mb_per_s' "$R")
echo "# throughput during the attack: $ratio of the baseline"
jq -e --argjson f "$FLOOR" '.attack.mb_per_s >= $f * .baseline.mb_per_s' "$R" >/dev/null &&
	t_ok "its throughput kept at least $FLOOR of the baseline ($ratio)" ||
	t_fail "its throughput kept at least $FLOOR of the baseline" "ratio $ratio"
jq -e '.attack.errors * 10 <= .attack.requests' "$R" >/dev/null &&
	t_ok "at most one request in 10 failed during the attack" ||
	t_fail "at most one request in 10 failed during the attack" "$(jq -c .attack "$R")"
assert_eq "HTTP/1.1 431 Request Header Fields Too Large" "$(jq -r .alone.oversized_head "$R")" \
	"an oversized head gets 431"
assert_eq "HTTP/1.1 431 Request Header Fields Too Large" "$(jq -r .alone.endless_head "$R")" \
	"an endless head gets 431"
sent=$(jq .alone.endless_head_bytes_sent "$R")
[ "$sent" -le $((4 << 20)) ] && t_ok "after at most 4 MiB of it ($sent bytes)" ||
	t_fail "the endless head was answered after at most 4 MiB" "$sent bytes sent"
# Under attack a head still arriving may be evicted instead (closed, no answer).
echo "# during the attack: oversized head '$(jq -r .answers.oversized_head "$R")'," \
	"endless head '$(jq -r .answers.endless_head "$R")'"
assert_eq "$(jq .answers.half_closed_tried "$R")" "$(jq .answers.half_closed_ok "$R")" \
	"half-closed tunnels still get the server's answer and its end"
assert_eq 8 "$(jq .answers.never_read_held "$R")" "clients that never read held their connections"
growth=$(((hwm - rss0) / 1024))
[ "$growth" -le "$MEM_MB" ] && t_ok "the supervisor's peak RSS grew ${growth} MiB (bound $MEM_MB)" ||
	t_fail "the supervisor's peak RSS stayed within $MEM_MB MiB of its start" "grew ${growth} MiB"
assert_eq "$fds0" "$fds1" "the supervisor holds as many descriptors after the attack as before"
# Within the 60 s head deadline, only eviction drops them (an event only for those that had sent a byte).
[ "$(jq .stats.idle_dropped "$R")" -ge 1 ] && t_ok "idle clients were evicted to make room" ||
	t_fail "idle clients were evicted to make room" "$(jq -c .stats "$R")"
echo "# eviction events logged: $(grep -c "evicted: too many clients" "$LOG")"
assert_event "the oversized head was logged with its 431" '.http.response.status_code == 431'
assert_eq "$base" "$(count_state)" "no cgroup, registry entry, tmpdir or map entry is left"

# The descriptor limit (RLIMIT_NOFILE), the caller's or a hostile one. The supervisor runs with
# its soft limit raised to the hard one; the command gets the caller's soft limit back; the
# proxy takes no more clients than the limit holds (FDS_PER_CONN, user/proxy/proxy_loop.c),
# refusing the rest with an event rather than running out; below the least a sandbox needs
# (NOFILE_MIN, user/lib/nofile.h) nothing runs. Each case in a shell of its own: a hard
# limit lowered stays lowered.
assert_status "under a hard limit of 64 descriptors bpfbox refuses to start (125)" 125 \
	bash -c 'ulimit -n 64 && exec "$0" exec --policy "$1" --log-file /dev/null -- touch "$2"' \
	"$BPFBOX" "$P" "$W/ran-under-64"
assert_contains "$T_OUT" "descriptor limit is 64 \(hard 64\).*ulimit -n" "saying the limit and how to raise it"
assert_fails "the command did not run" test -e "$W/ran-under-64"

bash -c 'ulimit -Sn 300 && ulimit -Hn 512 && exec "$0" exec --policy "$1" --log-file "$2" -- \
	sh -c "ulimit -Sn >$3/nofile-soft; ulimit -Hn >$3/nofile-hard; exec python3 $4 $3 100 127.0.0.1:8084"' \
	"$BPFBOX" "$P" "$T_TMP/hold.ndjson" "$W" "$T_ROOT/tests/tools/proxy-hold.py" >"$T_TMP/hold.out" 2>&1 &
bb=$!
if wait_file "$W/hold-counts" 300; then
	read -r held refused <"$W/hold-counts"
	sup_fds=$(fds $bb)
	soft=$(awk '/^Max open files/ {print $4}' "/proc/$bb/limits")
	ticks0=$(awk '{print $14 + $15}' "/proc/$bb/stat")
	sleep 3
	ticks1=$(awk '{print $14 + $15}' "/proc/$bb/stat")
	echo "# under hard 512: $held tunnels held, $refused refused; supervisor fds $sup_fds, soft limit $soft," \
		"CPU $((ticks1 - ticks0)) ticks in 3 s while they are held"
	assert_eq "300 512" "$(cat "$W/nofile-soft") $(cat "$W/nofile-hard")" "the command has the caller's limits (soft 300, hard 512)"
	assert_eq 512 "$soft" "the supervisor runs with its soft limit raised to the hard one"
	# (512 - 128 reserved) / 10 per connection: 38 clients at most.
	[ "$held" -ge 20 ] && [ "$held" -le 38 ] && t_ok "the proxy held as many tunnels as the limit holds ($held of 100)" ||
		t_fail "the proxy held between 20 and 38 tunnels (the limit's share)" "held $held, refused $refused"
	assert_eq 100 "$((held + refused))" "every other tunnel was refused, none left hanging"
	[ "$sup_fds" -lt 512 ] && t_ok "the supervisor stayed below its limit ($sup_fds descriptors)" ||
		t_fail "the supervisor stayed below its limit" "$sup_fds descriptors"
	[ $((ticks1 - ticks0)) -lt 100 ] && t_ok "the supervisor is not spinning while the tunnels are held" ||
		t_fail "the supervisor is not spinning while the tunnels are held" "$((ticks1 - ticks0)) ticks in 3 s"
	touch "$W/hold-release"
	wait_file "$W/hold-after" 120
	assert_eq ok "$(cat "$W/hold-after" 2>/dev/null)" "once they closed, a new tunnel is answered and echoes"
else
	t_fail "the tunnels were opened" "$(cat "$T_TMP/hold.out")"
	touch "$W/hold-release"
fi
wait $bb
assert_eq 0 $? "the sandbox under a low limit exited 0"
LOG=$T_TMP/hold.ndjson
assert_event "the refused clients were logged" '(.error.message // "") | test("too many clients")'
assert_eq "$base" "$(count_state)" "after it too, no cgroup, registry entry, tmpdir or map entry is left"
