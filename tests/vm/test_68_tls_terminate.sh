#!/usr/bin/env bash
# network.tlsTerminate (srt's request inspection, docs/reference srt-compat section 7):
# the proxy ends the sandbox's TLS for allowed names not in excludeDomains, with
# leaves from a per-sandbox CA (or the policy's own), and sees the requests
# inside. Real clients (curl, python3 urllib and ssl, git over smart HTTPS, node
# fetch on the transparent path) work with no extra flags through the trust
# bundle bpfbox names in eleven variables; each request inside is an event; an
# excluded name stays an opaque tunnel with the real certificate; an upstream
# whose certificate fails verification is a 502 and never sees the request;
# domain fronting (a Host other than the tunnel's name) is a 421; TRACE and
# TRACK are 405; stripResponseHeaders applies inside the tunnel;
# requireHostMatch, refuseOpaqueTunnels and maxTunnels answer as srt does. The
# servers (tests/vm/servers/serve.py, in a network namespace) log what they
# read: the assertions look there. Nothing is left behind: no bundle, cgroup,
# registry entry, TMPDIR or map entry; the host's trust store is unchanged.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# Its subject is the proxy in user space, not the kernel: `make vm-test` runs it on one kernel
# only (BPFBOX_KERNEL_SHARE, tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 2
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
trap 'rc=$?; net_cleanup; (exit $rc); t_summary' EXIT

command -v dnsmasq >/dev/null || t_skip_all "dnsmasq is not installed (tools/install-deps.sh)"

CLIENT=$T_ROOT/tests/vm/servers/client.py
DNSLOG=$T_TMP/dnsmasq.log
TLS=$T_TMP/tls
CA=$TLS/ca.pem
W=$T_TMP/work
WWW=$T_TMP/www
GITSRV=$T_TMP/git
OWN=$T_TMP/own
# What the HTTP servers read: "<request line> host=<Host>" (tests/vm/servers/serve.py).
export SERVE_LOG=$T_TMP/requests.log
mkdir -p "$TLS" "$W" "$WWW" "$GITSRV" "$OWN"
: >"$SERVE_LOG"
echo hello-remote >"$WWW/hello.txt"
for c in curl urllib two node transparent hm-loose tunnel; do
	echo "via-$c" >"$WWW/$c.txt"
done
VARS="NODE_EXTRA_CA_CERTS SSL_CERT_FILE CURL_CA_BUNDLE REQUESTS_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO AWS_CA_BUNDLE CARGO_HTTP_CAINFO DENO_CERT CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE NIX_SSL_CERT_FILE npm_config_cafile"

# handshakeTimeoutMs: a TLS client under TCG on a busy host can take more than srt's 10 s between
# the CONNECT's 200 and its ClientHello (git loads the whole CA bundle first); the timeout is not this test's subject.
P=$T_TMP/policy.json
cat >"$P" <<JSON
{
  "network": {
    "allowedDomains": ["remote.test", "*.remote.test", "excluded.test", "badcert.test", "wrongname.test"],
    "deniedDomains": ["blocked.remote.test"],
    "stripResponseHeaders": ["X-Secret"],
    "tlsTerminate": { "excludeDomains": ["excluded.test"], "extraCaCertPaths": ["$CA"], "handshakeTimeoutMs": 60000 }
  },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [], "allowGitConfig": true },
  "bpfbox": { "network": { "transparent": true } }
}
JSON
PH=$T_TMP/policy-hostmatch.json
jq '.network.requireHostMatch = true' "$P" >"$PH"
PO=$T_TMP/policy-opaque.json
jq '.network.refuseOpaqueTunnels = true' "$P" >"$PO"
PM=$T_TMP/policy-tunnels.json
jq '.network.tlsTerminate.maxTunnels = 2' "$P" >"$PM"
PC=$T_TMP/policy-own-ca.json
jq --arg c "$OWN/ca.pem" --arg k "$OWN/ca.key" \
	'.network.tlsTerminate += {caCertPath: $c, caKeyPath: $k} | .filesystem.denyRead += [$k]' "$P" >"$PC"

