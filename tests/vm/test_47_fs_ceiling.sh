#!/usr/bin/env bash
# The administrator's ceiling in the kernel: `exec --ceiling admin.json --policy
# user.json` loads both rule layers, each decides on the objects the kernel
# sees, and an access needs both. Events name the refusing rule ("ceiling:..."
# for the administrator's); cuts are named on stderr; --strict makes them fatal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

LOG=$T_TMP/log.ndjson
ALL=$T_TMP/all.ndjson
ADMIN=$T_TMP/admin.json
USER_P=$T_TMP/user.json
E=$T_TMP/err
X=$T_TMP/x Y=$T_TMP/y A=$T_TMP/a CD=$T_TMP/cd OUT=$T_TMP/outside
C=$A/cw
mkdir -p "$X/sub" "$Y" "$C/locked" "$C/asec" "$C/priv" "$CD/sub" "$OUT" "$A/adminonly"
echo xsub >"$X/sub/f"
echo yfile >"$Y/f"
echo cdsub >"$CD/sub/f"
echo priv >"$C/priv/f"
echo asec >"$C/asec/f"
echo pub >"$C/pub"
cat >"$ADMIN" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": {
    "denyRead": ["$X", "$Y", "$C/asec"],
    "allowRead": ["$CD/sub"],
    "allowWrite": ["$A"],
    "denyWrite": ["$C/locked"]
  }
}
JSON
cat >"$USER_P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": {
    "denyRead": ["$CD", "$C/priv"],
    "allowRead": ["$X/sub", "$Y"],
    "allowWrite": ["$C", "$OUT"],
    "denyWrite": []
  }
}
JSON
# stderr (bpfbox's cut lines and the command's) also in $E.
bb() {
	local rc
	"$BPFBOX" exec --ceiling "$ADMIN" --policy "$USER_P" --log-file "$LOG" -- "$@" 2>"$E"
	rc=$?
	cat "$E" >&2
	return $rc
}
sh_in() { bb sh -c "$1"; }
plain() { "$BPFBOX" exec --policy "$USER_P" --log-file "$LOG" -- "$@"; }

# The run starts, names both policies, and says what the ceiling took away.
assert_succeeds "a command runs under the ceiling" bb true
assert_contains "$E" "^bpfbox: $USER_P: filesystem.allowWrite\[1\] \"$OUT\": outside the administrator's allowWrite \($ADMIN\); not granted$" \
	"the cut of allowWrite $OUT is named on stderr"
assert_contains "$E" "^bpfbox: $USER_P: filesystem.allowRead\[0\] \"$X/sub\": inside the administrator's denyRead \"$X\"" \
	"the cut of allowRead $X/sub is named on stderr"
start=$(jq -c 'select(.event.action == "sandbox-start")' "$LOG")
assert_eq "$USER_P" "$(jq -r '.bpfbox.policy.path' <<<"$start")" "start event: bpfbox.policy.path is the caller's file"
assert_eq "$ADMIN" "$(jq -r '.bpfbox.policy.ceiling.path' <<<"$start")" \
	"start event: bpfbox.policy.ceiling.path is the administrator's file"
assert_eq "sha256:$(sha256sum "$ADMIN" | cut -d' ' -f1)" "$(jq -r '.bpfbox.policy.ceiling.digest' <<<"$start")" \
	"start event: bpfbox.policy.ceiling.digest is the administrator's file's sha256"
assert_eq "sha256:$(sha256sum "$USER_P" | cut -d' ' -f1)" "$(jq -r '.bpfbox.policy.digest' <<<"$start")" \
	"start event: bpfbox.policy.digest stays the caller's"

# Reads: both layers must allow.
fresh
assert_status "read: the caller's allowRead cannot reopen the administrator's denyRead" 1 bb cat "$X/sub/f"
assert_event "open-read" "$X/sub/f" "ceiling:denyRead:$X" "read: the event names the administrator's rule"
fresh
assert_status "read: rules of both layers on one directory stay apart (caller allowRead, admin denyRead)" 1 \
	bb cat "$Y/f"
assert_event "open-read" "$Y/f" "ceiling:denyRead:$Y" "read: same-node event names the administrator's rule"
fresh
assert_status "read: the administrator's allowRead cannot reopen the caller's denyRead" 1 bb cat "$CD/sub/f"
assert_event "open-read" "$CD/sub/f" "denyRead:$CD" "read: the event names the caller's rule"
fresh
assert_status "read: the caller's denyRead inside what the administrator allows" 1 bb cat "$C/priv/f"
assert_event "open-read" "$C/priv/f" "denyRead:$C/priv" "read: the event names the caller's denyRead"
assert_succeeds "read: a file both layers allow" bb cat "$C/pub"
assert_contains "$T_OUT" '^pub$' "read: its content"

