#!/usr/bin/env bash
# The transparent path, on by default. The sandbox's DNS: every port-53
# query of the sandbox (UDP and TCP, to any server, IPv4 and IPv6) reaches
# the sandbox's own resolver in the kernel; allowed names are asked of the
# host's resolver (dnsmasq in a network namespace playing the internet),
# others get NXDOMAIN and an event, and the upstream never hears of them.
# The application sees the answer come from the server it asked (recvmsg,
# getpeername). Then clients that ignore the proxy variables (curl
# --noproxy, node fetch, python without proxies, a raw TCP client) reach
# allowed names through the kernel's redirect to the proxy, which decides by
# TLS server_name or HTTP Host AND the learned address; hostile clients
# (an allowed name pinned to another address, a foreign Host) are refused
# with events.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"

restore_resolv() {
	[ -f "$T_TMP/resolv.conf.saved" ] && cp "$T_TMP/resolv.conf.saved" /etc/resolv.conf
	[ -f "$T_TMP/hosts.saved" ] && cp "$T_TMP/hosts.saved" /etc/hosts
	return 0
}
trap 'rc=$?; restore_resolv; net_cleanup; (exit $rc); t_summary' EXIT

command -v dnsmasq >/dev/null || t_skip_all "dnsmasq is not installed (tools/install-deps.sh)"

CLIENT=$T_ROOT/tests/vm/servers/client.py
LOG=$T_TMP/log.ndjson
DNSLOG=$T_TMP/dnsmasq.log
mkdir -p "$T_TMP/www" "$T_TMP/www2" "$T_TMP/tls"
echo hello-remote >"$T_TMP/www/hello.txt"
echo hello-other >"$T_TMP/www2/hello.txt"
CA=$T_TMP/tls/ca.pem

P=$T_TMP/policy.json
cat >"$P" <<JSON
{
  "network": { "allowedDomains": ["allowed.test", "*.wild.test", "port.test:8080", "other.test",
                                  "ssh.test:22"],
               "deniedDomains": ["bad.wild.test"] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] }
}
JSON
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }

assert_succeeds "a test CA and server certificate are made" \
	"$T_ROOT/tests/vm/servers/make-ca.sh" "$T_TMP/tls" allowed.test other.test denied.test
assert_succeeds "a remote network namespace is set up" net_remote_up
ip -n bbremote addr add 10.200.0.3/24 dev bbveth1
ip -n bbremote addr add fd00:200::2/64 dev bbveth1 nodad
ip addr add fd00:200::1/64 dev bbveth0 nodad
ip netns exec bbremote dnsmasq --conf-file=/dev/null --pid-file= --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
	--listen-address=10.200.0.2 --user=root --log-queries --log-facility="$DNSLOG" \
	--host-record=allowed.test,10.200.0.2,fd00:200::2 --host-record=denied.test,10.200.0.3 \
	--host-record=a.wild.test,10.200.0.2 --host-record=bad.wild.test,10.200.0.2 \
	--host-record=port.test,10.200.0.2 --host-record=cdn.other.test,10.200.0.2 \
	--host-record=other.test,10.200.0.3 --host-record=ssh.test,10.200.0.2 \
	--cname=alias.wild.test,cdn.other.test --cname=front.wild.test,bad.wild.test \
	--host-record=cache.test,10.200.0.2,600 --host-record=short.test,10.200.0.2,4 \
	--host-record=revoked.test,10.200.0.2,600 2>>"$T_TMP/servers.log" &
