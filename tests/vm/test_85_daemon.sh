#!/usr/bin/env bash
# Sandboxes without root: `bpfbox daemon` started as the unit starts it, two
# real users (carol85, dave85) running `bpfbox exec` through it. Identity from
# the kernel, the administrator's policy as a ceiling, the administrator's log,
# exit statuses, stdio and a terminal, ps and stop per user, the caller or the
# daemon killed, a restart, per-user limits and bad requests.
# In `make vm-test` the sections whose subject is the daemon in user space (domains through
# the proxy, ps and stop, the registry, the per-user limit, bad requests, the terminal, log
# rotation, SIGTERM) are shared out between the kernels (tests/vm/lib.sh t_share); identity,
# enforcement, the ceiling, killed callers and daemons, nesting and gc run on both.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
command -v useradd >/dev/null || t_skip_all "useradd is missing"
command -v runuser >/dev/null || t_skip_all "runuser is missing"

DPID=
daemon_stop() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	DPID=
}
trap 'rc=$?; daemon_stop; [ "$T_FAIL" -eq 0 ] || sed "s/^/# daemon: /" "$S/daemon.out"; net_cleanup; rm -rf "$S"; (exit $rc); t_summary' EXIT

id carol85 >/dev/null 2>&1 || useradd -m -s /bin/sh carol85
id dave85 >/dev/null 2>&1 || useradd -m -s /bin/sh dave85
CUID=$(id -u carol85) CGID=$(id -g carol85) DUID=$(id -u dave85)
CH=$(getent passwd carol85 | cut -d: -f6)
mkdir -p "$CH/work" "$CH/notes" && chown -R carol85:carol85 "$CH" && chmod 0755 "$CH"

# Everything the users may read lives in $S; the administrator's files are root's.
S=$(mktemp -d /tmp/bb85.XXXXXX)
chmod 0755 "$S"
SRV=$S/srv
mkdir -p "$SRV/pub" "$SRV/secret" "$SRV/shared" "$SRV/other"
echo public >"$SRV/pub/file"
echo topsecret >"$SRV/secret/file"
echo inner >"$SRV/pub/inner"
chmod -R a+rwX "$SRV"
SOCK=$S/run/bpfbox.sock
ALOG=$S/admin/events.ndjson
ADMIN=$S/admin/policy.json
mkdir -p "$S/admin" && chmod 0700 "$S/admin"
cat >"$ADMIN" <<JSON
{
  "network": { "allowedDomains": ["remote.test", "both.remote.test"], "deniedDomains": [],
               "allowUnixSockets": ["$S/run/bpfbox.sock"] },
  "filesystem": { "denyRead": ["$SRV/secret"], "allowWrite": ["~/work", "$SRV/shared"], "denyWrite": [] }
}
JSON
# carol's own policy: it tries to widen the administrator's in every field.
CP=$S/carol.json
cat >"$CP" <<JSON
{
  "network": { "allowedDomains": ["both.remote.test", "only-carol.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$SRV/pub/inner"], "allowRead": ["$SRV/secret"],
                  "allowWrite": ["~/work", "$SRV/other"], "denyWrite": [] }
}
JSON
chmod 0644 "$CP"
# A policy carol may not read.
SECRETP=$S/root-only.json
cp "$CP" "$SECRETP" && chmod 0600 "$SECRETP"

export BPFBOX_SOCKET=$SOCK
# As the unit runs it (tools/systemd/bpfbox.service), with this file's paths.
daemon_start() {
	"$BPFBOX" daemon --socket "$SOCK" --config "$ADMIN" --log-file "$ALOG" "$@" >>"$S/daemon.out" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && return 0
		sleep 0.1
	done
	return 1
}
as() {
	local u=$1
	shift
	(cd "$(getent passwd "$u" | cut -d: -f6)" && runuser -u "$u" -- env BPFBOX_SOCKET="$SOCK" "$@")
}
carol() { as carol85 "$BPFBOX" exec "$@"; }
admin_ev() {
	jq -c "select($1)" "$ALOG" >"$T_TMP/ev" 2>/dev/null
	[ -s "$T_TMP/ev" ]
}
assert_admin_ev() {
	if admin_ev "$1"; then t_ok "$2"; else t_fail "$2" "no line of the administrator's log matches $1" "$(tail -20 "$ALOG")"; fi
}

# --- no daemon ---
t_exec carol -- /bin/true
assert_eq 125 "$T_RC" "no daemon: exit 125"
assert_contains "$T_OUT" 'bpfbox needs root, or the bpfbox daemon \(`systemctl start bpfbox.socket`\)' \
	"no daemon: the message says how to start it"

