#!/usr/bin/env bash
# Filesystem rules: every read and write operation, srt's precedence, rules on
# paths missing at launch, ~ expansion, implicit writable paths, depth limit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

P=$T_TMP/policy.json
LOG=$T_TMP/log.ndjson
W=$T_TMP/work
R=$T_TMP/ro
mkdir -p "$W/keep" "$W/frozen" "$R" "$T_TMP/deny/open/inner" "$T_TMP/deny/shut"
echo data >"$W/file"
echo ro >"$R/file"
echo frozen >"$W/frozen/f"
echo opened >"$T_TMP/deny/open/f"
echo innersecret >"$T_TMP/deny/open/inner/s"
echo shut >"$T_TMP/deny/shut/f"
echo lifted >"$T_TMP/deny/open/named"
printf '#!/bin/sh\necho ran\n' >"$T_TMP/deny/shut/run.sh"
chmod +x "$T_TMP/deny/shut/run.sh"
HOMEFILE=$HOME/.bb40-secret-$$
echo homesecret >"$HOMEFILE"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": {
    "denyRead": ["$T_TMP/deny", "$T_TMP/deny/open/inner", "$T_TMP/deny/open/named",
                 "~/.bb40-secret-$$", "$W/later/secret"],
    "allowRead": ["$T_TMP/deny/open", "$T_TMP/deny/open/named"],
    "allowWrite": ["$W", "$T_TMP/newroot/sub"],
    "denyWrite": ["$W/frozen", "$W/later/locked", "$W/fresh/locked"]
  }
}
JSON
ALL=$T_TMP/all.ndjson
bb() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }
sh_in() { bb sh -c "$1"; }

# Reads.
assert_status "read: a denyRead file is refused" 1 bb cat "$T_TMP/deny/shut/f"
assert_contains "$T_OUT" 'Operation not permitted' "read: EPERM"
assert_event "open-read" "$T_TMP/deny/shut/f" "denyRead:$T_TMP/deny" "read: event names operation, path and rule"
assert_status "list: a read-denied directory cannot be listed" 2 bb ls "$T_TMP/deny/shut"
assert_event "open-read" "$T_TMP/deny/shut" "" "list: event"
assert_fails "exec: a file in a read-denied directory cannot be executed" bb "$T_TMP/deny/shut/run.sh"
assert_not_contains "$T_OUT" '^ran$' "exec: it did not run"
assert_event "exec" "$T_TMP/deny/shut/run.sh" "" "exec: event"
assert_succeeds "precedence: allowRead reopens inside denyRead" bb cat "$T_TMP/deny/open/f"
assert_status "precedence: a deeper denyRead inside allowRead stays denied" 1 bb cat "$T_TMP/deny/open/inner/s"
assert_event "" "" "denyRead:$T_TMP/deny/open/inner" "precedence: the deepest rule is named"
assert_succeeds "precedence: allowRead naming the same file lifts its denyRead" bb cat "$T_TMP/deny/open/named"
assert_contains "$T_OUT" '^lifted$'
assert_succeeds "reads outside every rule are allowed" bb cat "$R/file"
assert_status "~ expands in rules: ~/.bb40-secret is refused" 1 bb cat "$HOMEFILE"
assert_event "" "" "denyRead:$HOMEFILE" "~: the rule names the expanded path"
rm -f "$HOMEFILE"

# Identical refusals may be folded into one event with a count, never dropped.
fresh
sh_in "for i in \$(seq 1 20); do cat $T_TMP/deny/shut/f 2>/dev/null; done; true" >/dev/null 2>&1
n=$(jq -s --arg r "denyRead:$T_TMP/deny" \
	'map(select(.event.action == "open-read" and .rule.name == $r) | (.bpfbox.count // 1)) | add' "$LOG")
assert_eq 20 "$n" "20 identical refusals are accounted for in the events' counts"
assert_contains "$LOG" '"action":"sandbox-exit".*"denied":20' "the exit summary counts 20 refusals"

# Writes: allowed in allowWrite, refused elsewhere with default:write.
assert_succeeds "write: create, append, truncate inside allowWrite" \
	sh_in "echo a >$W/new && echo b >>$W/new && : >$W/file && truncate -s 3 $W/new"
