#!/usr/bin/env bash
# Filesystem escape attempts, each run under bpfbox exec: the kernel refuses
# it and logs it, and the honest neighbour still works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

escape_fixture

# Symlinks and hard links.
fresh
assert_fails "a symlink in a writable dir to a read-denied file does not read it" \
	sh_in "ln -s $S/key $W/l && cat $W/l"
assert_not_contains "$T_OUT" classified "symlink: nothing leaks"
assert_event "open-read" "$S/key" "denyRead:$S" "symlink: the event names the target and its rule"
fresh
assert_fails "a hard link to a read-denied file is refused" sh_in "ln $S/key $W/hl"
assert_event "link" "" "" "hard link: event"
fresh
assert_fails "a hard link from a read-denied place to a readable one is refused" sh_in "ln $W/sec/key $W/hl2"
assert_event "link" "" "builtin:move-to-looser-place" "looser link: event"
assert_succeeds "an ordinary hard link works" sh_in "ln $W/pub $W/pub2 && cat $W/pub2"

# Renames.
fresh
assert_fails "renaming a read-denied dir into a readable place is refused" sh_in "mv $W/sec $W/open"
assert_event "rename" "" "builtin:move-to-looser-place" "looser rename: event"
fresh
assert_fails "renaming a protected dir's parent and writing through the new name is refused" \
	sh_in "mv $W/a $W/b && echo x >$W/b/prot/f"
assert_event "create" "$W/b/prot/f" "denyWrite:$W/a/prot" "renamed parent: the rule follows the directory"
assert_succeeds "the renamed parent itself is writable" sh_in "echo y >$W/b/ok"

# Other ways to name a file: handles, openat2, io_uring.
fresh
assert_fails "open_by_handle_at is refused" bb -- "$TRY" handle "$S/key"
assert_not_contains "$T_OUT" classified "open_by_handle_at: nothing leaks"
fresh
assert_fails "openat2 relative to a directory fd is checked" bb -- "$TRY" openat2 "$T_TMP" secret/key
assert_contains "$T_OUT" 'EPERM' "openat2: EPERM"
assert_event "open-read" "$S/key" "" "openat2: event"
assert_succeeds "openat2 of a readable neighbour works" bb -- "$TRY" openat2 "$W" pub
fresh
assert_fails "an io_uring openat is checked" bb -- "$TRY" uring "$S/key"
assert_not_contains "$T_OUT" classified "io_uring: nothing leaks"
assert_event "open-read" "$S/key" "" "io_uring: event"
assert_succeeds "an io_uring openat of a readable file works" bb -- "$TRY" uring "$W/pub"

# Kernel filesystems and device nodes.
fresh
assert_fails "writes under /sys/fs/cgroup are refused even when allowWrite names it" \
	sh_in 'echo $$ >/sys/fs/cgroup/cgroup.procs'
assert_event "" "/sys/fs/cgroup/cgroup.procs" "builtin:protected-filesystem" "cgroupfs: event"
fresh
assert_fails "a cgroup cannot be made" sh_in "mkdir /sys/fs/cgroup/bb-escape-$$"
assert_event "mkdir" "" "builtin:protected-filesystem" "cgroup mkdir: event"
fresh
assert_fails "writes under /sys/fs/bpf are refused" sh_in "mkdir /sys/fs/bpf/bb-escape-$$"
assert_event "" "/sys/fs/bpf/bb-escape-*" "builtin:protected-filesystem" "bpffs: event"
fresh
assert_fails "mknod of a device is refused" sh_in "mknod $W/null c 1 3"
assert_event "mknod" "" "builtin:device-node" "mknod: event"
assert_succeeds "a fifo in a writable dir is fine" sh_in "mkfifo $W/fifo"

# A rule naming a link that would widen it (docs/policy.md): an allow on it is not applied,
# so a link the sandboxed code left in a writable place cannot open its parent to the next run.
K=$T_TMP/kept
mkdir -p "$K/proj/sub"
echo original >"$K/proj/file"
ln -s .. "$K/proj/sub/up"
KP=$T_TMP/kept.json
cat >"$KP" <<JSON
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$K/proj/sub/up"], "denyWrite": [] } }
JSON
fresh
assert_fails "an allowWrite naming a link to its own ancestor does not open the ancestor" \
	"$BPFBOX" exec --policy "$KP" --log-file "$LOG" -- sh -c "echo changed >$K/proj/file"
assert_contains "$T_OUT" "this allow is not applied" "the loader says the allow is not applied"
assert_fails "nor through the link's own name" \
	"$BPFBOX" exec --policy "$KP" --log-file "$LOG" -- sh -c "echo changed >$K/proj/sub/up/file"
assert_eq "original" "$(cat "$K/proj/file")" "the file behind the link is untouched"
assert_succeeds "the same sandbox runs and writes its TMPDIR (the refusals above are the kernel's)" \
	"$BPFBOX" exec --policy "$KP" --log-file "$LOG" -- sh -c 'echo ok >"$TMPDIR/f"'
assert_status "policy explain agrees: not writable" 1 "$BPFBOX" policy explain --write "$KP" "$K/proj/file"
# The same link met under another spelling of its ancestors (a linked parent), and a link to
# a bind mount of its own ancestor: both are ancestors by identity, so neither allow applies.
mkdir -p "$K/real/proj/sub" "$K/bind"
echo original >"$K/real/proj/file"
ln -s real "$K/alias"
ln -s .. "$K/real/proj/sub/up"
mount --bind "$K/real/proj" "$K/bind"
ln -s "$K/bind" "$K/real/proj/sub/tobind"
cat >"$KP" <<JSON
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$K/alias/proj/sub/up", "$K/real/proj/sub/tobind"], "denyWrite": [] } }
JSON
fresh
assert_fails "a widening link spelled through a linked parent does not open its ancestor" \
	"$BPFBOX" exec --policy "$KP" --log-file "$LOG" -- sh -c "echo changed >$K/real/proj/file"
assert_fails "nor does a link to a bind mount of its ancestor" \
	"$BPFBOX" exec --policy "$KP" --log-file "$LOG" -- sh -c "echo changed >$K/bind/file"
assert_eq "original" "$(cat "$K/real/proj/file")" "the ancestor's file is untouched"
assert_succeeds "policy show lists both as not applied" \
	sh -c "'$BPFBOX' policy show '$KP' | jq -e '.filesystem.allowNotApplied | length == 2'"
umount "$K/bind"

fresh
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$ALL"
