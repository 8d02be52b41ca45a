#!/usr/bin/env bash
# The Debian package (make deb) on a real kernel: dpkg -i into the guest (its root is an
# overlay), bpfbox doctor, the daemon started with the unit's own ExecStart line (the
# guest has no systemd as PID 1; its NoNewPrivileges and CapabilityBoundingSet are applied
# with setpriv), a sandbox run by a non-root user through the daemon's socket, logrotate -f
# with the installed rule and later events in the new file, the unit's ExecReload after an
# edit of /etc/bpfbox/policy.json (systemctl reload), then dpkg --purge and nothing
# of bpfbox left: the package's files, /var/log/bpfbox, /run/bpfbox, pins, cgroups.
# Its subject is the package, not the kernel: `make vm-test` runs it on its second kernel
# only (BPFBOX_KERNEL_SHARE, tests/vm/lib.sh t_share_file).
. "$(dirname "$0")/lib.sh"
t_share_file 2

VERSION=$(cat "$T_ROOT/VERSION")
DEB=$T_ROOT/build/bpfbox_${VERSION}_amd64.deb
UNIT=/lib/systemd/system/bpfbox.service
BIN=/usr/bin/bpfbox
ADMIN_LOG=/var/log/bpfbox/events.ndjson
if [ ! -f "$DEB" ]; then
	command -v dpkg-buildpackage >/dev/null ||
		t_skip_all "no $DEB: dpkg-buildpackage is not installed (tools/install-deps.sh installs it; make deb builds the package)"
	t_fail "the package was built" "$DEB is missing although dpkg-buildpackage is installed: run make deb"
	exit 1
fi
for tool in dpkg setpriv runuser useradd logrotate; do
	command -v "$tool" >/dev/null || t_skip_all "$tool is missing in the guest"
done
if dpkg-query -W -f='${Status}' bpfbox 2>/dev/null | grep -q installed || [ -e "$BIN" ]; then
	t_fail "the guest starts without bpfbox installed" "$(dpkg-query -W -f='${Status}' bpfbox 2>&1; ls -l "$BIN" 2>&1)"
	exit 1
fi

DAEMON_PID=
cleanup() {
	[ -n "$DAEMON_PID" ] && kill -KILL "$DAEMON_PID" 2>/dev/null
	dpkg-query -W bpfbox >/dev/null 2>&1 && dpkg --purge bpfbox >/dev/null 2>&1
	userdel -r bb95 >/dev/null 2>&1
}
trap 'rc=$?; cleanup; (exit $rc); t_summary' EXIT

# What the package ships (files, not the directories it shares with others).
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' >"$T_TMP/files"
[ -s "$T_TMP/files" ] || { t_fail "dpkg-deb lists the package's files"; exit 1; }

# --- install ---
# man-db's dpkg trigger would re-index every manual page of the guest (minutes under TCG);
# without this flag file it skips that. The guest's root is an overlay: the host keeps it.
rm -f /var/lib/man-db/auto-update
assert_succeeds "dpkg -i installs the package" dpkg -i "$DEB"
cp "$T_OUT" "$T_TMP/install.out"
assert_contains "$T_TMP/install.out" "bpfbox: this host can enforce; enabling bpfbox.socket" \
	"postinst ran bpfbox doctor and, the host enforcing, enabled the socket"
[ -L /etc/systemd/system/sockets.target.wants/bpfbox.socket ] && t_ok "bpfbox.socket is enabled (sockets.target.wants)" ||
	t_fail "bpfbox.socket is enabled" "$(ls -l /etc/systemd/system/sockets.target.wants/ 2>&1)"
[ -e /etc/systemd/system/multi-user.target.wants/bpfbox.service ] &&
	t_fail "bpfbox.service itself is not enabled (the socket activates it)" ||
	t_ok "bpfbox.service itself is not enabled (the socket activates it)"
missing=$(while read -r f; do [ -e "$f" ] || echo "$f"; done <"$T_TMP/files")
assert_eq "" "$missing" "every file of the package is installed"
assert_eq "bpfbox $VERSION" "$("$BIN" --version 2>&1)" "bpfbox --version is VERSION"
assert_contains <(dpkg-query -W -f='${Conffiles}\n' bpfbox) '^ /etc/bpfbox/policy.json ' \
	"/etc/bpfbox/policy.json is a conffile"
