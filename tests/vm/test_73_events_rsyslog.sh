#!/usr/bin/env bash
# A real consumer: rsyslog tails a bpfbox --log-file with imfile, parses each
# line as JSON with mmjsonparse and writes back what it parsed with omfile.
# Every line must arrive, parse, and carry exactly the fields bpfbox wrote.
. "$(dirname "$0")/lib.sh"
# Its subject is the log format as rsyslog reads it, not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 1

command -v rsyslogd >/dev/null || t_skip_all "rsyslogd missing (tools/install-deps.sh installs rsyslog)"
PY=/usr/bin/python3
P=$T_TMP/policy.json
LOG=$T_TMP/bpfbox.ndjson
OUT=$T_TMP/parsed.ndjson
BAD=$T_TMP/unparsed.txt
mkdir -p "$T_TMP/work" "$T_TMP/ro" "$T_TMP/rs"
cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$T_TMP/work"], "denyWrite": [] }
}
JSON
cat >"$T_TMP/rsyslog.conf" <<CONF
global(workDirectory="$T_TMP/rs" maxMessageSize="256k")
module(load="imfile")
module(load="mmjsonparse")
template(name="parsed" type="string" string="%\$!%\n")
template(name="raw" type="string" string="%rawmsg%\n")
ruleset(name="bpfbox") {
	action(type="mmjsonparse" cookie="" useRawMsg="on")
	if \$parsesuccess == "OK" then {
		action(type="omfile" file="$OUT" template="parsed")
	} else {
		action(type="omfile" file="$BAD" template="raw")
	}
}
input(type="imfile" file="$LOG" tag="bpfbox" ruleset="bpfbox" addMetadata="off")
CONF
: >"$LOG"
rsyslogd -n -f "$T_TMP/rsyslog.conf" -i "$T_TMP/rs/pid" >"$T_TMP/rsyslogd.out" 2>&1 &
rs=$!
trap 'kill "$rs" 2>/dev/null; t_summary' EXIT

# Lines with awkward strings: quotes, backslashes, non-ASCII, a newline, an escape.
# (printf %b escapes: \0NNN octal, \n newline.)
names=('q"uote' 'back\\slash' 'caf\0303\0251' 'new\nline' 'esc\0033[31m' 'bad\0377utf8')
assert_fails "refusals with awkward file names" "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- \
	sh -c 'for n in "$@"; do true > "$(printf "%b" "'"$T_TMP"'/ro/$n")"; done 2>/dev/null; exit 1' sh "${names[@]}"
assert_succeeds "a clean run" "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- true
assert_fails "a flood of 300 refusals" "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- \
	sh -c "i=0; while [ \$i -lt 300 ]; do true > '$T_TMP/ro/f'\$i; i=\$((i+1)); done 2>/dev/null; exit 1"

want=$(wc -l <"$LOG")
for _ in $(seq 600); do
	[ "$(cat "$OUT" 2>/dev/null | wc -l)" -ge "$want" ] && break
	sleep 0.1
done
assert_succeeds "every line of the bpfbox log passes jq -e ." sh -c "jq -e . '$LOG' >/dev/null"
assert_succeeds "the log validates against the schema" "$PY" "$T_ROOT/tests/tools/validate-events.py" --check-seq "$LOG"
assert_eq "$want" "$(cat "$OUT" 2>/dev/null | wc -l)" "rsyslog parsed all $want lines"
assert_eq 0 "$(cat "$BAD" 2>/dev/null | wc -l)" "rsyslog failed to parse none"
assert_succeeds "what rsyslog parsed equals what bpfbox wrote, line by line" \
	cmp <(jq -cS . "$LOG") <(jq -cS . "$OUT")
assert_succeeds "the awkward names survived the trip" \
	jq -se 'map(select(.event.action == "create") | .file.path) | any(.[]; endswith("/ro/new\nline")) and any(.[]; endswith("/ro/q\"uote")) and any(.[]; endswith("/ro/café"))' "$OUT"