NET_PIDS+=($!)
dnsmasq_up() {
	for _ in $(seq 100); do
		python3 "$CLIENT" resolve udp 10.200.0.2 53 allowed.test >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
assert_succeeds "dnsmasq answers in the remote namespace" dnsmasq_up
# What the HTTP servers read: "<request line> host=<Host>" (tests/vm/servers/serve.py).
export SERVE_LOG=$T_TMP/requests.log
assert_succeeds "HTTP and HTTPS on two addresses, HTTP on IPv6, an ssh-style echo, in the namespace" \
	net_serve bbremote http 10.200.0.2 80 "$T_TMP/www" , http 10.200.0.3 80 "$T_TMP/www2" , \
	https 10.200.0.2 443 "$T_TMP/www" "$T_TMP/tls/server.pem" "$T_TMP/tls/server.key" , \
	https 10.200.0.3 443 "$T_TMP/www2" "$T_TMP/tls/server.pem" "$T_TMP/tls/server.key" , \
	http 10.200.0.2 8080 "$T_TMP/www" , http fd00:200::2 80 "$T_TMP/www" , \
	https fd00:200::2 443 "$T_TMP/www" "$T_TMP/tls/server.pem" "$T_TMP/tls/server.key" , echo 10.200.0.2 22
cp /etc/resolv.conf "$T_TMP/resolv.conf.saved" 2>/dev/null || : >"$T_TMP/resolv.conf.saved"
echo "nameserver 10.200.0.2" >/etc/resolv.conf
# /etc/hosts is learned at launch: only what this file puts there (earlier tests leave names behind).
cp /etc/hosts "$T_TMP/hosts.saved"
printf '127.0.0.1 localhost\n::1 localhost\n10.200.0.3 hosts.wild.test\n' >/etc/hosts
upstream_asked() { grep -q "query\[[A-Z]*\] $1 from" "$DNSLOG"; }

# The system resolver (glibc) inside the sandbox, unaware of any of this.
assert_succeeds "getent resolves an allowed name" box getent ahostsv4 allowed.test
assert_contains "$T_OUT" '^10\.200\.0\.2 '
assert_event_by_command "the answer, sent once upstream answered, names getent (read as the query came)" \
	'.event.action == "dns-query" and .dns.question.name == "allowed.test" and .event.outcome == "success"' getent
assert_event "the answer is an event naming the question and the rule" \
	'.event.action == "dns-query" and .dns.question.name == "allowed.test" and .rule.name == "allowedDomains:allowed.test" and .event.outcome == "success" and .bpfbox.dns.addresses >= 1'
assert_succeeds "the upstream was asked for it" upstream_asked allowed.test
assert_succeeds "a wildcard entry allows a subdomain" box getent ahostsv4 a.wild.test
assert_contains "$T_OUT" '^10\.200\.0\.2 '
assert_succeeds "a name allowed on one port only is answered" box getent ahostsv4 port.test
assert_succeeds "an allowed name whose answer is a CNAME to another name resolves" box getent ahostsv4 alias.wild.test
assert_contains "$T_OUT" '^10\.200\.0\.2 '
assert_event "the addresses at the end of the chain are bound to the name asked" \
	'.event.action == "dns-query" and .dns.question.name == "alias.wild.test" and .bpfbox.dns.addresses == 1' 
assert_fails "a name outside the policy does not resolve" box getent ahostsv4 denied.test
assert_event "the refusal is an event with the name and default rule" \
	'.event.action == "dns-query" and .dns.question.name == "denied.test" and .rule.name == "default:network" and .event.outcome == "failure" and .dns.response_code == "NXDOMAIN"'
assert_fails "the upstream never heard of the denied name" upstream_asked denied.test
assert_fails "deniedDomains wins over a wildcard" box getent ahostsv4 bad.wild.test
assert_event "its event names the denying entry" \
	'.event.action == "dns-query" and .dns.question.name == "bad.wild.test" and .rule.name == "deniedDomains:bad.wild.test"'
assert_fails "nor of the denied wildcard name" upstream_asked bad.wild.test

# Any server, any transport: the sandbox's resolver answers, the application sees the server it asked.
assert_succeeds "UDP to another server is answered by the sandbox's resolver" \
	box python3 "$CLIENT" resolve udp 192.0.2.53 53 allowed.test
assert_contains "$T_OUT" '^ok rcode=0 from=192\.0\.2\.53:53 addrs=10\.200\.0\.2$' "from the server asked (recvmsg)"
assert_succeeds "a connected UDP socket too" box python3 "$CLIENT" resolve udpconn 192.0.2.53 53 denied.test
assert_contains "$T_OUT" '^ok rcode=3 from=192\.0\.2\.53:53 addrs=$' "NXDOMAIN for the denied name"
assert_succeeds "DNS over TCP is answered by the sandbox's resolver" \
	box python3 "$CLIENT" resolve tcp 192.0.2.53 53 allowed.test
assert_contains "$T_OUT" '^ok rcode=0 from=192\.0\.2\.53:53 addrs=10\.200\.0\.2$' "getpeername shows the server asked"
assert_succeeds "DNS over TCP for a denied name" box python3 "$CLIENT" resolve tcp 10.200.0.2 53 denied.test
assert_contains "$T_OUT" '^ok rcode=3 ' "gets NXDOMAIN"
assert_event "the TCP refusal is an event" \
	'.event.action == "dns-query" and .dns.question.name == "denied.test" and .network.transport == "tcp"'
assert_fails "the upstream still never heard of it" upstream_asked denied.test
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1'; then
	assert_succeeds "IPv6 DNS over UDP is answered" box python3 "$CLIENT" resolve udp6 fd00:200::2 53 allowed.test AAAA
	assert_contains "$T_OUT" '^ok rcode=0 from=\[fd00:200::2\]:53 addrs=fd00:200::2$'
	assert_succeeds "IPv6 DNS over TCP is answered" box python3 "$CLIENT" resolve tcp6 fd00:200::2 53 denied.test
	assert_contains "$T_OUT" '^ok rcode=3 from=\[fd00:200::2\]:53 '
	assert_succeeds "an IPv4-mapped server is answered" box python3 "$CLIENT" resolve tcp6 ::ffff:192.0.2.53 53 allowed.test
	assert_contains "$T_OUT" '^ok rcode=0 from=\[::ffff:192\.0\.2\.53\]:53 addrs=10\.200\.0\.2$'
else
	t_skip "IPv6 DNS" "the guest has no IPv6 loopback"
fi

# Each query's event names the task that sent it, however it was sent; here the
# command itself. Each name is asked once.
dns_by() { # NAME TRANSPORT
	echo ".event.action == \"dns-query\" and .dns.question.name == \"$1\" and .network.transport == \"$2\" and .process.user.id == \"0\""
}
assert_fails "glibc asks on a connected UDP socket" box getent ahostsv4 glibc.sender.test
assert_event_by_command "the refusal names getent, its pid, thread and uid (each send is filed)" \
	"$(dns_by glibc.sender.test udp)" getent
assert_succeeds "a query by sendto" box python3 "$CLIENT" resolve udp 192.0.2.53 53 sendto.sender.test
assert_event_by_command "its event names python3 (filed at sendmsg)" "$(dns_by sendto.sender.test udp)" python3
assert_succeeds "a query on a connected UDP socket" box python3 "$CLIENT" resolve udpconn 192.0.2.53 53 conn.sender.test
assert_event_by_command "its event names python3" "$(dns_by conn.sender.test udp)" python3
assert_succeeds "a query over TCP" box python3 "$CLIENT" resolve tcp 192.0.2.53 53 tcp.sender.test
assert_event_by_command "its event names python3 (filed when the connection is established)" \
	"$(dns_by tcp.sender.test tcp)" python3
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1'; then
	assert_succeeds "a query over IPv6 UDP" box python3 "$CLIENT" resolve udp6 fd00:200::2 53 udp6.sender.test AAAA
	assert_event_by_command "its event names python3" "$(dns_by udp6.sender.test udp)" python3
	assert_succeeds "a query on a connected IPv6 UDP socket" \
		box python3 "$CLIENT" resolve udpconn6 fd00:200::2 53 conn6.sender.test AAAA
	assert_event_by_command "its event names python3" "$(dns_by conn6.sender.test udp)" python3
	assert_succeeds "a query over IPv6 TCP" box python3 "$CLIENT" resolve tcp6 fd00:200::2 53 tcp6.sender.test AAAA
	assert_event_by_command "its event names python3" "$(dns_by tcp6.sender.test tcp)" python3
fi
# An IPv6 socket to an IPv4-mapped server reaches the IPv4 resolver; its own hook sees the datagram.
assert_succeeds "an IPv6 socket's datagram to an IPv4-mapped server is answered" \
	box python3 "$CLIENT" resolve udp6 ::ffff:192.0.2.53 53 mapped.sender.test
assert_contains "$T_OUT" '^ok rcode=3 from=\[::ffff:192\.0\.2\.53\]:53 ' "from the server asked"
assert_event_by_command "its event names python3" "$(dns_by mapped.sender.test udp)" python3
assert_succeeds "so is a connected IPv6 socket's, send after send" \
	box python3 "$CLIENT" resolve udpconn6 ::ffff:192.0.2.53 53 mappedconn.sender.test
assert_contains "$T_OUT" '^ok rcode=3 from=\[::ffff:192\.0\.2\.53\]:53 ' "from the server asked"
assert_event_by_command "its event names python3" "$(dns_by mappedconn.sender.test udp)" python3
assert_succeeds "TCP to an IPv4-mapped server" box python3 "$CLIENT" resolve tcp6 ::ffff:192.0.2.53 53 mappedtcp.sender.test
assert_event_by_command "its event names python3" "$(dns_by mappedtcp.sender.test tcp)" python3
assert_succeeds "a child's query" box sh -c 'getent ahostsv4 child.sender.test; echo "shell=$$"'
shell_pid=$(sed -n 's/^shell=//p' "$T_OUT")
assert_event "its event names the child getent, not the sandboxed shell" \
	".event.action == \"dns-query\" and .dns.question.name == \"child.sender.test\" and .process.name == \"getent\" and .process.pid != ${shell_pid:-0} and .process.pid > 0"
assert_succeeds "a query whose socket is closed at once, the answer unread" \
	box python3 "$CLIENT" resolve udpfire 192.0.2.53 53 fire.sender.test
assert_event_by_command "its event still names python3 (a released entry counts for its grace)" \
	"$(dns_by fire.sender.test udp)" python3
dns_peers_entries() { # [JQ_FILTER]: entries (matching it)
	local m n=0
	for m in /sys/fs/bpf/bpfbox/*/dns_peers; do
		n=$((n + $(bpftool -j map dump pinned "$m" | jq "[.[] | (.formatted.value // .value) | ${1:-.}] | length")))
	done
	echo "$n"
}
# A socket's entry is marked when the socket goes, not only when its sandbox does.
"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- \
	sh -c 'python3 "$1" resolve udpconn 192.0.2.53 53 gone.sender.test; sleep 30' sh "$CLIENT" \
	>"$T_TMP/held" 2>&1 </dev/null &
held=$!
for _ in $(seq 200); do grep -q '^ok ' "$T_TMP/held" && break; sleep 0.1; done
assert_event "the held sandbox's query was filed and named" \
	'.event.action == "dns-query" and .dns.question.name == "gone.sender.test" and .process.name == "python3"'
# python3 prints, then exits and its socket is released: allow it a moment.
for _ in $(seq 50); do [ "$(dns_peers_entries 'select(.released_ns == 0)')" = 0 ] && break; sleep 0.1; done
assert_eq 1 "$(dns_peers_entries 'select(.released_ns > 0)')" "a closed socket's entry is marked released while its sandbox still runs"
assert_succeeds "(the sandbox does still run)" kill -0 "$held"
kill "$held" 2>/dev/null
wait "$held" 2>/dev/null
assert_eq 0 "$(dns_peers_entries)" "the sandboxes left no DNS sender in the kernel"

# Only port 53 is redirected; other UDP is refused in the kernel as before.
assert_fails "UDP to port 443 (QUIC) is refused" box python3 "$CLIENT" dns 10.200.0.2 443
assert_contains "$T_OUT" '^EPERM'
assert_event "the UDP 443 refusal is an event" \
	'.event.action == "sendmsg" and .destination.port == 443 and .network.transport == "udp"'

# Transparent: clients that ignore the proxy variables, to allowed names.
assert_succeeds "curl --noproxy '*' over HTTP reaches an allowed name" \
	box curl -sS --max-time 20 --noproxy '*' http://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a transparent HTTP event with the name and the address" \
	'.event.action == "proxy-transparent" and .bpfbox.transparent.kind == "http" and .destination.domain == "allowed.test" and (.destination.ip == "10.200.0.2" or .destination.ip == "fd00:200::2") and .destination.port == 80 and .event.outcome == "success"'
assert_succeeds "curl --noproxy '*' over HTTPS reaches an allowed name" \
	box curl -sS --max-time 20 --noproxy '*' --cacert "$CA" https://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a transparent TLS event named by the ClientHello" \
	'.event.action == "proxy-transparent" and .bpfbox.transparent.kind == "tls" and .destination.domain == "allowed.test" and .destination.port == 443 and .event.outcome == "success"'
assert_succeeds "a name allowed on one port is reached on it" \
	box curl -sS --max-time 20 --noproxy '*' http://port.test:8080/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_fails "and not on another port (refused in the kernel)" \
	box curl -sS --max-time 20 --noproxy '*' http://port.test/hello.txt
assert_event "that refusal is the kernel's" \
	'.event.action == "connect" and .destination.ip == "10.200.0.2" and .destination.port == 80 and .process.name == "curl"'
if command -v node >/dev/null; then
	assert_succeeds "node's fetch (no proxy) reaches an allowed name over HTTP and HTTPS" \
		box env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy NODE_EXTRA_CA_CERTS="$CA" node -e '
			(async () => {
				for (const u of ["http://allowed.test/hello.txt", "https://allowed.test/hello.txt"])
					process.stdout.write((await (await fetch(u)).text()));
			})().catch((e) => { console.error(e); process.exit(1); });'
	assert_contains "$T_OUT" '^hello-remote$'
	assert_eq 2 "$(grep -c '^hello-remote$' "$T_OUT")" "both answers arrived"
else
	t_skip "node fetch" "node is not installed"
fi
assert_succeeds "python urllib with proxies off reaches an allowed name" \
	box python3 -c 'import urllib.request as u; print(u.build_opener(u.ProxyHandler({})).open("http://allowed.test/hello.txt", timeout=20).read().decode(), end="")'
assert_contains "$T_OUT" '^hello-remote$'
assert_succeeds "raw TCP to an allowed name and port (no name in the bytes; the server speaks first)" \
	box python3 "$CLIENT" peer ssh.test 22
assert_contains "$T_OUT" '^ok peer=10\.200\.0\.2:22 SSH-2\.0-bpfbox-test-echo$' "getpeername shows the original address"
assert_event "as a transparent event without a name" \
	'.event.action == "proxy-transparent" and .bpfbox.transparent.kind == "tcp" and .destination.ip == "10.200.0.2" and .destination.port == 22 and .rule.name == "allowedDomains:ssh.test:22"'
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1'; then
	assert_succeeds "IPv6: curl -6 --noproxy '*' reaches an allowed name's AAAA" \
		box curl -6 -sS --max-time 20 --noproxy '*' http://allowed.test/hello.txt
	assert_contains "$T_OUT" '^hello-remote$'
	assert_event "as a transparent event to the IPv6 address" \
		'.event.action == "proxy-transparent" and .destination.ip == "fd00:200::2" and .event.outcome == "success"'
fi

assert_succeeds "a name /etc/hosts gives is learned at launch, no DNS asked" \
	box curl -sS --max-time 20 --noproxy '*' http://hosts.wild.test/hello.txt
assert_contains "$T_OUT" '^hello-other$'
assert_fails "the upstream was not asked for it" upstream_asked hosts.wild.test

# Hostile clients.
assert_fails "an allowed TLS name pinned to another learned address is closed" \
	box sh -c 'getent ahostsv4 other.test >/dev/null && curl -sS --max-time 20 --noproxy "*" --cacert "$1" --resolve allowed.test:443:10.200.0.3 https://allowed.test/hello.txt' sh "$CA"
assert_not_contains "$T_OUT" hello-other "no byte of the other server's answer"
assert_event "the refusal names the name, the address and why" \
	'.event.action == "proxy-transparent" and .event.outcome == "failure" and .destination.domain == "allowed.test" and .destination.ip == "10.200.0.3" and .rule.name == "transparent:not-learned"'
# Silent past the proxy's first-bytes wait (1 s), then a name: still read, still decided by it.
assert_fails "a late ClientHello for an allowed name, sent to another name's learned address, is closed" \
	box python3 "$CLIENT" late other.test 443 allowed.test "$CA" 1.5
assert_not_contains "$T_OUT" hello-other "no byte of the other server's answer"
assert_event "its refusal names the late name, the address and why" \
	'.event.action == "proxy-transparent" and .event.outcome == "failure" and .destination.domain == "allowed.test" and .destination.ip == "10.200.0.3" and .bpfbox.transparent.kind == "tls" and .rule.name == "transparent:not-learned" and .process.name == "python3" and .process.pid > 1'
assert_succeeds "a late ClientHello for the name the address was learned for goes through" \
	box python3 "$CLIENT" late other.test 443 other.test "$CA" 1.5
assert_contains "$T_OUT" '^ok hello-other$'
assert_fails "an allowed Host pinned to another learned address gets srt's 403" \
	box sh -c 'getent ahostsv4 other.test >/dev/null && curl -fsS --max-time 20 --noproxy "*" --resolve allowed.test:80:10.200.0.3 http://allowed.test/hello.txt'
assert_contains "$T_OUT" '403' "a 403"
assert_fails "a foreign Host on a learned address gets srt's 403" \
	box curl -sS -f --max-time 20 --noproxy '*' -H 'Host: other.test' http://allowed.test/hello.txt
assert_contains "$T_OUT" '403'
assert_event "with an event naming the Host and the address" \
	'.event.action == "proxy-transparent" and .destination.domain == "other.test" and (.destination.ip == "10.200.0.2" or .destination.ip == "fd00:200::2") and .rule.name == "transparent:not-learned"'
assert_succeeds "the 403 is srt's answer" \
	box curl -sS --max-time 20 --noproxy '*' -D - -H 'Host: denied.test' http://allowed.test/hello.txt
assert_contains "$T_OUT" 'X-Proxy-Error: blocked-by-allowlist'
assert_contains "$T_OUT" 'Connection blocked by network allowlist'
assert_event "a denied Host is refused by the policy's rule" \
	'.event.action == "proxy-transparent" and .destination.domain == "denied.test" and .rule.name == "default:network"'
assert_fails "an address never learned is refused in the kernel" \
	box curl -sS --max-time 20 --noproxy '*' --resolve allowed.test:80:10.200.0.9 http://allowed.test/hello.txt
assert_event "as today, with the kernel's event" \
	'.event.action == "connect" and .destination.ip == "10.200.0.9" and .destination.port == 80'
assert_fails "a denied name does not resolve, so there is nothing to connect to" \
	box curl -sS --max-time 20 --noproxy '*' http://denied.test/hello.txt
assert_contains "$T_OUT" '(resolve|Could not)'
assert_succeeds "clients using the proxy variables work as before" \
	box curl -sS --max-time 20 http://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "through the explicit proxy" '.event.action == "proxy-http" and .destination.domain == "allowed.test"'

# What the upstream resolver gets is rebuilt from the question; types beyond addresses are refused.
if t_share 1; then
	t_exec box sh -c "python3 $CLIENT resolve udp 192.0.2.53 53 AlLoWeD.TeSt; python3 $CLIENT resolve tcp 192.0.2.53 53 allowed.test TXT; python3 $CLIENT resolve udp 192.0.2.53 53 allowed.test ANY; python3 $CLIENT resolve udp 192.0.2.53 53 allowed.test NULL"
	assert_contains "$T_OUT" '^ok rcode=0 from=192\.0\.2\.53:53 addrs=10\.200\.0\.2$' "a name in mixed case is answered"
	assert_eq 3 "$(grep -c '^ok rcode=5 ' "$T_OUT")" "TXT, ANY and NULL for an allowed name get REFUSED"
	assert_fails "the upstream saw the name in lower case only" grep -q 'AlLoWeD' "$DNSLOG"
	assert_fails "the upstream was never asked a TXT, ANY or NULL query" grep -Eq 'query\[(TXT|ANY|NULL|type=10|type=255)\]' "$DNSLOG"
	assert_event "the refused type is an event naming the rule" \
		'.event.action == "dns-query" and .dns.question.name == "allowed.test" and .dns.question.type == "TXT" and .dns.response_code == "REFUSED" and .rule.name == "default:dnsQueryTypes" and .event.outcome == "failure"'
	# An allowed name whose answer leads through a CNAME to a denied one: NXDOMAIN, and said why.
	t_exec box python3 "$CLIENT" resolve udp 192.0.2.53 53 front.wild.test
	assert_contains "$T_OUT" '^ok rcode=3 ' "a CNAME to a name deniedDomains names: NXDOMAIN"
	assert_event "...an event naming the denied name's rule and the CNAME" \
		'.event.action == "dns-query" and .dns.question.name == "front.wild.test" and .event.outcome == "failure" and .rule.name == "deniedDomains:bad.wild.test" and (.event.reason | test("CNAME to bad.wild.test"))'
	# A flood of queries: each answered, but not a line each (a burst of 200, then 50 a second);
	# the rest are counted into folded lines (at most two a second), so every refusal is still
	# accounted for.
	FLOG=$T_TMP/flood.ndjson
	t0=$SECONDS
	t_exec "$BPFBOX" exec --policy "$P" --log-file "$FLOG" -- python3 -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
n = 0
for i in range(1000):
    s.sendto(struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + b"\x06denied\x04test\x00" + struct.pack(">HH", 1, 1),
             ("192.0.2.53", 53))
    d, _ = s.recvfrom(4096)
    n += d[3] & 15 == 3
print("nxdomain", n)'
	took=$((SECONDS - t0 + 1))
	assert_contains "$T_OUT" '^nxdomain 1000$' "flood: all 1000 denied queries are answered NXDOMAIN"
	lines=$(jq -s '[.[] | select(.event.action == "dns-query")] | length' "$FLOG")
	assert_succeeds "flood: at most 200 + 50 a second query lines, and the folded ones ($lines in $took s)" \
		test "$lines" -le $((200 + 52 * took + 2))
	assert_eq 1000 "$(jq -s '[.[] | select(.event.action == "dns-query" and .event.outcome == "failure") | (.bpfbox.count // 1)] | add' "$FLOG")" \
		"flood: the lines and the folded lines' counts add up to the 1000 refusals"
	assert_succeeds "flood: a folded line says so" jq -e -s \
		'any(.[]; .event.action == "dns-query" and .bpfbox.folded == true and .bpfbox.count > 1 and (.message | test("^denied [0-9]+ more DNS queries, folded")))' "$FLOG"
	assert_succeeds "flood: every line validates against the schema" \
		python3 "$T_ROOT/tests/tools/validate-events.py" "$FLOG"
else
	t_skip "the rebuilt query, the type allow-list, a flood of queries" "its subject is the resolver in user space: it runs in $(t_share_where 1)"
fi

# Requests servers read although their first line is loose (docs/network.md, "The transparent path"):
# each is decided by its Host; none reaches the server with a Host the policy denies.
if t_share 1; then
	DENIED_BEFORE=$(grep -c 'host=denied.test' "$SERVE_LOG" 2>/dev/null)
	for req in 'GET /hello.txt HTTP/1.1 \r\nHost: denied.test\r\nConnection: close\r\n\r\n' \
		'GET\t/hello.txt HTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n' \
		'\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n' \
		'GET /hello.txt\x0bHTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n'; do
		t_exec box python3 "$CLIENT" send allowed.test 80 "$req"
		assert_contains "$T_OUT" '^ok HTTP/1.1 403' "a loose request line with a denied Host gets the 403: $req"
	done
	t_exec box python3 "$CLIENT" send allowed.test 80 'GET /{20000*a} HTTP/1.1\r\nHost: denied.test\r\n\r\n'
	# The proxy answers 431 and closes while the client still sends: it may see the reset first.
	assert_contains "$T_OUT" '^(ok HTTP/1.1 431|ok closed|ECONNRESET|EPIPE)' "a request line longer than the sniff buffer is refused (431), not relayed"
	t_exec box python3 "$CLIENT" send allowed.test 80 'GET /hello.txt HTTP/1.1\nHost: denied.test\n\n'
	assert_contains "$T_OUT" '^ok HTTP/1.1 400' "bare LF line ends are refused (400)"
	assert_eq "${DENIED_BEFORE:-0}" "$(grep -c 'host=denied.test' "$SERVE_LOG" 2>/dev/null)" \
		"the server never read a request with the denied Host"
	assert_event "the loose request's refusal names the denied Host" \
		'.event.action == "proxy-transparent" and .destination.domain == "denied.test" and .rule.name == "default:network" and .bpfbox.transparent.kind == "http"'
	t_exec box python3 "$CLIENT" send allowed.test 80 '\r\nGET\t/hello.txt  HTTP/1.1 \r\nHost: allowed.test\r\nConnection: close\r\n\r\n'
	assert_contains "$T_OUT" '^ok HTTP/1.1 200' "the same loose form with the allowed Host is served"
	assert_succeeds "the server read it in the strict form bpfbox rebuilt" \
		grep -q '^GET /hello.txt HTTP/1.1 host=allowed.test$' "$SERVE_LOG"
else
	t_skip "loose request lines on the transparent path" "its subject is the proxy in user space: it runs in $(t_share_where 1)"
fi

# The sandbox's resolver caches answers (docs/network.md, "The sandbox's DNS"): a repeated
# question within its TTL never reaches dnsmasq, one past its TTL does, and a name a live
# update denies is refused though its answer was cached. The names above carry TTLs
# (dnsmasq's own host-records have TTL 0, which nothing caches).
if t_share 2; then
	CLOG=$T_TMP/cache.ndjson
	PC=$T_TMP/policy-cache.json
	cat >"$PC" <<JSON
{
  "network": { "allowedDomains": ["cache.test", "short.test", "revoked.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] }
}
JSON
	asked() { grep -c "query\[A\] $1 from" "$DNSLOG"; }
	t_exec "$BPFBOX" exec --policy "$PC" --log-file "$CLOG" -- \
		sh -c 'getent ahostsv4 cache.test && getent ahostsv4 CaChE.TeSt && getent ahostsv4 cache.test'
	assert_eq 0 "$T_RC" "cache: three lookups of one name in one sandbox are answered"
	assert_eq 3 "$(grep -Ec '^10\.200\.0\.2 +STREAM' "$T_OUT")" "cache: each with the address"
	assert_eq 1 "$(asked cache.test)" "cache: dnsmasq was asked once (the repeats came from the cache)"
	LOG=$CLOG assert_event "cache: a repeat's event says it came from the cache, with its addresses" \
		'.event.action == "dns-query" and .dns.question.name == "cache.test" and .bpfbox.dns.cached == true and .event.outcome == "success" and .dns.response_code == "NOERROR" and .bpfbox.dns.addresses == 1'
	LOG=$CLOG assert_event "cache: the first answer's event has no cached field" \
		'.event.action == "dns-query" and .dns.question.name == "cache.test" and (.bpfbox.dns | has("cached") | not)'
	t_exec "$BPFBOX" exec --policy "$PC" --log-file "$CLOG" -- getent ahostsv4 cache.test
	assert_eq 2 "$(asked cache.test)" "cache: another sandbox has its own cache (dnsmasq asked again)"

	t_exec "$BPFBOX" exec --policy "$PC" --log-file "$CLOG" -- \
		sh -c 'getent ahostsv4 short.test && getent ahostsv4 short.test && sleep 6 && getent ahostsv4 short.test'
	assert_eq 3 "$(grep -Ec '^10\.200\.0\.2 +STREAM' "$T_OUT")" "cache: a name with a 4 s TTL answered three times"
	assert_eq 2 "$(asked short.test)" "cache: dnsmasq asked once within the TTL, and again past it"

	# A live update revokes a name whose answer is cached: the next query is refused (NXDOMAIN).
	mkfifo "$T_TMP/cache.ctl"
	"$BPFBOX" exec --policy "$PC" --control-fd 3 --log-file "$CLOG" -- sh -c '
		getent ahostsv4 revoked.test >/dev/null && getent ahostsv4 revoked.test >/dev/null && echo cached-ok
		for _ in $(seq 600); do [ -e "$1" ] && break; sleep 0.1; done
		if getent ahostsv4 revoked.test; then echo after-update-answered; else echo after-update-refused; fi
		getent ahostsv4 cache.test >/dev/null && echo kept-answered' sh "$T_TMP/cache.go" \
		3<"$T_TMP/cache.ctl" >"$T_TMP/cache.out" 2>&1 </dev/null &
	cpid=$!
	exec {cfd}>"$T_TMP/cache.ctl"
	cache_out() { grep -q "$1" "$T_TMP/cache.out"; }
	updated() { grep -q '"policy-updated"' "$CLOG"; }
	for _ in $(seq 300); do cache_out cached-ok && break; sleep 0.1; done
	assert_succeeds "cache: revoked.test is answered twice before the update" cache_out cached-ok
	(jq -c '.network.allowedDomains = ["cache.test", "short.test"]' "$PC" >&"$cfd") 2>/dev/null
	for _ in $(seq 300); do updated && break; sleep 0.1; done
	assert_succeeds "cache: the live update is applied" updated
	touch "$T_TMP/cache.go"
	for _ in $(seq 300); do cache_out kept-answered && break; sleep 0.1; done
	exec {cfd}>&-
	wait "$cpid"
	assert_succeeds "cache: after the update the revoked name is refused, though its answer was cached" \
		cache_out after-update-refused
	assert_succeeds "cache: a name the update kept is still answered" cache_out kept-answered
	LOG=$CLOG assert_event "cache: the refusal is an event (NXDOMAIN, default rule)" \
		'.event.action == "dns-query" and .dns.question.name == "revoked.test" and .event.outcome == "failure" and .dns.response_code == "NXDOMAIN"'
	assert_eq 1 "$(asked revoked.test)" "cache: dnsmasq heard of revoked.test once"
	assert_succeeds "cache: every event line validates against the schema" \
		python3 "$T_ROOT/tests/tools/validate-events.py" "$CLOG"
else
	t_skip "the resolver's cache" "its subject is the resolver in user space: it runs in $(t_share_where 2)"
fi

# "transparent": false: port 53 is refused in the kernel, no resolver runs.
PO=$T_TMP/policy-opaque.json
jq '. + {bpfbox: {network: {transparent: false}}}' "$P" >"$PO"
assert_fails "with transparent off, DNS is refused in the kernel" \
	"$BPFBOX" exec --policy "$PO" --log-file "$LOG" -- python3 "$CLIENT" resolve udp 192.0.2.54 53 allowed.test
assert_contains "$T_OUT" '^EPERM'
assert_event "as an event, as before" \
	'.event.action == "sendmsg" and .destination.ip == "192.0.2.54" and .destination.port == 53'
assert_fails "with transparent off, curl --noproxy '*' to an allowed name fails" \
	"$BPFBOX" exec --policy "$PO" --log-file "$LOG" -- curl -sS --max-time 20 --noproxy '*' http://allowed.test/hello.txt
assert_not_contains "$T_OUT" hello-remote

assert_succeeds "every event line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"
