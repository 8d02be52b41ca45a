#!/usr/bin/env bash
# Who the command runs as: under sudo the user who ran it (uid, gid, groups,
# home, files), --user overriding that, uid 0 without capabilities otherwise;
# ~ meaning that user's home even when HOME=/root. Signals and the terminal:
# test_59_signals.sh.
. "$(dirname "$0")/lib.sh"
# Its subject is the identity switch in user space (setresuid, groups, home), not the kernel: `make vm-test` runs it on one kernel only (BPFBOX_KERNEL_SHARE,
# tests/vm/lib.sh t_share_file, docs/vm.md).
t_share_file 2

. "$(dirname "$0")/helpers/users_lib.sh"

status_of() { grep -E "^$1:" "$T_TMP/out" | awk '{print $2, $3, $4, $5}'; }

ID_SCRIPT='grep -E "^(Uid|Gid|Groups|CapEff|CapPrm|NoNewPrivs):" /proc/self/status;
echo "HOME=$HOME USER=$USER LOGNAME=$LOGNAME SHELL=$SHELL"; echo "PWD=$(pwd)";
rm -f made; touch made && echo "MADE=$(stat -c %U:%G made)"; echo "TMPOWNER=$(stat -c %U "$TMPDIR")"'

# --- sudo ---
fresh
as_sudo -- /bin/sh -c "$ID_SCRIPT" >"$T_TMP/out" 2>&1
rc=$?
cp "$T_TMP/out" "$T_TMP/sudo.out"
assert_eq 0 "$rc" "sudo: the command runs"
assert_eq "$AUID $AUID $AUID $AUID" "$(status_of Uid)" "sudo: real, effective, saved and fs uid are alice's"
assert_eq "$AGID $AGID $AGID $AGID" "$(status_of Gid)" "sudo: all four gids are alice's"
assert_contains "$T_TMP/out" "^Groups:.*\b$DEVS\b" "sudo: alice's supplementary group (initgroups)"
assert_contains "$T_TMP/out" '^CapEff:[[:space:]]+0+$' "sudo: no effective capability"
assert_contains "$T_TMP/out" '^CapPrm:[[:space:]]+0+$' "sudo: no permitted capability"
assert_contains "$T_TMP/out" '^NoNewPrivs:[[:space:]]+1$' "sudo: no new privileges"
assert_contains "$T_TMP/out" "^HOME=$AH USER=alice58 LOGNAME=alice58 SHELL=/bin/bash\$" \
	"sudo: HOME, USER, LOGNAME, SHELL from the passwd entry, not HOME=/root"
assert_contains "$T_TMP/out" "^PWD=$PROJ\$" "sudo: the working directory is kept"
assert_contains "$T_TMP/out" '^MADE=alice58:alice58$' "sudo: a file made in the user's project is the user's"
assert_contains "$T_TMP/out" '^TMPOWNER=alice58$' "sudo: the private TMPDIR belongs to the user"
assert_ev ".event.action == \"sandbox-start\" and .user.id == \"$AUID\" and .user.name == \"alice58\" and (.message | test(\"as alice58\"))" \
	"sudo: the start event names the user (user.id, user.name)"
assert_ev ".event.action == \"sandbox-exit\" and .user.name == \"alice58\"" "sudo: the exit event carries user.name"

# ~ is alice's home although HOME=/root: her key is protected, her own 0600 file readable.
fresh
t_exec as_sudo -- /bin/cat "$AH/.ssh/id_test"
[ "$T_RC" -ne 0 ] && grep -q 'Operation not permitted' "$T_OUT" && t_ok "sudo: ~/.ssh in the policy protects alice's key (HOME=/root)" ||
	t_fail "sudo: ~/.ssh protects alice's key" "$(t_cmd_diag cat)"
assert_ev ".event.action == \"open-read\" and .rule.name == \"denyRead:$AH/.ssh\" and .user.id == \"$AUID\" and .user.name == \"alice58\" and .process.user.id == \"$AUID\"" \
	"sudo: the refusal names rule denyRead:~/.ssh resolved to alice's home, and user.id/user.name"
t_exec as_sudo -- /bin/sh -c "cat $AH/.config/secret; echo x >$AH/outside || echo OUTSIDE-REFUSED; echo x >$PROJ/inside && echo INSIDE-OK"
assert_contains "$T_OUT" '^mine$' "sudo: alice reads her own 0600 file (uid 0 without capabilities could not)"
assert_contains "$T_OUT" '^OUTSIDE-REFUSED$' "sudo: writing outside ~/project is refused"
assert_contains "$T_OUT" '^INSIDE-OK$' "sudo: writing in ~/project works"
assert_eq "alice58" "$(stat -c %U "$PROJ/inside" 2>&1)" "sudo: the file written belongs to alice"

# Mismatched or incomplete variables: nothing runs.
fresh
t_exec env SUDO_USER=bob58 SUDO_UID="$AUID" SUDO_GID="$AGID" "$BPFBOX" exec --policy "$P" -- /bin/touch "$S/ran"
assert_eq 125 "$T_RC" "SUDO_USER not matching SUDO_UID's name: exit 125"
assert_contains "$T_OUT" "SUDO_USER=bob58 does not match SUDO_UID=$AUID.*alice58" "the mismatch is named"
[ -e "$S/ran" ] && t_fail "the mismatched run ran nothing" || t_ok "the mismatched run ran nothing"

