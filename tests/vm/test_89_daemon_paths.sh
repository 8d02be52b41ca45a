#!/usr/bin/env bash
# Paths a daemon's caller can redirect (issue 27, items 3, 8 and 9). The administrator's
# allowWrite ["~/work", "~/work2"] with each a symlink of the caller's (to / and to /var/tmp)
# grants nothing there: the write fails, the file is not made, the grant cut is named; a real
# ~/work still works. The caller's policy is resolved with the caller's credentials, so
# a name behind a root-only directory never reaches a message; a request's policy name
# is logged as the caller's claim, never as the policy's path.
# The grant (kernel resolution) runs on both kernels; the two user-space cases are shared.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
command -v useradd >/dev/null || t_skip_all "useradd is missing"
command -v runuser >/dev/null || t_skip_all "runuser is missing"

DPID=
trap 'rc=$?; [ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null;
	[ "$T_FAIL" -eq 0 ] || sed "s/^/# daemon: /" "$S/daemon.out"; rm -rf "$S" /var/tmp/bb89-*; (exit $rc); t_summary' EXIT

id erin89 >/dev/null 2>&1 || useradd -m -s /bin/sh erin89
EH=$(getent passwd erin89 | cut -d: -f6)
chown erin89: "$EH" && chmod 0755 "$EH"
rm -rf "${EH:?}/work" "${EH:?}/work2" /var/tmp/bb89-*

S=$(mktemp -d /tmp/bb89.XXXXXX)
chmod 0755 "$S"
SOCK=$S/run/bpfbox.sock
ALOG=$S/admin/events.ndjson
ADMIN=$S/admin/policy.json
# Root's own directory: nothing in it is the caller's to see.
mkdir -p "$S/admin/hidden-target-89" && chmod 0700 "$S/admin"
ln -s hidden-target-89 "$S/admin/link"
cat >"$ADMIN" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["~/work", "~/work2"], "denyWrite": [] }
}
JSON
"$BPFBOX" daemon --socket "$SOCK" --config "$ADMIN" --log-file "$ALOG" >>"$S/daemon.out" 2>&1 &
DPID=$!
for _ in $(seq 100); do
	[ -S "$SOCK" ] && break
	sleep 0.1
done
assert_succeeds "the daemon listens" test -S "$SOCK"
erin() { (cd "$EH" && runuser -u erin89 -- env BPFBOX_SOCKET="$SOCK" "$BPFBOX" exec "$@"); }
# The administrator's log, this run's lines only: the lines after the mark.
mark() { wc -l <"$ALOG" 2>/dev/null || echo 0; }
since() { tail -n +"$(($1 + 1))" "$ALOG"; }
# True when FILTER yields true for some line of FILE (jq -e alone judges the last line only).
ev() { jq -e -s "[.[] | $1] | any" "$2" >/dev/null; }

# --- ~/work and ~/work2 links of erin's, to / and /var/tmp: the administrator's grants follow neither ---
runuser -u erin89 -- ln -sfn / "$EH/work"
runuser -u erin89 -- ln -sfn /var/tmp "$EH/work2"
m=$(mark)
t_exec erin -- /bin/sh -c "echo pwned >/var/tmp/bb89-pwn && echo WROTE"
cp "$T_OUT" "$T_TMP/links.out"
assert_not_contains "$T_TMP/links.out" '^WROTE$' "~/work -> /, ~/work2 -> /var/tmp: the write into /var/tmp is refused"
assert_fails "~/work -> /, ~/work2 -> /var/tmp: /var/tmp/bb89-pwn does not exist" test -e /var/tmp/bb89-pwn
for i in 0 1; do
	w=work$([ "$i" = 0 ] || echo 2)
	assert_contains "$T_TMP/links.out" "filesystem.allowWrite\[$i\] \"~/$w\" \($EH/$w\): a symbolic link on its way is one uid $(id -u erin89) could have placed; grant cut, not granted" \
		"~/$w: the grant cut is named on erin's stderr, as written"
done
since "$m" >"$T_TMP/run"
assert_succeeds "the start event names both grant cuts" \
	ev "select(.event.action == \"sandbox-start\") | .bpfbox.policy.grant_cuts == [\"filesystem.allowWrite[0] \\\"~/work\\\" ($EH/work)\", \"filesystem.allowWrite[1] \\\"~/work2\\\" ($EH/work2)\"] and (.message | test(\"grant cut\"))" "$T_TMP/run"