assert_succeeds "the platform default policy passes policy check --strict" \
	"$BIN" policy check --strict /etc/bpfbox/policy.json
assert_eq "750 root:root" "$(stat -c '%a %U:%G' /var/log/bpfbox 2>&1)" "/var/log/bpfbox is root's alone (0750)"
assert_succeeds "the man pages are installed and render" sh -c \
	"gzip -dc /usr/share/man/man8/bpfbox.8.gz | grep -q '^.SH NAME' && gzip -dc /usr/share/man/man5/bpfbox-policy.5.gz | grep -q 'allowedDomains'"
assert_succeeds "the bash completion loads and completes commands" bash -c \
	'. /usr/share/bash-completion/bash_completion 2>/dev/null; . /usr/share/bash-completion/completions/bpfbox &&
	 COMP_WORDS=(bpfbox do) COMP_CWORD=1 COMP_LINE="bpfbox do" COMP_POINT=9 && _bpfbox && [ "${COMPREPLY[*]}" = doctor ]'

# --- doctor ---
assert_succeeds "bpfbox doctor: the guest can enforce" "$BIN" doctor

# --- the daemon, as the unit starts it ---
exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z ' 'a-z,' | sed 's/cap_/+/g')
nnp=$(sed -n 's/^NoNewPrivileges=//p' "$UNIT")
assert_eq "$BIN daemon" "$exec_start" "the unit's ExecStart runs the installed binary's daemon"
[ -n "$caps" ] && [ "$nnp" = yes ] && t_ok "the unit bounds capabilities and sets NoNewPrivileges" ||
	t_fail "the unit bounds capabilities and sets NoNewPrivileges" "caps='$caps' nnp='$nnp'"