# Each part of the file logs to its own file, so that an event assertion sees that part's runs only.
LOG=$T_TMP/setup.ndjson
part() { LOG=$T_TMP/$1.ndjson; }
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }
boxp() { # POLICY CMD...
	local p=$1
	shift
	"$BPFBOX" exec --policy "$p" --log-file "$LOG" -- "$@"
}
# The request's event inside a terminated tunnel. The spec says the line carries
# "tls":"terminated"; where in the event it sits is left open: any "tls" key says it.
TLS_T='any(.. | objects | .tls; . == "terminated")'
term_ev() { # DOMAIN PORT METHOD STATUS
	echo "$TLS_T and .destination.domain == \"$1\" and .destination.port == $2 and .http.request.method == \"$3\" and .http.response.status_code == $4"
}
# A status line and srt's X-Proxy-Error header, in curl -i / -v output; HTTP/2 spells them in lower case.
status_re() { echo "^(< )?HTTP/[0-9.]+ $1( |\$)"; }
perr_re() { echo "^(< )?[Xx]-[Pp]roxy-[Ee]rror: $1"; }
# The PEM of each certificate in BUNDLE whose subject CN starts "bpfbox sandbox CA".
sandbox_ca() {
	openssl crl2pkcs7 -nocrl -certfile "$1" 2>/dev/null | openssl pkcs7 -print_certs 2>/dev/null |
		awk '/^subject=/ { want = ($0 ~ /CN ?= ?bpfbox sandbox CA/) }
			/-----BEGIN CERTIFICATE-----/ { pem = 1 }
			want && pem { print }
			/-----END CERTIFICATE-----/ { pem = 0 }'
}
sandbox_cgroups() { find /sys/fs/cgroup/bpfbox -mindepth 1 -maxdepth 1 -type d -name 'bb-*' 2>/dev/null; }
count_state() { # cgroups registry tmpdirs map-entries
	echo "$(sandbox_cgroups | wc -l)" \
		"$(find /run/bpfbox/sandboxes -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" \
		"$(bpfbox_new_tmpdirs "$T_TMP/tmpdirs.mark")" "$(bpfbox_map_entries)"
}
# The host's trust store: names, link targets and contents.
trust_sum() {
	(cd /etc/ssl/certs 2>/dev/null && find . -printf '%p %y %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r cat) | sha256sum
}
served() { grep -Eq "$1" "$SERVE_LOG"; }
gone() { [ -n "$1" ] && [ ! -e "$1" ]; } # a path was printed and no longer exists

# Certificates: the test CA and its leaf for the good names, a self-signed one
# no CA knows (badcert.test), one of the test CA for another name (served as wrongname.test).
assert_succeeds "a test CA and a certificate for the remote names are made" \
	"$T_ROOT/tests/vm/servers/make-ca.sh" "$TLS" remote.test www.remote.test other.remote.test \
	blocked.remote.test two.remote.test excluded.test
assert_succeeds "a self-signed certificate no CA knows is made" \
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=badcert.test \
	-addext subjectAltName=DNS:badcert.test -keyout "$TLS/bad.key" -out "$TLS/bad.pem"
wrong_name_cert() {
	openssl req -newkey rsa:2048 -nodes -subj /CN=elsewhere.test \
		-keyout "$TLS/wrong.key" -out "$TLS/wrong.csr" 2>/dev/null &&
		printf 'subjectAltName=DNS:elsewhere.test\n' >"$TLS/wrong.cnf" &&
		openssl x509 -req -in "$TLS/wrong.csr" -CA "$CA" -CAkey "$TLS/ca.key" -CAcreateserial \
			-days 2 -extfile "$TLS/wrong.cnf" -out "$TLS/wrong.pem" 2>/dev/null
}
assert_succeeds "a certificate of the test CA for another name (elsewhere.test) is made" wrong_name_cert

# A bare repository for git's smart HTTP.
git init -q --bare "$GITSRV/repo.git"
git clone -q "$GITSRV/repo.git" "$T_TMP/seed" 2>/dev/null
echo "cloned through the terminating proxy" >"$T_TMP/seed/README"
git -C "$T_TMP/seed" add README
git -C "$T_TMP/seed" -c user.name=t -c user.email=t@t commit -qm init
git -C "$T_TMP/seed" push -q origin HEAD:master 2>/dev/null
git -C "$GITSRV/repo.git" symbolic-ref HEAD refs/heads/master

assert_succeeds "a remote network namespace is set up" net_remote_up
hr=()
for n in remote.test www.remote.test other.remote.test blocked.remote.test two.remote.test \
	excluded.test badcert.test wrongname.test; do
	hr+=("--host-record=$n,$NET_REMOTE")
done
assert_succeeds "dnsmasq answers the remote names in the namespace" net_dnsmasq "$DNSLOG" "${hr[@]}"
assert_succeeds "HTTP :80 and HTTPS :443 adding X-Secret and X-Keep, git over HTTPS :8443, bad certificates :9443 :9444" \
	net_serve bbremote hdr 0.0.0.0 80 "$WWW" , hdrs 0.0.0.0 443 "$WWW" "$TLS/server.pem" "$TLS/server.key" , \
	githttps 0.0.0.0 8443 "$GITSRV" "$TLS/server.pem" "$TLS/server.key" , \
	hdrs 0.0.0.0 9443 "$WWW" "$TLS/bad.pem" "$TLS/bad.key" , \
	hdrs 0.0.0.0 9444 "$WWW" "$TLS/wrong.pem" "$TLS/wrong.key"
# Names come from dnsmasq only, for the proxy and for the sandbox's resolver (the transparent path).
net_resolver_is "$NET_REMOTE"
TRUST0=$(trust_sum)

assert_succeeds "policy check accepts tlsTerminate and the request rules" "$BPFBOX" policy check "$P"

# 1. The trust bundle: eleven variables, one readable file in the sandbox's TMPDIR,
# the system's CAs and one sandbox CA; gone after the run.
part env
# shellcheck disable=SC2016 # expanded inside the sandbox
assert_succeeds "the sandbox prints its CA variables and copies the bundle" \
	box sh -c 'for v in $1; do printf "%s=%s\n" "$v" "$(printenv "$v")"; done
		echo "TMPDIR=$TMPDIR"
		[ -r "$SSL_CERT_FILE" ] && echo bundle-readable
		cp "$SSL_CERT_FILE" "$2/bundle1.pem"' sh "$VARS" "$W"
ENVOUT=$T_TMP/env.txt
cp "$T_OUT" "$ENVOUT"
bpfbox_tmpdirs_mark "$T_TMP/tmpdirs.mark"
base=$(count_state)
bundle=$(sed -n 's/^SSL_CERT_FILE=//p' "$ENVOUT")
tmpdir=$(sed -n 's/^TMPDIR=//p' "$ENVOUT")
if [[ -n $tmpdir && $bundle == "$tmpdir"/?* ]]; then
	t_ok "the bundle ($bundle) lies in the sandbox's TMPDIR"
else
	t_fail "the bundle lies in the sandbox's TMPDIR" "SSL_CERT_FILE='$bundle'" "TMPDIR='$tmpdir'"
fi
for v in $VARS; do
	assert_eq "$bundle" "$(sed -n "s/^$v=//p" "$ENVOUT")" "$v names the bundle"
done
assert_contains "$ENVOUT" '^bundle-readable$' "the bundle is readable inside"
sys_n=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt 2>/dev/null)
assert_eq "$((${sys_n:-0} + 1))" "$(grep -c 'BEGIN CERTIFICATE' "$W/bundle1.pem" 2>/dev/null)" \
	"the bundle holds the system's ${sys_n:-0} CAs and one more"
