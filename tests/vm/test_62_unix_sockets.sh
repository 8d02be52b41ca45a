#!/usr/bin/env bash
# Unix sockets: allowUnixSockets honoured by path (the socket file's
# identity) for stream connects and datagram sends, and abstract names listed
# as "@name" byte for byte; other paths and abstract names refused in the
# kernel with an event; allowAllUnixSockets lifts the rule.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
trap 'rc=$?; net_cleanup; (exit $rc); t_summary' EXIT

CLIENT=$T_ROOT/tests/vm/servers/client.py
LOG=$T_TMP/log.ndjson
S=$T_TMP/sock
mkdir -p "$S"
assert_succeeds "stream, abstract and datagram Unix sockets listen" \
	net_serve - unix "$S/ok.sock" , unix "$S/no.sock" , unix "@bpfbox-test-$$" , unix "@bpfbox-ok-$$" , \
	unix "@bpfbox-ok-$$-x" , unixdgram "@bpfbox-dg-ok-$$" , unixdgram "@bpfbox-dg-no-$$" , \
	unixdgram "$S/dg-ok.sock" , unixdgram "$S/dg-no.sock"
# A rule for a socket that does not exist yet is skipped with a warning.
policy() { # FILE ALLOW_ALL
	cat >"$1" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [],
               "allowUnixSockets": ["$S/ok.sock", "$S/dg-ok.sock", "$S/missing.sock", "@bpfbox-ok-$$",
                                    "@bpfbox-dg-ok-$$"],
               "allowAllUnixSockets": $2 },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] }
}
JSON
}
P=$T_TMP/policy.json
PA=$T_TMP/policy-all.json
policy "$P" false
policy "$PA" true
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }

assert_succeeds "a listed stream socket can be connected to" box python3 "$CLIENT" unix "$S/ok.sock"
assert_contains "$T_OUT" '^ok SSH-2\.0' "and it answers"
assert_fails "an unlisted stream socket is refused" box python3 "$CLIENT" unix "$S/no.sock"
assert_contains "$T_OUT" '^EPERM'
assert_event "the refusal is an event naming the path" ".event.action == \"unix-connect\" and .destination.address == \"$S/no.sock\""
assert_event "and the process" '.event.action == "unix-connect" and .process.name == "python3"'
assert_fails "an abstract name is refused" box python3 "$CLIENT" unix "@bpfbox-test-$$"
assert_contains "$T_OUT" '^EPERM'
assert_event "the abstract refusal is an event (name shown with @)" \
	".event.action == \"unix-connect\" and .destination.address == \"@bpfbox-test-$$\""
assert_succeeds "a listed abstract name can be connected to" box python3 "$CLIENT" unix "@bpfbox-ok-$$"
assert_contains "$T_OUT" '^ok SSH-2\.0' "and it answers"
assert_fails "a longer name that starts with a listed one is refused" box python3 "$CLIENT" unix "@bpfbox-ok-$$-x"
assert_contains "$T_OUT" '^EPERM'
assert_event "that refusal is an event" ".event.action == \"unix-connect\" and .destination.address == \"@bpfbox-ok-$$-x\""
assert_succeeds "a listed abstract datagram name can be sent to" box python3 "$CLIENT" unixdgram "@bpfbox-dg-ok-$$"
assert_fails "an unlisted abstract datagram name is refused" box python3 "$CLIENT" unixdgram "@bpfbox-dg-no-$$"
assert_contains "$T_OUT" '^EPERM'
assert_event "that refusal is an event" ".event.action == \"unix-send\" and .destination.address == \"@bpfbox-dg-no-$$\""
assert_succeeds "a listed datagram socket can be sent to" box python3 "$CLIENT" unixdgram "$S/dg-ok.sock"
assert_fails "an unlisted datagram socket is refused" box python3 "$CLIENT" unixdgram "$S/dg-no.sock"
assert_contains "$T_OUT" '^EPERM'
assert_event "the datagram refusal is an event" ".event.action == \"unix-send\" and .destination.address == \"$S/dg-no.sock\""
assert_succeeds "a socket pair inside the sandbox still works" \
	box python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"'
assert_succeeds "a socket the sandbox made itself (abstract name) is reachable from inside" box python3 -c '
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0bpfbox-own")
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", "\0bpfbox-own")
assert s.recv(1) == b"x"'
assert_contains "$LOG" 'missing\.sock' "the missing socket's rule is reported at launch"

assert_succeeds "allowAllUnixSockets: an unlisted socket is reachable" \
	"$BPFBOX" exec --policy "$PA" --log-file "$LOG" -- python3 "$CLIENT" unix "$S/no.sock"
assert_succeeds "allowAllUnixSockets: an abstract name is reachable" \
	"$BPFBOX" exec --policy "$PA" --log-file "$LOG" -- python3 "$CLIENT" unix "@bpfbox-test-$$"
assert_succeeds "allowAllUnixSockets: an unlisted datagram socket is reachable" \
	"$BPFBOX" exec --policy "$PA" --log-file "$LOG" -- python3 "$CLIENT" unixdgram "$S/dg-no.sock"

assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"