# systemd's RuntimeDirectory= and LogsDirectory=: /run/bpfbox 0755, /var/log/bpfbox (shipped).
mkdir -p /run/bpfbox && chmod 0755 /run/bpfbox
# shellcheck disable=SC2086 # ExecStart is split into words, as systemd does for this line
setpriv --no-new-privs --bounding-set "-all,$caps" $exec_start >"$T_TMP/daemon.out" 2>&1 </dev/null &
DAEMON_PID=$!
for _ in $(seq 300); do
	[ -S /run/bpfbox/bpfbox.sock ] && [ -s /run/bpfbox/bpfbox.pid ] && break
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.1
done
if [ -S /run/bpfbox/bpfbox.sock ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
	t_ok "the daemon listens on /run/bpfbox/bpfbox.sock"
else
	t_fail "the daemon listens on /run/bpfbox/bpfbox.sock" "$(tail -n 20 "$T_TMP/daemon.out")"
fi
assert_eq "$DAEMON_PID" "$(cat /run/bpfbox/bpfbox.pid 2>&1)" "the daemon writes its pid to /run/bpfbox/bpfbox.pid"

# --- a sandbox run by a non-root user, through the daemon ---
id bb95 >/dev/null 2>&1 || useradd -m -s /bin/sh bb95
UH=$(getent passwd bb95 | cut -d: -f6)
mkdir -p "$UH/proj" "$UH/.ssh"
echo key >"$UH/.ssh/id_test"
echo key >"$UH/.ssh/id_later"
chmod 0700 "$UH/.ssh"
chown -R bb95:bb95 "$UH"
as_user() { runuser -u bb95 -- env -i HOME="$UH" PATH=/usr/bin:/bin sh -c "cd $UH/proj && $1"; }

t_exec as_user "$BIN exec -- sh -c 'id -u; echo x >made'"
[ "$T_RC" = 0 ] && grep -qx "$(id -u bb95)" "$T_OUT" && t_ok "bb95's sandbox runs through the daemon, as bb95" ||
	t_fail "bb95's sandbox runs through the daemon, as bb95" "$(t_cmd_diag as_user exec)"
assert_eq "bb95" "$(stat -c %U "$UH/proj/made" 2>&1)" "the file the sandbox wrote in the launch directory is bb95's"
# The caller's own log apart (its event lines would otherwise interleave with cat's message on stderr).
t_exec as_user "$BIN exec --log-file /dev/null -- cat $UH/.ssh/id_test"
[ "$T_RC" = 1 ] && grep -q "^cat: $UH/.ssh/id_test: Operation not permitted" "$T_OUT" && t_ok "the platform policy (the ceiling) keeps bb95's ~/.ssh unreadable" ||
	t_fail "the platform policy keeps bb95's ~/.ssh unreadable" "$(t_cmd_diag as_user exec cat)"
assert_contains "$ADMIN_LOG" "\"path\":\"$UH/.ssh/id_test\"" "the refusal is in the daemon's admin log"

# --- logrotate, with the installed rule ---
before=$(wc -l <"$ADMIN_LOG" 2>/dev/null || echo 0)
assert_succeeds "logrotate -f rotates the admin log (the postrotate signals the daemon)" \
	logrotate -f -s "$T_TMP/logrotate.state" /etc/logrotate.d/bpfbox
[ -s "$ADMIN_LOG.1" ] && [ "$(wc -l <"$ADMIN_LOG.1")" = "$before" ] && t_ok "the old events moved to events.ndjson.1" ||
	t_fail "the old events moved to events.ndjson.1" "$(ls -l /var/log/bpfbox 2>&1)"
t_exec as_user "$BIN exec -- cat $UH/.ssh/id_later"
assert_contains "$ADMIN_LOG" "\"path\":\"$UH/.ssh/id_later\"" "a later event is written to the new events.ndjson"
assert_not_contains "$ADMIN_LOG.1" "id_later" "and not to the rotated file"

# --- systemctl reload bpfbox: the unit's ExecReload, run as systemd would run it ---
reload=$(sed -n 's/^ExecReload=//p' "$UNIT")
assert_eq '/bin/kill -HUP $MAINPID' "$reload" "the unit's ExecReload signals the daemon (systemctl reload bpfbox)"
echo notes >"$UH/proj/notes"
chown bb95:bb95 "$UH/proj/notes"
t_exec as_user "$BIN exec --log-file /dev/null -- cat $UH/proj/notes"
assert_eq 0 "$T_RC" "bb95 reads proj/notes under the installed policy"
jq '.filesystem.denyRead += ["~/proj/notes"]' /etc/bpfbox/policy.json >"$T_TMP/narrower.json" &&
	cat "$T_TMP/narrower.json" >/etc/bpfbox/policy.json
sh -c "${reload//\$MAINPID/$DAEMON_PID}"
for _ in $(seq 300); do grep -q '"ceiling-reloaded"' "$ADMIN_LOG" && break; sleep 0.1; done
assert_contains "$ADMIN_LOG" '"ceiling-reloaded"' "the daemon reloads the edited /etc/bpfbox/policy.json"
t_exec as_user "$BIN exec --log-file /dev/null -- cat $UH/proj/notes"
[ "$T_RC" = 1 ] && grep -q "Operation not permitted" "$T_OUT" && t_ok "after the reload the new ceiling holds: proj/notes is refused" ||
	t_fail "after the reload the new ceiling holds: proj/notes is refused" "$(t_cmd_diag as_user exec cat notes)"

# --- purge ---
assert_succeeds "dpkg --purge removes the package" dpkg --purge bpfbox
cp "$T_OUT" "$T_TMP/purge.out"
for _ in $(seq 50); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DAEMON_PID" 2>/dev/null && t_fail "removal stopped the daemon" "$(cat "$T_TMP/purge.out")" ||
	t_ok "removal stopped the daemon"
DAEMON_PID=
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done <"$T_TMP/files")
assert_eq "" "$left" "no file of the package is left"
cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
left=$(ls -d /etc/bpfbox /var/log/bpfbox /run/bpfbox /var/lib/bpfbox /usr/share/bpfbox /usr/libexec/bpfbox \
	/usr/share/doc/bpfbox /sys/fs/bpf/bpfbox "$cg/bpfbox" 2>/dev/null)
assert_eq "" "$left" "no directory of bpfbox is left (config, logs, run-time state, pins, cgroups)"
left=$(find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled -name '*bpfbox*' 2>/dev/null)
assert_eq "" "$left" "no unit symlink or enablement state is left"
dpkg-query -W bpfbox >/dev/null 2>&1 && t_fail "dpkg no longer knows bpfbox" "$(dpkg-query -W -f='${Status}' bpfbox)" ||
	t_ok "dpkg no longer knows bpfbox"
