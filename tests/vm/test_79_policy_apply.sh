#!/usr/bin/env bash
# The administrator's policy changed through `bpfbox policy apply`, `history` and
# `rollback`, with a real daemon and a real user: a grant applied reaches the user's next
# sandbox once the daemon reloads (the kernel then allows the write it refused), the
# rollback takes it away again (refused again); every version is kept with the login
# user the kernel recorded (sudo does not change it), when, and why; a rejected file,
# a dry run and a user who is not root change nothing; a link planted in the history is
# refused, its target untouched; two applies at once get two numbers.
# Its subject is user space (the command, the daemon's reload) over enforcement the
# other files prove on both kernels: it runs on one (BPFBOX_KERNEL_SHARE, t_share_file).
. "$(dirname "$0")/lib.sh"
t_share_file 2

S=$(mktemp -d /tmp/bb79.XXXXXX)
chmod 0755 "$S"
DPID=''
cleanup79() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	[ "$T_FAIL" -eq 0 ] || tail -n 30 "$S/daemon.out" 2>/dev/null | sed 's/^/# daemon: /'
	rm -rf "$S"
}
trap 'rc=$?; cleanup79; (exit $rc); t_summary' EXIT

id erin79 >/dev/null 2>&1 || useradd -m -s /bin/sh erin79
id adam79 >/dev/null 2>&1 || useradd -m -s /bin/sh adam79
AUID=$(id -u adam79)
SOCK=$S/run/bpfbox.sock
mkdir -p "$S/admin" "$S/out" "$S/run" && chmod 0700 "$S/admin" && chmod 0777 "$S/out"
ADMIN=$S/admin/policy.json
H=$S/admin/history
ALOG=$S/admin/events.ndjson
policy() { # allowWrite entries...
	local w=""
	for p in "$@"; do w="$w${w:+, }\"$p\""; done
	printf '{\n  "network": { "allowedDomains": [], "deniedDomains": [] },\n  "filesystem": { "denyRead": [], "allowWrite": [%s], "denyWrite": [] }\n}\n' "$w"
}
policy >"$ADMIN"
policy "$S/out" >"$S/v1.json"
cp "$ADMIN" "$S/v0.json"
# What an administrator's login session runs: the kernel's login uid is adam79's, then root.
as_admin() { sh -c 'echo "$0" >/proc/self/loginuid && exec "$@"' "$AUID" "$BPFBOX" policy "$@"; }
apply() { as_admin apply --target "$ADMIN" --history "$H" "$@"; }
reloads() { if [ -e "$ALOG" ]; then grep -c '"ceiling-reloaded"' "$ALOG" || true; else echo 0; fi; }
reload() {
	local before
	before=$(reloads)
	kill -HUP "$DPID"
	for _ in $(seq 100); do [ "$(reloads)" -gt "$before" ] && return 0; sleep 0.2; done
	return 1
}
erin_writes() { # NAME: erin's sandbox through the daemon writes $S/out/NAME
	(cd / && runuser -u erin79 -- env BPFBOX_SOCKET="$SOCK" "$BPFBOX" exec --log-file /dev/null -- \
		sh -c "echo x >'$S/out/$1'") </dev/null >/dev/null 2>&1
}

"$BPFBOX" daemon --socket "$SOCK" --config "$ADMIN" --log-file "$ALOG" >>"$S/daemon.out" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.2; done
assert_succeeds "the daemon listens" test -S "$SOCK"

assert_fails "before: erin's write is refused" erin_writes before
assert_succeeds "...and nothing was written" test ! -e "$S/out/before"

# A dry run shows the grant and changes nothing.
assert_succeeds "apply --dry-run" apply --dry-run "$S/v1.json"
assert_contains "$T_OUT" "\\+ allowWrite:$S/out" "the dry run names the grant it adds"
assert_succeeds "...the policy is unchanged" cmp -s "$ADMIN" "$S/v0.json"
assert_succeeds "...and no history was made" test ! -e "$H"

assert_succeeds "apply v1" apply --message "erin may write out" "$S/v1.json"
assert_contains "$T_OUT" "\\+ allowWrite:$S/out" "apply names the grant it adds"
assert_contains "$T_OUT" "applied as version 2" "the file in force before is version 1"
assert_succeeds "the policy is v1's bytes" cmp -s "$ADMIN" "$S/v1.json"
assert_succeeds "it is 0644, root's, a regular file" \
	sh -c "[ \"\$(stat -c '%a %U %F' '$ADMIN')\" = '644 root regular file' ]"
