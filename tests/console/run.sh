#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The console's browser test: the real Cockpit (cockpit-ws with a local session, no login)
# serving the page as the built package bpfbox-cockpit installs it (extracted from
# BUILD/bpfbox-cockpit_VERSION_all.deb; the page of tools/console/build.sh when no package
# was built), the real bpfbox binary behind it, and
# Debian's Chromium driven by Playwright (tests/console/policy_page.mjs). It runs in a mount
# namespace of its own where /etc/bpfbox, /var/lib/bpfbox and /var/log/bpfbox are empty
# tmpfs, so what the pages write and read is never the host's. The policy page needs no kernel enforcement, so it
# runs on the host, not in the VM (docs/console.md).
# usage: run.sh BUILD
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
ws=/usr/lib/cockpit/cockpit-ws
for need in "$ws" /usr/bin/cockpit-bridge /usr/bin/chromium; do
	[ -x "$need" ] || { echo "console-test: $need missing (make deps installs cockpit-ws, cockpit-bridge, chromium)"; exit 1; }
done
share=$build/console/share
deb=$build/bpfbox-cockpit_$(cat "$root/VERSION")_all.deb
if [ -f "$deb" ]; then
	rm -rf "$build/console/pkg"
	dpkg-deb -x "$deb" "$build/console/pkg"
	share=$build/console/pkg/usr/share
	echo "# console-test: the page from $deb"
else
	echo "# console-test: no $deb (make deb): the page from tools/console/build.sh"
fi
[ -f "$share/cockpit/bpfbox/manifest.json" ] || { echo "console-test: no page in $share/cockpit/bpfbox"; exit 1; }
made=()
for d in /etc/bpfbox /var/lib/bpfbox /var/log/bpfbox; do
	[ -d "$d" ] || { mkdir -p "$d"; made+=("$d"); }
done
cleanup() {
	for d in "${made[@]}"; do rmdir "$d" 2>/dev/null || true; done
}
trap cleanup EXIT
export BB_BUILD=$build BB_ROOT=$root BB_WS=$ws BB_SHARE=$share
# Every temporary file of the run (Chromium's profiles, the session bus below) in build/,
# removed at the end: none is left in the host's /tmp.
export TMPDIR=$build/console/tmp
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"
trap 'cleanup; rm -rf "$TMPDIR"' EXIT
# A PID namespace too: when its first process ends, the kernel ends every other one in it,
# so nothing the test started outlives it (cockpit-bridge starts a session bus of its own,
# which would otherwise stay behind, one per run).
unshare -m -p -f --mount-proc --propagation private bash -euo pipefail -c '
	mount -t tmpfs -o mode=0755 bpfbox-etc /etc/bpfbox
	mount -t tmpfs -o mode=0755 bpfbox-lib /var/lib/bpfbox
	mount -t tmpfs -o mode=0750 bpfbox-log /var/log/bpfbox
	# A session bus of the test'"'"'s own, its socket in TMPDIR (cockpit-bridge would start one
	# in /tmp whatever TMPDIR says); the PID namespace ends it with the rest.
	DBUS_SESSION_BUS_ADDRESS=$(dbus-daemon --session --address="unix:dir=$TMPDIR" --fork --print-address)
	export DBUS_SESSION_BUS_ADDRESS
	port=$(python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])")
	PATH=$BB_BUILD:$PATH XDG_DATA_DIRS=$BB_SHARE:/usr/share \
		"$BB_WS" --no-tls -a 127.0.0.1 -p "$port" --local-session=/usr/bin/cockpit-bridge \
		>"$BB_BUILD/console/ws.log" 2>&1 &
	wspid=$!
	# The session'"'"'s ssh-agent makes its directory in /tmp whatever TMPDIR says; ended with
	# SIGTERM it removes it (the namespace'"'"'s end would SIGKILL it and leave it). pkill sees
	# this PID namespace only.
	trap "kill $wspid 2>/dev/null; wait $wspid 2>/dev/null || true; pkill -TERM -x ssh-agent || true; sleep 0.2" EXIT
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/cockpit/@localhost/bpfbox/index.html" && break
		sleep 0.1
	done
	for t in policy_page events_page sandboxes_page; do
		NODE_PATH=$BB_BUILD/console/npm/node_modules node "$BB_ROOT/tests/console/$t.mjs" \
			"http://127.0.0.1:$port" "$BB_BUILD/console/screenshots"
		rm -rf /etc/bpfbox/* /var/lib/bpfbox/* /var/log/bpfbox/*
	done
'