# Writes: only where both allowWrite and neither denies.
fresh
assert_succeeds "write: inside both layers' allowWrite" sh_in "echo new >$C/new && mkdir $C/d && rmdir $C/d"
assert_eq new "$(cat "$C/new")" "write: the file was written"
assert_fails "write: inside the administrator's allowWrite only" sh_in "echo x >$A/adminonly/f"
assert_event "create" "$A/adminonly/f" "default:write" "write: the caller's missing allowWrite is named"
fresh
assert_fails "write: the administrator's denyWrite inside the caller's allowWrite" sh_in "echo x >$C/locked/f"
assert_event "create" "$C/locked/f" "ceiling:denyWrite:$C/locked" "write: the event names the administrator's denyWrite"
fresh
assert_fails "write: the caller's allowWrite outside the administrator's" sh_in "echo x >$OUT/f"
assert_event "create" "$OUT/f" "ceiling:default:write" "write: the event names ceiling:default:write"
assert_succeeds "write: nothing was created outside the administrator's allowWrite" test ! -e "$OUT/f"

# Moves and links: both ends writable in both layers, never to a looser place.
fresh
assert_fails "rename into the administrator's denyWrite is refused" sh_in "mv $C/pub $C/locked/pub"
assert_event "rename" "$C/locked/pub" "ceiling:denyWrite:$C/locked" "rename: the event names the administrator's rule"
assert_succeeds "rename: the file stayed" test -f "$C/pub"
fresh
assert_fails "rename out of the administrator's denyRead into a place both read is refused" \
	sh_in "mv $C/asec/f $C/asec-out"
assert_event "rename" "$C/asec-out" "builtin:move-to-looser-place" "rename: move-to-looser-place across layers"
fresh
assert_fails "link out of the administrator's denyRead into a place both read is refused" \
	sh_in "ln $C/asec/f $C/asec-link"
assert_event "link" "$C/asec-link" "builtin:move-to-looser-place" "link: move-to-looser-place across layers"
assert_succeeds "rename: the secret stayed in place" test -f "$C/asec/f"
assert_succeeds "rename within both layers' allowWrite works" sh_in "mv $C/new $C/new2 && ln $C/new2 $C/new3"

# The mandatory set holds under both layers.
fresh
assert_fails "mandatory: .bashrc inside both allowWrite is refused" sh_in "echo x >$C/.bashrc"
assert_event "create" "$C/.bashrc" "mandatory:.bashrc" "mandatory: event names mandatory:.bashrc"
fresh
assert_fails "mandatory: .git/hooks inside both allowWrite is refused" sh_in "mkdir -p $C/.git/hooks && echo x >$C/.git/hooks/pre-commit"
assert_event "" "$C/.git/hooks*" "mandatory:.git/hooks" "mandatory: event names mandatory:.git/hooks"

# The same caller's policy without --ceiling behaves as before: one layer.
fresh
assert_succeeds "without --ceiling: $X/sub is readable" plain cat "$X/sub/f"
assert_succeeds "without --ceiling: $Y is readable" plain cat "$Y/f"
assert_succeeds "without --ceiling: $OUT is writable" plain sh -c "echo x >$OUT/f"
assert_succeeds "without --ceiling: $C/locked is writable" plain sh -c "echo x >$C/locked/f"
assert_status "without --ceiling: the caller's denyRead still holds" 1 plain cat "$CD/sub/f"
assert_event "open-read" "$CD/sub/f" "denyRead:$CD" "without --ceiling: the caller's rule is named"
assert_not_contains "$LOG" '"ceiling' "without --ceiling: no event or field mentions a ceiling"
rm -f "$OUT/f" "$C/locked/f"

# The administrator's policy alone (--ceiling without --policy) applies as it is.
fresh
assert_status "--ceiling alone: the administrator's denyRead" 1 \
	"$BPFBOX" exec --ceiling "$ADMIN" --log-file "$LOG" -- cat "$X/sub/f"
assert_event "open-read" "$X/sub/f" "denyRead:$X" "--ceiling alone: its own rule, one layer"
assert_succeeds "--ceiling alone: the administrator's allowWrite" \
	"$BPFBOX" exec --ceiling "$ADMIN" --log-file "$LOG" -- sh -c "echo x >$A/adminonly/f"

# --strict: a cut is an error, and nothing runs.
fresh
M=$T_TMP/ran
assert_status "--strict: a cut exits 125" 125 \
	"$BPFBOX" exec --strict --ceiling "$ADMIN" --policy "$USER_P" --log-file "$LOG" -- touch "$M"
assert_contains "$T_OUT" "^bpfbox: $USER_P: filesystem.allowWrite\[1\] \"$OUT\": outside the administrator's allowWrite" \
	"--strict: the cut line is printed"
assert_contains "$T_OUT" "takes away 4 grant\(s\), an error under --strict" "--strict: the reason is printed"
assert_succeeds "--strict: the command did not run" test ! -e "$M"
assert_contains "$LOG" '"action":"setup-failed"' "--strict: a setup-failed event"
