#!/usr/bin/env bash
# bpfbox.network.parentProxy: bpfbox's proxy reaches allowed destinations
# through the host's proxy (tinyproxy in the namespace playing the internet,
# with Basic authentication, logging every request). Explicit clients (curl
# with the proxy variables, HTTP and HTTPS) and transparent ones (curl
# --noproxy '*', node fetch, raw TCP) all go through it by name: tinyproxy's
# log shows exactly those requests and nothing for denied names; the
# sandbox's DNS answers allowed names with synthesized addresses, so the
# upstream dnsmasq is asked nothing; the credentials never reach bpfbox's log.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# Its subject is the parent proxy handshake in user space, not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 1
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"

# ip netns exec lays /etc/netns/bbremote/* over /etc: tinyproxy's own names, for this file only.
trap 'rc=$?; rm -rf /etc/netns/bbremote; net_cleanup; (exit $rc); t_summary' EXIT

command -v dnsmasq >/dev/null || t_skip_all "dnsmasq is not installed (tools/install-deps.sh)"
command -v tinyproxy >/dev/null || t_skip_all "tinyproxy is not installed (tools/install-deps.sh)"

CLIENT=$T_ROOT/tests/vm/servers/client.py
LOG=$T_TMP/log.ndjson
DNSLOG=$T_TMP/dnsmasq.log
TPLOG=$T_TMP/tinyproxy/tinyproxy.log
PW=s3cr3t-pw-66
# base64 of "bbuser:$PW", as the Proxy-Authorization header carries it.
PW64=$(printf 'bbuser:%s' "$PW" | base64)
mkdir -p "$T_TMP/www" "$T_TMP/tls" "$T_TMP/tinyproxy" /etc/netns/bbremote
chmod 777 "$T_TMP/tinyproxy"
echo hello-remote >"$T_TMP/www/hello.txt"
CA=$T_TMP/tls/ca.pem

P=$T_TMP/policy.json
cat >"$P" <<JSON
{
  "network": { "allowedDomains": ["allowed.test", "ssh.test:22"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] },
  "bpfbox": { "network": { "parentProxy": "http://bbuser:$PW@10.200.0.2:3128" } }
}
JSON
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }

assert_succeeds "a test CA and server certificate are made" \
	"$T_ROOT/tests/vm/servers/make-ca.sh" "$T_TMP/tls" allowed.test
assert_succeeds "a remote network namespace is set up" net_remote_up
ip -n bbremote addr add 10.200.0.3/24 dev bbveth1
assert_succeeds "dnsmasq answers in the remote namespace" net_dnsmasq "$DNSLOG" \
	--host-record=allowed.test,10.200.0.2 --host-record=ssh.test,10.200.0.2 --host-record=denied.test,10.200.0.3
assert_succeeds "HTTP, HTTPS and an ssh-style echo in the namespace" \
	net_serve bbremote http 10.200.0.2 80 "$T_TMP/www" , \
	https 10.200.0.2 443 "$T_TMP/www" "$T_TMP/tls/server.pem" "$T_TMP/tls/server.key" , echo 10.200.0.2 22
