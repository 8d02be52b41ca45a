#!/usr/bin/env bash
# network.mitmProxy (srt's meaning): allowed names that its domains match are
# sent to the HTTP proxy on its Unix socket, after bpfbox's own decision;
# other allowed names go their usual way, denied names nowhere. The MITM
# proxy is tinyproxy in the namespace playing the internet, reached through
# socat's Unix socket in the guest (a real HTTP proxy on a real Unix
# socket), logging every request: its log shows exactly the routed ones.
# Confined code cannot reach the socket itself (the kernel refuses a Unix
# socket the policy does not list), so the proxy's decision cannot be skipped.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# Its subject is the proxy's routing in user space, not the kernel: `make vm-test` runs it on
# the first kernel only (BPFBOX_KERNEL_SHARE, tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 1
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"

trap 'rc=$?; net_cleanup; (exit $rc); t_summary' EXIT

command -v dnsmasq >/dev/null || t_skip_all "dnsmasq is not installed (tools/install-deps.sh)"
command -v tinyproxy >/dev/null || t_skip_all "tinyproxy is not installed (tools/install-deps.sh)"
command -v socat >/dev/null || t_skip_all "socat is not installed (tools/install-deps.sh)"

LOG=$T_TMP/log.ndjson
DNSLOG=$T_TMP/dnsmasq.log
TPLOG=$T_TMP/tinyproxy/tinyproxy.log
SOCK=$T_TMP/mitm/mitm.sock
mkdir -p "$T_TMP/www" "$T_TMP/tls" "$T_TMP/tinyproxy" "$T_TMP/mitm"
chmod 777 "$T_TMP/tinyproxy"
echo hello-remote >"$T_TMP/www/hello.txt"
CA=$T_TMP/tls/ca.pem

P=$T_TMP/policy.json
cat >"$P" <<JSON
{
  "network": { "allowedDomains": ["allowed.test", "mitm.test"], "deniedDomains": [],
               "mitmProxy": { "socketPath": "$SOCK", "domains": ["mitm.test"] } },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] }
}
JSON
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }

assert_succeeds "a test CA and server certificate are made" \
	"$T_ROOT/tests/vm/servers/make-ca.sh" "$T_TMP/tls" allowed.test mitm.test
assert_succeeds "a remote network namespace is set up" net_remote_up
ip -n bbremote addr add 10.200.0.3/24 dev bbveth1
assert_succeeds "dnsmasq answers in the remote namespace" net_dnsmasq "$DNSLOG" \
	--host-record=allowed.test,10.200.0.2 --host-record=mitm.test,10.200.0.2 --host-record=denied.test,10.200.0.3
assert_succeeds "HTTP and HTTPS in the namespace" \
	net_serve bbremote http 10.200.0.2 80 "$T_TMP/www" , \
	https 10.200.0.2 443 "$T_TMP/www" "$T_TMP/tls/server.pem" "$T_TMP/tls/server.key"