# --- the daemon ---
assert_succeeds "the daemon starts and listens" daemon_start
assert_eq "srw-rw-rw- root" "$(stat -c '%A %U' "$SOCK")" "the socket is root's, mode 0666"
assert_admin_ev '.event.action == "daemon-start"' "the daemon's start is in the administrator's log"

# Identity from the kernel.
t_exec carol -- /bin/sh -c 'id -u; id -g; grep -E "^(CapEff|NoNewPrivs):" /proc/self/status; echo "HOME=$HOME"; pwd'
assert_eq 0 "$T_RC" "carol: the command runs and exits 0"
assert_contains "$T_OUT" "^$CUID\$" "carol: it runs with carol's uid"
assert_contains "$T_OUT" "^$CGID\$" "carol: and carol's gid"
assert_contains "$T_OUT" '^CapEff:[[:space:]]+0+$' "carol: no capability"
assert_contains "$T_OUT" '^NoNewPrivs:[[:space:]]+1$' "carol: no new privileges"
assert_contains "$T_OUT" "^HOME=$CH\$" "carol: her home"
assert_contains "$T_OUT" "^$CH\$" "carol: her working directory, passed as a descriptor"
t_exec as carol85 env SUDO_UID=0 SUDO_USER=root SUDO_GID=0 "$BPFBOX" exec -- id -u
assert_contains "$T_OUT" "^$CUID\$" "carol: sudo variables in the request change nothing"
t_exec carol --user root -- id -u
assert_eq 125 "$T_RC" "carol: --user is refused"
assert_contains "$T_OUT" '--user is for root' "carol: --user: the message says why"

# Exit statuses, stdio.
t_exec carol -- /bin/sh -c 'exit 7'
assert_eq 7 "$T_RC" "exit status passes through"
t_exec carol -- /bin/sh -c 'kill -TERM $$'
assert_eq 143 "$T_RC" "death by a signal: 128+N"
t_exec carol -- /nonexistent/cmd
assert_eq 127 "$T_RC" "command not found: 127"
printf '#!/bin/sh\n' >"$S/noexec" && chmod 0644 "$S/noexec"
t_exec carol -- "$S/noexec"
assert_eq 126 "$T_RC" "not executable: 126"
t_exec carol --timeout 1s -- /bin/sleep 30
assert_eq 124 "$T_RC" "--timeout: 124"
out=$(echo through-stdin | as carol85 "$BPFBOX" exec -- /bin/cat 2>/dev/null)
assert_eq "through-stdin" "$out" "stdin and stdout are the caller's"
err=$(as carol85 "$BPFBOX" exec --log-file /dev/null -- /bin/sh -c 'echo to-stderr >&2' 2>&1 >/dev/null)
assert_eq "to-stderr" "$err" "stderr is the caller's"

# --- files the caller names are opened by the caller ---
t_exec carol --log-file /etc/bb85.log -- /bin/true
assert_eq 125 "$T_RC" "a log file in /etc: refused"
assert_fails "a log file in /etc: not created" test -e /etc/bb85.log
t_exec carol --policy "$SECRETP" -- /bin/true
assert_eq 125 "$T_RC" "a policy carol cannot read: refused"
assert_contains "$T_OUT" 'Permission denied' "a policy carol cannot read: the message says why"

# --- the administrator's policy as it is (no --policy) ---
t_exec carol -- /bin/sh -c "cat $SRV/pub/file; cat $SRV/secret/file || echo SECRET-REFUSED; echo x >~/work/a && echo WORK-OK; echo x >~/notes/a || echo NOTES-REFUSED"
assert_contains "$T_OUT" '^public$' "admin policy: an allowed read works"
assert_contains "$T_OUT" '^SECRET-REFUSED$' "admin policy: its denyRead is refused"
assert_contains "$T_OUT" '^WORK-OK$' "admin policy: ~/work is carol's home's"
assert_contains "$T_OUT" '^NOTES-REFUSED$' "admin policy: outside its allowWrite is refused"
assert_admin_ev ".event.action == \"open-read\" and .user.id == \"$CUID\" and .user.name == \"carol85\" and (.file.path | test(\"secret\"))" \
	"admin log: carol's refusal, with user.id and user.name"
assert_admin_ev ".event.action == \"sandbox-start\" and .user.name == \"carol85\" and .bpfbox.policy.path == \"$ADMIN\"" \
	"admin log: the start event says the administrator's policy applied"