for op in "open-write:echo x >$R/file" "open-write:echo x >>$R/file" "create:echo x >$R/newfile" \
	"truncate:python3 -c 'import os; os.truncate(\"$R/file\", 0)'" "unlink:rm -f $R/file" "mkdir:mkdir $R/d" \
	"symlink:ln -s /etc/passwd $R/sl" "chmod:chmod 600 $R/file" "chown:chown 1:1 $R/file" \
	"setattr:touch -d 2001-01-01 $R/file" \
	"setxattr:python3 -c 'import os; os.setxattr(\"$R/file\", \"user.x\", b\"1\")'" \
	"mknod:mkfifo $R/fifo"; do
	action=${op%%:*} cmd=${op#*:}
	fresh
	assert_fails "write outside allowWrite refused: $action ($cmd)" sh_in "$cmd"
	assert_event "$action" "" "default:write" "event for $action names default:write"
done
assert_eq "ro" "$(cat "$R/file")" "the read-only file is unchanged"
assert_eq "file" "$(ls "$R")" "nothing was created outside allowWrite"
mkdir "$R/dir"
fresh
assert_fails "rmdir outside allowWrite refused" bb rmdir "$R/dir"
assert_event "rmdir" "" "default:write" "rmdir: event"
assert_succeeds "mkdir, chmod, symlink, rename, unlink, rmdir inside allowWrite" \
	sh_in "mkdir $W/d && chmod 700 $W/d && ln -s file $W/d/l && mv $W/d/l $W/d/m && rm $W/d/m && rmdir $W/d"
fresh
assert_fails "denyWrite inside allowWrite wins" sh_in "echo x >$W/frozen/f"
assert_event "open-write" "" "denyWrite:$W/frozen" "denyWrite: event names it"
assert_succeeds "denyWrite still lets the file be read" bb cat "$W/frozen/f"

# Rules on paths that do not exist at launch: enforced once created, nothing made on the host.
assert_succeeds "nothing exists at $W/later before the run" test ! -e "$W/later"
fresh
assert_succeeds "the sandbox creates the missing parent" sh_in "mkdir -p $W/later && echo s >$W/later/secret"
assert_status "a denyRead on a path created inside the sandbox is enforced" 1 bb cat "$W/later/secret"
assert_event "open-read" "" "denyRead:$W/later/secret" "missing path: event"
fresh
assert_fails "a denyWrite on a missing path is enforced when created" sh_in "echo x >$W/later/locked"
assert_event "" "" "denyWrite:$W/later/locked" "missing denyWrite: event"
assert_fails "...also when made elsewhere and renamed into place" \
	sh_in "echo x >$W/later/tmp && mv $W/later/tmp $W/later/locked"
fresh
assert_fails "a directory cannot be renamed onto a missing rule path, carrying content past it" \
	sh_in "mkdir $W/x && echo evil >$W/x/locked && mv $W/x $W/fresh"
assert_event rename "$W/fresh" "builtin:move-to-looser-place" "rename onto a rule path: event"
assert_succeeds "...so $W/fresh/locked was never written" test ! -e "$W/fresh"
assert_succeeds "bpfbox created nothing for the missing allowWrite root" test ! -e "$T_TMP/newroot"
assert_succeeds "a directory made on the host later is writable through the missing allowWrite" \
	bash -c "mkdir -p $T_TMP/newroot/sub && $BPFBOX exec --policy $P -- sh -c 'echo y >$T_TMP/newroot/sub/f'"

# Implicit writable paths and the private TMPDIR.
assert_succeeds "/dev/null is writable" sh_in "echo x >/dev/null"
fresh
bb sh -c 'echo x >/dev/tty' >"$T_OUT" 2>&1
assert_not_contains "$T_OUT" 'Operation not permitted' "/dev/tty is not refused by policy (no terminal in the VM: ENXIO)"
assert_not_contains "$LOG" '"outcome":"failure".*"path":"/dev/tty"' "/dev/tty: no refusal event"
assert_succeeds "TMPDIR is private and writable" sh_in 'echo x >"$TMPDIR/f" && cat "$TMPDIR/f"'
assert_succeeds "/tmp itself is not writable" bash -c "! $BPFBOX exec --policy $P -- sh -c 'echo x >/tmp/bb40-$$'"
assert_succeeds "no file appeared in /tmp" test ! -e /tmp/bb40-$$

# What the walk cannot decide is denied: a path deeper than 48 components.
deep=$W
for _ in $(seq 1 52); do deep=$deep/d; done
mkdir -p "$deep"
echo deep >"$deep/f"
fresh
assert_status "a path deeper than the walk bound is refused" 1 bb cat "$deep/f"
assert_event "open-read" "" "limit:path-too-deep" "too deep: event with the reason"

fresh
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$ALL"