assert_succeeds "the history is root's alone" sh -c "[ \"\$(stat -c '%a %U' '$H')\" = '700 root' ]"
"$BPFBOX" policy history --json --target "$ADMIN" --history "$H" >"$S/h1.json"
assert_succeeds "history: version 1 found, version 2 applied by adam79 with its message, in force" \
	jq -e '(. | length) == 2 and .[0].source == "found" and .[0].current == false and
	       .[1].source == "apply" and .[1].login_name == "adam79" and .[1].uid == 0 and
	       .[1].message == "erin may write out" and .[1].current == true and
	       (.[1].applied_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"))' "$S/h1.json"

assert_fails "applied but not reloaded: the daemon still holds v0" erin_writes early
assert_succeeds "SIGHUP: the daemon reloads" reload
assert_succeeds "after the reload erin's write is allowed" erin_writes after
assert_succeeds "...and the file is there" test -s "$S/out/after"

# A running sandbox of erin's, after one refusal: ps --json says who, the policy's digest
# (the kept version 2's sha256: erin named no policy, the administrator's is hers), the
# refusals so far; a dry run of v0 says what that sandbox would lose; stop ends it.
runuser -u erin79 -- env BPFBOX_SOCKET="$SOCK" "$BPFBOX" exec --log-file /dev/null -- \
	sh -c "echo x >/etc/bb79-refused; exec sleep 120" </dev/null >/dev/null 2>&1 &
EPID=$!
erin_sb() { "$BPFBOX" ps --json | jq -er '[.[] | select(.uid == '"$(id -u erin79)"' and .refusals >= 1)][0].id'; }
for _ in $(seq 100); do erin_sb >/dev/null 2>&1 && break; sleep 0.2; done
ESB=$(erin_sb 2>/dev/null)
"$BPFBOX" ps --json >"$S/ps.json"
assert_succeeds "ps --json: erin's sandbox, by name, running, one refusal so far, enforcing" \
	jq -e --arg id "$ESB" '.[] | select(.id == $id) | .user == "erin79" and .state == "running" and
	       .refusals == 1 and .audited == 0 and .mode == "enforce" and .generation >= 0' "$S/ps.json"
assert_succeeds "...its policy's digest is the kept version 2's" \
	jq -e --arg id "$ESB" --slurpfile h "$S/h1.json" \
	'.[] | select(.id == $id) | .digest == "sha256:" + $h[0][1].sha256' "$S/ps.json"
assert_succeeds "...and the refused write left nothing" test ! -e /etc/bb79-refused
assert_succeeds "a dry run of v0 with erin's sandbox running" apply --dry-run "$S/v0.json"
assert_contains "$T_OUT" "running sandboxes, narrowed to it when the daemon reloads:" "...it lists the running sandboxes"
assert_contains "$T_OUT" "$ESB \\(erin79, uid $(id -u erin79): sh -c" "...erin's by id, name and command"
assert_contains "$T_OUT" "loses 1 grant\\(s\\), gains 0" "...which would lose one grant"
assert_contains "$T_OUT" "    - allowWrite:$S/out" "...the write to out"
"$BPFBOX" ps --json >"$S/ps2.json"
assert_succeeds "...and the dry run changed nothing in it (same generation)" \
	jq -e --arg id "$ESB" --slurpfile a "$S/ps.json" \
	'.[] | select(.id == $id) | .generation == ($a[0][] | select(.id == $id) | .generation)' "$S/ps2.json"
cp "$S/v1.json" "$S/other.json"
assert_succeeds "another file's dry run lists no sandbox" \
	as_admin apply --dry-run --target "$S/other.json" --history "$S/other-h" "$S/v0.json"
assert_not_contains "$T_OUT" "running sandboxes" "...its sandboxes are the daemon's file's only"
# The control socket is root's: erin cannot ask her own sandbox for a preview or a status.
ask_control() { # the request $1 written to ESB's control socket; prints the answer
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode())
s.shutdown(socket.SHUT_WR); print(s.recv(65536).decode())' "/run/bpfbox/control/$ESB" "$1"
}
assert_fails "erin cannot reach her sandbox's control socket (preview)" \
	runuser -u erin79 -- bash -c "$(declare -f ask_control); ESB=$ESB; ask_control '{\"v\":1,\"op\":\"preview\",\"ceiling\":\"{}\"}'"
assert_fails "...nor ask it for its status" \
	runuser -u erin79 -- bash -c "$(declare -f ask_control); ESB=$ESB; ask_control '{\"v\":1,\"op\":\"status\"}'"
