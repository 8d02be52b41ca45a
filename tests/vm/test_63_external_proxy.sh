#!/usr/bin/env bash
# External proxies (srt's httpProxyPort and socksProxyPort): each replaces the
# proxy bpfbox would run for that protocol. The kernel then lets connections
# through to those ports, and to bpfbox's own proxy only while it runs; the
# proxy variables name the right port for each protocol. The "platform proxy"
# here is another sandbox's bpfbox proxy, which really filters by name.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# Its subject is the proxy variables and ports chosen in user space (the kernel's part is test_60's): `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 2
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
trap 'rc=$?; [ -n "${outer:-}" ] && kill "$outer" 2>/dev/null; net_cleanup; (exit $rc); t_summary' EXIT

CLIENT=$T_ROOT/tests/vm/servers/client.py
LOG=$T_TMP/log.ndjson
WWW=$T_TMP/www
mkdir -p "$WWW" "$T_TMP/work"
echo hello-remote >"$WWW/hello.txt"
assert_succeeds "a remote network namespace is set up" net_remote_up
net_hosts remote.test blocked.test "$NET_REMOTE"
assert_succeeds "HTTP serves in the namespace" net_serve bbremote http 0.0.0.0 80 "$WWW"
assert_succeeds "HTTP serves on the guest's 127.0.0.1:8084" net_serve - http 127.0.0.1 8084 "$WWW"

# The platform's proxy: a sandbox whose proxy allows remote.test only.
cat >"$T_TMP/outer.json" <<JSON
{ "network": { "allowedDomains": ["remote.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$T_TMP/work"], "denyWrite": [] } }
JSON
"$BPFBOX" exec --policy "$T_TMP/outer.json" --log-file "$T_TMP/outer.log" -- \
	sh -c "echo \"\${BPFBOX_PROXY#*:}\" >$T_TMP/work/port.tmp; mv $T_TMP/work/port.tmp $T_TMP/work/port; sleep 600" &
outer=$!
for _ in $(seq 100); do [ -s "$T_TMP/work/port" ] && break; sleep 0.1; done
EXT=$(cat "$T_TMP/work/port" 2>/dev/null)
assert_succeeds "the platform proxy runs on a loopback port" test -n "$EXT"

policy() { # FILE HTTP-PORT SOCKS-PORT (null = none)
	cat >"$1" <<JSON
{ "network": { "allowedDomains": ["blocked.test"], "deniedDomains": [],
               "httpProxyPort": $2, "socksProxyPort": $3 },
  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }
JSON
	sed -i 's/, "httpProxyPort": null//; s/"httpProxyPort": null, //; s/, "socksProxyPort": null//' "$1"
}
policy "$T_TMP/both.json" "$EXT" "$EXT"
policy "$T_TMP/http.json" "$EXT" null
policy "$T_TMP/socks.json" null "$EXT"
box() { local p=$1; shift; "$BPFBOX" exec --policy "$T_TMP/$p.json" --log-file "$LOG" -- "$@"; }

# Both external: bpfbox runs no proxy; clients go through the platform's.
assert_succeeds "both external: the proxy variables name the external port" \
	box both sh -c "[ \"\$HTTPS_PROXY\" = http://127.0.0.1:$EXT ] && [ \"\$ALL_PROXY\" = socks5h://127.0.0.1:$EXT ]"
assert_succeeds "both external: curl over HTTP goes through the external proxy" \
	box both curl -sS --max-time 20 http://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_succeeds "both external: curl over SOCKS5 goes through it too" \
	box both curl -sS --max-time 20 --proxy "socks5h://127.0.0.1:$EXT" http://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_fails "both external: the external proxy's own policy decides (blocked.test refused there)" \
	box both curl -fsS --max-time 20 -o /dev/null -w '%{http_code}' http://blocked.test/hello.txt
assert_contains "$T_OUT" '403'
assert_contains "$T_TMP/outer.log" '"blocked.test"' "and the refusal is in the platform proxy's log"
assert_fails "both external: a direct connection stays refused in the kernel" \
	box both python3 "$CLIENT" tcp 127.0.0.1 8084
assert_contains "$T_OUT" '^EPERM'
assert_event "with an event" ".event.action == \"connect\" and .destination.port == 8084"
assert_event "both external: the start event names the external port" \
	".event.action == \"sandbox-start\" and .bpfbox.proxy.port == $EXT"

# HTTP external: bpfbox's proxy still serves SOCKS, by srt's rule.
assert_succeeds "http external: HTTP_PROXY names it, ALL_PROXY names bpfbox's own proxy" \
	box http sh -c "[ \"\$HTTP_PROXY\" = http://127.0.0.1:$EXT ] && [ \"\$ALL_PROXY\" != socks5h://127.0.0.1:$EXT ]"
assert_succeeds "http external: curl over HTTP goes through the external proxy" \
	box http curl -sS --max-time 20 http://remote.test/hello.txt
assert_contains "$T_OUT" '^hello-remote$'
assert_fails "http external: SOCKS goes to bpfbox's proxy, which applies this policy (remote.test refused)" \
	box http sh -c 'curl -sS --max-time 20 --proxy "$ALL_PROXY" http://remote.test/hello.txt'
assert_succeeds "http external: bpfbox's own proxy port is reachable" \
	box http sh -c 'python3 '"$CLIENT"' tcp 127.0.0.1 "${ALL_PROXY##*:}"'
assert_contains "$T_OUT" '^ok .*400' "and bpfbox's proxy answers there"

# SOCKS external: bpfbox's proxy serves HTTP.
assert_succeeds "socks external: ALL_PROXY names it, HTTP_PROXY names bpfbox's own proxy" \
	box socks sh -c "[ \"\$ALL_PROXY\" = socks5h://127.0.0.1:$EXT ] && [ \"\$HTTP_PROXY\" != http://127.0.0.1:$EXT ]"
assert_succeeds "socks external: curl over SOCKS5 goes through the external proxy" \
	box socks sh -c 'curl -sS --max-time 20 --proxy "$ALL_PROXY" http://remote.test/hello.txt'
assert_contains "$T_OUT" '^hello-remote$'
assert_fails "socks external: HTTP goes to bpfbox's proxy, which applies this policy (remote.test refused)" \
	box socks curl -fsS --max-time 20 -o /dev/null -w '%{http_code}' http://remote.test/hello.txt
assert_contains "$T_OUT" '403'
assert_event "and bpfbox's proxy logs that refusal" \
	'.event.action == "proxy-http" and .event.outcome == "failure" and .destination.domain == "remote.test"'
assert_fails "socks external: another loopback port stays refused in the kernel" \
	box socks python3 "$CLIENT" tcp 127.0.0.1 8084
assert_contains "$T_OUT" '^EPERM'

kill "$outer" 2>/dev/null
wait "$outer" 2>/dev/null
outer=
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$LOG"
