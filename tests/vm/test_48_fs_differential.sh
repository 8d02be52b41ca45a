#!/usr/bin/env bash
# One decision, checked two ways: `bpfbox policy explain` (user space's model,
# user/policy/policy_decide.c) against what the kernel's walk does to a real open,
# open for writing and create of the same path, under the same policy. From a seed,
# helpers/fs_diff.py builds a tree (symbolic and hard links, bind mounts, a directory
# renamed before the launch, ".." in the argument, odd bytes in names, mandatory names
# at depth) and srt policies over it; one sandbox per policy tries dozens of paths.
# Each check is a case; a mismatch fails with the policy, the path and both verdicts.
# The kernel is the subject, so every case runs on every kernel.
#   BPFBOX_DIFF_SEED    the seed (default: a fixed one, so `make test` is repeatable)
#   BPFBOX_DIFF_CASES   path checks in all (default 200; `make fuzz` runs more)
# There is no list of tolerated disagreements: the three this test found (bind mounts and
# hard links met by name, ".." after a link, an allow kept on a widening link that the
# launcher followed) were fixed where they were wrong.
. "$(dirname "$0")/lib.sh"

SEED=${BPFBOX_DIFF_SEED:-4817}
CASES=${BPFBOX_DIFF_CASES:-200}
GEN=$T_ROOT/tests/vm/helpers/fs_diff.py
ROOT=$T_TMP/tree
OUT=$T_TMP/diff
mkdir -p "$ROOT" "$OUT"
[[ $SEED =~ ^[0-9]+$ && $CASES =~ ^[1-9][0-9]*$ ]] ||
	t_skip_all "BPFBOX_DIFF_SEED and BPFBOX_DIFF_CASES must be numbers"

unmount_all() {
	[ -s "$OUT/mounts" ] || return 0
	while IFS= read -r -d '' m; do
		umount "$m"
	done <"$OUT/mounts"
	: >"$OUT/mounts"
}
trap 'unmount_all; t_summary' EXIT

echo "# seed $SEED, $CASES path checks (BPFBOX_DIFF_SEED, BPFBOX_DIFF_CASES)"
assert_succeeds "the generator builds the tree and the policies (seed $SEED)" \
	python3 "$GEN" gen "$SEED" "$CASES" "$ROOT" "$OUT"
[ "$T_RC" -eq 0 ] || exit 1

for ((k = 0; k < $(cat "$OUT/npolicies"); k++)); do
	pol=$OUT/policy-$k.json cases=$OUT/cases-$k
	python3 "$GEN" explain "$BPFBOX" "$pol" "$cases" "$OUT/explained-$k"
	if ! "$BPFBOX" exec --policy "$pol" -- python3 "$GEN" try "$cases" >"$OUT/tried-$k" 2>"$OUT/err-$k" ||
		[ "$(wc -l <"$OUT/tried-$k")" -ne "$(wc -l <"$cases")" ]; then
		t_fail "policy-$k: the sandbox tried every path" "$(tail -n 20 "$OUT/err-$k")" \
			"policy:" "$(cat "$pol")"
		continue
	fi
	shown=0
	while IFS=$'\t' read -r verdict line; do
		case $verdict in
		ok) t_ok "$line" ;;
		skip) t_skip "$line" "not a policy decision" ;;
		*)
			if [ "$shown" -eq 0 ]; then
				t_fail "$line" "policy-$k.json (seed $SEED):" "$(cat "$pol")"
				shown=1
			else
				t_fail "$line" "policy-$k.json as above"
			fi
			;;
		esac
	done < <(python3 "$GEN" compare "$pol" "$cases" "$OUT/explained-$k" "$OUT/tried-$k")
done
