#!/usr/bin/env bash
# The console's sandboxes page against a real daemon and a real user (issue 33): the page of
# the built bpfbox-cockpit package (extracted as tests/console/run.sh does; the page of
# make console when no package was built) served by the real cockpit-ws in the guest,
# Debian's Chromium driven by tests/console/sandboxes_page.mjs. A sandbox an ordinary user
# started through the daemon, after one refusal, is listed with its user, command, the kept
# version of the administrator's policy it runs under and its one refusal; Stop on the page
# ends it: its process is gone and so is its registry entry. The doctor's verdict shown is
# this kernel's (enforceable). On the refusals page, following the daemon's real log, a write
# the user's next sandbox is refused is listed, picked and proposed, and the proposal is the
# administrator's draft. The service card talks to a real systemd (PID 1 of namespaces of its
# own, tests/vm/servers/systemd.sh) holding the package's units: Enable leaves bpfbox.socket
# enabled and listening, Disable both units stopped and disabled, as systemctl says after each,
# and the policy file untouched. The policy page needs no kernel: it runs on the host (make
# console-test), as do the refusals page's filters and counts over the documented examples. Its subject is the page over a sandbox the other files prove on
# both kernels: it runs on one (BPFBOX_KERNEL_SHARE, t_share_file).
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/systemd.sh
. "$T_ROOT/tests/vm/servers/systemd.sh"
t_share_file 1

WS=/usr/lib/cockpit/cockpit-ws
NPM=$T_ROOT/build/console/npm/node_modules
for need in "$WS" /usr/bin/cockpit-bridge /usr/bin/chromium "$NPM/playwright-core"; do
	[ -e "$need" ] || { t_fail "the console's test tools are there" "$need missing (make deps; make console)"; exit 1; }
done
DEB=$T_ROOT/build/bpfbox-cockpit_$(cat "$T_ROOT/VERSION")_all.deb
S=$(mktemp -d /tmp/bb96.XXXXXX)
chmod 0755 "$S"
if [ -f "$DEB" ]; then
	dpkg-deb -x "$DEB" "$S/pkg"
	SHARE=$S/pkg/usr/share
else
	SHARE=$T_ROOT/build/console/share
fi
DPID='' EPID='' WSPID='' UNITS_ADDED=''
cleanup96() {
	[ -n "$WSPID" ] && kill "$WSPID" 2>/dev/null && wait "$WSPID" 2>/dev/null
	[ "$T_FAIL" -eq 0 ] || sed 's/^/# systemd: /' "$SD_LOG" 2>/dev/null | tail -n 20
	sd_stop
	for u in $UNITS_ADDED; do rm -f "/lib/systemd/system/$u" "/etc/systemd/system/sockets.target.wants/$u" \
		"/etc/systemd/system/multi-user.target.wants/$u"; done
	[ -n "$EPID" ] && kill "$EPID" 2>/dev/null && wait "$EPID" 2>/dev/null
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	[ "$T_FAIL" -eq 0 ] || { tail -n 20 "$S/daemon.out" "$S/ws.log" 2>/dev/null
		grep -a 'out\.o' /var/log/bpfbox/events.ndjson | tail -n 3; } | sed 's/^/# /'
	rm -rf "$S" /etc/bpfbox /var/lib/bpfbox/policy-history /var/lib/bpfbox/drafts /var/log/bpfbox
}
trap 'rc=$?; cleanup96; (exit $rc); t_summary' EXIT

id carol96 >/dev/null 2>&1 || useradd -m -s /bin/sh carol96
CHOME=$(getent passwd carol96 | cut -d: -f6)
runuser -u carol96 -- mkdir -p "$CHOME/proj"
mkdir -p /etc/bpfbox
printf '{ "network": { "allowedDomains": [], "deniedDomains": [] },\n  "filesystem": { "denyRead": [], "allowWrite": [], "denyWrite": [] } }\n' >"$S/v1.json"
assert_succeeds "the administrator's policy applied (version 1)" "$BPFBOX" policy apply --message console "$S/v1.json"
SOCK=$S/bpfbox.sock
mkdir -p /var/log/bpfbox
"$BPFBOX" daemon --socket "$SOCK" --config /etc/bpfbox/policy.json --log-file /var/log/bpfbox/events.ndjson \
	>"$S/daemon.out" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.2; done
assert_succeeds "the daemon listens" test -S "$SOCK"

runuser -u carol96 -- env BPFBOX_SOCKET="$SOCK" "$BPFBOX" exec --log-file /dev/null -- \
	sh -c "echo x >/etc/bb96-refused; exec sleep 600" </dev/null >/dev/null 2>&1 &
EPID=$!
carol_sb() { "$BPFBOX" ps --json | jq -er '[.[] | select(.user == "carol96" and .refusals >= 1)][0].id'; }
for _ in $(seq 150); do carol_sb >/dev/null 2>&1 && break; sleep 0.2; done
SB=$(carol_sb 2>/dev/null)
assert_succeeds "carol's sandbox runs, after one refusal" test -n "$SB"

