#!/usr/bin/env bash
# Shares of the host-wide kernel maps (user/sandbox/quota.c). Rules: a user
# who is not root fills its share of the rule maps with a glob over many
# files in several sandboxes at once and is refused with a message naming
# the limit, while another user's sandbox and root's start and run; once the
# sandboxes end (or a killed supervisor is collected by gc) the ledger and
# the rule maps hold nothing of them. Learned addresses: a sandbox that
# resolves many distinct allowed names keeps at most its share in the
# kernel (the resolver still answers, the refusal is logged), another
# sandbox's transparent connection still works, and expired addresses leave
# while the sandbox runs.
# The accounting is user space: `make vm-test` runs the rules on the first
# kernel and the learned addresses on the second (t_share).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
command -v useradd >/dev/null || t_skip_all "useradd is missing"

S=$(mktemp -d /tmp/bb87.XXXXXX)
chmod 0755 "$S"
DPID=
trap 'rc=$?; touch "$S/stop"; [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null;
	[ "$T_FAIL" -eq 0 ] || tail -20 "$S/daemon.out" 2>/dev/null | sed "s/^/# daemon: /"; net_cleanup; rm -rf "$S";
	(exit $rc); t_summary' EXIT

# The pinned ledger, as "uid rules learned" lines, one per sandbox (BTF-formatted or raw bytes).
ledger() {
	bpftool -j map dump pinned /sys/fs/bpf/bpfbox/*/quotas 2>/dev/null | python3 -c '
import json, sys
for e in json.load(sys.stdin) or []:
    v = (e.get("formatted") or e)["value"]
    if isinstance(v, list):
        b = bytes(int(x, 16) for x in v)
        v = {"uid": int.from_bytes(b[0:4], "little"), "rules": int.from_bytes(b[4:8], "little"),
             "learned": int.from_bytes(b[8:12], "little")}
    print(v["uid"], v["rules"], v["learned"])'
}
# Entries of one pinned map.
map_len() {
	bpftool -j map dump pinned /sys/fs/bpf/bpfbox/*/"$1" 2>/dev/null | jq 'if type == "array" then length else 0 end'
}
# Waits up to 90 s for a file to hold a line matching a pattern.
wait_for() {
	for _ in $(seq 450); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.2; done
	return 1
}

