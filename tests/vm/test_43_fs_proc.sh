#!/usr/bin/env bash
# Escapes through processes and the kernel: /proc paths, other processes,
# mounts and namespaces, bpf(), privileges and inherited descriptors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

escape_fixture

# Paths through /proc name the same files.
fresh
assert_fails "/proc/self/root/... is checked like the path" sh_in "cat /proc/self/root$S/key"
assert_event "" "$S/key" "denyRead:$S" "/proc/self/root: event"
fresh
assert_fails "/proc/PID/cwd/... is checked like the path" sh_in "cd $S && cat /proc/\$\$/cwd/key"
assert_event "" "$S/key" "" "/proc/PID/cwd: event"
fresh
assert_fails "reopening a passed descriptor through /proc/self/fd is checked" \
	bash -c "exec 7<$S/key; $BPFBOX exec --policy $P --log-file $LOG --pass-fd 7 -- sh -c 'cat /proc/self/fd/7 </dev/null'"
assert_event "" "$S/key" "" "/proc/self/fd: event"
# Mounts, namespaces, chroot, pivot_root.
fresh
assert_fails "mount is refused" sh_in "mount -t tmpfs none $W/m"
assert_event "mount" "" "builtin:mount" "mount: event"
fresh
assert_fails "unshare -r (a user namespace) is refused" bb -- unshare -r true
assert_event "userns-create" "" "builtin:user-namespace" "unshare -r: event"
fresh
assert_fails "unshare -rm is refused at the user namespace" bb -- unshare -rm true
assert_event "userns-create" "" "" "unshare -rm: event"
# Without capabilities the kernel refuses these before any LSM hook runs (see docs/design.md).
assert_fails "unshare -m is refused (no CAP_SYS_ADMIN)" bb -- unshare -m true
assert_fails "chroot is refused (no CAP_SYS_CHROOT)" bb -- chroot "$W" /bin/true
assert_fails "pivot_root is refused (no CAP_SYS_ADMIN)" bb -- pivot_root "$W" "$W/m"

# Processes outside the sandbox: another sandbox's process (no capabilities,
# same uid), so only bpfbox stands in the way. Yama is set aside for the test.
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo)
[ -n "$scope" ] && echo 0 >/proc/sys/kernel/yama/ptrace_scope
"$BPFBOX" exec --policy "$P" -- sleep 60 &
outer=$!
for _ in $(seq 1 100); do
	victim=$(pgrep -x -P "$outer" sleep || true)
	[ -n "$victim" ] && break
	sleep 0.1
done
fresh
assert_fails "ptrace of a process outside the sandbox is refused" bb -- "$TRY" ptrace "$victim"
assert_event "ptrace" "" "builtin:ptrace-outside-sandbox" "ptrace: event"
fresh
assert_fails "/proc/PID/mem of a process outside is refused" bb -- dd if=/proc/"$victim"/mem bs=1 count=1
assert_event "ptrace" "" "" "/proc/PID/mem: event"
fresh
assert_fails "/proc/PID/environ of a process outside is refused" bb -- cat /proc/"$victim"/environ
assert_event "ptrace" "" "" "/proc/PID/environ: event"
assert_succeeds "the sandbox's own /proc/self/environ is readable" bb -- cat /proc/self/environ
kill "$outer" 2>/dev/null
wait "$outer" 2>/dev/null
[ -n "$scope" ] && echo "$scope" >/proc/sys/kernel/yama/ptrace_scope

# Kernel interfaces.
fresh
assert_fails "the bpf() syscall is refused" bb -- "$TRY" bpf
assert_event "bpf" "" "builtin:bpf" "bpf(): event"
# Privileges: root without capabilities, no way back to any.
assert_succeeds "the command's status shows no privileges" bb -- cat /proc/self/status
assert_contains "$T_OUT" '^NoNewPrivs:[[:space:]]+1$' "NoNewPrivs: 1"
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
	assert_contains "$T_OUT" "^$c:[[:space:]]+0+$" "$c is 0"
done
cp /bin/cat "$W/suid-cat"
chmod 4755 "$W/suid-cat"
assert_succeeds "a setuid-root binary runs" bb -- "$W/suid-cat" /proc/self/status
assert_contains "$T_OUT" '^CapEff:[[:space:]]+0+$' "...and gains no capability"
assert_contains "$T_OUT" '^CapPrm:[[:space:]]+0+$' "...none permitted either"
assert_fails "setuid(1000) needs a capability the command lacks" bb -- setpriv --reuid 1000 true

# Descriptors: only stdio unless --pass-fd names one.
assert_succeeds "no descriptor beyond stdio is inherited" bash -c "exec 5<$W/pub; $BPFBOX exec --policy $P -- $TRY fds"
assert_not_contains "$T_OUT" '^fd ' "no fd listed"
assert_succeeds "--pass-fd passes exactly that descriptor" \
	bash -c "exec 5<$W/pub 6<$W/pub; $BPFBOX exec --policy $P --pass-fd 5 -- $TRY fds"
assert_contains "$T_OUT" '^fd 5$' "fd 5 is there"
assert_not_contains "$T_OUT" '^fd 6$' "fd 6 is not"

fresh
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$ALL"
