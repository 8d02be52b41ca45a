#!/usr/bin/env bash
# Network, proxy side: real clients (curl over HTTP, HTTPS through CONNECT
# and SOCKS5, wget, python3 urllib, git clone over dumb HTTP, an ssh-style
# tunnel through `bpfbox connect`) reach "remote" hosts in a network namespace
# through the sandbox's proxy, by name from /etc/hosts. Allowed and denied
# names, wildcards, deny winning, ports, IP literals, a name resolving to
# loopback, and the child's proxy environment.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# Its subject is the proxy in user space (the kernel's part, connects to the proxy only, is test_60's): `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 1
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
trap 'rc=$?; net_cleanup; (exit $rc); t_summary' EXIT

LOG=$T_TMP/log.ndjson
P=$T_TMP/policy.json
WWW=$T_TMP/www
CA=$T_TMP/ca.pem
mkdir -p "$WWW" "$T_TMP/work" "$T_TMP/tls"
echo hello-remote >"$WWW/hello.txt"
echo hello-loop >"$T_TMP/work/hello-loop.txt"
cat >"$P" <<JSON
{
  "network": {
    "allowedDomains": ["remote.test", "*.remote.test", "other.test:8080", "loop.test",
                       "127.0.0.1:8082", "10.200.0.2:8080"],
    "deniedDomains": ["blocked.remote.test"],
    "deniedDomainReasons": { "blocked.remote.test": "Blocked for testing" }
  },
  "filesystem": { "denyRead": [], "allowWrite": ["$T_TMP/work"], "denyWrite": [],
                  "allowGitConfig": true }
}
JSON
box() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@"; }

# A bare repository served over dumb HTTP.
git init -q --bare "$WWW/repo.git"
git clone -q "$WWW/repo.git" "$T_TMP/seed" 2>/dev/null
echo "cloned through the proxy" >"$T_TMP/seed/README"
git -C "$T_TMP/seed" add README
git -C "$T_TMP/seed" -c user.name=t -c user.email=t@t commit -qm init
git -C "$T_TMP/seed" push -q origin HEAD:master 2>/dev/null
git -C "$WWW/repo.git" symbolic-ref HEAD refs/heads/master
git -C "$WWW/repo.git" update-server-info

assert_succeeds "a test CA and server certificate are made" \
	"$T_ROOT/tests/vm/servers/make-ca.sh" "$T_TMP/tls" remote.test www.remote.test blocked.remote.test
cp "$T_TMP/tls/ca.pem" "$CA"
assert_succeeds "a remote network namespace is set up" net_remote_up
net_hosts remote.test www.remote.test blocked.remote.test other.test "$NET_REMOTE"
net_hosts loop.test 127.0.0.1
assert_succeeds "HTTP :80 and :8080, HTTPS :443 and an ssh-style echo :22 serve in the namespace" \
	net_serve bbremote http 0.0.0.0 80 "$WWW" , http 0.0.0.0 8080 "$WWW" , \
	https 0.0.0.0 443 "$WWW" "$T_TMP/tls/server.pem" "$T_TMP/tls/server.key" , echo 0.0.0.0 22
assert_succeeds "HTTP serves on the guest's 127.0.0.1:8082 and :8083" \
	net_serve - http 127.0.0.1 8082 "$T_TMP/work" , http 127.0.0.1 8083 "$T_TMP/work"

# The child's environment.
assert_succeeds "env runs in the sandbox" box env
ENVOUT=$T_TMP/env.txt
cp "$T_OUT" "$ENVOUT"
for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy GRPC_PROXY grpc_proxy; do
	assert_contains "$ENVOUT" "^$v=http://127\.0\.0\.1:[0-9]+\$" "$v points at the proxy"
done
for v in ALL_PROXY all_proxy; do
	assert_contains "$ENVOUT" "^$v=socks5h://127\.0\.0\.1:[0-9]+\$" "$v is socks5h"
done
for v in NO_PROXY no_proxy; do
	assert_contains "$ENVOUT" "^$v=localhost,127\.0\.0\.1,::1,169\.254\.0\.0/16,10\.0\.0\.0/8,172\.16\.0\.0/12,192\.168\.0\.0/16\$" \
		"$v is srt's list"
done
assert_contains "$ENVOUT" "^GIT_SSH_COMMAND=ssh -o ProxyCommand='$(readlink -f "$BPFBOX") connect %h %p'\$" \
	"GIT_SSH_COMMAND tunnels through bpfbox connect"
