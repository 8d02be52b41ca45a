#!/usr/bin/env bash
# Usage: tests/check-docs.sh [BUILD]
#
# Fails when the man pages drift from what they describe: a command that `BUILD/bpfbox
# --help` lists without its own "## bpfbox COMMAND" section in docs/man/bpfbox.8.md, an
# option `BUILD/bpfbox COMMAND --help` prints that this section does not name, or a
# key of docs/policy.md's field tables ("| key | ..." tables) missing from the generated
# BUILD/man/bpfbox-policy.5, or a merge-conflict marker left anywhere in the tree. Run by `make test` (make docs-check), on the host.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
bin=$build/bpfbox
man8=$root/docs/man/bpfbox.8.md
man5=$build/man/bpfbox-policy.5
fail=0

for f in "$bin" "$man8" "$man5"; do
	[ -e "$f" ] || { echo "check-docs: $f missing (make all man)" >&2; exit 1; }
done

# The markdown escapes "--" as "\--" so that pandoc keeps it; compare unescaped.
md=$(sed 's/\\-/-/g' "$man8")

commands=$("$bin" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$commands" ] || { echo "check-docs: no commands in '$bin --help'" >&2; exit 1; }
n_opts=0
for c in $commands; do
	# The command's own section: from "## bpfbox COMMAND" to the next heading.
	section=$(awk -v c="$c" '
		/^#/ { on = (index($0, "## bpfbox " c) == 1 && substr($0, length("## bpfbox " c) + 1, 1) ~ /^( |$)/) }
		on' <<<"$md")
	if [ -z "$section" ]; then
		echo "check-docs: command '$c' (bpfbox --help) has no '## bpfbox $c' section in docs/man/bpfbox.8.md"
		fail=1
		continue
	fi
	# Some commands print their usage on stderr or exit non-zero for --help: take both.
	opts=$("$bin" "$c" --help 2>&1 </dev/null | grep -oE '(^|[^A-Za-z0-9-])--[a-z][a-z0-9-]*' |
		sed 's/^[^-]*//' | sort -u || true)
	for o in $opts; do
		n_opts=$((n_opts + 1))
		if ! grep -qE -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|$)" <<<"$section"; then
			echo "check-docs: option '$o' of 'bpfbox $c --help' is not in the '## bpfbox $c' section of docs/man/bpfbox.8.md"
			fail=1
		fi
	done
done
[ "$n_opts" -gt 0 ] || { echo "check-docs: no option found in any --help" >&2; exit 1; }

# Keys of the field tables: the first column of each table whose header is "| key |".
keys=$(awk '
	/^\| key \|/ { intable = 1; next }
	intable && !/^\|/ { intable = 0 }
	intable && /^\|/ {
		split($0, cells, "|")
		cell = cells[2]
		while (match(cell, /`[^`]*`/)) {
			k = substr(cell, RSTART + 1, RLENGTH - 2)
			cell = substr(cell, RSTART + RLENGTH)
			if (match(k, /^[$A-Za-z][A-Za-z0-9_.$]*/))
				print substr(k, RSTART, RLENGTH)
		}
	}' "$root/docs/policy.md" | sort -u)
[ -n "$keys" ] || { echo "check-docs: no field tables found in docs/policy.md" >&2; exit 1; }
# roff to plain words: font switches, escaped hyphens, named characters.
text=$(sed -e 's/\\f\[[A-Z]*\]//g; s/\\f[BIRCP]//g; s/\\-/-/g; s/\\\[dq\]/"/g' \
	-e "s/\\\\\\[aq\\]/'/g; s/\\\\\\[ti\\]/~/g; s/\\\\(\\*\\$/\$/g; s/\\\\\\\$/\$/g" "$man5")
n_keys=0
for k in $keys; do
	n_keys=$((n_keys + 1))
	if ! grep -qF -- "$k" <<<"$text"; then
		echo "check-docs: policy field '$k' (docs/policy.md) is not in $man5"
		fail=1
	fi
done

# Merge-conflict markers anywhere in the tree: a half-resolved merge would ship as it stands.
marker='^(<<<<<<<|>>>>>>>)( |$)|^=======$'
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	markers=$(git -C "$root" grep -n -I -E "$marker" -- . || true)
else
	markers=$(cd "$root" && grep -rn -I -E "$marker" --exclude-dir=build --exclude-dir=.git . || true)
fi
if [ -n "$markers" ]; then
	echo "check-docs: merge-conflict markers in the tree:"
	head -n 20 <<<"$markers"
	fail=1
fi

[ $fail = 0 ] && echo "check-docs: $n_opts options of $(wc -w <<<"$commands") commands and $n_keys policy fields documented"
exit $fail
