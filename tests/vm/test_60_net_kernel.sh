#!/usr/bin/env bash
# Network, kernel side: direct connections that ignore the proxy variables
# (curl --noproxy, a Python socket, a UDP DNS query, IPv4-mapped IPv6, raw
# and packet sockets) are refused in the kernel, each with an event naming
# the destination, protocol and process; only the sandbox's proxy port is
# reachable. allowLocalBinding decides bind and listen, and whether a
# sandboxed client may reach a sandboxed server (only while that server's
# socket exists: a released port somebody else took is not reachable).
# All of it with "bpfbox": {"network": {"transparent": false}}, which must
# restore exactly this; test_65_transparent covers the default (the
# sandbox's DNS and the transparent path to allowed names).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
trap 'rc=$?; net_cleanup; (exit $rc); t_summary' EXIT

CLIENT=$T_ROOT/tests/vm/servers/client.py
LOG=$T_TMP/log.ndjson
mkdir -p "$T_TMP/www" "$T_TMP/work"
echo hello-remote >"$T_TMP/www/hello.txt"

policy() { # policy FILE ALLOW_LOCAL_BINDING
	cat >"$1" <<JSON
{
  "network": { "allowedDomains": ["remote.test", "10.200.0.2"], "deniedDomains": [],
               "allowLocalBinding": $2 },
  "filesystem": { "denyRead": [], "allowWrite": ["$T_TMP/work"], "denyWrite": [] },
  "bpfbox": { "network": { "transparent": false } }
}
JSON
}
P=$T_TMP/policy.json
PB=$T_TMP/policy-bind.json
policy "$P" false
policy "$PB" true
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }

assert_succeeds "a remote network namespace is set up" net_remote_up
net_hosts remote.test "$NET_REMOTE"
assert_succeeds "an HTTP and a UDP server run in it" \
	net_serve bbremote http 0.0.0.0 8080 "$T_TMP/www" , udp 0.0.0.0 53
assert_succeeds "an HTTP server runs on the guest's loopback" net_serve - http 127.0.0.1 8081 "$T_TMP/www"
assert_succeeds "outside the sandbox, the remote server answers directly" \
	curl -sS --noproxy '*' http://10.200.0.2:8080/hello.txt

# The way in that works: the proxy.
assert_succeeds "curl through the proxy reaches an allowed host" box curl -sS http://remote.test:8080/hello.txt
assert_contains "$T_OUT" '^hello-remote$'

# Direct TCP, whatever the client.
assert_fails "curl --noproxy '*' to an allowed IP fails" box curl -sS --max-time 10 --noproxy '*' http://10.200.0.2:8080/hello.txt
assert_not_contains "$T_OUT" hello-remote "no byte of the answer arrives"
assert_event "the refusal is an event naming address and port" \
	'.event.action == "connect" and .destination.ip == "10.200.0.2" and .destination.port == 8080'
assert_event "the event names the process" '.event.action == "connect" and .process.name == "curl" and .process.pid > 0'
assert_event "the event names the protocol" '.event.action == "connect" and .network.transport == "tcp"'
assert_fails "a Python socket to the remote host is refused" box python3 "$CLIENT" tcp 10.200.0.2 8080
assert_contains "$T_OUT" '^EPERM' "with EPERM"
assert_event "the refusal names python3" '.event.action == "connect" and .process.name == "python3"'
assert_fails "a Python socket to a loopback server is refused" box python3 "$CLIENT" tcp 127.0.0.1 8081
assert_contains "$T_OUT" '^EPERM'
assert_event "the loopback refusal is an event" \
	'.event.action == "connect" and .destination.ip == "127.0.0.1" and .destination.port == 8081'
assert_fails "IPv4-mapped IPv6 is treated as IPv4" box python3 "$CLIENT" tcp6 ::ffff:10.200.0.2 8080
assert_contains "$T_OUT" '^EPERM'
assert_event "the mapped refusal is an event" '.event.action == "connect" and .destination.ip == "::ffff:10.200.0.2"'
assert_fails "IPv6 loopback is refused" box python3 "$CLIENT" tcp6 ::1 8081
assert_contains "$T_OUT" '^(EPERM|ECONNREFUSED)'

# UDP: DNS included.
assert_fails "a UDP DNS query by sendto is refused" box python3 "$CLIENT" dns 10.200.0.2 53
assert_contains "$T_OUT" '^EPERM'
assert_event "the DNS refusal is an event (sendmsg, udp, port 53)" \
	'.event.action == "sendmsg" and .destination.ip == "10.200.0.2" and .destination.port == 53 and .network.transport == "udp"'
assert_fails "a DNS query on a connected UDP socket is refused" box python3 "$CLIENT" udpconn 10.200.0.2 53
assert_contains "$T_OUT" '^EPERM'
assert_event "the UDP connect refusal is an event" \
	'.event.action == "connect" and .destination.port == 53 and .network.transport == "udp"'
if command -v getent >/dev/null; then
	cp /etc/resolv.conf "$T_TMP/resolv.conf.saved" 2>/dev/null
	echo "nameserver 10.200.0.2" >/etc/resolv.conf
	assert_fails "a resolver lookup inside the sandbox gets nowhere" box getent ahosts example.org
	cp "$T_TMP/resolv.conf.saved" /etc/resolv.conf 2>/dev/null
	assert_event "the resolver's query is refused in the kernel" \
		'.process.name == "getent" and .destination.ip == "10.200.0.2" and .destination.port == 53'
