#!/usr/bin/env bash
# The command's environment: bpfbox's minus credentials.envVars deny entries,
# plus TMPDIR (private, removed at exit), proxy variables, BPFBOX_SANDBOX_ID;
# bpfbox.env.allow passes only what it names. A denied value is nowhere the
# sandbox can read: its env, /proc/*/environ, /proc/*/cmdline.
. "$(dirname "$0")/lib.sh"
# Its subject is the command's environment, built in user space, not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 1

W=$T_TMP/work
mkdir -p "$W"
SECRET="s3cr3t-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
P=$T_TMP/deny.json
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] },
  "credentials": { "envVars": [ { "name": "BB_TEST_TOKEN", "mode": "deny" } ] }
}
JSON
PA=$T_TMP/allow.json
cat >"$PA" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] },
  "credentials": { "envVars": [ { "name": "BB_KEEP_TOKEN", "mode": "deny" } ] },
  "bpfbox": { "env": { "allow": ["PATH", "BB_KEEP*"] } }
}
JSON

# Everything the sandbox can read that could hold an environment value.
SNOOP='env; echo; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline /proc/self/environ; do
	echo "== $f"; tr "\0" "\n" <"$f" 2>&1; done; cat /proc/$PPID/environ 2>&1 | tr "\0" "\n"'

assert_succeeds "a sandbox runs with a secret in bpfbox's environment" env BB_TEST_TOKEN="$SECRET" \
	BB_PLAIN=plain-value "$BPFBOX" exec --policy "$P" --log-file "$T_TMP/l1" -- sh -c "$SNOOP"
cp "$T_OUT" "$W/snoop1"
assert_not_contains "$W/snoop1" "$SECRET" "the denied secret is nowhere the sandbox can read"
assert_not_contains "$W/snoop1" '^BB_TEST_TOKEN=' "the denied variable is not in the command's environment"
assert_contains "$W/snoop1" '^BB_PLAIN=plain-value$' "other variables are inherited"
assert_contains "$W/snoop1" '^TMPDIR=/tmp/bpfbox-[0-9a-f]+$' "TMPDIR is the private directory"
assert_contains "$W/snoop1" '^BPFBOX_SANDBOX_ID=bb-[0-9a-f]+$' "BPFBOX_SANDBOX_ID is set"
assert_contains "$W/snoop1" '^HTTPS?_PROXY=http://127\.0\.0\.1:[0-9]+$' "the proxy variables are set"
assert_contains "$W/snoop1" '^(== /proc/[0-9]+/environ|.*(Permission denied|not permitted).*)' \
	"the snoop did look at /proc/*/environ"
id=$(sed -n 's/^BPFBOX_SANDBOX_ID=//p' "$W/snoop1")
assert_contains "$T_TMP/l1" "\"id\":\"$id\"" "BPFBOX_SANDBOX_ID names the sandbox of the log"

# bpfbox's own /proc/PID/environ from inside: refused by the kernel.
assert_fails "reading bpfbox's /proc/PID/environ from inside is refused" env BB_TEST_TOKEN="$SECRET" \
	"$BPFBOX" exec --policy "$P" --log-file "$T_TMP/l2" -- sh -c 'cat /proc/$PPID/environ >/dev/null'
assert_contains "$T_OUT" 'Permission denied|not permitted' "with EACCES or EPERM"

# ...and, from outside, its environ block holds the value no more.
env BB_TEST_TOKEN="$SECRET" "$BPFBOX" exec --policy "$P" --log-file "$T_TMP/l3" -- sleep 1000 &
bb=$!
for _ in $(seq 100); do [ -n "$(ls /run/bpfbox/sandboxes 2>/dev/null)" ] && break; sleep 0.1; done
sleep 0.3
tr '\0' '\n' <"/proc/$bb/environ" >"$W/outside"
assert_contains "$W/outside" '^BB_TEST_TOKEN=' "bpfbox's environ still has the name"
assert_not_contains "$W/outside" "$SECRET" "but the value is overwritten in bpfbox's own /proc/PID/environ"
kill -TERM $bb
wait $bb

# The value reaches no log line, registry entry or ps, even where the command itself spells it.
assert_fails "a refusal whose path spells the denied value" env BB_TEST_TOKEN="$SECRET" \
	"$BPFBOX" exec --policy "$P" --log-file "$T_TMP/l6" -- sh -c 'touch "/etc/bb-$1"' sh "$SECRET"
assert_event_in() { jq -e -n "[inputs | select($2)] | length > 0" "$1" >/dev/null || { jq -c '{a: .event.action, p: .file.path, c: .process.command_line, m: .message}' "$1" >&2; false; }; }
assert_succeeds "the refusal is logged with the value replaced" assert_event_in "$T_TMP/l6" \
	'.file.path == "/etc/bb-[masked:BB_TEST_TOKEN]"'
assert_succeeds "so is the command line" assert_event_in "$T_TMP/l6" \
	'.event.action == "sandbox-start" and (.process.command_line | endswith("sh [masked:BB_TEST_TOKEN]"))'
assert_fails "the value is nowhere in the log" grep -qF "$SECRET" "$T_TMP/l6"
env BB_TEST_TOKEN="$SECRET" "$BPFBOX" exec --policy "$P" --log-file "$T_TMP/l7" -- sh -c 'sleep 1000' sh "$SECRET" &
bb=$!
for _ in $(seq 100); do [ -n "$(ls /run/bpfbox/sandboxes 2>/dev/null)" ] && break; sleep 0.1; done
sleep 0.3
assert_succeeds "bpfbox ps lists the sandbox" "$BPFBOX" ps
assert_contains "$T_OUT" 'masked:BB_TEST_TOKEN' "with the value replaced in its command"
assert_not_contains "$T_OUT" "$SECRET" "and never the value"
assert_fails "nor is it in the registry" grep -rqF "$SECRET" /run/bpfbox/sandboxes
kill -TERM $bb
wait $bb

# TMPDIR: private, writable, gone afterwards.
assert_succeeds "the command can write in TMPDIR" "$BPFBOX" exec --policy "$P" --log-file "$T_TMP/l4" -- \
	sh -c 'echo x >"$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"'
tdir=$(tail -n 1 "$T_OUT")
assert_succeeds "TMPDIR is removed at exit" test ! -e "$tdir"

# Allow-list mode.
assert_succeeds "allow-list mode runs" env BB_KEEP_ME=kept BB_DROP_ME=dropped BB_KEEP_TOKEN="$SECRET" \
	"$BPFBOX" exec --policy "$PA" --log-file "$T_TMP/l5" -- sh -c "$SNOOP"
cp "$T_OUT" "$W/snoop2"
assert_contains "$W/snoop2" '^BB_KEEP_ME=kept$' "an allowed variable (prefix) passes"
assert_contains "$W/snoop2" '^PATH=' "PATH passes"
assert_not_contains "$W/snoop2" '^BB_DROP_ME=' "an unlisted variable does not"
assert_not_contains "$W/snoop2" '^(HOME|USER|TERM)=' "nor does anything else inherited"
assert_not_contains "$W/snoop2" "$SECRET" "deny wins over allow: the secret is nowhere"
assert_contains "$W/snoop2" '^TMPDIR=/tmp/bpfbox-' "TMPDIR is still set"
assert_contains "$W/snoop2" '^BPFBOX_SANDBOX_ID=' "BPFBOX_SANDBOX_ID is still set"