sandbox_ca "$W/bundle1.pem" >"$T_TMP/sandbox-ca1.pem"
assert_eq 1 "$(grep -c 'BEGIN CERTIFICATE' "$T_TMP/sandbox-ca1.pem")" \
	"exactly one certificate of the bundle is the sandbox CA (subject CN \"bpfbox sandbox CA...\")"
assert_succeeds "the bundle is gone after the run" gone "$bundle"
assert_succeeds "and so is the TMPDIR it lay in" gone "$tmpdir"

# The ephemeral CA's key is in no file: looked for while a sandbox runs.
touch "$T_TMP/marker"
# shellcheck disable=SC2016 # expanded inside the sandbox
"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- \
	sh -c 'echo "$TMPDIR" >"$1/held"; while [ ! -e "$1/release" ]; do sleep 0.1; done' sh "$W" \
	>"$T_TMP/held.out" 2>&1 </dev/null &
held=$!
for _ in $(seq 300); do [ -s "$W/held" ] && break; sleep 0.1; done
assert_succeeds "a sandbox is held running" test -s "$W/held"
# The test's own files and the work tree (under /tmp when cloned there: a long walk over 9p) are not bpfbox's.
keys=$(find /tmp /run /var/tmp /dev/shm \( -path "$T_TMP" -o -path "$T_ROOT" \) -prune -o -type f -newer "$T_TMP/marker" -print0 2>/dev/null |
	xargs -0 -r grep -lE -- '-----BEGIN [A-Z ]*PRIVATE KEY-----' 2>/dev/null)