# --- the ceiling over carol's policy ---
CL=$S/carol-log.ndjson
touch "$CL" && chown carol85 "$CL"
t_exec carol --policy "$CP" --log-file "$CL" -- /bin/sh -c "cat $SRV/secret/file || echo SECRET-REFUSED; cat $SRV/pub/inner || echo INNER-REFUSED; cat $SRV/pub/file; echo x >$SRV/other/a || echo OTHER-REFUSED; echo x >$SRV/shared/a || echo SHARED-REFUSED; echo x >~/work/b && echo WORK-OK"
assert_eq 0 "$T_RC" "ceiling: the run completes"
assert_contains "$T_OUT" "filesystem.allowWrite\\[1\\] \"$SRV/other\": outside the administrator's allowWrite \\($ADMIN\\); not granted" \
	"ceiling: the cut allowWrite is named with the file, the JSON path and the administrator's file"
assert_contains "$T_OUT" '^SECRET-REFUSED$' "ceiling: carol's allowRead cannot reopen the administrator's denyRead"
assert_contains "$T_OUT" '^INNER-REFUSED$' "ceiling: carol's own denyRead holds"
assert_contains "$T_OUT" '^public$' "ceiling: a read both allow works"
assert_contains "$T_OUT" '^OTHER-REFUSED$' "ceiling: a write only carol allows is refused"
assert_contains "$T_OUT" '^SHARED-REFUSED$' "ceiling: a write only the administrator allows is refused"
assert_contains "$T_OUT" '^WORK-OK$' "ceiling: a write both allow works"
assert_succeeds "ceiling: carol's own log has her events" grep -q '"sandbox-start"' "$CL"
assert_admin_ev ".event.action == \"sandbox-start\" and .user.name == \"carol85\" and .bpfbox.caller.policy_name == \"$CP\" and .bpfbox.policy.path == null" \
	"admin log: carol's policy run is in the administrator's log too, her file's name as her claim"
t_exec carol --policy "$CP" --strict -- /bin/true
assert_eq 125 "$T_RC" "ceiling --strict: a cut is an error"
assert_contains "$T_OUT" 'not granted' "ceiling --strict: the cut is named"

# --- --audit under the ceiling: carol audits her own narrowing; the administrator's refusals stay enforced ---
echo audit-secret >"$SRV/secret/audit" && chmod 0644 "$SRV/secret/audit"
[ -f "$CH/.bashrc" ] || { echo '# carol' >"$CH/.bashrc" && chown carol85:carol85 "$CH/.bashrc"; }
BASHRC_SUM=$(sha256sum <"$CH/.bashrc")
# A server on the guest's loopback that no allowed name resolves to; it records every connection it accepts.
APORT=8585
SEEN=$S/seen
python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[2])))
s.listen()
open(sys.argv[1] + ".ready", "w").close()
while True:
    c, _ = s.accept()
    with open(sys.argv[1], "a") as f:
        f.write("accepted\n")
    c.close()' "$SEEN" "$APORT" 2>>"$T_TMP/servers.log" &
NET_PIDS+=($!)
for _ in $(seq 100); do
	[ -e "$SEEN.ready" ] && break
	sleep 0.1
done
seen() { [ -e "$SEEN" ] && wc -l <"$SEEN" || echo 0; }
(exec 3<>/dev/tcp/127.0.0.1/$APORT) 2>/dev/null
for _ in $(seq 50); do
	[ "$(seen)" -ge 1 ] && break
	sleep 0.1
done
assert_eq 1 "$(seen)" "--audit: the loopback server records a connection from outside the sandbox"
CLIENT=$T_ROOT/tests/vm/servers/client.py
# Her events go nowhere: a line of them must not split cat's message in the output (the admin log has them).
t_exec carol --policy "$CP" --audit --log-file /dev/null -- /bin/sh -c "cat $SRV/secret/audit || echo SECRET-REFUSED; cat $SRV/pub/inner; echo x >$SRV/other/audit-a || echo OTHER-REFUSED; echo pwned >>~/.bashrc || echo BASHRC-REFUSED; python3 $CLIENT tcp 127.0.0.1 $APORT || echo CONNECT-REFUSED"
AOUT=$T_TMP/audit-run.out
cp "$T_OUT" "$AOUT"
assert_eq 0 "$T_RC" "--audit: the run completes"
assert_contains "$AOUT" "$SRV/secret/audit: Operation not permitted" "--audit: a read under the administrator's denyRead fails with EPERM"
assert_not_contains "$AOUT" 'audit-secret' "--audit: the administrator's secret is not read"
assert_contains "$AOUT" '^inner$' "--audit: a read only carol's own denyRead refuses is let through"
assert_contains "$AOUT" '^OTHER-REFUSED$' "--audit: a write outside the administrator's allowWrite fails"
assert_contains "$AOUT" '^BASHRC-REFUSED$' "--audit: a write to ~/.bashrc (mandatory set) fails"
assert_eq "$BASHRC_SUM" "$(sha256sum <"$CH/.bashrc")" "--audit: ~/.bashrc is unchanged"
assert_contains "$AOUT" '^EPERM' "--audit: a direct connect to a loopback server fails with EPERM"
assert_contains "$AOUT" '^CONNECT-REFUSED$' "--audit: the direct connect fails"
assert_eq 1 "$(seen)" "--audit: the loopback server saw nothing from the sandbox"
assert_fails "--audit: the file outside the administrator's allowWrite is not created" test -e "$SRV/other/audit-a"
C85='.user.name == "carol85"'
assert_admin_ev "$C85 and .event.action == \"sandbox-start\" and .bpfbox.audit == true and .bpfbox.audit_scope == \"caller\"" \
	"--audit: the start event says only carol's own rules are audited"