fi

# Raw and packet sockets never open.
assert_fails "a raw socket is refused" box python3 "$CLIENT" raw
assert_contains "$T_OUT" '^EPERM'
assert_event "the raw socket refusal is an event" \
	'.event.action == "socket-create" and .bpfbox.socket.type == 3 and .bpfbox.socket.family == 2'
assert_fails "a packet socket is refused" box python3 "$CLIENT" packet
assert_contains "$T_OUT" '^EPERM'
assert_event "the packet socket refusal is an event naming the family" \
	'.event.action == "socket-create" and .bpfbox.socket.family == 17'

# The proxy port itself, only over TCP.
assert_succeeds "the proxy port is reachable directly" \
	box sh -c 'python3 '"$CLIENT"' tcp 127.0.0.1 "${BPFBOX_PROXY#*:}"'
assert_contains "$T_OUT" '^ok .*400' "and it is the proxy answering (400 to a bad request)"
assert_fails "UDP to the proxy port is refused" box sh -c 'python3 '"$CLIENT"' dns 127.0.0.1 "${BPFBOX_PROXY#*:}"'
assert_contains "$T_OUT" '^EPERM'

# allowLocalBinding false: no fixed-port bind, no listen.
assert_fails "bind to a loopback port is refused without allowLocalBinding" box python3 "$CLIENT" bind 127.0.0.1 9000
assert_contains "$T_OUT" '^EPERM'
assert_event "the bind refusal is an event naming process and rule" \
	'.event.action == "bind" and .process.name == "python3" and .network.transport == "tcp"'
assert_fails "listen is refused without allowLocalBinding" box python3 "$CLIENT" listen
assert_contains "$T_OUT" '^EPERM'
# The wait ends early when the server has died (its bind refused).
# shellcheck disable=SC2016 # expanded by the sandboxed shell
serve_and_fetch='python3 '"$T_ROOT"'/tests/vm/servers/serve.py http 127.0.0.1 9001 '"$T_TMP"'/www >'"$T_TMP"'/work/srv.out 2>&1 &
for i in $(seq 50); do grep -q ready '"$T_TMP"'/work/srv.out 2>/dev/null && break; kill -0 $! 2>/dev/null || break; sleep 0.2; done
curl -sS --max-time 10 --noproxy "*" http://127.0.0.1:9001/hello.txt; rc=$?; kill %1; exit $rc'
assert_fails "a sandboxed server cannot serve without allowLocalBinding" box bash -c "$serve_and_fetch"
assert_not_contains "$T_OUT" hello-remote

# allowLocalBinding true: a sandboxed server and a sandboxed client.
assert_succeeds "with allowLocalBinding, a sandboxed client reaches a sandboxed server" \
	"$BPFBOX" exec --policy "$PB" --log-file "$LOG" -- bash -c "$serve_and_fetch"
assert_contains "$T_OUT" '^hello-remote$'
assert_fails "with allowLocalBinding, a loopback server outside the sandbox stays refused" \
	"$BPFBOX" exec --policy "$PB" --log-file "$LOG" -- python3 "$CLIENT" tcp 127.0.0.1 8081
assert_contains "$T_OUT" '^EPERM'
assert_fails "with allowLocalBinding, binding a non-loopback address is refused" \
	"$BPFBOX" exec --policy "$PB" --log-file "$LOG" -- python3 "$CLIENT" bind 0.0.0.0 9002
assert_contains "$T_OUT" '^EPERM'

assert_succeeds "with allowLocalBinding, sandboxed UDP and IPv6 servers are reachable from inside" \
	"$BPFBOX" exec --policy "$PB" --log-file "$LOG" -- python3 -c '
import socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 9004))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9004))
assert u.recv(1) == b"x"
t = socket.socket(socket.AF_INET6)
t.bind(("::1", 9005))
t.listen()
socket.create_connection(("::1", 9005), timeout=5).close()'
# A port the sandbox let go, bound by somebody else, is not the sandbox's any more.
# shellcheck disable=SC2016 # expanded by the sandboxed shell
release_and_retry='python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 9006)); s.listen(); s.close()"
touch '"$T_TMP"'/work/released
for i in $(seq 100); do [ -e '"$T_TMP"'/work/taken ] && break; sleep 0.1; done
python3 '"$CLIENT"' tcp 127.0.0.1 9006'
"$BPFBOX" exec --policy "$PB" --log-file "$LOG" -- bash -c "$release_and_retry" >"$T_TMP/reuse.out" 2>&1 &
reuse=$!
for _ in $(seq 100); do [ -e "$T_TMP/work/released" ] && break; sleep 0.1; done
assert_succeeds "a server outside takes the port a sandboxed server released" \
	net_serve - http 127.0.0.1 9006 "$T_TMP/www"
touch "$T_TMP/work/taken"
wait "$reuse"
assert_eq 1 "$?" "the sandbox cannot connect to the port it once bound"
assert_contains "$T_TMP/reuse.out" '^EPERM'
assert_event "that refusal is an event" '.event.action == "connect" and .destination.port == 9006'

assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"