assert_eq "" "$keys" "while it runs no file made since it started (/tmp /run /var/tmp /dev/shm) holds a private key"
touch "$W/release"
wait "$held"
assert_succeeds "its TMPDIR, bundle and all, is gone after it" gone "$(cat "$W/held" 2>/dev/null)"

# 2. An allowed name, terminated on the explicit proxy: no client flag.
part term
assert_succeeds "curl https:// with HTTPS_PROXY as set, no --cacert" \
	box curl -sSv --max-time 20 https://remote.test/curl.txt
assert_contains "$T_OUT" '^via-curl$' "the answer arrives"
assert_contains "$T_OUT" 'issuer:.*CN ?= ?bpfbox sandbox CA' "curl saw a leaf issued by the sandbox CA"
assert_succeeds "the server read the request with Host remote.test" \
	served '^GET /curl\.txt HTTP/1\.[01] host=remote\.test(:443)?$'
assert_event "the request is an event: method, host, port, status, tls terminated" "$(term_ev remote.test 443 GET 200)"
assert_succeeds "python3 urllib https:// with the environment as set" \
	box python3 -c 'import urllib.request as u; print(u.urlopen("https://remote.test/urllib.txt", timeout=20).read().decode().strip())'
assert_contains "$T_OUT" '^via-urllib$'
assert_succeeds "the server read urllib's request with Host remote.test" \
	served '^GET /urllib\.txt HTTP/1\.[01] host=remote\.test(:443)?$'
# shellcheck disable=SC2016 # expanded inside the sandbox
assert_succeeds "python3 ssl through a CONNECT of its own, default trust" \
	box sh -c 'python3 "$1" connect remote.test 443 && cp "$SSL_CERT_FILE" "$2/bundle2.pem"' sh "$CLIENT" "$W"
assert_contains "$T_OUT" '^ok issuer=bpfbox sandbox CA' "getpeercert: issued by the sandbox CA"
sandbox_ca "$W/bundle2.pem" >"$T_TMP/sandbox-ca2.pem"
fp1=$(openssl x509 -in "$T_TMP/sandbox-ca1.pem" -noout -fingerprint -sha256 2>/dev/null)
fp2=$(openssl x509 -in "$T_TMP/sandbox-ca2.pem" -noout -fingerprint -sha256 2>/dev/null)
if [ -n "$fp1" ] && [ -n "$fp2" ] && [ "$fp1" != "$fp2" ]; then
	t_ok "each sandbox has its own CA"
else
	t_fail "each sandbox has its own CA" "first: '$fp1'" "second: '$fp2'"
fi
assert_succeeds "git clone https:// (smart HTTP) with the environment as set" \
	box git clone -q --template= https://remote.test:8443/repo.git "$W/clone" ||
	echo "# the proxy's events for :8443: $(jq -c 'select(.destination.port == 8443) | [.event.action, .http.request.method, .http.response.status_code, .error.message]' "$LOG" 2>/dev/null | tr '\n' ' ')"
assert_contains "$W/clone/README" '^cloned through the terminating proxy$' "the clone has the file"
assert_succeeds "the git server read git's POST with Host remote.test:8443" \
	served '^POST /repo\.git/git-upload-pack HTTP/1\.[01] host=remote\.test:8443$'
assert_event "git's POST is a terminated event on port 8443" "$(term_ev remote.test 8443 POST 200)"

# Each request inside one tunnel is its own line.
part two
assert_succeeds "curl fetches two URLs of one name (one connection when curl reuses it)" \
	box curl -sS --max-time 20 -w 'connects=%{num_connects}\n' https://two.remote.test/two.txt https://two.remote.test/two.txt
assert_eq 2 "$(grep -c '^via-two$' "$T_OUT")" "both answers arrived"
echo "# curl's new connections per URL: $(sed -n 's/^connects=//p' "$T_OUT" | xargs)"
assert_eq 2 "$(jq -s "[.[] | select($(term_ev two.remote.test 443 GET 200))] | length" "$LOG" 2>/dev/null)" \
	"two terminated request events for two.remote.test"