assert_admin_ev "$C85 and .event.action == \"open-read\" and .file.path == \"$SRV/secret/audit\" and .event.outcome == \"failure\" and (.bpfbox.audit | not) and .rule.name == \"ceiling:denyRead:$SRV/secret\"" \
	"--audit: admin log: the read under its denyRead is an enforced refusal naming its rule"
assert_admin_ev "$C85 and .event.action == \"open-read\" and .file.path == \"$SRV/pub/inner\" and .event.outcome == \"success\" and .bpfbox.audit == true and .rule.name == \"denyRead:$SRV/pub/inner\"" \
	"--audit: admin log: the read only carol refuses is audited"
assert_admin_ev "$C85 and .file.path == \"$SRV/other/audit-a\" and .event.outcome == \"failure\" and (.bpfbox.audit | not) and .rule.name == \"ceiling:default:write\"" \
	"--audit: admin log: the write outside its allowWrite is an enforced refusal"
assert_admin_ev "$C85 and .file.path == \"$CH/.bashrc\" and .event.outcome == \"failure\" and (.bpfbox.audit | not) and (.rule.name | startswith(\"mandatory:\"))" \
	"--audit: admin log: the write to ~/.bashrc is an enforced refusal of the mandatory set"
assert_admin_ev "$C85 and .event.action == \"connect\" and .destination.ip == \"127.0.0.1\" and .destination.port == $APORT and .event.outcome == \"failure\" and (.bpfbox.audit | not)" \
	"--audit: admin log: the direct connect is an enforced refusal"
if t_share 1; then
	# bpfbox.mode "audit" in carol's own file composes as --audit does; without a policy of hers, nothing is hers to audit.
	CPA=$S/carol-audit.json
	jq '. + {"bpfbox": {"mode": "audit"}}' "$CP" >"$CPA" && chmod 0644 "$CPA"
	t_exec carol --policy "$CPA" --strict -- /bin/sh -c "cat $SRV/secret/audit || echo SECRET-REFUSED; cat $SRV/pub/inner"
	assert_eq 125 "$T_RC" "mode audit in carol's file: --strict still refuses the cut allowWrite"
	assert_not_contains "$T_OUT" 'bpfbox.mode' "mode audit in carol's file: the mode is not a cut"
	t_exec carol --policy "$CPA" -- /bin/sh -c "cat $SRV/secret/audit || echo SECRET-REFUSED; cat $SRV/pub/inner"
	assert_contains "$T_OUT" '^SECRET-REFUSED$' "mode audit in carol's file: the administrator's denyRead is enforced"
	assert_not_contains "$T_OUT" 'audit-secret' "mode audit in carol's file: the secret is not read"
	assert_contains "$T_OUT" '^inner$' "mode audit in carol's file: her own denyRead is audited"
	t_exec carol --audit -- /bin/sh -c "cat $SRV/secret/audit || echo SECRET-REFUSED"
	assert_contains "$T_OUT" '^SECRET-REFUSED$' "--audit without a policy of carol's: the administrator's policy is enforced"
	assert_not_contains "$T_OUT" 'audit-secret' "--audit without a policy of carol's: the secret is not read"
else
	t_skip "mode audit in the caller's file, --audit without one" "its subject is user space: it runs in $(t_share_where 1)"
fi
assert_admin_ev ".event.action == \"sandbox-start\" and .user.name == \"carol85\" and .bpfbox.caller.policy_name == \"$CP\" and (.bpfbox.policy.digest | startswith(\"sha256:\")) and .bpfbox.policy.ceiling.path == \"$ADMIN\" and (.bpfbox.policy.ceiling.digest | startswith(\"sha256:\"))" \
	"admin log: the start event carries the sha256 of both policies"