assert_succeeds "the refusal of /var/tmp/bb89-pwn is in the administrator's log" \
	ev 'select(.error.code == "EPERM" and .file.path == "/var/tmp/bb89-pwn") | true' "$T_TMP/run"

# --- real directories: granted as before ---
rm -f "$EH/work" "$EH/work2"
runuser -u erin89 -- mkdir "$EH/work" "$EH/work2"
m=$(mark)
t_exec erin -- /bin/sh -c "echo fine >$EH/work/ok && echo fine >$EH/work2/ok && echo WROTE; echo x >/var/tmp/bb89-outside || echo OUTSIDE-REFUSED"
cp "$T_OUT" "$T_TMP/real.out"
assert_contains "$T_TMP/real.out" '^WROTE$' "real ~/work and ~/work2: the writes there work"
assert_eq "fine fine" "$(cat "$EH/work/ok" "$EH/work2/ok" 2>/dev/null | xargs)" "real ~/work and ~/work2: the files are there"
assert_contains "$T_TMP/real.out" '^OUTSIDE-REFUSED$' "real directories: a write outside them is still refused"
assert_fails "real directories: /var/tmp/bb89-outside does not exist" test -e /var/tmp/bb89-outside
assert_not_contains "$T_TMP/real.out" 'grant cut' "real directories: no grant cut"
since "$m" >"$T_TMP/run"
assert_succeeds "real directories: the start event carries no grant cut" \
	ev 'select(.event.action == "sandbox-start") | .bpfbox.policy.grant_cuts == null' "$T_TMP/run"

# --- the caller's policy resolved as the caller: no root-only name in any message ---
if t_share 1; then
	cat >"$S/erin.json" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$S/admin/link/x"], "allowWrite": ["$S/admin/link"], "denyWrite": [] }
}
JSON
	chmod 0644 "$S/erin.json"
	m=$(mark)
	t_exec erin --policy "$S/erin.json" -- /bin/true
	assert_eq 0 "$T_RC" "a root-only path in erin's policy: the command runs"
	assert_contains "$T_OUT" "filesystem.allowWrite\[0\] \"$S/admin/link\": outside the administrator's allowWrite" \
		"a root-only path: the cut names the entry as erin wrote it"
	assert_not_contains "$T_OUT" 'hidden-target-89' "a root-only path: erin's messages never name the link's target"
	assert_not_contains "$ALOG" 'hidden-target-89' "a root-only path: nor does any line of the administrator's log"
else
	t_skip "a root-only path in the caller's policy" "user space: it runs in $(t_share_where 1)"
fi

# --- a request's policy name is the caller's claim ---
if t_share 2; then
	cat >"$S/claim.py" <<'PY'
import array, json, os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
req = {"v": 1, "op": "exec", "argv": ["/bin/true"], "env": ["PATH=/usr/bin:/bin"],
       "policy": {"name": "/etc/bpfbox/policy.json",
                  "content": '{"network": {"allowedDomains": [], "deniedDomains": []}, '
                             '"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}'},
       "fds": {"stdin": 0, "stdout": 1, "stderr": 2, "cwd": 3}}
body = json.dumps(req).encode()
fds = [0, 1, 2, os.open(".", os.O_RDONLY | os.O_DIRECTORY)]
s.sendmsg([b"BBX1" + struct.pack(">I", len(body)) + body],
          [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
s.settimeout(30)
while s.recv(4096):
    pass
print("DONE")
PY
	m=$(mark)
	t_exec bash -c "cd '$EH' && runuser -u erin89 -- python3 '$S/claim.py' '$SOCK'"
	assert_contains "$T_OUT" '^DONE$' "a claimed policy name: the request ran"
	since "$m" >"$T_TMP/run"
	assert_succeeds "a claimed policy name: logged under bpfbox.caller.policy_name" \
		ev 'select(.event.action == "sandbox-start") | .bpfbox.caller.policy_name == "/etc/bpfbox/policy.json" and (.message | test("as the caller named it"))' "$T_TMP/run"
	assert_fails "a claimed policy name: never as bpfbox.policy.path" \
		ev 'select(.bpfbox.policy.path == "/etc/bpfbox/policy.json") | true' "$T_TMP/run"
else
	t_skip "a claimed policy name" "user space: it runs in $(t_share_where 2)"
fi

python3 "$T_ROOT/tests/tools/validate-events.py" "$ALOG" >"$T_TMP/v" 2>&1
assert_eq 0 "$?" "the administrator's log is valid against the event schema"
