# shellcheck shell=bash
# Shared by tests/vm/test_58_identity.sh and test_59_signals.sh after lib.sh:
# real users in the guest (its root is an overlay: nothing reaches the host),
# alice58's project and secrets, a policy using ~, and ways to start bpfbox.
#   as_sudo ARGS...   bpfbox exec as sudo starts it for alice58 (sudo's variables, HOME=/root)
#   as_root ARGS...   bpfbox exec by root, no sudo variables
#   fresh             moves $LOG's lines to $S/all.keep, empties $LOG
#   assert_ev JQ NAME some line of $LOG matches the jq condition JQ
command -v useradd >/dev/null || t_skip_all "useradd is missing"
PY=/usr/bin/python3
[ -x $PY ] || t_skip_all "$PY is missing"

groupadd -f bb58devs
id alice58 >/dev/null 2>&1 || useradd -m -s /bin/bash -G bb58devs alice58
id bob58 >/dev/null 2>&1 || useradd -m -s /bin/sh bob58
AUID=$(id -u alice58) AGID=$(id -g alice58) BUID=$(id -u bob58) DEVS=$(getent group bb58devs | cut -d: -f3)
AH=$(getent passwd alice58 | cut -d: -f6)
PROJ=$AH/project
mkdir -p "$PROJ" "$AH/.ssh" "$AH/.config"
echo key >"$AH/.ssh/id_test"
echo mine >"$AH/.config/secret"
chmod 0700 "$AH/.ssh" && chmod 0600 "$AH/.ssh/id_test" "$AH/.config/secret"
chmod 0755 "$AH" "$PROJ"
chown -R alice58:alice58 "$AH"

# Scripts and logs every user can read; $T_TMP is root's alone.
S=$(mktemp -d /tmp/bb58.XXXXXX)
chmod 0755 "$S"
P=$S/policy.json
cat >"$P" <<'JSON'
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": ["~/.ssh"], "allowWrite": ["~/project"], "denyWrite": [] }
}
JSON
LOG=$S/log.ndjson
: >"$LOG"
fresh() {
	cat "$LOG" >>"$S/all.keep" 2>/dev/null
	: >"$LOG"
}
as_sudo() {
	(cd "$PROJ" && env HOME=/root SUDO_USER=alice58 SUDO_UID="$AUID" SUDO_GID="$AGID" \
		SUDO_COMMAND="$BPFBOX exec" "$BPFBOX" exec --policy "$P" --log-file "$LOG" "$@")
}
as_root() {
	(cd "$PROJ" && env -u SUDO_UID -u SUDO_USER -u SUDO_GID "$BPFBOX" exec --policy "$P" --log-file "$LOG" "$@")
}
ev() {
	jq -c "select($1)" "$LOG" >"$T_TMP/ev" 2>/dev/null
	[ -s "$T_TMP/ev" ]
}
assert_ev() {
	if ev "$1"; then t_ok "$2"; else t_fail "$2" "no line matches $1" "$(cat "$LOG")"; fi
}
# Every line logged by this file's runs validates against the schema.
users_finish() {
	fresh
	cat "$S/all.keep" "$@" >"$T_TMP/all.ndjson" 2>/dev/null
	assert_succeeds "every line of these runs validates against the schema" \
		python3 tests/tools/validate-events.py "$T_TMP/all.ndjson"
	rm -rf "$S"
}
