# shellcheck shell=bash
# Shared by tests/vm/test_4*.sh after lib.sh: events in $LOG, all runs in $ALL.
#   fresh                                   moves $LOG's lines to $ALL, empties $LOG
#   assert_event ACTION PATH RULE [NAME]    some line of $LOG is a refusal with these
#                                           fields; "" matches anything, a trailing *
#                                           matches a prefix
fresh() {
	cat "$LOG" >>"$ALL" 2>/dev/null
	: >"$LOG"
}

assert_event() {
	local name=${4:-"event $1 ${2:-*} ${3:-*}"}
	local q='def m($v; $want): $want == "" or (($want | endswith("*")) and (($v // "") |
		startswith($want[:-1]))) or $v == $want;
		[inputs | select(.event.outcome == "failure" and m(.event.action; $a) and
		m(.file.path; $p) and m(.rule.name; $r))] | length > 0'

	jq -e -n --arg a "$1" --arg p "$2" --arg r "$3" "$q" "$LOG" >/dev/null 2>&1 && t_ok "$name" && return 0
	t_fail "$name" "no refusal in $LOG has action '$1', path '$2', rule '$3'; refusals:" \
		"$(jq -c 'select(.event.outcome == "failure") | [.event.action, .file.path, .rule.name]' "$LOG" 2>&1 |
			tail -n 20)"
}

# The fixture test_42 and test_43 share: a read-denied tree, a writable one
# with a write-denied corner and a read-denied corner, their policy, and
# bb/sh_in to run a command under it with the log in $LOG.
escape_fixture() {
	TRY=$T_ROOT/build/helpers/bbtry
	P=$T_TMP/policy.json
	LOG=$T_TMP/log.ndjson
	ALL=$T_TMP/all.ndjson
	S=$T_TMP/secret
	W=$T_TMP/work
	mkdir -p "$S" "$W/a/prot" "$W/sec" "$W/m"
	echo classified >"$S/key"
	echo inner >"$W/sec/key"
	echo public >"$W/pub"
	cat >"$P" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": {
    "denyRead": ["$S", "$W/sec"],
    "allowWrite": ["$W", "/sys/fs/cgroup", "/sys/fs/bpf"],
    "denyWrite": ["$W/a/prot"]
  }
}
JSON
}
bb() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" "$@"; }
sh_in() { bb -- sh -c "$1"; }