# 3. An excluded name is tunnelled: the real certificate, the test CA needed.
part excl
assert_succeeds "curl to an excluded name with --cacert of the test CA" \
	box curl -sSv --max-time 20 --cacert "$CA" https://excluded.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_contains "$T_OUT" 'issuer:.*CN ?= ?bpfbox-test-ca' "curl saw the server's own certificate"
assert_contains "$T_OUT" '^< X-Secret: s3cret' "the server's X-Secret passes (the proxy cannot see into the tunnel)"
assert_status "without --cacert the server's certificate is not trusted (curl exits 60)" 60 \
	box curl -sS --max-time 20 https://excluded.test/hello.txt
if jq -e -s "any(.[]; .destination.domain == \"excluded.test\" and $TLS_T)" "$LOG" >/dev/null 2>&1; then
	t_fail "no event of the excluded name says terminated" "$(grep excluded.test "$LOG" | head -n 5)"
else
	t_ok "no event of the excluded name says terminated"
fi

# 4. Upstreams whose certificate fails verification: 502, and they never read a request.
part bad
assert_succeeds "an upstream with a self-signed certificate: curl gets an answer" \
	box curl -sS --max-time 20 -o /dev/null -w '%{http_code}' https://badcert.test:9443/hello.txt
assert_eq 502 "$(cat "$T_OUT")" "the answer is 502"
assert_event "the event's error names the certificate or its verification" \
	'.destination.domain == "badcert.test" and .destination.port == 9443 and ((.error.message // "") | test("certificate|verif"; "i"))'
assert_fails "the upstream read no request" served 'host=badcert\.test'
assert_succeeds "an upstream whose certificate names another host: curl gets an answer" \
	box curl -sS --max-time 20 -o /dev/null -w '%{http_code}' https://wrongname.test:9444/hello.txt
assert_eq 502 "$(cat "$T_OUT")" "the answer is 502"
assert_event "the event's error names the certificate or its verification" \
	'.destination.domain == "wrongname.test" and .destination.port == 9444 and ((.error.message // "") | test("certificate|verif"; "i"))'
assert_fails "the upstream read no request" served 'host=wrongname\.test'

# 5. Domain fronting: the Host inside a terminated tunnel must be the tunnel's name.
part front
assert_succeeds "a denied Host inside a tunnel to an allowed name on the same server" \
	box curl -sS -i --max-time 20 https://www.remote.test/front-denied -H 'Host: blocked.remote.test'
assert_contains "$T_OUT" "$(status_re 421)" "is answered 421"
assert_contains "$T_OUT" "$(perr_re host-mismatch)" "with X-Proxy-Error: host-mismatch"
assert_fails "the server read nothing for it" served '/front-denied'
assert_succeeds "another allowed name's Host inside the tunnel" \
	box curl -sS -i --max-time 20 https://www.remote.test/front-allowed -H 'Host: remote.test'
assert_contains "$T_OUT" "$(status_re 421)" "is answered 421 too"
assert_contains "$T_OUT" "$(perr_re host-mismatch)" "with X-Proxy-Error: host-mismatch"
assert_fails "the server read nothing for it" served '/front-allowed'
assert_event "the refused request is a terminated event with its 421" "$TLS_T and .http.response.status_code == 421"

# 6. requireHostMatch on plain HTTP; without it the URL decides, as before.
part hm
assert_succeeds "requireHostMatch: plain http:// whose Host differs from the URL's" \
	boxp "$PH" curl -sS -i --max-time 20 http://remote.test/hm-strict.txt -H 'Host: other.remote.test'
assert_contains "$T_OUT" "$(status_re 421)" "is answered 421"
assert_contains "$T_OUT" "$(perr_re host-mismatch)" "with X-Proxy-Error: host-mismatch"
assert_fails "the server read nothing for it" served '/hm-strict\.txt'
assert_succeeds "without requireHostMatch the same request is decided by its URL" \
	box curl -sS -i --max-time 20 http://remote.test/hm-loose.txt -H 'Host: other.remote.test'
assert_contains "$T_OUT" "$(status_re 200)" "and forwarded (200)"
assert_succeeds "the server read it" served '^GET /hm-loose\.txt '

