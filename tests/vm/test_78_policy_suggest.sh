#!/usr/bin/env bash
# The audit -> propose -> enforce loop: a real build-like command runs under
# --audit, `bpfbox policy suggest` turns its log into grants merged into the
# policy, and the same command then runs enforced under the proposal and
# succeeds, while each neighbour of what was granted (another file in the same
# directory, another file of the denied directory, another name, the mandatory
# set) is still refused by the kernel or the proxy. What the log's sandboxed
# code named (paths, a name) is only proposed where a grant can cover it.
# Its subject is `policy suggest` in user space over events both kernels
# write alike: it runs on one kernel (BPFBOX_KERNEL_SHARE, tests/vm/lib.sh
# t_share_file, docs/vm.md).
. "$(dirname "$0")/lib.sh"
t_share_file 1

PY=/usr/bin/python3
P=$T_TMP/policy.json
P2=$T_TMP/proposed.json
AUDIT_LOG=$T_TMP/audit.ndjson
LOG=$T_TMP/enforce.ndjson
mkdir -p "$T_TMP/secret" "$T_TMP/proj/src/.git/hooks" "$T_TMP/proj/build" "$T_TMP/www"
echo classified >"$T_TMP/secret/key"
echo other >"$T_TMP/secret/other"
echo hello-from-upstream >"$T_TMP/www/index.html"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": {
    "denyRead": ["$T_TMP/secret"],
    "allowWrite": ["$T_TMP/proj/src"],
    "denyWrite": []
  },
  "x-team": { "owner": "platform", "order": [3, 1, 2] }
}
JSON

"$PY" -m http.server 18078 --bind 127.0.0.1 --directory "$T_TMP/www" >/dev/null 2>&1 &
web=$!
trap 'kill "$web" 2>/dev/null; t_summary' EXIT
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18078/ && break; sleep 0.1; done

# The command: writes two objects, reads the key, tries a git hook (the
# mandatory set: refused whatever the policy says), fetches a page by name.
BUILD="echo o >'$T_TMP/proj/build/a.o' && echo o >'$T_TMP/proj/build/b.o' &&
	cat '$T_TMP/secret/key' &&
	{ echo h >'$T_TMP/proj/src/.git/hooks/pre-commit' 2>/dev/null || echo HOOK-REFUSED; } &&
	curl -sf -m 20 --noproxy '' -x \"\$HTTP_PROXY\" http://localhost:18078/"

# Audit lets the file refusals pass; the proxy still refuses the name.
"$BPFBOX" exec --audit --policy "$P" --log-file "$AUDIT_LOG" -- sh -c "$BUILD" >/dev/null 2>&1
rm -f "$T_TMP/proj/build/a.o" "$T_TMP/proj/build/b.o" "$T_TMP/proj/src/.git/hooks/pre-commit"
assert_succeeds "the audit run logged refusals" \
	jq -se 'any(.[]; .bpfbox.audit == true and .event.action == "open-read")' "$AUDIT_LOG"

assert_succeeds "policy suggest proposes from the audit log" \
	sh -c "'$BPFBOX' policy suggest --policy '$P' '$AUDIT_LOG' >'$P2' 2>'$T_TMP/report'"
t_diag <"$T_TMP/report"
assert_succeeds "the proposal passes policy check" "$BPFBOX" policy check "$P2"
assert_succeeds "allowWrite: the two objects, exactly" \
	jq -e --arg d "$T_TMP/proj" '.filesystem.allowWrite == [$d + "/src", $d + "/build/a.o", $d + "/build/b.o"]' "$P2"
assert_succeeds "allowRead: the key, not its directory" \
	jq -e --arg k "$T_TMP/secret/key" '.filesystem.allowRead == [$k]' "$P2"
assert_succeeds "allowedDomains: localhost" jq -e '.network.allowedDomains == ["localhost"]' "$P2"
assert_succeeds "the policy's own keys are kept, in order" \
	jq -e '(keys_unsorted == ["network", "filesystem", "x-team"]) and .["x-team"].order == [3, 1, 2]' "$P2"
assert_succeeds "the git hook is not proposed" sh -c "! grep -q 'hooks' '$P2'"
assert_contains "$T_TMP/report" "mandatory deny set" "the report says why the hook is not proposed"

# Enforced under the proposal: the same command succeeds.
assert_succeeds "the command succeeds under the proposal" \
	"$BPFBOX" exec --policy "$P2" --log-file "$LOG" -- sh -c "$BUILD"
assert_contains "$T_OUT" classified "it read the key"
assert_contains "$T_OUT" hello-from-upstream "it reached the name through the proxy"
assert_contains "$T_OUT" HOOK-REFUSED "the git hook is still refused"
assert_succeeds "the objects were written" test -s "$T_TMP/proj/build/a.o" -a -s "$T_TMP/proj/build/b.o"
assert_succeeds "the hook was not written" test ! -e "$T_TMP/proj/src/.git/hooks/pre-commit"

# Each neighbour of a grant is still refused.
assert_fails "another object in the same directory is refused" \
	"$BPFBOX" exec --policy "$P2" --log-file "$LOG" -- sh -c "echo o >'$T_TMP/proj/build/c.o'"
assert_succeeds "...and was not written" test ! -e "$T_TMP/proj/build/c.o"
assert_fails "another file of the denied directory is refused" \
	"$BPFBOX" exec --policy "$P2" --log-file "$LOG" -- cat "$T_TMP/secret/other"
assert_fails "another name is refused by the proxy" \
	"$BPFBOX" exec --policy "$P2" --log-file "$LOG" -- \
	sh -c 'curl -sf -m 20 --noproxy "" -x "$HTTP_PROXY" http://blocked.example/'
assert_succeeds "the refusals were the kernel's and the proxy's" \
	jq -se --arg c "$T_TMP/proj/build/c.o" --arg o "$T_TMP/secret/other" \
	'any(.[]; .file.path == $c and .rule.name == "default:write") and
	 any(.[]; .file.path == $o and (.rule.name | startswith("denyRead:"))) and
	 any(.[]; .destination.domain == "blocked.example" and .event.outcome == "failure")' "$LOG"

# A sandbox's lines only, and a log of another format: nothing proposed.
id=$(jq -sr '[.[] | select(.event.action == "sandbox-start")][0].bpfbox.sandbox.id' "$AUDIT_LOG")
assert_succeeds "--sandbox with another id proposes nothing" \
	sh -c "'$BPFBOX' policy suggest --sandbox not-$id '$AUDIT_LOG' 2>'$T_TMP/r2' | jq -e '.filesystem.allowWrite == []'"
assert_contains "$T_TMP/r2" "of other sandboxes, skipped" "the report counts the other sandbox's refusals"
assert_succeeds "--sandbox with its id proposes the same" \
	sh -c "'$BPFBOX' policy suggest --policy '$P' --sandbox '$id' '$AUDIT_LOG' 2>/dev/null | cmp -s - '$P2'"
assert_status "a policy the loader rejects: nothing proposed, 125" 125 \
	sh -c "echo '{' >'$T_TMP/bad.json'; '$BPFBOX' policy suggest --policy '$T_TMP/bad.json' '$AUDIT_LOG' >'$T_TMP/out3' 2>/dev/null"
assert_succeeds "...and nothing printed" test ! -s "$T_TMP/out3"
assert_status "a bad option is a usage error" 2 "$BPFBOX" policy suggest --collapse -1 "$AUDIT_LOG"
