#!/usr/bin/env bash
# credentials.envVars[].mode "mask" (srt's masked credentials, docs/policy.md `credentials`):
# the sandbox sees sentinels (fake_value_<uuid4>, padded to a longer real value's
# length); the proxy puts the real values back only in requests to the inject host
# inside the TLS it terminates: headers, the request target, bodies with a
# Content-Length (told again when the length changes) or chunked, not a body with a
# Content-Encoding; never in an answer; another allowed host gets the sentinels.
# extract masks only its capture, decode "jwt" the named claims; a request signed
# (SigV4) with the masked AWS pair is signed again with the real one, a streaming
# upload is refused 403. The real values are in no process of the sandbox (its
# environment, every /proc/PID/environ of its cgroup, a core dump of the command)
# and in no log line or bpfbox's stderr; the request events name the credentials.
# Through the daemon, the administrator's mask applies to a caller whose policy has no
# credentials: the caller's own value reaches the inject host, its sandbox sees a sentinel.
# The server (tests/vm/servers/record.py, in a network namespace) records what it read.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
DPID='' S=''
daemon_stop() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	DPID=
}
trap 'rc=$?; daemon_stop; net_cleanup; [ -z "$S" ] || rm -rf "$S"; (exit $rc); t_summary' EXIT

command -v dnsmasq >/dev/null || t_skip_all "dnsmasq is not installed (tools/install-deps.sh)"

TLS=$T_TMP/tls
CA=$TLS/ca.pem
W=$T_TMP/work
REC=$T_TMP/record.txt
ERRLOG=$T_TMP/bpfbox-stderr.txt
mkdir -p "$TLS" "$W"
chmod 0777 "$W"
: >"$REC"
: >"$ERRLOG"

# Real values: upper case and digits, which no sentinel holds ([a-z0-9_-]).
# API_KEY (108) is longer than a sentinel (47), GH_TOKEN (40) shorter.
rand() { LC_ALL=C tr -dc 'A-Z0-9' </dev/urandom | head -c "$1"; }
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
API_KEY=AK$(rand 106)
GH_TOKEN=ghp_$(rand 36)
DBPW=PW$(rand 22)
DATABASE_URL=postgres://dbuser:$DBPW@db.remote.test/x
JWT_SUB=SUB$(rand 21)
JWT_TOKEN=$(printf '{"alg":"HS256","typ":"JWT"}' | b64url).$(printf '{"sub":"%s","iss":"bpfbox-test","exp":4102444800}' "$JWT_SUB" | b64url).$(head -c 32 /dev/urandom | b64url)
AWS_ACCESS_KEY_ID=AKIA$(rand 16)
AWS_SECRET_ACCESS_KEY=$(rand 40)
# The real values, one a line, for grep -f; in a directory the sandbox may not read.
mkdir -m 0700 "$T_TMP/secret"
REALF=$T_TMP/secret/reals
printf '%s\n' "$API_KEY" "$GH_TOKEN" "$DBPW" "$JWT_TOKEN" "$JWT_SUB" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$REALF"
# The files among FILE... holding any real value (one grep: a process costs TCG a second).
with_reals() { grep -l -a -F -f "$REALF" -- "$@" 2>/dev/null; }
SENT='fake_value_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'

A=api.remote.test
P=$T_TMP/policy.json
cat >"$P" <<JSON
{
  "network": {
    "allowedDomains": ["$A", "other.remote.test"], "deniedDomains": [],
    "tlsTerminate": { "extraCaCertPaths": ["$CA"], "handshakeTimeoutMs": 60000 }
  },
  "filesystem": { "denyRead": ["$T_TMP/secret"], "allowWrite": ["$W"], "denyWrite": [] },
  "credentials": {
    "envVars": [
      { "name": "API_KEY", "mode": "mask", "injectHosts": ["$A"] },
      { "name": "GH_TOKEN", "mode": "mask", "injectHosts": ["$A"] },
      { "name": "DATABASE_URL", "mode": "mask", "extract": ":([^:@]+)@", "injectHosts": ["$A"] },
      { "name": "JWT_TOKEN", "mode": "mask", "decode": "jwt", "maskClaims": ["sub"], "injectHosts": ["$A"] },
      { "name": "AWS_ACCESS_KEY_ID", "mode": "mask", "injectHosts": ["$A"] },
      { "name": "AWS_SECRET_ACCESS_KEY", "mode": "mask", "injectHosts": ["$A"] }
    ],
    "awsPairs": [{ "accessKeyIdVar": "AWS_ACCESS_KEY_ID", "secretAccessKeyVar": "AWS_SECRET_ACCESS_KEY" }]
  }
}
JSON