# 7. refuseOpaqueTunnels: what the proxy could not inspect is refused.
part opaque
assert_status "refuseOpaqueTunnels: CONNECT to an excluded name fails (curl exits 56)" 56 \
	boxp "$PO" curl -sSv --max-time 20 --cacert "$CA" https://excluded.test/opaque.txt
assert_contains "$T_OUT" '< HTTP/1\.[01] 403' "the CONNECT is answered 403"
assert_contains "$T_OUT" "$(perr_re opaque-tunnel)" "with X-Proxy-Error: opaque-tunnel"
# shellcheck disable=SC2016 # expanded inside the sandbox
assert_fails "SOCKS5 CONNECT to the excluded name fails" \
	boxp "$PO" sh -c 'curl -sS --max-time 20 --cacert "$1" --socks5-hostname "${ALL_PROXY#socks5h://}" https://excluded.test/opaque-socks.txt' sh "$CA"
assert_event "the SOCKS reply is general failure (1)" \
	'.event.action == "proxy-socks" and .destination.domain == "excluded.test" and .bpfbox.proxy.socks_reply == 1'
assert_fails "the server read nothing of either" served '/opaque'
assert_succeeds "a terminated name still works under refuseOpaqueTunnels" \
	boxp "$PO" curl -sS --max-time 20 https://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'

# 8. TRACE and TRACK: 405, plain and terminated; an excluded tunnel shows the server answers them.
part trace
# shellcheck disable=SC2016 # expanded inside the sandbox
assert_succeeds "TRACE and TRACK, plain, terminated and tunnelled, from one sandbox" \
	box sh -c 'for m in TRACE TRACK; do
			curl -sS -i --max-time 20 -X "$m" "http://remote.test/$m-plain" >"$1/$m-plain" 2>&1
			curl -sS -i --max-time 20 -X "$m" "https://remote.test/$m-term" >"$1/$m-term" 2>&1
		done
		curl -sS -i --max-time 20 --cacert "$2" -X TRACE https://excluded.test/TRACE-tunnel >"$1/TRACE-tunnel" 2>&1' sh "$W" "$CA"
assert_contains "$W/TRACE-tunnel" "$(status_re 200)" "the server answers TRACE itself (200, through the tunnel)"
for m in TRACE TRACK; do
	for k in plain term; do
		assert_contains "$W/$m-$k" "$(status_re 405)" "$m $k: 405"
		assert_contains "$W/$m-$k" "$(perr_re method-not-allowed)" "$m $k: X-Proxy-Error: method-not-allowed"
		assert_fails "$m $k: the server read nothing" served "/$m-$k"
	done
done
assert_event "the terminated TRACE is an event with its 405" "$(term_ev remote.test 443 TRACE 405)"

# 9. stripResponseHeaders: X-Secret removed, X-Keep kept, plain and terminated.
part strip
# shellcheck disable=SC2016 # expanded inside the sandbox
assert_succeeds "plain and terminated requests to the server that adds X-Secret and X-Keep" \
	box sh -c 'curl -sS -i --max-time 20 http://remote.test/hello.txt >"$1/strip-plain" 2>&1
		curl -sS -i --max-time 20 https://remote.test/hello.txt >"$1/strip-term" 2>&1' sh "$W"
for k in plain term; do
	assert_contains "$W/strip-$k" '^[Xx]-[Kk]eep: 1' "$k: X-Keep is kept"
	assert_not_contains "$W/strip-$k" '^[Xx]-[Ss]ecret' "$k: X-Secret is stripped"
	assert_contains "$W/strip-$k" '^hello-remote$' "$k: the body arrives"
done

# 10. maxTunnels 2: two held terminated tunnels, the third CONNECT 503; room again once they close.
part tunnels
cat >"$T_TMP/tunnels.sh" <<'SH'
c=$1
python3 "$c" connect remote.test 443 60 >"$TMPDIR/h1" 2>&1 &
p1=$!
python3 "$c" connect remote.test 443 60 >"$TMPDIR/h2" 2>&1 &
p2=$!
for _ in $(seq 300); do
	grep -q '^ok issuer=' "$TMPDIR/h1" && grep -q '^ok issuer=' "$TMPDIR/h2" && break
	sleep 0.1