assert_contains "$ENVOUT" '^NODE_USE_ENV_PROXY=1$'
assert_contains "$ENVOUT" '^SANDBOX_RUNTIME=1$'
port=$(sed -n 's/^HTTP_PROXY=http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$ENVOUT")
assert_event "the logged proxy port is the one in the environment" ".event.action == \"sandbox-start\" and .bpfbox.proxy.port == $port"

# curl over HTTP and HTTPS.
assert_succeeds "curl http:// to an allowed name" box curl -sS --max-time 20 http://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "the forward is an event" '.event.action == "proxy-http" and .destination.domain == "remote.test" and .destination.port == 80'
assert_event "naming the method" '.event.action == "proxy-http" and .http.request.method == "GET"'
assert_event "and the allowing rule" \
	'.event.action == "proxy-http" and .event.outcome == "success" and .rule.name == "allowedDomains:remote.test"'
assert_succeeds "curl https:// through CONNECT with the test CA" \
	box curl -sS --max-time 20 --cacert "$CA" https://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "the tunnel is an event" '.event.action == "proxy-connect" and .destination.domain == "remote.test" and .destination.port == 443'
assert_succeeds "a wildcard entry allows a subdomain" \
	box curl -sS --max-time 20 --cacert "$CA" https://www.remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_event "decided by the wildcard rule" '.destination.domain == "www.remote.test" and .rule.name == "allowedDomains:*.remote.test"'

assert_status "a denied subdomain: deny wins over the wildcard (curl exits 56)" 56 \
	box curl -sSv --max-time 20 --cacert "$CA" https://blocked.remote.test/hello.txt
assert_contains "$T_OUT" 'CONNECT tunnel failed, response 403'
assert_contains "$T_OUT" '< HTTP/1\.1 403 Blocked for testing' "the reason phrase is deniedDomainReasons'"
assert_contains "$T_OUT" '< X-Proxy-Error: blocked-by-allowlist'
assert_event "the refusal is an event naming host, port, method and rule" \
	'.event.action == "proxy-connect" and .event.outcome == "failure" and .destination.domain == "blocked.remote.test" and .destination.port == 443 and .http.request.method == "CONNECT" and .rule.name == "deniedDomains:blocked.remote.test"'
assert_event "with the reason" '.destination.domain == "blocked.remote.test" and .event.reason == "Blocked for testing"'
# curl is the sandboxed command itself here: the refusal names its pid, as the start event does.
assert_event_by_command "the refusal names the process that connected: curl, its pid, thread and uid" \
	'.event.action == "proxy-connect" and .destination.domain == "blocked.remote.test" and .event.outcome == "failure"' curl
assert_succeeds "plain http:// to a denied name gets srt's 403" \
	box curl -sS -i --max-time 20 http://blocked.remote.test/hello.txt
assert_contains "$T_OUT" '^HTTP/1\.1 403 Forbidden'
assert_contains "$T_OUT" '^X-Proxy-Error: blocked-by-allowlist'
assert_contains "$T_OUT" '^Connection blocked by network allowlist'
assert_not_contains "$T_OUT" hello-remote
assert_succeeds "a name on no list is refused" box curl -sS -i --max-time 20 http://unlisted.test/
assert_contains "$T_OUT" '^HTTP/1\.1 403 Forbidden'
assert_event "by the default rule" '.destination.domain == "unlisted.test" and .event.outcome == "failure" and .rule.name == "default:network"'
assert_succeeds "a child's refusal names the child, not the sandboxed shell" \
	box sh -c 'curl -sS -o /dev/null --max-time 20 http://child.unlisted.test/; echo "shell=$$"'
shell_pid=$(sed -n 's/^shell=//p' "$T_OUT")
assert_event "its event is curl's" \
	".event.action == \"proxy-http\" and .destination.domain == \"child.unlisted.test\" and .process.name == \"curl\" and .process.pid != $shell_pid"

# Ports and IP literals.
assert_succeeds "other.test:8080 is allowed on port 8080" box curl -sS --max-time 20 http://other.test:8080/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_succeeds "other.test on port 80 is not" box curl -sS -i --max-time 20 http://other.test/hello.txt
assert_contains "$T_OUT" '^HTTP/1\.1 403 Forbidden'
assert_succeeds "an allowed IP literal with its port" \
	box env -u NO_PROXY -u no_proxy curl -sS --max-time 20 http://10.200.0.2:8080/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_succeeds "the same IP on another port is refused" \
	box env -u NO_PROXY -u no_proxy curl -sS -i --max-time 20 http://10.200.0.2/hello.txt
assert_contains "$T_OUT" '^HTTP/1\.1 403 Forbidden'

# An allowed name resolving to loopback.
assert_succeeds "an allowed name resolving to 127.0.0.1 is refused by the address guard" \
	box curl -sS -i --max-time 20 http://loop.test:8083/hello-loop.txt
assert_contains "$T_OUT" '^HTTP/1\.1 403'
assert_contains "$T_OUT" '^X-Proxy-Error: blocked-by-sandbox-runtime'
assert_not_contains "$T_OUT" hello-loop
assert_event "the guard's refusal is an event" \
	'.destination.domain == "loop.test" and .destination.port == 8083 and .event.outcome == "failure" and .http.response.status_code == 403'
assert_succeeds "unless the address is allowed as a literal with that port (127.0.0.1:8082)" \
	box curl -sS --max-time 20 http://loop.test:8082/hello-loop.txt
assert_contains "$T_OUT" '^hello-loop$'

# SOCKS5 with a domain name, on the same port.
# shellcheck disable=SC2016 # expanded inside the sandbox
assert_succeeds "curl through SOCKS5 (ALL_PROXY, socks5h)" \
	box sh -c 'curl -sS --max-time 20 -x "$ALL_PROXY" http://remote.test/hello.txt'
assert_contains "$T_OUT" '^hello-remote$'
assert_event "the SOCKS connection is an event" '.event.action == "proxy-socks" and .destination.domain == "remote.test" and .event.outcome == "success"'
# shellcheck disable=SC2016
assert_fails "SOCKS5 to a denied name is refused" \
	box sh -c 'curl -sS --max-time 20 -x "$ALL_PROXY" http://blocked.remote.test/hello.txt'
assert_not_contains "$T_OUT" hello-remote
assert_event "the SOCKS refusal is an event" '.event.action == "proxy-socks" and .destination.domain == "blocked.remote.test" and .event.outcome == "failure"'

# wget and python3 urllib.
assert_succeeds "wget through the proxy" box wget -q -O - http://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_succeeds "wget https through the proxy" box wget -q -O - --ca-certificate="$CA" https://www.remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_fails "wget to a denied name fails" box wget -O - http://blocked.remote.test/hello.txt
assert_contains "$T_OUT" '403'
PY='import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[2])
print(urllib.request.urlopen(sys.argv[1], context=ctx, timeout=20).read().decode().strip())'
assert_succeeds "python3 urllib over http" box python3 -c "$PY" http://remote.test/hello.txt "$CA"
assert_contains "$T_OUT" '^hello-remote$'
assert_succeeds "python3 urllib over https" box python3 -c "$PY" https://remote.test/hello.txt "$CA"
assert_contains "$T_OUT" '^hello-remote$'
assert_fails "python3 urllib to a denied name" box python3 -c "$PY" https://blocked.remote.test/hello.txt "$CA"
assert_contains "$T_OUT" '403'

# git clone over dumb HTTP.
# A fresh clone writes .git/config (allowGitConfig above) and, from git's
# template, .git/hooks, which the mandatory rules protect: --template= skips it.
assert_succeeds "git clone over http through the proxy" \
	box git clone -q --template= http://remote.test/repo.git "$T_TMP/work/clone"
assert_contains "$T_TMP/work/clone/README" '^cloned through the proxy$' "the clone has the file"
assert_fails "git clone from a denied name fails" \
	box git clone -q --template= http://blocked.remote.test/repo.git "$T_TMP/work/clone2"
assert_succeeds "nothing was cloned" test ! -e "$T_TMP/work/clone2/README"
assert_event "git's refused request is an event" '.destination.domain == "blocked.remote.test" and .event.outcome == "failure" and .http.request.method == "GET"'

# An ssh-style tunnel: bpfbox connect as ProxyCommand.
assert_succeeds "bpfbox connect tunnels to an allowed host's port 22" \
	box sh -c 'printf "hello-tunnel\n" | "$0" connect remote.test 22' "$BPFBOX"
assert_contains "$T_OUT" '^SSH-2\.0-bpfbox-test-echo' "the server's banner arrives"
assert_contains "$T_OUT" '^hello-tunnel$' "and the echo of what was sent (half-close passed on)"
# Run as ssh runs a ProxyCommand: %h and %p substituted, through sh -c.
tunnel=$(cat <<'SH'
pc=${GIT_SSH_COMMAND#*ProxyCommand=\'}
pc=${pc%\'}
pc=${pc//%h/$1}
pc=${pc//%p/22}
printf 'via-git-ssh\n' | sh -c "$pc"
SH
)
assert_succeeds "the ProxyCommand of GIT_SSH_COMMAND tunnels" box bash -c "$tunnel" sh remote.test
assert_contains "$T_OUT" '^via-git-ssh$'
assert_fails "bpfbox connect to a denied host fails" \
	box sh -c 'printf "x\n" | "$0" connect blocked.remote.test 22' "$BPFBOX"
assert_not_contains "$T_OUT" SSH-2
assert_event "the tunnel refusal is an event" \
	'.event.action == "proxy-connect" and .destination.domain == "blocked.remote.test" and .destination.port == 22 and .event.outcome == "failure"'

assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"