LOG=$T_TMP/setup.ndjson
part() { LOG=$T_TMP/$1.ndjson; echo "# part $1 at ${SECONDS} s"; }
# bpfbox's stderr (and the command's) goes to $ERRLOG, searched for real values at the end.
box() {
	env API_KEY="$API_KEY" GH_TOKEN="$GH_TOKEN" DATABASE_URL="$DATABASE_URL" JWT_TOKEN="$JWT_TOKEN" \
		AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
		"$BPFBOX" exec --policy "$P" --log-file "$LOG" -- "$@" 2>>"$ERRLOG"
}
# What the server recorded for the request whose path is TAG (tests/vm/servers/record.py).
rec() { grep -E "^/$1 $2" "$REC"; }
assert_rec() { # NAME TAG REGEX
	rec "$2" "$3" >/dev/null && t_ok "$1" && return 0
	t_fail "$1" "no record line of /$2 matches /$3/; /$2 recorded:" "$(grep -E "^/$2 " "$REC" | cut -c1-300)"
}
assert_no_rec() { # NAME TAG REGEX
	! rec "$2" "$3" >/dev/null && t_ok "$1" && return 0
	t_fail "$1" "record lines of /$2 match /$3/:" "$(rec "$2" "$3" | cut -c1-300)"
}
# The value a variable had inside, from a NAME=VALUE file the sandbox wrote.
inside() { sed -n "s/^$1=//p" "$2" | head -n 1; }
# Regular-expression text of a literal (real values and sentinels hold only [A-Za-z0-9_.:/@-]).
lit() { printf '%s' "$1" | sed 's/[.]/\\./g'; }
ev_names() { # DOMAIN NAME: some event of the domain names the credential NAME
	echo ".destination.domain == \"$1\" and any(.. | objects | .credentials? // empty | .. | strings; test(\"$2\"))"
}

assert_succeeds "a test CA and a certificate for the names are made" \
	"$T_ROOT/tests/vm/servers/make-ca.sh" "$TLS" "$A" other.remote.test
assert_succeeds "a remote network namespace is set up" net_remote_up
assert_succeeds "dnsmasq answers the names in the namespace" net_dnsmasq "$T_TMP/dnsmasq.log" \
	"--host-record=$A,$NET_REMOTE" "--host-record=other.remote.test,$NET_REMOTE"
# The server alone is given the real pair, to check signatures with.
serve_rec() {
	SIGV4_KEY_ID=$AWS_ACCESS_KEY_ID SIGV4_SECRET=$AWS_SECRET_ACCESS_KEY \
		net_serve bbremote recs 0.0.0.0 443 "$REC" "$TLS/server.pem" "$TLS/server.key"
}
assert_succeeds "the recording HTTPS server listens on :443, checking SigV4 with the real pair" serve_rec
net_resolver_is "$NET_REMOTE"
assert_succeeds "policy check accepts the masking policy" "$BPFBOX" policy check "$P"

# 1. What the sandbox holds: sentinels in its environment, every environ of its cgroup and
# the command's memory; the real values nowhere. The command waits until it has been looked at.
part mem
cat >"$T_TMP/hold.sh" <<'SH'
w=$1
cat /proc/self/environ | tr '\0' '\n' >"$w/self-environ.txt"
env >"$w/env.txt"
sleep 300 &
echo $! >"$w/child"
echo $$ >"$w/pid"
for _ in $(seq 1500); do
	[ -e "$w/go" ] && break
	sleep 0.2
done
kill "$(cat "$w/child")"
echo held
SH
box bash "$T_TMP/hold.sh" "$W" >"$T_TMP/hold.out" &
HOLD=$!
for _ in $(seq 600); do
	[ -s "$W/pid" ] && break
	sleep 0.1