if t_share 1; then
	# ---- Rules: one user's glob over many files, in several sandboxes at once ----
	echo "# rules: start at ${SECONDS} s"
	id alice87 >/dev/null 2>&1 || useradd -m -s /bin/sh alice87
	id bob87 >/dev/null 2>&1 || useradd -m -s /bin/sh bob87
	AUID=$(id -u alice87) AGID=$(id -g alice87) BUID=$(id -u bob87) BGID=$(id -g bob87)
	for u in alice87 bob87; do
		h=$(getent passwd $u | cut -d: -f6)
		mkdir -p "$h/fill" "$h/fill2"
		(cd "$h/fill" && seq -f 'f%g' 150 | xargs touch) && (cd "$h/fill2" && seq -f 'g%g' 100 | xargs touch)
		chown -R $u: "$h"
	done
	cat >"$S/admin.json" <<'JSON'
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
	cat >"$S/fill.json" <<'JSON'
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["~/fill/f*"], "allowWrite": [], "denyWrite": [] } }
JSON
	cat >"$S/big.json" <<'JSON'
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["~/fill/f*", "~/fill2/g*"], "allowWrite": [], "denyWrite": [] } }
JSON
	chmod 0644 "$S"/*.json
	SOCK=$S/bpfbox.sock
	RULES0=$(($(map_len inode_rules) + $(map_len name_rules)))
	"$BPFBOX" daemon --socket "$SOCK" --config "$S/admin.json" --log-file "$S/admin.ndjson" \
		--quota rules=200,user-rules=400 >"$S/daemon.out" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
	assert_succeeds "the daemon listens" test -S "$SOCK"
	assert_contains "$S/admin.ndjson" 'quota rules=200,user-rules=400,learned=1024' \
		"the daemon's start names its shares"
	as() { # USER UID GID ARGS...: bpfbox exec through the daemon
		local u=$1 uid=$2 gid=$3
		shift 3
		(cd / && setpriv --reuid="$uid" --regid="$gid" --init-groups env HOME="$(getent passwd "$u" | cut -d: -f6)" \
			BPFBOX_SOCKET="$SOCK" "$BPFBOX" exec "$@")
	}

	assert_status "a sandbox needing more than its share is refused" 125 \
		as alice87 "$AUID" "$AGID" --policy "$S/big.json" -- echo big-ran
	assert_contains "$T_OUT" 'over the limit of 200 per sandbox' "the message names the limit"
	assert_contains "$T_OUT" 'the sandbox needs [0-9]+ rule map entries' "and the count it needed"
	assert_contains "$T_OUT" 'bpfbox daemon --quota rules=N' "and how the administrator raises it"
	assert_not_contains "$T_OUT" '^big-ran$' "the command did not run"
	assert_succeeds "the refusal is in the administrator's log" grep -q 'over the limit of 200 per sandbox' \
		"$S/admin.ndjson"

	# Three at once, about 160 entries each, against 400 for the user.
	echo "# t=${SECONDS} s"
	rm -f "$S/stop"
	pids=()
	for i in 1 2 3; do
		as alice87 "$AUID" "$AGID" --policy "$S/fill.json" -- \
			sh -c "echo alice-ran-$i; while [ ! -e $S/stop ]; do sleep 0.2; done" >"$S/alice$i.out" 2>&1 &
		pids+=($!)
	done
	settled() { # every one ran or was refused
		local i
		for i in 1 2 3; do
			grep -q -e "alice-ran-$i" -e 'the command was not run' "$S/alice$i.out" 2>/dev/null || return 1
		done
	}
	for _ in $(seq 600); do settled && break; sleep 0.2; done
	assert_succeeds "alice's three sandboxes each ran or were refused" settled
	ran=$(cat "$S"/alice?.out | grep -c '^alice-ran-')
	refused=$(cat "$S"/alice?.out | grep -c 'over the limit of 400 per user')
	echo "# alice: $ran ran, $refused refused"
	assert_eq 3 "$((ran + refused))" "each either ran or was refused for the user's share"
	assert_succeeds "at least one was refused for the user's share" test "$refused" -ge 1
	assert_succeeds "at least two ran" test "$ran" -ge 2
	cat "$S"/alice?.out >"$S/alice.all"
	assert_contains "$S/alice.all" "uid $AUID's sandboxes would hold [0-9]+ rule map entries" \
		"the refusal names the uid and the count"
	assert_contains "$S/alice.all" 'bpfbox daemon --quota user-rules=N' "and the option"
	held=$(ledger | awk -v u="$AUID" '$1 == u { s += $2 } END { print s + 0 }')
	echo "# ledger while they run: $held rule entries for uid $AUID"
	assert_succeeds "the ledger holds alice's running sandboxes within her share" test "$held" -gt 0 -a "$held" -le 400
	inkernel=$(($(map_len inode_rules) + $(map_len name_rules) - RULES0))
	assert_succeeds "the rule maps hold no more than the ledger says ($inkernel <= $held)" test "$inkernel" -le "$held"

	# Meanwhile bob and root start and run.
	echo "# t=${SECONDS} s"
	assert_succeeds "bob's sandbox with the same glob starts" as bob87 "$BUID" "$BGID" --policy "$S/fill.json" -- \
		sh -c 'echo bob-ran; cat ~/fill/f1; true'
	assert_contains "$T_OUT" '^bob-ran' "bob's command ran"
	assert_contains "$T_OUT" 'Permission denied|Operation not permitted' "and his rule is enforced"
	assert_succeeds "root's own sandbox starts" "$BPFBOX" exec --log-file /dev/null -- echo root-ran
	assert_contains "$T_OUT" '^root-ran$' "root's command ran"

	touch "$S/stop"
	for p in "${pids[@]}"; do wait "$p"; done
	assert_eq 0 "$(ledger | wc -l)" "after the sandboxes end the ledger is empty"
	assert_eq "$RULES0" "$(($(map_len inode_rules) + $(map_len name_rules)))" "and the rule maps hold nothing of them"

	# A supervisor killed with SIGKILL: gc gives its share back.
	echo "# t=${SECONDS} s"
	rm -f "$S/stop"
	"$BPFBOX" exec --log-file /dev/null --policy "$S/fill.json" -- \
		sh -c "echo killed-ran; while [ ! -e $S/stop ]; do sleep 0.2; done" >"$S/killed.out" 2>&1 &
	KPID=$!
	assert_succeeds "root's sandbox runs" wait_for "$S/killed.out" '^killed-ran'
	assert_eq 1 "$(ledger | awk '$1 == 0 && $2 > 0' | wc -l)" "its share is in the ledger under uid 0"
	kill -KILL "$KPID"
	wait "$KPID" 2>/dev/null
	assert_eq 1 "$(ledger | wc -l)" "a killed supervisor's share stays until gc"
	assert_succeeds "bpfbox gc collects it" "$BPFBOX" gc
	assert_eq 0 "$(ledger | wc -l)" "after gc the ledger is empty"
	assert_eq "$RULES0" "$(($(map_len inode_rules) + $(map_len name_rules)))" "and the rule maps hold nothing of it"

	# Abstract socket names and devices have a fixed share per sandbox.
	echo "# t=${SECONDS} s"
	names=$(seq -f '"@bb87-%g"' 33 | paste -sd,)
	cat >"$S/unix.json" <<JSON
{ "network": { "allowedDomains": [], "deniedDomains": [], "allowUnixSockets": [$names] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
	assert_status "a policy with 33 abstract socket names is refused" 125 \
		"$BPFBOX" exec --policy "$S/unix.json" --log-file /dev/null -- echo unix-ran
	assert_contains "$T_OUT" 'network.allowUnixSockets: 33 abstract socket names, over the limit of 32 per sandbox' \
		"the message names the field and the limit"
	assert_eq 0 "$(map_len unix_names)" "nothing of it reached the kernel"
	kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	DPID=
	echo "# rules: end at ${SECONDS} s"
else
	t_skip "rule map shares" "$(t_share_where 1)"
fi

if t_share 2; then
	# ---- Learned addresses: one sandbox's share, reclaimed while it runs ----
	echo "# learned: start at ${SECONDS} s"
	command -v dnsmasq >/dev/null || { t_skip "learned address shares" "dnsmasq is not installed"; exit 0; }
	mkdir -p "$S/www" "$S/out"
	echo hello-ok >"$S/www/hello.txt"
	assert_succeeds "a remote network namespace is set up" net_remote_up
	# 10-201-0-N.syn.test answers 10.201.0.N: as many distinct addresses as names; TTL 0.
	assert_succeeds "dnsmasq answers a wildcard zone" net_dnsmasq "$S/dnsmasq.log" \
		--synth-domain=syn.test,10.201.0.0/24 --host-record=ok.test,10.200.0.2 --local-ttl=0
	assert_succeeds "an HTTP server behind ok.test" net_serve bbremote http 10.200.0.2 80 "$S/www"
	net_resolver_is 10.200.0.2
	cat >"$S/learn.json" <<JSON
{ "network": { "allowedDomains": ["*.syn.test", "ok.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$S/out"], "denyWrite": [] } }
JSON
	cat >"$S/resolve.py" <<'PY'
# Resolves names 10-201-0-FIRST..LAST.syn.test through the sandbox's DNS; prints how many were answered.
import socket, sys
first, last = int(sys.argv[1]), int(sys.argv[2])
ok = 0
for i in range(first, last + 1):
    try:
        socket.getaddrinfo("10-201-0-%d.syn.test" % i, 80, socket.AF_INET, socket.SOCK_STREAM)
        ok += 1
    except OSError:
        pass
print("answered %d" % ok, flush=True)
PY
	cat >"$S/learner.sh" <<SH
python3 $S/resolve.py 1 20 >$S/out/phase1
while [ ! -e $S/go2 ]; do sleep 0.2; done
python3 $S/resolve.py 21 23 >$S/out/phase2
while [ ! -e $S/stop ]; do sleep 0.2; done
SH
	LOG=$S/learn.ndjson
	rm -f "$S/stop" "$S/go2"
	"$BPFBOX" exec --policy "$S/learn.json" --log-file "$LOG" --quota learned=8,user-learned=32,learned-min-ttl=2 \
		-- sh "$S/learner.sh" >"$S/learner.out" 2>&1 &
	LPID=$!
	assert_succeeds "the sandbox resolved 20 names" wait_for "$S/out/phase1" '^answered'
	assert_contains "$S/out/phase1" '^answered 20$' "the resolver answered every one, learned or not"
	n1=$(map_len learned)
	echo "# learned entries after 20 names: $n1"
	assert_eq 8 "$n1" "the kernel holds the sandbox's share of 8 addresses, no more"
	assert_eq 8 "$(ledger | awk '$1 == 0 { s += $3 } END { print s + 0 }')" "the ledger reserved 8 for it"
	assert_event "the addresses not learned are logged with the limit" \
		'.event.action == "learned-address-refused" and (.message | test("share of 8 learned .* learned=N"))'
	# Another sandbox (also uid 0, whose share is 32) reaches an allowed name without the proxy variables.
	assert_succeeds "another sandbox's transparent connection works" "$BPFBOX" exec --policy "$S/learn.json" \
		--log-file /dev/null --quota learned=8,user-learned=32 -- curl -sS --noproxy '*' http://ok.test/hello.txt
	assert_contains "$T_OUT" '^hello-ok$' "it got the page"
	sleep 3 # past learned-min-ttl: the 8 have expired
	touch "$S/go2"
	assert_succeeds "the sandbox resolved 3 more names" wait_for "$S/out/phase2" '^answered'
	assert_contains "$S/out/phase2" '^answered 3$' "all 3 answered"
	n2=$(map_len learned)
	echo "# learned entries after 3 more names, the first 8 expired: $n2"
	assert_eq 3 "$n2" "the expired addresses left the kernel while the sandbox runs"
	assert_succeeds "the sandbox is still running" kill -0 "$LPID"
	touch "$S/stop"
	wait "$LPID"
	assert_eq 0 "$(map_len learned)" "after it ends the learned map is empty"
	assert_eq 0 "$(ledger | wc -l)" "and so is the ledger"
	echo "# learned: end at ${SECONDS} s"
else
	t_skip "learned address shares" "$(t_share_where 2)"
fi
