#!/usr/bin/env bash
# Runs inside the test VM (tools/vm/run.sh --kernel K -- tests/vm/run-all.sh):
# every tests/vm/test_*.sh in name order, each in its own bash from the
# repository root, under a per-file timeout. Totals the ok / not ok lines and
# ends with exactly "N passed, N failed".
#   BPFBOX_TEST_FILTER   globs on the file name, space or comma separated
#                        (e.g. "test_00*" or "*harness*,test_1?_*"); default all
#   BPFBOX_TEST_EXCLUDE  globs of files left out (default none)
#   BPFBOX_TEST_TIMEOUT  seconds per file (default 300)
#   BPFBOX_KERNEL_SHARE  I/N: this guest's share of the cases that run on one kernel
#                        only (make vm-test sets it; tests/vm/lib.sh t_share); default all
# Exit 0 only if nothing failed and at least one assertion ran.
set -euo pipefail

dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$dir/../.." && pwd)
filters=${BPFBOX_TEST_FILTER:-*}
IFS=', ' read -ra patterns <<<"$filters"
IFS=', ' read -ra excluded <<<"${BPFBOX_TEST_EXCLUDE-}"
limit=${BPFBOX_TEST_TIMEOUT:-300}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "# kernel: $(uname -r)"
echo "# lsm: $(cat /sys/kernel/security/lsm 2>/dev/null || echo '(securityfs missing)')"
[ -z "${BPFBOX_KERNEL_SHARE-}" ] ||
	echo "# share: ${BPFBOX_KERNEL_SHARE} of the kernels ${BPFBOX_KERNELS:-(unnamed)}; cases of the other shares are skipped"

selected() {
	local f
	for f in "${patterns[@]}"; do
		# shellcheck disable=SC2053 # $f is a glob on purpose
		[[ $1 == $f || $1.sh == $f ]] && return 0
	done
	return 1
}

cd "$root"
pass=0 fail=0 skip=0 files=0
for t in "$dir"/test_*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	selected "$name" || continue
	skipped=0
	for x in "${excluded[@]}"; do
		# shellcheck disable=SC2053 # $x is a glob on purpose
		[[ $name == $x ]] && skipped=1
	done
	[ "$skipped" -eq 0 ] || continue
	files=$((files + 1))
	echo "# === $name"
	began=$(date +%s)
	set +e
	timeout -k 5 "$limit" bash "$t" </dev/null 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	echo "# $name took $(($(date +%s) - began)) s"
	p=$(grep -Ec '^ok [0-9]+' "$log" || true)
	s=$(grep -Ec '^ok [0-9]+.*# SKIP' "$log" || true)
	f=$(grep -Ec '^not ok [0-9]+' "$log" || true)
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + f))
	# A hang, or a non-zero exit without a failed assertion to explain it,
	# counts as one more failure.
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail=$((fail + 1))
		echo "not ok - $name timed out after ${limit}s"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail=$((fail + 1))
		echo "not ok - $name exited $rc"
	fi
done

[ "$files" -gt 0 ] || echo "# no test file matched BPFBOX_TEST_FILTER='$filters'"
[ "$skip" -eq 0 ] || echo "# $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
