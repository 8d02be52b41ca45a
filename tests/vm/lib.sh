# shellcheck shell=bash
# Assertion helpers for tests/vm/test_*.sh (bash; source it first thing).
# Each assertion prints "ok N - NAME" or "not ok N - NAME" plus "# " diagnostics
# and returns 0/1; a failure does not stop the file. On exit the file prints its
# totals and exits 1 if anything failed. run-all.sh adds up the ok/not ok lines.
#
#   assert_succeeds NAME CMD...         CMD exits 0
#   assert_fails NAME CMD...            CMD exits non-zero
#   assert_status NAME STATUS CMD...    CMD exits STATUS
#   assert_eq EXPECTED ACTUAL [NAME]
#   assert_contains FILE REGEX [NAME]   grep -E; FILE may be "$T_OUT"
#   assert_not_contains FILE REGEX [NAME]
#   t_ok NAME / t_fail NAME [DIAG...] / t_skip NAME REASON / t_skip_all REASON
#   t_share K / t_share_where K / t_share_file K   work shared between kernels (below)
#
# After a CMD assertion, $T_OUT holds that command's stdout+stderr and $T_RC
# its exit status. $BPFBOX is the built binary, $T_ROOT the repository root.

# Assertions report failures themselves, so errexit would only cut a file short.
set -uo pipefail
set +e

T_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BPFBOX=${BPFBOX:-$T_ROOT/build/bpfbox}
T_NAME=$(basename "$0" .sh)
T_N=0 T_PASS=0 T_FAIL=0 T_SKIP=0 T_RC=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/$T_NAME.XXXXXX")
T_OUT=$T_TMP/out
: >"$T_OUT"

t_diag() { sed 's/^/#   /' >&2; }

# The time the file spent before each assertion, when it is long: where to cut next
# (docs/vm.md, Timing). SECONDS is bash's own clock: no process per assertion.
T_LAST=$SECONDS
t_slow() {
	[ $((SECONDS - T_LAST)) -lt 10 ] || echo "# ($((SECONDS - T_LAST)) s before the next assertion)"
	T_LAST=$SECONDS
}

t_ok() {
	T_N=$((T_N + 1)) T_PASS=$((T_PASS + 1))
	t_slow
	echo "ok $T_N - $1"
}