done
PID=$(cat "$W/pid" 2>/dev/null)
if [ -n "$PID" ] && [ -r "/proc/$PID/cgroup" ]; then
	t_ok "the sandboxed command runs and waits"
	CG=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$PID/cgroup")
	: >"$T_TMP/environs.txt"
	n=0
	while read -r p; do
		tr '\0' '\n' <"/proc/$p/environ" >>"$T_TMP/environs.txt" 2>/dev/null && n=$((n + 1))
	done <"$CG/cgroup.procs"
	echo "# $n processes in $CG"
	if [ "$n" -ge 2 ]; then
		t_ok "every process of the sandbox's cgroup read ($n)"
	else
		t_fail "every process of the sandbox's cgroup read ($n)" "$(cat "$CG/cgroup.procs")"
	fi
	# No debuginfod (the guest has no network to ask, and a wait for it would be TCG's minutes).
	assert_succeeds "gcore dumps the command from outside (root)" \
		env DEBUGINFOD_URLS= gcore -o "$T_TMP/core" "$PID"
	echo "# gcore done at ${SECONDS} s"
else
	t_fail "the sandboxed command runs and waits" "$(cat "$T_TMP/hold.out" "$ERRLOG" | tail -n 20)"
fi
touch "$W/go"
wait "$HOLD"
assert_eq 0 "$?" "the sandbox exits 0"
ENV=$W/env.txt
assert_contains "$ENV" "^API_KEY=${SENT}[a-z0-9_-]+\$" "API_KEY inside is a sentinel, padded"
assert_eq ${#API_KEY} "$(inside API_KEY "$ENV" | tr -d '\n' | wc -c)" "API_KEY's sentinel has the real value's length (108)"
assert_contains "$ENV" "^GH_TOKEN=$SENT\$" "GH_TOKEN (40, shorter) inside is a bare sentinel (47)"
assert_contains "$ENV" "^AWS_ACCESS_KEY_ID=$SENT\$" "AWS_ACCESS_KEY_ID inside is a sentinel"
assert_contains "$ENV" "^AWS_SECRET_ACCESS_KEY=$SENT\$" "AWS_SECRET_ACCESS_KEY inside is a sentinel"
assert_contains "$ENV" "^DATABASE_URL=postgres://dbuser:${SENT}[a-z0-9_-]*@db\\.remote\\.test/x\$" \
	"DATABASE_URL keeps its shape, the password (extract's capture) a sentinel"
JWT_IN=$(inside JWT_TOKEN "$ENV")
claims=$(printf '%s' "$JWT_IN" | cut -d. -f2 | tr -- '-_' '+/' | { s=$(cat); while [ $((${#s} % 4)) -ne 0 ]; do s="$s="; done; printf '%s' "$s"; } | base64 -d 2>/dev/null)
echo "# JWT claims inside: $claims"
if [[ $JWT_IN =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$ ]] && [ "$JWT_IN" != "$JWT_TOKEN" ]; then
	t_ok "JWT_TOKEN inside is another JWT-shaped token"
else
	t_fail "JWT_TOKEN inside is another JWT-shaped token" "inside: $JWT_IN"
fi
# shellcheck disable=SC2016 # jq's variables
assert_succeeds "its sub claim is a sentinel" jq -en --arg c "$claims" --arg re "^$SENT" '$c | fromjson | .sub | test($re)'
# shellcheck disable=SC2016 # jq's variables
assert_succeeds "its other claims are kept" jq -en --arg c "$claims" '$c | fromjson | .iss == "bpfbox-test"'
assert_contains "$W/self-environ.txt" "^API_KEY=$SENT" "/proc/self/environ inside holds the sentinel"
assert_contains "$T_TMP/environs.txt" "^API_KEY=$SENT" "the environs read from outside hold the sentinel"
SAPI=$(inside API_KEY "$ENV")
core=$(find "$T_TMP" -maxdepth 1 -name "core.*" | head -n 1)
if [ -n "$core" ] && [ -n "$SAPI" ]; then
	assert_succeeds "the core dump holds API_KEY's sentinel (the dump shows the environment)" \
		grep -q -a -F -- "$SAPI" "$core"
else
	t_fail "the core dump holds API_KEY's sentinel" "core: '$core', sentinel: '$SAPI'"
fi
assert_eq "" "$(with_reals "$ENV" "$W/self-environ.txt" "$T_TMP/environs.txt" ${core:+"$core"})" \
	"no real value in env, /proc/self/environ, the cgroup's environs or the core dump"
rm -f "$T_TMP"/core.*

# 2. Requests: one sandbox sends every case; the server's record is the judge.
part req
cat >"$T_TMP/requests.sh" <<'SH'
w=$1 A=https://api.remote.test O=https://other.remote.test
cd "$w" || exit 1
env >env2.txt
# Requests to one host go out from one curl (--next), over one tunnel when curl keeps it:
# TCG pays seconds for each process and TLS handshake. "NAME CODE" lines in codes.txt.
q=()
c() { # NAME CURL-ARGS...: body and head into NAME.*
	local n=$1
	shift
	q+=(--next -sS --max-time 40 -o "$n.body" -D "$n.head" -w "$n %{http_code}\n" "$@")
}
go() { curl "${q[@]:1}" >>codes.txt 2>>curl.err; q=(); }
sig=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY")
printf 'a=%s\nb=%s\n' "$API_KEY" "$GH_TOKEN" >chunk.in
c hdr-api -H "x-api-key: $API_KEY" -H "Authorization: Bearer $GH_TOKEN" -H "x-jwt: $JWT_TOKEN" \
	-H "x-db-url: $DATABASE_URL" "$A/hdr-api?key=$API_KEY&tok=$GH_TOKEN"
c body-long --data-binary "k=$API_KEY" "$A/body-long"
c body-short --data-binary "t=$GH_TOKEN" "$A/body-short"
c chunked -H 'Transfer-Encoding: chunked' --data-binary @chunk.in "$A/chunked"
c encoded -H 'Content-Encoding: gzip' --data-binary "k=$API_KEY" "$A/encoded"
c echo "$A/echo?b64=$(printf %s "$API_KEY" | base64 -w0 | tr '+/' '-_')"
go
c hdr-other -H "x-api-key: $API_KEY" -H "Authorization: Bearer $GH_TOKEN" "$O/hdr-other?key=$API_KEY"
c body-other --data-binary "k=$API_KEY" "$O/body-other"
go
c sigv4-curl "${sig[@]}" "$A/sigv4-curl"
c sigv4-post "${sig[@]}" --data-binary 'payload=1' "$A/sigv4-post"
c sigv4-stream "${sig[@]}" -X PUT -H 'x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD' \
	-H 'x-amz-decoded-content-length: 3' --data-binary 'abc' "$A/sigv4-stream"
go
if python3 -c 'import botocore' 2>/dev/null; then
	python3 - "$A/sigv4-boto?b=2&a=1" >boto.out 2>&1 <<'PY'
import os, sys, urllib.request
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
r = AWSRequest(method="POST", url=sys.argv[1], data=b'{"q":1}', headers={"Content-Type": "application/json"})
SigV4Auth(Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]),
          "execute-api", "us-east-1").add_auth(r)
p = r.prepare()
with urllib.request.urlopen(urllib.request.Request(p.url, data=p.body, headers=dict(p.headers), method="POST"), timeout=40) as f:
    print("status", f.status)
PY
else
	echo "no botocore" >boto.out
fi
echo done
SH
assert_succeeds "the sandbox sends every request" box bash "$T_TMP/requests.sh" "$W"
assert_contains "$T_OUT" '^done$'
ENV2=$W/env2.txt
SAPI=$(inside API_KEY "$ENV2") SGH=$(inside GH_TOKEN "$ENV2")
code() { awk -v n="$1" '$1 == n { print $2 }' "$W/codes.txt" 2>/dev/null; }
for n in hdr-api hdr-other body-long body-short body-other chunked encoded echo sigv4-curl sigv4-post; do
	[ "$(code "$n")" = 200 ] && continue
	echo "# /$n answered '$(code "$n")': $(head -c 300 "$W/$n.body" 2>/dev/null | tr '\n' ' ')"
done
echo "# curl's errors: $(tr '\n' ' ' <"$W/curl.err" 2>/dev/null | cut -c1-500)"

# Headers: real at the inject host, the sentinel elsewhere.
assert_rec "x-api-key: the inject host reads the real API_KEY" hdr-api "hdr x-api-key: $(lit "$API_KEY")\$"
assert_rec "Authorization: Bearer: the inject host reads the real GH_TOKEN" hdr-api "hdr authorization: Bearer $GH_TOKEN\$"
assert_rec "another allowed host reads API_KEY's sentinel" hdr-other "hdr x-api-key: $(lit "$SAPI")\$"
assert_rec "another allowed host reads GH_TOKEN's sentinel" hdr-other "hdr authorization: Bearer $(lit "$SGH")\$"
# The request target.
assert_rec "the query: the inject host reads both real values" hdr-api "line GET /hdr-api\\?key=$API_KEY&tok=$GH_TOKEN HTTP/1\\.1\$"
assert_rec "the query: another allowed host reads the sentinel" hdr-other "line GET /hdr-other\\?key=$(lit "$SAPI") HTTP"
# Bodies: the length the server was told is the length it read and the body's.
assert_rec "a Content-Length body, real longer (108 for 47): the real value, told its length" \
	body-long "body told=$((2 + ${#API_KEY})) read=$((2 + ${#API_KEY})) k=$API_KEY\$"
assert_rec "a Content-Length body, real shorter (40 for 47): the real value, told its length" \
	body-short "body told=$((2 + ${#GH_TOKEN})) read=$((2 + ${#GH_TOKEN})) t=$GH_TOKEN\$"
assert_rec "a body to another allowed host keeps the sentinel" body-other "body told=[0-9]+ read=[0-9]+ k=$(lit "$SAPI")\$"
assert_rec "a chunked body: the real values" chunked "body told=chunked read=[0-9]+ a=$API_KEY\\\\nb=$GH_TOKEN\\\\n\$"
assert_rec "a body with a Content-Encoding is forwarded unchanged" encoded "body told=[0-9]+ read=[0-9]+ k=$(lit "$SAPI")\$"
# extract and decode.
assert_rec "DATABASE_URL: the inject host reads the real URL" hdr-api "hdr x-db-url: $(lit "$DATABASE_URL")\$"
assert_rec "JWT_TOKEN: the inject host reads the real token" hdr-api "hdr x-jwt: $(lit "$JWT_TOKEN")\$"
# Answers are not substituted: the server sent the sentinel back (it read it base64-encoded).
assert_eq "$SAPI" "$(cat "$W/echo.body" 2>/dev/null)" "an answer carrying the sentinel reaches the client unchanged"
# SigV4.
assert_rec "SigV4 (curl GET): signed again, the server verifies it with the real secret" sigv4-curl 'sigv4 ok$'
assert_rec "SigV4 (curl GET): with the real key id" sigv4-curl "hdr authorization: AWS4-HMAC-SHA256 Credential=$AWS_ACCESS_KEY_ID/"
assert_rec "SigV4 (curl POST, signed payload): verified with the real secret" sigv4-post 'sigv4 ok$'
if grep -q '^no botocore' "$W/boto.out"; then
	t_skip "SigV4 (botocore)" "python3-botocore is not installed (tools/install-deps.sh)"
else
	assert_rec "SigV4 (botocore, a query, a JSON body): verified with the real secret" sigv4-boto 'sigv4 ok$' ||
		echo "# botocore: $(tr '\n' ' ' <"$W/boto.out" | cut -c1-300)"
fi
assert_eq 403 "$(code sigv4-stream)" "a streaming SigV4 upload is refused 403"
assert_contains "$W/sigv4-stream.head" '^[Xx]-[Pp]roxy-[Ee]rror: blocked-by-sandbox-runtime' \
	"with X-Proxy-Error: blocked-by-sandbox-runtime"
assert_no_rec "the server read nothing of it" sigv4-stream line

# Events name the credentials put in, and none for the other host.
assert_event "an event of the inject host names API_KEY" "$(ev_names "$A" API_KEY)"
assert_event "an event of the inject host names GH_TOKEN" "$(ev_names "$A" GH_TOKEN)"
assert_event "an event of the inject host names JWT_TOKEN" "$(ev_names "$A" JWT_TOKEN)"
assert_event "an event of the inject host names AWS_SECRET_ACCESS_KEY" "$(ev_names "$A" AWS_SECRET_ACCESS_KEY)"
if jq -e -s "any(.[]; $(ev_names other.remote.test '[A-Z]'))" "$LOG" >/dev/null 2>&1; then
	t_fail "no event of the other host names a credential" "$(grep other.remote.test "$LOG" | head -n 3)"
else
	t_ok "no event of the other host names a credential"
fi

echo "# requests checked at ${SECONDS} s"

# 3. No real value in what bpfbox wrote or the sandbox kept: logs, stderr, the client's files.
assert_eq "" "$(with_reals "$T_TMP"/*.ndjson "$ERRLOG" "$W"/*)" \
	"no real value in the event logs, bpfbox's stderr or the sandbox's files"
assert_succeeds "the event log is not empty" test -s "$T_TMP/req.ndjson"
assert_eq "" "$(find /sys/fs/cgroup/bpfbox -mindepth 1 -maxdepth 1 -type d -name 'bb-*' 2>/dev/null)" \
	"no sandbox cgroup is left behind"
assert_succeeds "every event line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$T_TMP"/*.ndjson

echo "# logs checked at ${SECONDS} s"

# 4. Through the daemon: the administrator's policy (the ceiling) masks API_KEY; the caller's
# policy has no credentials rule. The caller's own value is the real one.
if ! command -v useradd >/dev/null || ! command -v runuser >/dev/null; then
	t_skip "masking through the daemon" "useradd or runuser is missing"
	exit
fi
id erin75 >/dev/null 2>&1 || useradd -m -s /bin/sh erin75
EH=$(getent passwd erin75 | cut -d: -f6)
mkdir -p "$EH/work" && chown -R erin75: "$EH" && chmod 0755 "$EH"
rm -f "$EH/work"/*
S=$(mktemp -d /tmp/bb75.XXXXXX)
chmod 0755 "$S"
cp "$CA" "$S/ca.pem" && chmod 0644 "$S/ca.pem"
mkdir -p "$S/admin" && chmod 0700 "$S/admin"
SOCK=$S/bpfbox.sock ALOG=$S/admin/events.ndjson
cat >"$S/admin/policy.json" <<JSON
{
  "network": { "allowedDomains": ["$A"], "deniedDomains": [],
               "tlsTerminate": { "extraCaCertPaths": ["$S/ca.pem"], "handshakeTimeoutMs": 60000 } },
  "filesystem": { "denyRead": [], "allowWrite": ["~/work"], "denyWrite": [] },
  "credentials": { "envVars": [{ "name": "API_KEY", "mode": "mask", "injectHosts": ["$A"] }] }
}
JSON
cat >"$S/caller.json" <<JSON
{
  "network": { "allowedDomains": ["$A"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["~/work"], "denyWrite": [] }
}
JSON
chmod 0644 "$S/caller.json"
daemon_start() {
	"$BPFBOX" daemon --socket "$SOCK" --config "$S/admin/policy.json" --log-file "$ALOG" >>"$S/admin/daemon.out" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && return 0
		sleep 0.1
	done
	return 1
}
assert_succeeds "the daemon starts with the administrator's mask of API_KEY" daemon_start
DKEY=DK$(rand 70)
cat >"$S/caller.sh" <<'SH'
printf 'API_KEY=%s\n' "$API_KEY" >"$HOME/work/env.txt"
curl -sS --max-time 40 -o /dev/null -w '%{http_code}\n' -H "x-api-key: $API_KEY" https://api.remote.test/daemon-hdr
SH
chmod 0644 "$S/caller.sh"
# shellcheck disable=SC2016 # the inner shell's arguments
t_exec bash -c 'cd "$1" && shift && runuser -u erin75 -- "$@"' sh "$EH" \
	env BPFBOX_SOCKET="$SOCK" API_KEY="$DKEY" "$BPFBOX" exec --policy "$S/caller.json" -- sh "$S/caller.sh"
assert_eq 0 "$T_RC" "the caller's sandbox runs through the daemon" || t_diag <"$T_OUT"
cp "$T_OUT" "$S/caller.out"
assert_contains "$EH/work/env.txt" "^API_KEY=${SENT}[a-z0-9_-]*\$" "the caller's sandbox sees a sentinel"
assert_rec "the inject host reads the caller's real value" daemon-hdr "hdr x-api-key: $DKEY\$"
hit=
for f in "$ALOG" "$S/admin/daemon.out" "$S/caller.out" "$EH/work/env.txt"; do
	grep -q -a -F -- "$DKEY" "$f" 2>/dev/null && hit="$hit ${f##*/}"
done
assert_eq "" "$hit" "the caller's real value is in no log, output or file of the sandbox"
daemon_stop