cat >"$T_TMP/tinyproxy/tinyproxy.conf" <<CONF
Port 3128
Listen 10.200.0.2
Timeout 30
LogFile "$TPLOG"
LogLevel Connect
MaxClients 20
Allow 10.200.0.0/24
CONF
ip netns exec bbremote tinyproxy -d -c "$T_TMP/tinyproxy/tinyproxy.conf" >>"$T_TMP/servers.log" 2>&1 &
NET_PIDS+=($!)
# The MITM proxy's Unix socket, root's (mode 600), in front of tinyproxy.
socat "UNIX-LISTEN:$SOCK,fork,mode=600" TCP:10.200.0.2:3128 >>"$T_TMP/servers.log" 2>&1 &
NET_PIDS+=($!)
mitm_up() {
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && timeout 2 bash -c '</dev/tcp/10.200.0.2/3128' 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
assert_succeeds "tinyproxy listens, socat's Unix socket in front of it" mitm_up
net_resolver_is 10.200.0.2
tp_requests() { sed -n 's/.*Request (file descriptor [0-9]*): //p' "$TPLOG"; }

assert_succeeds "policy check accepts mitmProxy" "$BPFBOX" policy check "$P"
assert_succeeds "policy explain says where a routed name goes" "$BPFBOX" policy explain "$P" mitm.test:443
assert_contains "$T_OUT" "mitmProxy: sent to the proxy on unix:$SOCK"
assert_succeeds "and that another allowed name is not" "$BPFBOX" policy explain "$P" allowed.test:443
assert_not_contains "$T_OUT" "mitmProxy"

# Explicit clients.
assert_succeeds "HTTPS to a routed name goes through the MITM proxy" \
	box curl -sS --max-time 20 --cacert "$CA" https://mitm.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a proxy-connect event naming the socket" \
	".event.action == \"proxy-connect\" and .destination.domain == \"mitm.test\" and .event.outcome == \"success\" and .bpfbox.proxy.parent == \"unix:$SOCK\""
assert_succeeds "plain HTTP to a routed name too (absolute-form)" \
	box curl -sS --max-time 20 http://mitm.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a proxy-http event naming the socket" \
	".event.action == \"proxy-http\" and .destination.domain == \"mitm.test\" and .bpfbox.proxy.parent == \"unix:$SOCK\""
assert_succeeds "another allowed name is dialled directly" \
	box curl -sS --max-time 20 --cacert "$CA" https://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "with no parent in its event" \
	'.event.action == "proxy-connect" and .destination.domain == "allowed.test" and .event.outcome == "success" and (.bpfbox.proxy.parent // null) == null'
assert_fails "a denied name is refused before any proxy" \
	box curl -fsS --max-time 20 http://denied.test/hello.txt
assert_contains "$T_OUT" '403'

# A transparent client: decided by its SNI, then sent to the MITM proxy by that name.
assert_succeeds "curl --noproxy '*' over HTTPS to a routed name" \
	box curl -sS --max-time 20 --noproxy '*' --cacert "$CA" https://mitm.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a transparent TLS event naming the socket" \
	".event.action == \"proxy-transparent\" and .bpfbox.transparent.kind == \"tls\" and .destination.domain == \"mitm.test\" and .bpfbox.proxy.parent == \"unix:$SOCK\""

# Hostile confined code goes to the socket itself, to reach a denied name through it.
assert_fails "the sandbox cannot connect to the MITM proxy's socket" \
	box python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(b"GET http://denied.test/hello.txt HTTP/1.1\r\nHost: denied.test\r\n\r\n")
print(s.recv(200))' "$SOCK"
assert_event "refused in the kernel, with an event naming the path" \
	".event.action == \"unix-connect\" and .destination.address == \"$SOCK\""

# What the MITM proxy saw: exactly the routed requests, by name.
tp_requests >"$T_TMP/requests.txt"
printf '%s\n' "CONNECT mitm.test:443 HTTP/1.1" "GET http://mitm.test/hello.txt HTTP/1.1" \
	"CONNECT mitm.test:443 HTTP/1.1" >"$T_TMP/expected.txt"
if diff -u "$T_TMP/expected.txt" "$T_TMP/requests.txt" >"$T_TMP/requests.diff"; then
	t_ok "tinyproxy's log shows exactly the routed requests, in order"
else
	t_fail "tinyproxy's log shows exactly the routed requests, in order" "$(cat "$T_TMP/requests.diff")"
fi
assert_fails "nothing for the denied name reached it" grep -q denied.test "$TPLOG"
assert_fails "nor the directly dialled one" grep -q allowed.test "$TPLOG"

# The MITM proxy gone: a routed name fails (502), it is never dialled directly instead.
GONE=$T_TMP/gone.json
jq --arg s "$T_TMP/mitm/absent.sock" '.network.mitmProxy.socketPath = $s' "$P" >"$GONE"
assert_fails "with its socket absent, a routed name fails" \
	"$BPFBOX" exec --policy "$GONE" --log-file "$LOG" -- curl -fsS --max-time 20 http://mitm.test/hello.txt
assert_contains "$T_OUT" '502'
assert_event "with an event saying the MITM proxy could not be reached" \
	".event.action == \"proxy-http\" and .destination.domain == \"mitm.test\" and ((.error.message // \"\") | test(\"connect to the MITM proxy\"))"

# srt's rules: exclusive with tlsTerminate; needs bpfbox's own proxy.
BAD=$T_TMP/bad.json
jq '.network.tlsTerminate = {}' "$P" >"$BAD"
assert_fails "mitmProxy with tlsTerminate is refused" "$BPFBOX" policy check "$BAD"
assert_contains "$T_OUT" 'network\.mitmProxy.*exclusive'
assert_status "and exec does not run the command (125)" 125 "$BPFBOX" exec --policy "$BAD" -- true
jq '.network.mitmProxy.domains = []' "$P" >"$BAD"
assert_fails "an empty domains list is refused" "$BPFBOX" policy check "$BAD"
assert_contains "$T_OUT" 'network\.mitmProxy\.domains'
jq '.network.httpProxyPort = 3128 | .network.socksProxyPort = 1080 | .bpfbox.network.transparent = false' "$P" >"$BAD"
assert_status "with both external proxy ports exec refuses to run (125)" 125 \
	"$BPFBOX" exec --policy "$BAD" -- true
assert_contains "$T_OUT" "network\.mitmProxy needs bpfbox's own proxy"

assert_succeeds "every event line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"
