#!/usr/bin/env bash
# Usage: tests/check-postinst.sh [BUILD]
#
# The built package's postinst on a first install, with bpfbox, deb-systemd-helper,
# deb-systemd-invoke and systemctl replaced by recording stubs (nothing on this host is
# changed): when `bpfbox doctor` fails, doctor's failed checks are printed and nothing is
# enabled or started; when it passes, bpfbox.socket (only) is enabled. Run by `make test`
# after `make deb`; the real install is tests/vm/test_95_package.sh.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
deb=$build/bpfbox_$(cat "$root/VERSION")_amd64.deb
[ -f "$deb" ] || { echo "check-postinst: $deb missing (make deb)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -e "$deb" "$tmp/ctl"
mkdir "$tmp/bin"
for stub in deb-systemd-helper deb-systemd-invoke systemctl; do
	cat >"$tmp/bin/$stub" <<EOF
#!/bin/sh
echo "$stub \$*" >>"$tmp/calls"
# No enablement state yet (a first install), nothing was enabled before.
case "\$1" in debian-installed | --quiet) exit 1 ;; esac
exit 0
EOF
done
fail=0
run() { # DOCTOR_STATUS
	cat >"$tmp/bin/bpfbox" <<EOF
#!/bin/sh
echo "PASS kernel            Linux"
[ $1 = 0 ] && exit 0
echo "FAIL lsm-list          bpf is not in the active LSM list"
echo "                       fix: add lsm=...,bpf to the kernel command line"
exit 1
EOF
	chmod +x "$tmp/bin/"*
	: >"$tmp/calls"
	PATH=$tmp/bin:$PATH sh "$tmp/ctl/postinst" configure '' >"$tmp/out" 2>&1 ||
		{ echo "check-postinst: postinst failed (doctor status $1):"; cat "$tmp/out"; fail=1; }
}
check() { # NAME COMMAND...
	local name=$1
	shift
	if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fail=1; fi
}

run 1
check "doctor failing: its failed check and fix are printed" grep -q 'bpfbox:.*FAIL lsm-list' "$tmp/out"
check "doctor failing: the units are said to stay disabled" grep -q 'left disabled' "$tmp/out"
check "doctor failing: nothing is enabled" bash -c "! grep -E '^deb-systemd-helper enable' '$tmp/calls'"
check "doctor failing: nothing is started" bash -c "! grep -E '(invoke|systemctl) (start|restart|try-restart)' '$tmp/calls'"

run 0
check "doctor passing: bpfbox.socket is enabled" grep -qx 'deb-systemd-helper enable bpfbox.socket' "$tmp/calls"
check "doctor passing: bpfbox.service is not enabled (the socket activates it)" \
	bash -c "! grep -E '^deb-systemd-helper enable .*bpfbox.service' '$tmp/calls'"
if [ -d /run/systemd/system ]; then
	check "doctor passing, systemd running: bpfbox.socket is started" \
		grep -qx 'deb-systemd-invoke start bpfbox.socket' "$tmp/calls"
fi
exit $fail