assert_contains "$T_OUT" "PermissionError" "...refused by the kernel (the directory is root's)"
assert_succeeds "root can ask it for its status" ask_control '{"v":1,"op":"status"}'
assert_contains "$T_OUT" '"ok":true' "...and gets it"
assert_succeeds "stop erin's sandbox" "$BPFBOX" stop "$ESB"
assert_succeeds "...its process ends" sh -c "for i in \$(seq 100); do kill -0 $EPID 2>/dev/null || exit 0; sleep 0.2; done; exit 1"
assert_fails "...and ps lists it no more" sh -c "'$BPFBOX' ps --json | jq -e --arg id '$ESB' 'any(.[]; .id == \$id)'"
wait "$EPID" 2>/dev/null

# Rejected, not root, a link planted in the history: nothing changes.
echo '{ "network": ' >"$S/bad.json"
assert_status "a rejected file: 125" 125 apply "$S/bad.json"
assert_succeeds "...the policy is unchanged" cmp -s "$ADMIN" "$S/v1.json"
chmod 0644 "$S/v0.json"
assert_fails "erin cannot apply" runuser -u erin79 -- "$BPFBOX" policy apply --target "$ADMIN" --history "$H" "$S/v0.json"
assert_fails "erin cannot read the history" runuser -u erin79 -- "$BPFBOX" policy history --target "$ADMIN" --history "$H"
assert_succeeds "...the policy is unchanged" cmp -s "$ADMIN" "$S/v1.json"
cp /etc/passwd "$S/passwd.before"
ln -s /etc/passwd "$H/000003.json"
assert_status "a link at the next version's name: 125" 125 apply "$S/v0.json"
assert_contains "$T_OUT" "nothing applied" "...it says nothing was applied"
assert_succeeds "...the link's target is untouched" cmp -s /etc/passwd "$S/passwd.before"
assert_succeeds "...and the policy is unchanged" cmp -s "$ADMIN" "$S/v1.json"
rm -f "$H/000003.json"

# Rollback to the file in force before: erin is refused again after the reload. The administrator
# made the file 0640, group adm (a parent proxy's password inside): the new file keeps both.
chmod 0640 "$ADMIN" && chgrp adm "$ADMIN"
assert_succeeds "rollback 1" as_admin rollback --target "$ADMIN" --history "$H" 1
assert_contains "$T_OUT" "- allowWrite:$S/out" "the rollback names the grant it removes"
assert_eq "640 root adm" "$(stat -c '%a %U %G' "$ADMIN")" "the rolled-back file keeps 0640 and group adm"
assert_fails "...so erin cannot read it" runuser -u erin79 -- cat "$ADMIN"
assert_succeeds "the policy is v0's bytes again" cmp -s "$ADMIN" "$S/v0.json"
"$BPFBOX" policy history --json --target "$ADMIN" --history "$H" >"$S/h2.json"
assert_succeeds "history: version 3 is the rollback, in force; versions 1 and 2 kept" \
	jq -e '(. | length) == 3 and .[2].source == "rollback" and .[2].message == "rollback to version 1" and
	       .[2].current == true and .[0].current == false and .[0].sha256 == .[2].sha256' "$S/h2.json"
assert_succeeds "SIGHUP: the daemon reloads" reload
assert_fails "after the rollback erin's write is refused again" erin_writes rolled
assert_succeeds "...and nothing was written" test ! -e "$S/out/rolled"
assert_status "rollback to a version that is not kept: 125" 125 as_admin rollback --target "$ADMIN" --history "$H" 42
assert_status "rollback to no number: 2" 2 as_admin rollback --target "$ADMIN" --history "$H" 1x

# Two applies at once: the lock gives each its own number.
policy "$S/out/a" >"$S/pa.json"
policy "$S/out/b" >"$S/pb.json"
apply "$S/pa.json" >/dev/null 2>&1 &
pa=$!
apply "$S/pb.json" >/dev/null 2>&1 &
pb=$!
wait "$pa"; ra=$?
wait "$pb"; rb=$?
assert_eq "0 0" "$ra $rb" "both applies succeeded"
"$BPFBOX" policy history --json --target "$ADMIN" --history "$H" >"$S/h3.json"
assert_succeeds "history: five versions, numbers unique, one in force" \
	jq -e '(. | length) == 5 and ([.[].version] | unique | length) == 5 and ([.[] | select(.current)] | length) == 1' "$S/h3.json"
assert_succeeds "the policy in force is one of the two whole" \
	sh -c "cmp -s '$ADMIN' '$S/pa.json' || cmp -s '$ADMIN' '$S/pb.json'"