# Domains, through the proxy: allowed only where both allow.
if t_share 2; then
	assert_succeeds "a remote network namespace is set up" net_remote_up
	net_hosts remote.test both.remote.test only-carol.test "$NET_REMOTE"
	mkdir -p "$S/www" && echo hello-remote >"$S/www/hello.txt"
	assert_succeeds "HTTP serves in the namespace" net_serve bbremote http 0.0.0.0 80 "$S/www"
	t_exec carol --policy "$CP" -- /bin/sh -c 'curl -sS -o /dev/null -w "%{http_code}\n" http://both.remote.test/hello.txt; curl -sS -o /dev/null -w "%{http_code}\n" http://only-carol.test/hello.txt; curl -sS -o /dev/null -w "%{http_code}\n" http://remote.test/hello.txt'
	assert_eq "200 403 403" "$(grep -E '^[0-9]{3}$' "$T_OUT" | xargs)" \
		"ceiling: a domain both allow is reached; one only carol or only the administrator allows is refused"
	# DNS under the ceiling: carol allows a zone the administrator does not; no name of it is asked upstream.
	assert_succeeds "dnsmasq answers in the remote namespace" net_dnsmasq "$S/dnsmasq.log" \
		--host-record=both.remote.test,"$NET_REMOTE" --host-record=data.exfil.test,10.200.0.9
	net_resolver_is "$NET_REMOTE"
	CPX=$S/carol-exfil.json
	jq '.network.allowedDomains += ["*.exfil.test"]' "$CP" >"$CPX" && chmod 0644 "$CPX"
	t_exec carol --policy "$CPX" -- /bin/sh -c "python3 $CLIENT resolve udp $NET_REMOTE 53 data.exfil.test; python3 $CLIENT resolve tcp $NET_REMOTE 53 more.exfil.test; python3 $CLIENT resolve udp $NET_REMOTE 53 both.remote.test"
	assert_contains "$T_OUT" "addrs=$NET_REMOTE\$" "ceiling DNS: a name both allow is answered"
	assert_succeeds "ceiling DNS: the upstream resolver was asked for the name both allow" \
		net_upstream_asked "$S/dnsmasq.log" both.remote.test
	assert_not_contains "$T_OUT" '10.200.0.9' "ceiling DNS: a name only carol allows gets no address"
	assert_fails "ceiling DNS: the upstream resolver never saw data.exfil.test (UDP)" \
		net_upstream_asked "$S/dnsmasq.log" data.exfil.test
	assert_fails "ceiling DNS: the upstream resolver never saw more.exfil.test (TCP)" \
		net_upstream_asked "$S/dnsmasq.log" more.exfil.test
	assert_admin_ev ".user.name == \"carol85\" and .event.action == \"dns-query\" and .dns.question.name == \"data.exfil.test\" and .event.outcome == \"failure\" and .rule.name == \"ceiling:default:network\"" \
		"ceiling DNS: admin log: the refused query names the ceiling's rule"
else
	t_skip "domains through the proxy under the ceiling" "its subject is the daemon in user space: it runs in $(t_share_where 2)"
fi