t_fail() {
	T_N=$((T_N + 1)) T_FAIL=$((T_FAIL + 1))
	t_slow
	echo "not ok $T_N - $1"
	shift
	[ $# -eq 0 ] || printf '%s\n' "$@" | t_diag
	return 1
}

t_skip() {
	T_N=$((T_N + 1)) T_SKIP=$((T_SKIP + 1))
	echo "ok $T_N - $1 # SKIP ${2:-}"
}

# Skips the rest of the file (e.g. a missing prerequisite) without failing it.
t_skip_all() {
	echo "# SKIP $T_NAME: $*"
	exit 0
}

# Work shared out between the guests of `make vm-test`, which run the suite on each
# kernel at once (docs/vm.md). BPFBOX_KERNEL_SHARE=I/N says that this guest is the I-th of
# N; the Makefile numbers the kernels of KERNELS in order and lists them in BPFBOX_KERNELS
# (for the messages only). A case whose subject is user space, not the kernel, is given a
# share number K (1, 2, ...) and runs in one guest only: the one with I = ((K-1) mod N)+1.
# Unset or empty, every case is this guest's (one kernel, a run by hand).
#   t_share K         true when case K is this guest's
#   t_share_where K   where case K runs, for a skip line ("kernel 6.12's guest (share 2/2)")
#   t_share_file K    the rest of the file runs only where case K does; elsewhere one
#                     skip line says where it runs, and the file ends
T_SHARE_I=1 T_SHARE_N=1
if [ -n "${BPFBOX_KERNEL_SHARE-}" ]; then
	if [[ $BPFBOX_KERNEL_SHARE =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] &&
		[ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ]; then
		T_SHARE_I=${BASH_REMATCH[1]} T_SHARE_N=${BASH_REMATCH[2]}
	else
		echo "# BPFBOX_KERNEL_SHARE='$BPFBOX_KERNEL_SHARE' is not I/N (1 <= I <= N): every case runs here" >&2
	fi
fi

t_share() {
	[ $((($1 - 1) % T_SHARE_N + 1)) -eq "$T_SHARE_I" ]
}

t_share_where() {
	local j=$((($1 - 1) % T_SHARE_N + 1)) k
	read -ra k <<<"${BPFBOX_KERNELS-}"
	if [ "${#k[@]}" -eq "$T_SHARE_N" ]; then
		echo "kernel ${k[j - 1]}'s guest (share $j/$T_SHARE_N of BPFBOX_KERNEL_SHARE)"
	else
		echo "the guest with BPFBOX_KERNEL_SHARE=$j/$T_SHARE_N"
	fi
}

t_share_file() {
	t_share "$1" && return 0
	t_skip "$T_NAME, the whole file" "its subject is user space: it runs in $(t_share_where "$1")"
	exit 0
}

# Runs CMD with its output in $T_OUT and its status in $T_RC.
t_exec() {
	"$@" >"$T_OUT" 2>&1 </dev/null
	T_RC=$?
}

# Diagnostics for a failed command: what ran, its status, the end of its output.
t_cmd_diag() {
	echo "command: $*"
	echo "exit status: $T_RC"
	[ -s "$T_OUT" ] && echo "output (last 20 lines):" && tail -n 20 "$T_OUT"
}

assert_succeeds() {
	local name=$1
	shift
	t_exec "$@"
	[ "$T_RC" -eq 0 ] && t_ok "$name" && return 0
	t_fail "$name" "$(t_cmd_diag "$@")"
}

assert_fails() {
	local name=$1
	shift
	t_exec "$@"
	[ "$T_RC" -ne 0 ] && t_ok "$name" && return 0
	t_fail "$name" "expected a non-zero exit status" "$(t_cmd_diag "$@")"
}

assert_status() {
	local name=$1 want=$2
	shift 2
	t_exec "$@"
	[ "$T_RC" -eq "$want" ] && t_ok "$name" && return 0
	t_fail "$name" "expected exit status $want" "$(t_cmd_diag "$@")"
}

assert_eq() {
	local name=${3:-"'$2' = '$1'"}
	[ "$1" = "$2" ] && t_ok "$name" && return 0
	t_fail "$name" "expected: '$1'" "actual:   '$2'"
}

assert_contains() {
	local name=${3:-"$1 matches /$2/"}
	grep -Eq -- "$2" "$1" 2>/dev/null && t_ok "$name" && return 0
	t_fail "$name" "no line of $1 matches /$2/; it holds (last 20 lines):" \
		"$(tail -n 20 "$1" 2>&1)"
}

assert_not_contains() {
	local name=${3:-"$1 does not match /$2/"}
	[ -r "$1" ] || { t_fail "$name" "cannot read $1"; return 1; }
	! grep -Eq -- "$2" "$1" && t_ok "$name" && return 0
	t_fail "$name" "unexpected lines in $1:" "$(grep -E -- "$2" "$1" | head -n 20)"
}

# Sandbox TMPDIRs a test made and left: bpfbox_tmpdirs_mark FILE lists those there
# before it, bpfbox_new_tmpdirs FILE counts the ones that list does not name. One
# that was there before (an earlier test's, its removal maybe still under way)
# counts neither way; a leak of the test's own does.
bpfbox_tmpdirs_mark() { find /tmp -mindepth 1 -maxdepth 1 -name 'bpfbox-*' | sort >"$1"; }
bpfbox_new_tmpdirs() { find /tmp -mindepth 1 -maxdepth 1 -name 'bpfbox-*' | sort | comm -13 "$1" - | wc -l; }

# Entries in bpfbox's pinned hash maps: the per-sandbox state in the kernel. The
# pool of event buffers outlives sandboxes (ring_owners says which are in use).
# Two bpftool batches (every map's type, then the hash maps' entries) rather than four
# execs per map, which cost seconds under TCG; map by map if a batch fails (a map gone).
bpfbox_map_entries() {
	local m n ids total=0 maps=()
	for m in /sys/fs/bpf/bpfbox/*/*; do
		[ -f "$m" ] && [ "${m##*/}" != sandbox_events ] && maps+=("$m")
	done
	[ ${#maps[@]} -gt 0 ] || { echo 0; return; }
	if ids=$(printf 'map show pinned %s\n' "${maps[@]}" | bpftool -j batch file - 2>/dev/null |
		jq -r '.[].output | select(.type | test("hash")) | .id'); then
		[ -n "$ids" ] || { echo 0; return; }
		# shellcheck disable=SC2086 # one id a word
		n=$(printf 'map dump id %s\n' $ids | bpftool -j batch file - 2>/dev/null |
			jq '[.[].output | length] | add // 0') && { echo "$n"; return; }
	fi
	for m in "${maps[@]}"; do
		bpftool -j map show pinned "$m" 2>/dev/null | jq -e '.type | test("hash")' >/dev/null || continue
		n=$(bpftool -j map dump pinned "$m" 2>/dev/null | jq length) || n=0
		total=$((total + n))
	done
	echo "$total"
}

t_summary() {
	local rc=$?
	rm -rf "$T_TMP"
	echo "# $T_NAME: $T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
	[ "$T_FAIL" -eq 0 ] || exit 1
	exit "$rc"
}
trap t_summary EXIT