# A real systemd (tests/vm/servers/systemd.sh) with the package's two units installed as dpkg
# puts them, not enabled: the service card's Enable and Disable go to it.
BDEB=$T_ROOT/build/bpfbox_$(cat "$T_ROOT/VERSION")_amd64.deb
UNITS=$T_ROOT/tools/systemd
if [ -f "$BDEB" ]; then
	dpkg-deb -x "$BDEB" "$S/bpkg" && UNITS=$(dirname "$(find "$S/bpkg" -name bpfbox.socket | head -n 1)")
fi
for u in bpfbox.socket bpfbox.service; do
	[ -e "/lib/systemd/system/$u" ] || { cp "$UNITS/$u" "/lib/systemd/system/$u" && UNITS_ADDED="$UNITS_ADDED $u"; }
done
POLICY_SUM=$(sha256sum </etc/bpfbox/policy.json)
t0=$SECONDS
assert_succeeds "a real systemd runs (PID 1 of its own namespaces), its bus answers" sd_start 240
echo "# systemd booted sockets.target in $((SECONDS - t0)) s"
SD_STATE="echo \$(nsenter -t $SD_PID -m -p systemctl is-enabled bpfbox.socket) \$(nsenter -t $SD_PID -m -p systemctl is-active bpfbox.socket) \$(nsenter -t $SD_PID -m -p systemctl is-enabled bpfbox.service) \$(nsenter -t $SD_PID -m -p systemctl is-active bpfbox.service)"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PATH=$T_ROOT/build:$PATH XDG_DATA_DIRS=$SHARE:/usr/share DBUS_SYSTEM_BUS_ADDRESS=$SD_BUS \
	"$WS" --no-tls -a 127.0.0.1 -p "$port" --local-session=/usr/bin/cockpit-bridge >"$S/ws.log" 2>&1 &
WSPID=$!
for _ in $(seq 150); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/cockpit/@localhost/bpfbox/sandboxes.html" && break
	sleep 0.2
done
# The page test's own TAP lines go to a file: this file's numbering stays its own.
BB_BUILD=$T_ROOT/build BB_SYSTEMD_STATE_CMD=$SD_STATE BB_SANDBOX_ID=$SB BB_SANDBOX_USER=carol96 BB_SANDBOX_COMMAND="sh -c echo x" \
	BB_SANDBOX_POLICY="version 1 (in force)" BB_TIMEOUT_MS=240000 NODE_PATH=$NPM \
	BB_REFUSE_PATH="$CHOME/proj/out.o" BB_REFUSE_CMD="cd / && runuser -u carol96 -- env BPFBOX_SOCKET='$SOCK' \
		'$BPFBOX' exec --log-file /dev/null -- sh -c 'echo x >$CHOME/proj/out.o' </dev/null >/dev/null 2>&1; true" \
	node "$T_ROOT/tests/console/sandboxes_page.mjs" "http://127.0.0.1:$port" >"$S/page.tap" 2>&1
rc=$?
sed 's/^/# page: /' "$S/page.tap"
assert_eq 0 "$rc" "the sandboxes page test passes in Chromium (its lines above)"
assert_contains "$S/page.tap" "^ok .* - the doctor's verdict as doctor gives it \\(enforceable: true\\)" \
	"...the page says this kernel can enforce"
assert_contains "$S/page.tap" "^ok .* - systemd: bpfbox.socket enabled and listening" \
	"...Enable on the service card: systemd enabled and started bpfbox.socket"
assert_contains "$S/page.tap" "^ok .* - systemd: both units disabled and stopped" \
	"...Disable: systemd stopped and disabled both units"
assert_eq "$POLICY_SUM" "$(sha256sum </etc/bpfbox/policy.json)" "...and the policy file was not touched"
assert_contains "$S/page.tap" "^ok .* - Stop: it leaves the list" "...Stop was pressed and the sandbox left the list"
assert_contains "$S/page.tap" "^ok .* - the proposal is the administrator's draft" \
	"...a real refusal on the refusals page, proposed, is the administrator's draft"
assert_succeeds "...and the refused write left nothing" test ! -e "$CHOME/proj/out.o"
assert_succeeds "carol's sandbox process has ended" \
	sh -c "for i in \$(seq 100); do kill -0 $EPID 2>/dev/null || exit 0; sleep 0.2; done; exit 1"
wait "$EPID" 2>/dev/null
EPID=''
assert_fails "...its registry entry is gone" sh -c "'$BPFBOX' ps --json | jq -e --arg id '$SB' 'any(.[]; .id == \$id)'"
assert_succeeds "...and its refused write left nothing" test ! -e /etc/bb96-refused
assert_succeeds "the draft names the write" jq -e --arg p "$CHOME/proj/out.o" '.filesystem.allowWrite | index($p)' \
	/var/lib/bpfbox/drafts/root.json
sd_stop
assert_succeeds "the test's systemd has ended, its cgroups are gone" test ! -e "$SD_CG"