# tinyproxy resolves from its own hosts file, never from dnsmasq: the query log is bpfbox's alone.
printf '127.0.0.1 localhost\n10.200.0.2 allowed.test ssh.test\n10.200.0.3 denied.test\n' >/etc/netns/bbremote/hosts
echo "nameserver 127.0.0.1" >/etc/netns/bbremote/resolv.conf
cat >"$T_TMP/tinyproxy/tinyproxy.conf" <<CONF
Port 3128
Listen 10.200.0.2
Timeout 30
LogFile "$TPLOG"
LogLevel Connect
MaxClients 20
Allow 10.200.0.0/24
BasicAuth bbuser $PW
CONF
ip netns exec bbremote tinyproxy -d -c "$T_TMP/tinyproxy/tinyproxy.conf" >>"$T_TMP/servers.log" 2>&1 &
NET_PIDS+=($!)
tinyproxy_up() {
	for _ in $(seq 100); do
		timeout 2 bash -c '</dev/tcp/10.200.0.2/3128' 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
assert_succeeds "tinyproxy listens in the namespace" tinyproxy_up
net_resolver_is 10.200.0.2
# The request lines tinyproxy logged, in order.
tp_requests() { sed -n 's/.*Request (file descriptor [0-9]*): //p' "$TPLOG"; }

assert_succeeds "policy check accepts the parent proxy" "$BPFBOX" policy check "$P"
assert_succeeds "policy show prints it" "$BPFBOX" policy show "$P"
assert_contains "$T_OUT" 'http://\*\*\*@10\.200\.0\.2:3128' "with the credentials replaced"
assert_not_contains "$T_OUT" "$PW" "and never the password"
BAD=$T_TMP/bad.json
jq '.bpfbox.network.parentProxy = "http://bbuser:'"$PW"'@10.200.0.2:3128/path"' "$P" >"$BAD"
assert_fails "a parent proxy URL with a path is refused" "$BPFBOX" policy check "$BAD"
assert_contains "$T_OUT" 'bpfbox\.network\.parentProxy' "naming the JSON path"
assert_not_contains "$T_OUT" "$PW" "without repeating the password"
assert_status "and exec does not run the command (125)" 125 "$BPFBOX" exec --policy "$BAD" -- true

# Explicit clients: the proxy variables lead to bpfbox's proxy, which chains.
assert_succeeds "curl with the proxy variables over HTTP reaches an allowed name" \
	box curl -sS --max-time 20 http://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a proxy-http event through the parent (redacted)" \
	'.event.action == "proxy-http" and .destination.domain == "allowed.test" and .event.outcome == "success" and .bpfbox.proxy.parent == "http://***@10.200.0.2:3128"'
assert_succeeds "curl with the proxy variables over HTTPS" \
	box curl -sS --max-time 20 --cacert "$CA" https://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a proxy-connect event through the parent" \
	'.event.action == "proxy-connect" and .destination.domain == "allowed.test" and .destination.port == 443 and .bpfbox.proxy.parent == "http://***@10.200.0.2:3128"'
assert_fails "a denied name is refused by bpfbox before the parent" \
	box curl -fsS --max-time 20 http://denied.test/hello.txt
assert_contains "$T_OUT" '403'
assert_event "with bpfbox's refusal event" \
	'.event.action == "proxy-http" and .destination.domain == "denied.test" and .event.outcome == "failure" and .rule.name == "default:network"'

# Transparent clients: the sandbox's DNS synthesizes, the kernel redirects, the proxy chains by name.
assert_succeeds "getent resolves an allowed name" box getent ahostsv4 allowed.test
assert_contains "$T_OUT" '^198\.1[89]\.[0-9]+\.[0-9]+ ' "to a synthesized address (198.18.0.0/15)"
assert_event "the answer is an event marked synthesized" \
	'.event.action == "dns-query" and .dns.question.name == "allowed.test" and .bpfbox.dns.synthesized == true and .bpfbox.dns.addresses == 1'
assert_fails "a denied name does not resolve" box getent ahostsv4 denied.test
assert_succeeds "curl --noproxy '*' over HTTP reaches an allowed name" \
	box curl -sS --max-time 20 --noproxy '*' http://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a transparent HTTP event through the parent" \
	'.event.action == "proxy-transparent" and .bpfbox.transparent.kind == "http" and .destination.domain == "allowed.test" and (.destination.ip | test("^198\\.1[89]\\.|^2001:2::")) and .bpfbox.proxy.parent == "http://***@10.200.0.2:3128"'
assert_succeeds "curl --noproxy '*' over HTTPS reaches an allowed name" \
	box curl -sS --max-time 20 --noproxy '*' --cacert "$CA" https://allowed.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "as a transparent TLS event through the parent" \
	'.event.action == "proxy-transparent" and .bpfbox.transparent.kind == "tls" and .destination.domain == "allowed.test" and .bpfbox.proxy.parent != null'
NREQ=6
if command -v node >/dev/null; then
	assert_succeeds "node's fetch (no proxy) reaches an allowed name over HTTP and HTTPS" \
		box env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy NODE_EXTRA_CA_CERTS="$CA" node -e '
			(async () => {
				for (const u of ["http://allowed.test/hello.txt", "https://allowed.test/hello.txt"])
					process.stdout.write((await (await fetch(u)).text()));
			})().catch((e) => { console.error(e); process.exit(1); });'
	assert_eq 2 "$(grep -c '^hello-remote$' "$T_OUT")" "both answers arrived"
	NREQ=8
else
	t_skip "node fetch" "node is not installed"
fi
assert_succeeds "raw TCP to an allowed name and port (no name in the bytes)" \
	box python3 "$CLIENT" peer ssh.test 22
assert_contains "$T_OUT" 'SSH-2\.0-bpfbox-test-echo$' "the server's banner came through the parent"
assert_event "as a nameless transparent event, sent to the parent by the name its address stands for" \
	'.event.action == "proxy-transparent" and .bpfbox.transparent.kind == "tcp" and .destination.domain == "ssh.test" and .destination.port == 22 and .bpfbox.proxy.parent != null'

# What the parent saw: exactly the chained requests, by name, and nothing else.
# A transparent HTTP client slower than the proxy's 1 s sniff window (TCG
# under load) is decided by its address, learned for allowed.test, and
# tunnelled by that name: the same destination by name, in the other form.
# When its request then arrives, the late check decides it again by its Host
# and forwards it as a GET: the tunnel and that GET are one request.
tp_requests | awk -v tunnel='CONNECT allowed.test:80 HTTP/1.1' -v get='GET http://allowed.test/hello.txt HTTP/1.1' '
	$0 == tunnel { pending = 1; next }
	pending { pending = 0; if ($0 != get) print get }
	{ print }
	END { if (pending) print get }' >"$T_TMP/requests.txt"
{
	echo "GET http://allowed.test/hello.txt HTTP/1.1"
	echo "CONNECT allowed.test:443 HTTP/1.1"
	echo "GET http://allowed.test/hello.txt HTTP/1.1"
	echo "CONNECT allowed.test:443 HTTP/1.1"
	if [ "$NREQ" = 8 ]; then
		echo "GET http://allowed.test/hello.txt HTTP/1.1"
		echo "CONNECT allowed.test:443 HTTP/1.1"
	fi
	echo "CONNECT ssh.test:22 HTTP/1.1"
} >"$T_TMP/expected.txt"
if diff -u "$T_TMP/expected.txt" "$T_TMP/requests.txt" >"$T_TMP/requests.diff"; then
	t_ok "tinyproxy's log shows exactly the chained requests, in order"
else
	t_fail "tinyproxy's log shows exactly the chained requests, in order" "$(cat "$T_TMP/requests.diff")"
fi
assert_fails "nothing reached the parent for the denied name" grep -q denied.test "$TPLOG"
assert_fails "dnsmasq was not asked for allowed.test (sent to the parent)" net_upstream_asked "$DNSLOG" allowed.test
assert_fails "nor for ssh.test" net_upstream_asked "$DNSLOG" ssh.test
assert_fails "nor for the denied name" net_upstream_asked "$DNSLOG" denied.test
assert_fails "the password is nowhere in bpfbox's log" grep -qF "$PW" "$LOG"
assert_fails "nor its Basic encoding" grep -qF "$PW64" "$LOG"

# The parent's refusal: wrong credentials are the parent's 401/407, reported, never a direct dial.
PB=$T_TMP/wrongpw.json
jq '.bpfbox.network.parentProxy = "http://bbuser:wrong-pw@10.200.0.2:3128"' "$P" >"$PB"
assert_fails "with wrong credentials an HTTPS tunnel fails" \
	"$BPFBOX" exec --policy "$PB" --log-file "$LOG" -- curl -sS --max-time 20 --cacert "$CA" https://allowed.test/hello.txt
assert_not_contains "$T_OUT" hello-remote
assert_event "with an event saying what the parent answered" \
	'.event.action == "proxy-connect" and .destination.domain == "allowed.test" and ((.error.message // "") | test("parent proxy answered 40[17]"))'
assert_fails "and that password is not logged either" grep -qF wrong-pw "$LOG"

assert_succeeds "every event line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"