# The user cannot enter the launch directory: 125 with a clear message.
LOCKED=$S/locked
mkdir -p "$LOCKED" && chmod 0700 "$LOCKED"
t_exec sh -c "cd $LOCKED && env SUDO_USER=alice58 SUDO_UID=$AUID SUDO_GID=$AGID $BPFBOX exec --policy $P -- /bin/true"
assert_eq 125 "$T_RC" "a working directory the user cannot enter: exit 125"
assert_contains "$T_OUT" "user alice58 \(uid $AUID\) cannot enter the working directory $LOCKED: Permission denied" \
	"the message names the user and the directory"

# --- --user ---
t_exec as_sudo --user bob58 -- /bin/sh -c 'grep ^Uid: /proc/self/status; echo "HOME=$HOME"'
assert_contains "$T_OUT" "^Uid:[[:space:]]+$BUID[[:space:]]" "--user overrides the sudo variables"
assert_contains "$T_OUT" "^HOME=/home/bob58\$" "--user: bob's home"
t_exec as_root --user "$AUID:bb58devs" -- /bin/sh -c 'grep -E "^(Uid|Gid):" /proc/self/status'
assert_contains "$T_OUT" "^Uid:[[:space:]]+$AUID[[:space:]]" "--user UID:GROUP: the uid"
assert_contains "$T_OUT" "^Gid:[[:space:]]+$DEVS[[:space:]]+$DEVS" "--user UID:GROUP: the group as primary gid"
fresh
t_exec as_sudo --user root -- /bin/sh -c 'grep -E "^(Uid|CapEff):" /proc/self/status'
assert_contains "$T_OUT" '^Uid:[[:space:]]+0[[:space:]]+0' "--user root keeps uid 0"
assert_contains "$T_OUT" '^CapEff:[[:space:]]+0+$' "--user root: still no capability"
assert_status "--user of an unknown user: 125" 125 as_root --user nosuchuser58 -- /bin/true
assert_contains "$T_OUT" "no user 'nosuchuser58'" "--user: the unknown user is named"

# --- neither: uid 0 without capabilities, and said so ---
fresh
t_exec as_root -- /bin/sh -c 'grep -E "^(Uid|CapEff):" /proc/self/status'
assert_contains "$T_OUT" '^Uid:[[:space:]]+0[[:space:]]+0' "no sudo, no --user: uid 0"
assert_contains "$T_OUT" '^CapEff:[[:space:]]+0+$' "no sudo, no --user: no capability"
assert_ev '.event.action == "sandbox-start" and .user.id == "0" and (.message | test("uid 0 without capabilities: no sudo user and no --user"))' \
	"the start event says the command runs as uid 0 without capabilities"
assert_ev '.event.action == "sandbox-start" and .user.id == "0" and .user.name == "root"' \
	"the start event names uid 0 (user.name root)"
# uid 0's name is read from /etc/passwd, not assumed: renamed there (the guest's file, for one run), the
# start event says so.
fresh
cp /etc/passwd "$T_TMP/passwd.keep"
sed -i 's/^root:/toor58:/' /etc/passwd
as_root -- /bin/true
cp "$T_TMP/passwd.keep" /etc/passwd
assert_ev '.event.action == "sandbox-start" and .user.id == "0" and .user.name == "toor58"' \
	"uid 0 renamed in /etc/passwd: the start event names it toor58"
assert_eq root "$(getent passwd 0 | cut -d: -f1)" "the guest's /etc/passwd is back as it was"
assert_succeeds "--help" "$BPFBOX" exec --help
assert_contains "$T_OUT" "otherwise uid 0, always without capabilities" "--help says who the command runs as"
assert_contains "$T_OUT" "--user NAME\|UID\[:GROUP\]" "--help documents --user"

# --- real sudo, when the guest can run it (setuid over 9p and overlay) ---
if command -v sudo >/dev/null; then
	echo 'alice58 ALL=(root) NOPASSWD: ALL' >/etc/sudoers.d/bb58 && chmod 0440 /etc/sudoers.d/bb58
	if (cd "$PROJ" && setpriv --reuid=alice58 --regid=alice58 --init-groups sudo -n true) >/dev/null 2>&1; then
		t_exec sh -c "cd $PROJ && setpriv --reuid=alice58 --regid=alice58 --init-groups sudo -n $BPFBOX exec --policy $P -- /bin/sh -c 'id -u; id -G; echo \$HOME; pwd'"
		assert_contains "$T_OUT" "^$AUID\$" "real sudo: the command runs as the user who ran sudo"
		assert_contains "$T_OUT" "(^| )$DEVS( |\$)" "real sudo: with the user's groups"
		assert_contains "$T_OUT" "^$AH\$" "real sudo: HOME is the user's"
		assert_contains "$T_OUT" "^$PROJ\$" "real sudo: in the user's directory"
	else
		t_skip "real sudo" "sudo cannot run in this guest: $(cd "$PROJ" && setpriv --reuid=alice58 --regid=alice58 --init-groups sudo -n true 2>&1 | head -1)"
	fi
	rm -f /etc/sudoers.d/bb58
else
	t_skip "real sudo" "sudo is not installed (tools/install-deps.sh installs it)"
fi

users_finish