done
echo "held: $(head -n 1 "$TMPDIR/h1") / $(head -n 1 "$TMPDIR/h2")"
curl -sSv --max-time 20 https://remote.test/tunnel.txt 2>&1
echo "third-exit=$?"
kill "$p1" "$p2"
wait "$p1" "$p2"
# The proxy sees the two close when it reads their end: a moment, not a fixed sleep.
for _ in $(seq 50); do
	out=$(curl -sS --max-time 20 https://remote.test/tunnel.txt 2>&1) && break
	sleep 0.2
done
echo "after: $out"
SH
assert_succeeds "maxTunnels 2: a sandbox holds two tunnels and tries a third" \
	boxp "$PM" bash "$T_TMP/tunnels.sh" "$CLIENT"
assert_contains "$T_OUT" '^held: ok issuer=bpfbox sandbox CA.* / ok issuer=bpfbox sandbox CA' \
	"two python3 ssl clients completed their handshakes and hold"
assert_contains "$T_OUT" '^third-exit=56$' "the third CONNECT fails (curl exits 56)"
assert_contains "$T_OUT" '< HTTP/1\.[01] 503' "it is answered 503"
assert_contains "$T_OUT" "$(perr_re too-many-tunnels)" "with X-Proxy-Error: too-many-tunnels"
assert_contains "$T_OUT" '^after: via-tunnel$' "after the two close, a new tunnel works"

# 11. The policy's own CA (caCertPath, caKeyPath): its leaves; its key unreadable inside.
make_own_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bpfbox-test-own-ca \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
		-keyout "$OWN/ca.key" -out "$OWN/ca.pem" 2>/dev/null &&
		chown root:root "$OWN/ca.key" && chmod 0600 "$OWN/ca.key"
}
part ownca
assert_succeeds "a CA of the test's own is made (key root's, mode 0600)" make_own_ca
assert_succeeds "curl https:// under caCertPath/caKeyPath" \
	boxp "$PC" curl -sSv --max-time 20 https://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_contains "$T_OUT" 'issuer:.*CN ?= ?bpfbox-test-own-ca' "curl saw a leaf issued by the policy's CA"
assert_fails "the sandbox cannot read the CA's key (filesystem.denyRead)" boxp "$PC" cat "$OWN/ca.key"
assert_not_contains "$T_OUT" 'PRIVATE KEY' "no byte of the key came out"
assert_event "the refusal is an event naming the key" \
	".event.outcome == \"failure\" and .file.path == \"$OWN/ca.key\""

# 12. The transparent path: a client that ignores the proxy variables is terminated by its SNI.
part transparent
assert_succeeds "curl --noproxy '*' https:// to an allowed name, no --cacert" \
	box curl -sS --max-time 20 --noproxy '*' https://remote.test/transparent.txt
assert_contains "$T_OUT" '^via-transparent$'
assert_event "the connection is a transparent TLS event named by its SNI" \
	'.event.action == "proxy-transparent" and .bpfbox.transparent.kind == "tls" and .destination.domain == "remote.test" and .destination.port == 443'
assert_event "the request is a terminated event" "$(term_ev remote.test 443 GET 200)"
assert_succeeds "the server read it with Host remote.test" \
	served '^GET /transparent\.txt HTTP/1\.[01] host=remote\.test(:443)?$'
if command -v node >/dev/null; then
	assert_succeeds "node's fetch (no proxy) with NODE_EXTRA_CA_CERTS as set" \
		box env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy node -e '
			(async () => {
				process.stdout.write(await (await fetch("https://remote.test/node.txt")).text());
			})().catch((e) => { console.error(e); process.exit(1); });'
	assert_contains "$T_OUT" '^via-node$'
	assert_succeeds "the server read node's request" served '^GET /node\.txt HTTP/1\.[01] host=remote\.test(:443)?$'
else
	t_skip "node fetch" "node is not installed"
fi
# Package managers against registry stand-ins, trusting the CA through the variables bpfbox set
# (npm through npm_config_cafile: npm 9 and later ignore NODE_EXTRA_CA_CERTS).
if command -v npm >/dev/null; then
	cat >"$WWW/bbdemo" <<'JSON'
{"name": "bbdemo", "dist-tags": {"latest": "1.2.3"}, "versions": {"1.2.3": {"name": "bbdemo",
 "version": "1.2.3", "dist": {"tarball": "https://remote.test/bbdemo-1.2.3.tgz",
 "shasum": "0000000000000000000000000000000000000000"}}}}
