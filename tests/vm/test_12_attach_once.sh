#!/usr/bin/env bash
# The cgroup programs are attached once, to the cgroup that holds every
# sandbox, by links pinned with the build's other pins: a start attaches
# nothing, each sandbox inherits them, and a sandbox is confined from its
# command's first instruction (its first act, a denied read or a direct
# connect, is refused). A foreign program attached to that cgroup with
# BPF_F_ALLOW_OVERRIDE sends bpfbox to per-sandbox attachment, still
# confined, and doctor says so; one attached without either flag makes every
# start fail closed, with the program named.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
PARENT=/sys/fs/cgroup/bpfbox
FOREIGN=/sys/fs/bpf/t12-foreign
cleanup() {
	bpftool cgroup detach "$PARENT" connect4 pinned "$FOREIGN/probe_connect4" 2>/dev/null
	rm -rf "$FOREIGN"
	net_cleanup
}
trap 'rc=$?; cleanup; (exit $rc); t_summary' EXIT

P=$T_TMP/policy.json
LOG=$T_TMP/log.ndjson
BBTRY=$T_ROOT/build/helpers/bbtry
mkdir -p "$T_TMP/secret" "$T_TMP/www"
echo classified >"$T_TMP/secret/key"
echo hello-remote >"$T_TMP/www/hello.txt"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": ["remote.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$T_TMP/secret"], "allowWrite": [], "denyWrite": [] },
  "bpfbox": { "network": { "transparent": false } }
}
JSON
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }
# The names of the programs attached to a cgroup itself (not inherited ones).
own_progs() { bpftool -j cgroup show "$1" 2>/dev/null | jq -r '.[].name' | sort; }
effective_progs() { bpftool -j cgroup show "$1" effective 2>/dev/null | jq -r '.[].name' | sort; }

assert_succeeds "a remote network namespace is set up" net_remote_up
net_hosts remote.test "$NET_REMOTE"
assert_succeeds "an HTTP server runs in it" net_serve bbremote http 0.0.0.0 8080 "$T_TMP/www"

# --- Attached once -----------------------------------------------------------
assert_succeeds "a first sandbox runs" box true
assert_eq 14 "$(own_progs "$PARENT" | grep -c '^bb_')" "the parent cgroup carries the 14 network programs"
assert_succeeds "doctor says they are attached once" "$BPFBOX" doctor
assert_contains "$T_OUT" '^PASS cgroup-attach .*attached once to /sys/fs/cgroup/bpfbox by 14 pinned links'
assert_succeeds "the links are pinned with the build's pins" \
	bash -c 'ls /sys/fs/bpf/bpfbox/*/links/ | grep -c "^cgroup_bb_" | grep -qx 14'

# bpfbox itself in the background (not a function's subshell), so the kill below reaches it.
"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- sleep 300 &
bg=$!
id=""
for _ in $(seq 300); do
	id=$(ls "$PARENT" | grep '^bb-' | head -1 || true)
	# cgroupfs files have no size: read the list of processes.
	[ -n "$id" ] && grep -q . "$PARENT/$id/cgroup.procs" 2>/dev/null && break
	sleep 0.1
done
assert_succeeds "the sandbox's cgroup is found" test -n "$id"
# The kernel's counts (bpftool's default listing differs between versions).
assert_eq "0 1" "$("$BBTRY" cgprogs "$PARENT/$id" own) $("$BBTRY" cgprogs "$PARENT/$id" effective)" \
	"a running sandbox's cgroup has no connect4 program of its own (its start attached nothing) and runs one"
assert_eq 14 "$(effective_progs "$PARENT/$id" | grep -c '^bb_')" "it runs the parent's 14 programs, once each"
kill "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
assert_eq 14 "$(own_progs "$PARENT" | grep -c '^bb_')" "a second start attached nothing more to the parent"

# --- Confined from the first instruction -------------------------------------
assert_status "a denied read as the command's first act is refused" 1 box cat "$T_TMP/secret/key"
assert_not_contains "$T_OUT" classified "nothing of the file arrives"
assert_status "a direct connect as the first act is refused" 1 box "$BBTRY" connect4 10.200.0.2 8080
assert_contains "$T_OUT" '^error: EPERM' "with EPERM"
assert_succeeds "the neighbour, through the proxy, is allowed" box curl -sS --max-time 20 http://remote.test:8080/hello.txt
assert_contains "$T_OUT" '^hello-remote$'

# --- Outside every sandbox: nothing runs --------------------------------------
assert_eq "" "$(effective_progs /sys/fs/cgroup | grep '^bb_')" "the root cgroup runs none of bpfbox's cgroup programs"
assert_succeeds "outside, a direct connect is the kernel's business" "$BBTRY" connect4 10.200.0.2 8080

# --- A foreign program that allows overriding: per sandbox ---------------------
assert_succeeds "gc --unpin with no sandbox running detaches the links" "$BPFBOX" gc --unpin
assert_eq "" "$(own_progs "$PARENT" | grep '^bb_')" "the parent carries none of them"
assert_succeeds "a foreign connect4 program (refusing all) is loaded" \
	bpftool prog loadall "$T_ROOT/build/probe.bpf.o" "$FOREIGN"
assert_succeeds "and attached to the parent with override" \
	bpftool cgroup attach "$PARENT" connect4 pinned "$FOREIGN/probe_connect4" override
assert_succeeds "a sandbox starts" box curl -sS --max-time 20 http://remote.test:8080/hello.txt
assert_contains "$T_OUT" '^hello-remote$' "its proxy path works (its own programs override the foreign one)"
assert_status "a direct connect is still refused" 1 box "$BBTRY" connect4 10.200.0.2 8080
assert_contains "$T_OUT" '^error: EPERM'
assert_event "by bpfbox, with an event" '.event.action == "connect" and .destination.ip == "10.200.0.2"'
assert_eq "" "$(own_progs "$PARENT" | grep '^bb_')" "nothing of bpfbox's is attached to the parent beside it"
assert_succeeds "doctor says per sandbox, and why" "$BPFBOX" doctor
assert_contains "$T_OUT" '^PASS cgroup-attach .*per sandbox: a program was attached to /sys/fs/cgroup/bpfbox for bb_connect4 with BPF_F_ALLOW_OVERRIDE'
assert_succeeds "the foreign program is detached" \
	bpftool cgroup detach "$PARENT" connect4 pinned "$FOREIGN/probe_connect4"

# --- A foreign program that allows nothing: every start fails closed ---------
assert_succeeds "attached again, without flags" bpftool cgroup attach "$PARENT" connect4 pinned "$FOREIGN/probe_connect4"
rm -f "$T_TMP/ran"
assert_status "a start fails with the setup status" 125 box touch "$T_TMP/ran"
assert_contains "$T_OUT" 'without BPF_F_ALLOW_MULTI or BPF_F_ALLOW_OVERRIDE' "the message says why"
assert_contains "$T_OUT" 'bb_connect4' "and names the hook"
assert_succeeds "the command did not run" test ! -e "$T_TMP/ran"
assert_status "doctor fails" 1 "$BPFBOX" doctor
assert_contains "$T_OUT" '^FAIL cgroup-attach'
assert_succeeds "the foreign program is detached" \
	bpftool cgroup detach "$PARENT" connect4 pinned "$FOREIGN/probe_connect4"
assert_succeeds "the next start works" box true
assert_eq 14 "$(own_progs "$PARENT" | grep -c '^bb_')" "and attached the programs to the parent once more"
assert_eq "" "$(ls "$PARENT" | grep '^bb-')" "no sandbox cgroup is left behind"