# --- ps and stop: each user sees and stops only their own ---
if t_share 1; then
	as carol85 "$BPFBOX" exec --log-file /dev/null -- /bin/sleep 60 >/dev/null 2>&1 &
	CPID=$!
	for _ in $(seq 100); do
		ID=$(as carol85 "$BPFBOX" ps 2>/dev/null | awk '/sleep 60/ {print $1}')
		[ -n "$ID" ] && break
		sleep 0.1
	done
	assert_contains <(as carol85 "$BPFBOX" ps) "sleep 60" "ps: carol sees her sandbox"
	assert_not_contains <(as dave85 "$BPFBOX" ps) "sleep 60" "ps: dave does not see carol's"
	assert_contains <("$BPFBOX" ps) "sleep 60" "ps: root sees every sandbox"
	t_exec as dave85 "$BPFBOX" stop "$ID"
	assert_fails "stop: dave cannot stop carol's sandbox" test "$T_RC" -eq 0
	assert_succeeds "stop: it is still running" kill -0 "$CPID"
	t_exec as carol85 "$BPFBOX" stop "$ID"
	assert_eq 0 "$T_RC" "stop: carol stops her own"
	wait "$CPID"
	assert_eq 143 "$?" "stop: her run ends as by SIGTERM (143)"

	# A command line or a policy name with newlines cannot forge fields of the registry (which stop and gc trust).
	FORGE=$(printf 'x\nuid=0\nsupervisor=1\ncgroup=/sys/fs/cgroup')
	FORGED_POLICY=$S/$(printf 'forge.json\nuid=0')
	cp "$CP" "$FORGED_POLICY" && chmod 0644 "$FORGED_POLICY"
	(cd "$S" && runuser -u carol85 -- env BPFBOX_SOCKET="$SOCK" "$BPFBOX" exec --policy "$FORGED_POLICY" \
		--log-file /dev/null -- /bin/sh -c 'sleep 30' "$FORGE") >/dev/null 2>&1 &
	FPID=$!
	for _ in $(seq 100); do "$BPFBOX" ps | grep -q "sleep 30" && break; sleep 0.1; done
	REG=$(grep -l 'sleep 30' /run/bpfbox/sandboxes/* 2>/dev/null | head -1)
	ID=$(basename "$REG")
	assert_eq "uid=$CUID" "$(grep '^uid=' "$REG" 2>&1)" "registry: a forged uid= in the command line is not a field"
	assert_eq 1 "$(grep -c '^supervisor=' "$REG" 2>&1)" "registry: a forged supervisor= is not a field"
	assert_eq 1 "$(grep -c '^cgroup=' "$REG" 2>&1)" "registry: a forged cgroup= is not a field"
	as carol85 "$BPFBOX" stop "$ID" >/dev/null 2>&1
	wait "$FPID"
else
	t_skip "ps and stop per user; registry fields cannot be forged" "its subject is the daemon in user space: it runs in $(t_share_where 1)"
fi

# --- the caller dies (SIGKILL): its sandbox goes with it ---
as carol85 "$BPFBOX" exec --kill-after 1s --log-file /dev/null -- /bin/sleep 300 >/dev/null 2>&1 &
for _ in $(seq 100); do "$BPFBOX" ps | grep -q "sleep 300" && break; sleep 0.1; done
CLIENT=$(pgrep -u carol85 -f "bpfbox exec --kill-after 1s" | head -1)
ID=$(as carol85 "$BPFBOX" ps | awk '/sleep 300/ {print $1}')
assert_succeeds "SIGKILL of the client: its sandbox was running" test -n "$ID"
kill -KILL "$CLIENT"
gone=no
for _ in $(seq 100); do
	if ! "$BPFBOX" ps | grep -q "sleep 300" && ! pgrep -u carol85 -x sleep >/dev/null; then gone=yes; break; fi
	sleep 0.1
done
assert_eq yes "$gone" "SIGKILL of the client: the sandbox and its command are gone"
assert_fails "SIGKILL of the client: no cgroup left" test -d "/sys/fs/cgroup/bpfbox/$ID"

# --- the daemon dies (SIGKILL): running sandboxes stay confined, a restart serves again ---
as carol85 "$BPFBOX" exec -- /bin/sh -c "sleep 3; cat $SRV/secret/file || echo AFTER-DAEMON-DEATH-REFUSED" >"$T_TMP/late" 2>&1 &
LPID=$!
for _ in $(seq 100); do "$BPFBOX" ps | grep -q "AFTER-DAEMON" && break; sleep 0.1; done
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
DPID=
wait "$LPID"
assert_eq 0 "$?" "daemon SIGKILL: the running sandbox finishes and reports its status"
assert_contains "$T_TMP/late" '^AFTER-DAEMON-DEATH-REFUSED$' "daemon SIGKILL: the sandbox stayed confined"
rm -f "$SOCK"
assert_succeeds "a restarted daemon listens again" daemon_start
t_exec carol -- /bin/true
assert_eq 0 "$T_RC" "a restarted daemon serves"
# The daemon and a worker both killed: the orphaned sandbox stays confined until a restarted daemon collects it.
as carol85 "$BPFBOX" exec --log-file /dev/null -- /bin/sleep 300 >/dev/null 2>&1 &
OPID=$!
for _ in $(seq 100); do "$BPFBOX" ps | grep -q "sleep 300" && break; sleep 0.1; done
REG=$(grep -l 'sleep 300' /run/bpfbox/sandboxes/* 2>/dev/null | head -1)
OID=$(basename "$REG")
WPID=$(sed -n 's/^supervisor=//p' "$REG")
kill -KILL "$DPID" "$WPID"
wait "$DPID" 2>/dev/null
DPID=
wait "$OPID" 2>/dev/null
assert_contains <("$BPFBOX" ps) "$OID .*orphaned" "daemon and worker killed: the sandbox is orphaned, still listed"
rm -f "$SOCK"
assert_succeeds "a restarted daemon listens" daemon_start
gone=no
for _ in $(seq 50); do
	if ! "$BPFBOX" ps | grep -q "$OID" && [ ! -d "/sys/fs/cgroup/bpfbox/$OID" ]; then gone=yes; break; fi
	sleep 0.1
done
assert_eq yes "$gone" "a restarted daemon collects the orphaned sandbox (cgroup and entry gone)"

# --- per-user limit ---
if t_share 2; then
	daemon_stop
	assert_succeeds "a daemon with --max-per-user 1" daemon_start --max-per-user 1
	as carol85 "$BPFBOX" exec --log-file /dev/null -- /bin/sleep 20 >/dev/null 2>&1 &
	BG=$!
	for _ in $(seq 100); do as carol85 "$BPFBOX" ps | grep -q "sleep 20" && break; sleep 0.1; done
	t_exec carol -- /bin/true
	assert_eq 125 "$T_RC" "limit: carol's second sandbox is refused"
	assert_contains "$T_OUT" "already runs 1 sandboxes, the administrator's limit" "limit: the message names the limit"
	t_exec as dave85 "$BPFBOX" exec -- /bin/true
	assert_eq 0 "$T_RC" "limit: dave still gets his"
	kill -TERM "$BG"
	wait "$BG"
	# Carol's sandbox ends after her client: later sections start her sandboxes under this limit.
	for _ in $(seq 100); do as carol85 "$BPFBOX" ps | grep -q "sleep 20" || break; sleep 0.1; done
else
	t_skip "the per-user limit" "its subject is the daemon in user space: it runs in $(t_share_where 2)"
fi

# --- bad requests: each gets an error or is closed; everyone else is served ---
cat >"$S/bad.py" <<'PY'
import os, socket, struct, sys, time, array
path, kind = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
def frame(body): return b"BBX1" + struct.pack(">I", len(body)) + body
if kind == "garbage": s.sendall(b"GET / HTTP/1.0\r\n\r\n")
elif kind == "huge": s.sendall(b"BBX1" + struct.pack(">I", 0x7fffffff))
elif kind == "json": s.sendall(frame(b'{"v":1,"op":"exec","argv":[]}'))
elif kind == "notjson": s.sendall(frame(b'\xff\xfe not json'))
elif kind == "truncated": s.sendall(frame(b'{"v":1,"op":"exec","argv":["x"]}')[:12]); s.close(); print("closed"); sys.exit(0)
elif kind == "fds":
    fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(40)]
    s.sendmsg([frame(b'{"v":1,"op":"ps"}')], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
elif kind == "silent": time.sleep(12)
s.settimeout(15)
data = b""
try:
    while True:
        d = s.recv(65536)
        if not d: break
        data += d
except Exception as e:
    print("recv:", e)
print(data[8:].decode(errors="replace"))
PY
if t_share 2; then
	for kind in garbage huge json notjson fds; do
		t_exec as dave85 python3 "$S/bad.py" "$SOCK" "$kind"
		assert_contains "$T_OUT" '"type":"error"' "bad request ($kind): an error answer"
	done
	t_exec as dave85 python3 "$S/bad.py" "$SOCK" truncated
	as dave85 python3 "$S/bad.py" "$SOCK" silent >"$T_TMP/silent" 2>&1 &
	SIL=$!
	sleep 2
	t_exec carol -- /bin/echo still-served
	assert_contains "$T_OUT" '^still-served$' "bad requests: a silent client does not hold up others"
	assert_admin_ev '.event.action == "daemon-request-refused" and (.message | test("bad request"))' \
		"bad requests are in the administrator's log"
	# The silent client's answer comes after the daemon's 10 s request timeout: collected below,
	# after the next sections.
else
	t_skip "bad requests" "its subject is the daemon in user space: it runs in $(t_share_where 2)"
fi

# --- a sandbox cannot ask the daemon for another ---
cat >"$S/nest.json" <<JSON
{ "network": { "allowedDomains": [], "deniedDomains": [], "allowUnixSockets": ["$SOCK"] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
chmod 0644 "$S/nest.json"
t_exec carol --policy "$S/nest.json" -- "$BPFBOX" exec -- /bin/echo NESTED
assert_not_contains "$T_OUT" '^NESTED$' "a request from inside a sandbox does not start another"
assert_contains "$T_OUT" 'inside a bpfbox sandbox are refused' "a request from inside a sandbox: the message says why"

# --- a terminal: the command gets a pty of the caller's, window size, ^C ---
cat >"$S/ptyrun.py" <<'PY'
import os, pty, sys, time, fcntl, termios, struct, select
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
deadline = time.time() + 30
sent = False
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d: break
        out += d
    if b"READY" in out and not sent:
        time.sleep(0.3); os.write(fd, b"\x03"); sent = True
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("STATUS", os.waitstatus_to_exitcode(st))
PY
if t_share 1; then
	t_exec as carol85 python3 "$S/ptyrun.py" env BPFBOX_SOCKET="$SOCK" "$BPFBOX" exec --log-file /dev/null -- /bin/sh -c 'tty; stty size; trap "echo GOT-INT; exit 3" INT; echo READY; sleep 20 & wait'
	assert_contains "$T_OUT" '/dev/pts/[0-9]+' "tty: the command has a terminal"
	assert_contains "$T_OUT" '33 101' "tty: the window size is the caller's"
	assert_contains "$T_OUT" 'GOT-INT' "tty: ^C reaches the command's foreground"
	assert_contains "$T_OUT" 'STATUS 3' "tty: the command's status comes back"
else
	t_skip "a terminal through the daemon" "its subject is the daemon in user space: it runs in $(t_share_where 1)"
fi

if t_share 2; then
	wait "$SIL"
	assert_contains "$T_TMP/silent" 'did not arrive in time' "a silent client is answered and closed after the request timeout"
fi

# --- log rotation: SIGHUP reopens the daemon's log; running sandboxes follow the move ---
if t_share 2; then
	as carol85 "$BPFBOX" exec --log-file /dev/null -- /bin/sh -c "sleep 4; cat $SRV/secret/file" >/dev/null 2>&1 &
	BG=$!
	for _ in $(seq 100); do "$BPFBOX" ps | grep -q "sleep 4" && break; sleep 0.1; done
	mv "$ALOG" "$ALOG.1"
	kill -HUP "$DPID"
	for _ in $(seq 50); do [ -s "$ALOG" ] && break; sleep 0.1; done
	assert_admin_ev '.event.action == "daemon-log-reopened"' "SIGHUP: the daemon reopens its log at the same path"
	# (dave's: this daemon allows carol one sandbox at a time, and hers still runs)
	t_exec as dave85 "$BPFBOX" exec -- /bin/true
	assert_admin_ev '.event.action == "sandbox-start" and .user.name == "dave85" and (.process.args == ["/bin/true"])' \
		"after rotation: a new sandbox's events are in the new file"
	wait "$BG"
	assert_admin_ev '.event.action == "open-read" and (.file.path | test("secret/file"))' \
		"after rotation: a sandbox started before it writes its later refusal to the new file"
	assert_succeeds "after rotation: the old file keeps the earlier lines" grep -q '"daemon-start"' "$ALOG.1"
	cat "$ALOG.1" "$ALOG" >"$S/admin-all.ndjson" && ALOG_ALL=$S/admin-all.ndjson
else
	t_skip "log rotation (SIGHUP)" "its subject is the daemon in user space: it runs in $(t_share_where 2)"
	ALOG_ALL=$ALOG
fi

# --- SIGTERM: the daemon stops, running sandboxes finish within the grace ---
if t_share 1; then
	daemon_stop
	assert_succeeds "a daemon with a 3 s grace" daemon_start --stop-grace 3s
	as carol85 "$BPFBOX" exec --kill-after 1s --log-file /dev/null -- /bin/sleep 60 >/dev/null 2>&1 &
	BG=$!
	for _ in $(seq 100); do as carol85 "$BPFBOX" ps | grep -q "sleep 60" && break; sleep 0.1; done
	kill -TERM "$DPID"
	wait "$DPID"
	assert_eq 0 "$?" "SIGTERM: the daemon exits 0 after the grace"
	DPID=
	wait "$BG"
	assert_eq 143 "$?" "SIGTERM: a sandbox past the grace is stopped (143)"
	assert_fails "SIGTERM: the socket is removed" test -e "$SOCK"
	assert_eq "" "$("$BPFBOX" ps | awk 'NR > 1')" "SIGTERM: no sandbox is left"
else
	t_skip "SIGTERM and the stop grace" "its subject is the daemon in user space: it runs in $(t_share_where 1)"
	daemon_stop # as the section does: the daemon stopped, its socket removed
fi

assert_succeeds "every line of the administrator's log validates against the schema" \
	python3 tests/tools/validate-events.py "$ALOG_ALL" "$ALOG"
ALOG=$ALOG_ALL
assert_admin_ev '.event.action == "sandbox-exit" and .bpfbox.exit.ended_by == "disconnected"' \
	"admin log: the killed client's sandbox ended 'disconnected'"

# --- gc --unpin (the package's removal): never under a running sandbox ---
"$BPFBOX" exec -- /bin/sleep 20 >/dev/null 2>&1 &
BG=$!
for _ in $(seq 100); do "$BPFBOX" ps | grep -q "sleep 20" && break; sleep 0.1; done
t_exec "$BPFBOX" gc --unpin
assert_contains "$T_OUT" 'still running; the pinned programs are kept' "gc --unpin: kept while a sandbox runs"
assert_succeeds "gc --unpin: the pins are still there" test -d /sys/fs/bpf/bpfbox
kill -TERM "$BG"
wait "$BG"
t_exec "$BPFBOX" gc --unpin
assert_fails "gc --unpin: with no sandbox left, the pins are gone" test -e /sys/fs/bpf/bpfbox
assert_succeeds "after gc --unpin the next sandbox loads the programs again" "$BPFBOX" exec --log-file /dev/null -- /bin/true