JSON
	assert_succeeds "npm view against a registry stand-in, terminated" \
		box env HOME="$W" npm_config_cache="$W/npm-cache" npm_config_update_notifier=false \
		npm view bbdemo version --registry https://remote.test/
	assert_contains "$T_OUT" '^1\.2\.3$'
	assert_succeeds "the registry read npm's request" served '^GET /bbdemo HTTP/1\.[01] host=remote\.test(:443)?$'
	assert_event "as a terminated request" "$(term_ev remote.test 443 GET 200)"
else
	t_skip "npm view" "npm is not installed"
fi
if python3 -m pip --version >/dev/null 2>&1; then
	mkdir -p "$WWW/simple/bbdemo"
	python3 - "$WWW/simple/bbdemo/bbdemo-1.0-py3-none-any.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("bbdemo/__init__.py", "")
    z.writestr("bbdemo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: bbdemo\nVersion: 1.0\n")
    z.writestr("bbdemo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: bpfbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("bbdemo-1.0.dist-info/RECORD", "")
PY
	echo '<a href="bbdemo-1.0-py3-none-any.whl">bbdemo-1.0-py3-none-any.whl</a>' >"$WWW/simple/bbdemo/index.html"
	assert_succeeds "pip download against a simple-index stand-in, terminated (PIP_CERT)" \
		box env HOME="$W" PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip download -q \
		--no-deps -d "$W/pip-dl" --index-url https://remote.test/simple/ bbdemo
	assert_succeeds "the wheel arrived whole" python3 -m zipfile -t "$W/pip-dl/bbdemo-1.0-py3-none-any.whl"
	assert_succeeds "the index read pip's requests" served '^GET /simple/bbdemo/bbdemo-1\.0-py3-none-any\.whl HTTP/1\.[01] host=remote\.test(:443)?$'
else
	t_skip "pip download" "pip is not installed"
fi
assert_succeeds "fronting on the transparent path: a denied Host inside an allowed SNI" \
	box curl -sS -i --max-time 20 --noproxy '*' https://www.remote.test/front-transparent -H 'Host: blocked.remote.test'
assert_contains "$T_OUT" "$(status_re 421)" "is answered 421"
assert_contains "$T_OUT" "$(perr_re host-mismatch)" "with X-Proxy-Error: host-mismatch"
assert_fails "the server read nothing for it" served '/front-transparent'

# 13. OpenSSL is loaded when a sandbox needs it (user/lib/openssl_lazy.h), not with every start:
# a supervisor without TLS termination or masked credentials maps neither library, one with
# tlsTerminate maps both. Read in /proc while the command waits for the test to let it end.
part openssl
libs_while_running() { # POLICY -> the OpenSSL libraries in the supervisor's maps, one per line
	local ready=$W/openssl-ready pid
	rm -f "$ready"
	"$BPFBOX" exec --policy "$1" --log-file "$LOG" -- \
		sh -c "touch $ready; while [ -e $ready ]; do sleep 0.1; done" &
	pid=$!
	for _ in $(seq 300); do [ -e "$ready" ] && break; sleep 0.1; done
	grep -oE 'lib(ssl|crypto)\.so\.[0-9]+' "/proc/$pid/maps" | sort -u
	rm -f "$ready"
	wait "$pid"
}
PP=$T_TMP/policy-plain.json
jq 'del(.network.tlsTerminate)' "$P" >"$PP"
assert_eq "" "$(libs_while_running "$PP")" "a sandbox without tlsTerminate runs with no OpenSSL mapped"
assert_eq "libcrypto.so.3 libssl.so.3" "$(libs_while_running "$P" | tr '\n' ' ' | sed 's/ $//')" \
	"a sandbox with tlsTerminate has OpenSSL loaded"

# 14. What was left, seen from the host.
assert_fails "the server never read a request with Host blocked.remote.test" served 'host=blocked\.remote\.test'
assert_eq "$TRUST0" "$(trust_sum)" "the host's trust store (/etc/ssl/certs) is unchanged"
assert_eq "" "$(sandbox_cgroups)" "no sandbox cgroup is left behind"
assert_eq "$base" "$(count_state)" "no cgroup, registry entry, tmpdir or map entry is left"
assert_succeeds "every event line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$T_TMP"/*.ndjson
