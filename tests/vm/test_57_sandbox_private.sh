#!/usr/bin/env bash
# What one sandbox owns stays its own: two concurrent sandboxes of one uid
# with different policies; B cannot read, list, write, link or rename into or
# out of A's TMPDIR, A still can, and B's log names the refusals. /dev/shm
# works for the sandbox's own POSIX semaphores and shared memory (Python's
# multiprocessing) while the host's and the other sandbox's objects stay out of
# reach. The command starts with an empty session key ring; a key of the uid's
# user key ring is out of reach, a key made inside works. Nothing of either
# sandbox is left afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

PY=/usr/bin/python3
W=$T_TMP/work
mkdir -p "$W"
echo bfile >"$W/bfile"
echo bfile2 >"$W/bfile2"
cat >"$T_TMP/pa.json" <<JSON
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] } }
JSON
# B's policy would let it write anywhere in /tmp and /dev/shm: the refusals are bpfbox's own.
cat >"$T_TMP/pb.json" <<JSON
{ "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["$T_TMP/nothing"], "allowWrite": ["$W", "/tmp", "/dev/shm"], "denyWrite": [] } }
JSON

# What a run could leave behind: tmpdirs, registry entries, private maps, /dev/shm objects.
private_entries() {
	local m n total=0
	for m in /sys/fs/bpf/bpfbox/*/private_dirs /sys/fs/bpf/bpfbox/*/key_owner; do
		[ -e "$m" ] || continue
		n=$(bpftool -j map dump pinned "$m" 2>/dev/null | jq length) || n=0
		total=$((total + n))
	done
	echo "$total"
}
leftovers() {
	echo "tmpdirs=$(ls /tmp | grep -c '^bpfbox-') registry=$(ls /run/bpfbox/sandboxes 2>/dev/null | wc -l)" \
		"shm=$(ls /dev/shm | grep -vc '^bb57-host$')"
}
echo hostdata >/dev/shm/bb57-host
# The pins exist once a sandbox has run.
"$BPFBOX" exec --policy "$T_TMP/pa.json" -- true >/dev/null 2>&1
PIN=$(ls -d /sys/fs/bpf/bpfbox/*/sandboxes | head -n 1)
before_shm=$(ls /dev/shm | grep -vc '^bb57-host$')

A_SCRIPT='echo secret-of-a >"$TMPDIR/s"; mkdir "$TMPDIR/d"; echo "$TMPDIR" >"$1/ta"
echo a-shm >/dev/shm/bb57-a-$$; echo /dev/shm/bb57-a-$$ >"$1/shm-a"; touch "$1/a-ready"
for i in $(seq 600); do [ -e "$1/b-done" ] && break; sleep 0.05; done
[ -e "$1/b-done" ] || echo "a: B never finished"
echo "a-read:$(cat "$TMPDIR/s")"
ls "$TMPDIR" >/dev/null && echo a-list:ok
echo more >"$TMPDIR/new" && ln "$TMPDIR/new" "$TMPDIR/new2" && mv "$TMPDIR/new2" "$TMPDIR/d/" && echo a-write:ok
echo "a-shm:$(cat /dev/shm/bb57-a-$$)"'
B_SCRIPT='for i in $(seq 600); do [ -e "$1/a-ready" ] && break; sleep 0.05; done
ta=$(cat "$1/ta"); shm_a=$(cat "$1/shm-a")
try() { label=$1; shift; if "$@" >/dev/null 2>&1; then echo "$label:allowed"; else echo "$label:refused"; fi; }
try read cat "$ta/s"
try list ls "$ta"
try list-sub ls "$ta/d"
try write sh -c "echo x >\"$ta/new\""
try mkdir mkdir "$ta/dir"
try unlink rm -f "$ta/s"
try link-in ln "$1/bfile" "$ta/l"
try link-out ln "$ta/s" "$1/l"
try rename-in mv "$1/bfile2" "$ta/m"
try rename-out mv "$ta/s" "$1/m"
try shm-read cat "$shm_a"
try shm-write sh -c "echo x >>\"$shm_a\""
try registry cat "/run/bpfbox/sandboxes/bb-${ta##*/bpfbox-}"
try registry-list ls /run/bpfbox/sandboxes
try pins cat "$2"
echo "b-tmpdir:$(echo own >"$TMPDIR/o" && cat "$TMPDIR/o")"
touch "$1/b-done"'

"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$T_TMP/la" -- sh -c "$A_SCRIPT" sh "$W" >"$T_TMP/outA" 2>&1 &
pa=$!
"$BPFBOX" exec --policy "$T_TMP/pb.json" --log-file "$T_TMP/lb" -- sh -c "$B_SCRIPT" sh "$W" "$PIN" >"$T_TMP/outB" 2>&1 &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
assert_eq "0 0" "$ra $rb" "both concurrent sandboxes ran and exited 0"
ta=$(cat "$W/ta" 2>/dev/null)
for op in read list list-sub write mkdir unlink link-in link-out rename-in rename-out; do
	assert_contains "$T_TMP/outB" "^$op:refused\$" "B cannot $op in A's TMPDIR"
done
assert_contains "$T_TMP/outB" "^b-tmpdir:own\$" "B uses its own TMPDIR"
assert_contains "$T_TMP/outA" "^a-read:secret-of-a\$" "A still reads its TMPDIR after B's attempts"
assert_contains "$T_TMP/outA" "^a-list:ok\$" "A lists its TMPDIR"
assert_contains "$T_TMP/outA" "^a-write:ok\$" "A writes, links and renames in its TMPDIR"
assert_not_contains "$T_TMP/outA" "B never finished" "A waited for B"
LOG=$T_TMP/lb
assert_event "open-read" "$ta/s" "builtin:other-sandbox-tmpdir" "B's log: the read of A's file"
assert_event "open-read" "$ta" "builtin:other-sandbox-tmpdir" "B's log: the listing of A's TMPDIR"
assert_event "create" "$ta/new" "builtin:other-sandbox-tmpdir" "B's log: the write into A's TMPDIR"
assert_event "link" "" "builtin:other-sandbox-tmpdir" "B's log: a link into or out of A's TMPDIR"
assert_event "rename" "" "builtin:other-sandbox-tmpdir" "B's log: a rename into or out of A's TMPDIR"
assert_not_contains "$T_TMP/la" "other-sandbox-tmpdir" "A's log has no refusal of its own TMPDIR"
assert_eq "bfile2" "$(cat "$W/bfile2" 2>&1)" "B's file was not moved into A's TMPDIR"

# /dev/shm between sandboxes and bpfbox's own state.
assert_contains "$T_TMP/outB" "^shm-read:refused\$" "B cannot read A's /dev/shm object"
assert_contains "$T_TMP/outB" "^shm-write:refused\$" "B cannot write A's /dev/shm object"
assert_event "open-read" "/dev/shm/bb57-a-*" "builtin:shm-not-own" "B's log: A's /dev/shm object"
assert_contains "$T_TMP/outA" "^a-shm:a-shm\$" "A reads back its own /dev/shm object"
assert_contains "$T_TMP/outB" "^registry:refused\$" "bpfbox's registry is unreadable inside"
assert_contains "$T_TMP/outB" "^registry-list:refused\$" "bpfbox's registry cannot be listed inside"
assert_event "open-read" "/run/bpfbox/sandboxes/bb-${ta##*/bpfbox-}" "builtin:bpfbox-state" "B's log: A's registry entry"
assert_contains "$T_TMP/outB" "^pins:refused\$" "bpfbox's pinned maps are unreadable inside"
assert_event "open-read" "$PIN" "builtin:protected-filesystem" "B's log: the pinned map"
assert_eq "tmpdirs=0 registry=0 shm=$before_shm" "$(leftovers)" "nothing of A or B is left (TMPDIRs, registry, /dev/shm)"
assert_eq 0 "$(private_entries)" "no private directory or key entry is left in the kernel"

# Outside processes are not affected: the supervisor-less host reads a sandbox's TMPDIR while it runs.
"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$T_TMP/lc" -- \
	sh -c 'echo c >"$TMPDIR/c"; echo "$TMPDIR" >"$1/tc"; for i in $(seq 100); do [ -e "$1/c-seen" ] && break; sleep 0.05; done' \
	sh "$W" >/dev/null 2>&1 &
pc=$!
for _ in $(seq 100); do [ -s "$W/tc" ] && [ -e "$(cat "$W/tc")/c" ] && break; sleep 0.05; done
assert_eq c "$(cat "$(cat "$W/tc")/c" 2>&1)" "a process outside every sandbox reads a sandbox's TMPDIR"
touch "$W/c-seen"
wait $pc

# /dev/shm: Python's multiprocessing works confined; the host's object stays unreadable.
rm -f "$T_TMP/la"
LOG=$T_TMP/la
MP='import multiprocessing as m
from multiprocessing import shared_memory as s
l = m.Lock(); l.acquire(); l.release()
with m.Pool(2) as p: print("pool", p.map(abs, [-1, -2, -3]))
x = s.SharedMemory(create=True, size=16); x.buf[:3] = b"abc"; y = s.SharedMemory(name=x.name)
print("shm", bytes(y.buf[:3]).decode()); y.close(); x.close(); x.unlink()
try:
    s.SharedMemory(name="bb57-host"); print("host shm: read")
except PermissionError:
    print("host shm: refused")'
assert_succeeds "multiprocessing Lock, Pool and shared memory work confined" \
	"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- "$PY" -c "$MP"
assert_contains "$T_OUT" "^pool \[1, 2, 3\]$" "the Pool computed"
assert_contains "$T_OUT" "^shm abc$" "the sandbox's own shared memory reads back"
assert_contains "$T_OUT" "^host shm: refused$" "the host's shared memory object is refused"
assert_fails "the host's /dev/shm object is unreadable inside" \
	"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- cat /dev/shm/bb57-host
assert_not_contains "$T_OUT" hostdata "nothing of it leaks"
assert_event "open-read" "/dev/shm/bb57-host" "builtin:shm-not-own" "event names the host's object"
assert_fails "nor writable" "$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- \
	sh -c 'echo x >>/dev/shm/bb57-host'
assert_eq hostdata "$(cat /dev/shm/bb57-host)" "the host's object is unchanged"
assert_succeeds "a sandbox's objects left in /dev/shm are usable while it runs" \
	"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- \
	sh -c 'echo mine >/dev/shm/bb57-left-1 && cat /dev/shm/bb57-left-1 && ln /dev/shm/bb57-left-1 /dev/shm/bb57-left-2'
assert_contains "$T_OUT" "^mine$" "and read back"
assert_eq "" "$(ls /dev/shm | grep '^bb57-left' | tr '\n' ' ')" "and removed when the sandbox ends"
assert_eq "shm=$before_shm" "$(ls /dev/shm | grep -vc '^bb57-host$' | sed 's/^/shm=/')" \
	"nothing of the sandbox is left in /dev/shm"

# Key rings: a key of the uid's user key ring is out of reach, a key made inside works.
if ! command -v keyctl >/dev/null; then
	t_skip "key rings" "keyctl (keyutils) is not installed"
else
	host_key=$(keyctl add user bb57hostsecret s3cr3t-outside @u)
	# The uid itself may read it (not only its possessor): only bpfbox stands in the way.
	keyctl setperm "$host_key" 0x3f3f0000
	assert_eq s3cr3t-outside "$(keyctl print "$host_key")" "outside, the user key ring's key reads"
	rm -f "$LOG"
	assert_fails "inside, searching the user key ring is refused" \
		"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- keyctl search @u user bb57hostsecret
	assert_fails "inside, reading the outside key by its serial is refused" \
		"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- keyctl print "$host_key"
	assert_not_contains "$T_OUT" s3cr3t-outside "nothing of the key leaks"
	assert_fails "inside, describing the outside key is refused" \
		"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- keyctl describe "$host_key"
	assert_fails "inside, linking the outside key into the session ring is refused" \
		"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- keyctl link "$host_key" @s
	assert_succeeds "the command's session key ring is new and empty" \
		"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- keyctl rdescribe @s
	assert_contains "$T_OUT" "_ses" "it is a fresh anonymous session ring"
	assert_succeeds "a key made inside is usable inside" \
		"$BPFBOX" exec --policy "$T_TMP/pa.json" --log-file "$LOG" -- \
		sh -c 'k=$(keyctl add user inside v-inside @s) && keyctl print "$k" && keyctl search @s user inside'
	assert_contains "$T_OUT" "^v-inside$" "its value reads back"
	assert_succeeds "log: a key refusal names the key's description" \
		jq -e -s 'map(select(.rule.name == "builtin:key-not-own" and .bpfbox.key.description == "bb57hostsecret"))
			| length > 0' "$LOG"
	# 6.1 and 6.12 reach the uid's key ring through the kernel's register of them, which is refused first.
	assert_succeeds "log: a key refusal names the uid's key ring or its register" \
		jq -e -s 'map(select(.rule.name == "builtin:key-not-own" and (.bpfbox.key.description |
			startswith("_uid.") or . == ".user_reg"))) | length > 0' "$LOG"
	keyctl unlink "$host_key" @u >/dev/null 2>&1
	assert_eq 0 "$(private_entries)" "no key entry is left in the kernel"
fi
rm -f /dev/shm/bb57-host
