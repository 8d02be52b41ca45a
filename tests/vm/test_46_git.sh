#!/usr/bin/env bash
# git inside the sandbox: repositories the sandbox makes (init, clone over a
# local path, file:// and smart HTTP through the proxy, worktrees,
# submodules, bare) are git's to build and use; no hook git would run can be
# planted, in a new repository or an existing one; executing keys written
# into a new repository's config are reported when the sandbox ends and,
# under "strict" (the default), removed. docs/git.md.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/vm/servers/net.sh
. "$T_ROOT/tests/vm/servers/net.sh"
# After net.sh: fs_lib's assert_event (action, path, rule) is the one used here.
# shellcheck source=tests/vm/helpers/fs_lib.sh
. "$(dirname "$0")/helpers/fs_lib.sh"
trap 'rc=$?; net_cleanup; (exit $rc); t_summary' EXIT

P=$T_TMP/policy.json
PR=$T_TMP/policy-report.json
LOG=$T_TMP/log.ndjson
ALL=$T_TMP/all.ndjson
W=$T_TMP/work
SRV=$T_TMP/srv
mkdir -p "$W" "$SRV"
for f in "$P" "$PR"; do
	mode=strict
	[ "$f" = "$PR" ] && mode=report
	cat >"$f" <<JSON
{
  "network": { "allowedDomains": ["git.remote.test"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [] },
  "bpfbox": { "git": { "newRepositories": "$mode" } }
}
JSON
done
G=(git -c user.name=t -c user.email=t@t -c protocol.file.allow=always -c init.defaultBranch=main)
sh_in() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- bash -c "$1"; }
sh_report() { "$BPFBOX" exec --policy "$PR" --log-file "$LOG" -- bash -c "$1"; }
# has TEXT ERE NAME / lacks TEXT ERE NAME: assert_contains on a string.
has() { printf '%s\n' "$1" >"$T_TMP/text"; assert_contains "$T_TMP/text" "$2" "$3"; }
lacks() { printf '%s\n' "$1" >"$T_TMP/text"; assert_not_contains "$T_TMP/text" "$2" "$3"; }
git_line() { jq -c --arg a "$1" --arg k "$2" 'select(.event.action == $a and ((.bpfbox.git.key // "") == $k or $k == ""))' "$LOG"; }

# Made outside the sandbox: the origin every clone reads, and a repository that existed before.
"${G[@]}" init -q --bare "$SRV/origin.git"
"${G[@]}" clone -q "$SRV/origin.git" "$T_TMP/seed" 2>/dev/null
echo one >"$T_TMP/seed/a"
"${G[@]}" -C "$T_TMP/seed" add a
"${G[@]}" -C "$T_TMP/seed" commit -qm one
echo two >"$T_TMP/seed/b"
"${G[@]}" -C "$T_TMP/seed" add b
"${G[@]}" -C "$T_TMP/seed" commit -qm two
"${G[@]}" -C "$T_TMP/seed" push -q origin HEAD:main 2>/dev/null
git -C "$SRV/origin.git" symbolic-ref HEAD refs/heads/main
"${G[@]}" clone -q "$SRV/origin.git" "$W/old" 2>/dev/null
cp "$W/old/.git/config" "$T_TMP/old-config"
ORIGIN=$SRV/origin.git
GS="git -c user.name=t -c user.email=t@t -c protocol.file.allow=always -c init.defaultBranch=main"

# 1. Repositories the sandbox makes work, and so does everything an agent does in them.
fresh
assert_succeeds "git init, commit, branch, rebase and gc in a new repository" sh_in "
	set -e; $GS init -q $W/new1; cd $W/new1
	echo a >a; $GS add a; $GS commit -qm a
	$GS checkout -qb side; echo b >b; $GS add b; $GS commit -qm b
	$GS checkout -q main; echo c >c; $GS add c; $GS commit -qm c
	$GS checkout -q side; $GS rebase -q main; $GS gc -q
	test \"\$($GS log --format=%s | tr '\n' ' ')\" = 'b c a '"
assert_succeeds "...git's templates put the hook samples there" test -f "$W/new1/.git/hooks/pre-commit.sample"
assert_succeeds "git clone of a local path, commit and branch in it" sh_in "
	set -e; $GS clone -q $ORIGIN $W/c1; cd $W/c1; echo x >x; $GS add x; $GS commit -qm x
	$GS branch -q feature; $GS rebase -q HEAD~1 2>/dev/null || true; $GS gc -q"
assert_eq "one" "$(cat "$W/c1/a" 2>/dev/null)" "the local clone has the origin's files"
assert_succeeds "git clone over file://" sh_in "$GS clone -q file://$ORIGIN $W/c2 && test -f $W/c2/b"
assert_succeeds "git init --bare" sh_in "$GS init -q --bare $W/bare.git && $GS -C $W/c2 push -q $W/bare.git main"
assert_succeeds "git worktree add in a repository the sandbox made, then commit there" sh_in "
	set -e; cd $W/c1; $GS worktree add -q ../wt1 -b wt1; cd ../wt1; echo w >w; $GS add w; $GS commit -qm w"
assert_succeeds "git worktree add in a repository that existed before" sh_in "
	set -e; cd $W/old; $GS worktree add -q ../wt2 -b wt2; cd ../wt2; echo w >w; $GS add w; $GS commit -qm w"
assert_eq "gitdir: $W/old/.git/worktrees/wt2" "$(cat "$W/wt2/.git" 2>/dev/null)" "the worktree's .git file points home"
assert_succeeds "git clone, then submodule add and update, then commit" sh_in "
	set -e; $GS clone -q $ORIGIN $W/c3; cd $W/c3; $GS submodule add -q $ORIGIN sub; $GS commit -qm sub
	$GS submodule update -q --init; test -f sub/a && test -f sub/.git && grep -q 'path = sub' .gitmodules"
assert_succeeds "...and the superproject records the submodule" git -C "$W/c3" ls-files --stage sub
# A local clone hard-links the origin's objects where it can; the origin is not writable here, so
# the link is refused (logged) and git copies them: the only refusals allowed.
lacks "$(jq -r 'select(.event.outcome == "failure") | "\(.rule.name) \(.event.action) \(.file.path) \(.process.name)"' "$LOG" |
	grep -v "^default:write link $SRV/origin.git/objects/")" "." "none of it met any other refusal"
lacks "$(git_line git-config-key "")" "git-config-key" "no finding in repositories git alone built"

# 2. Clone over smart HTTP from a real git http-backend, through the sandbox's proxy. Its subject
# is git's traffic through the proxy in user space: one kernel's guest runs it.
if t_share 1; then
	assert_succeeds "a remote network namespace is set up" net_remote_up
	net_hosts git.remote.test "$NET_REMOTE"
	export SERVE_LOG=$T_TMP/http.log
	mkdir -p "$T_TMP/tls"
	assert_succeeds "a test CA and a certificate for git.remote.test are made" \
		"$T_ROOT/tests/vm/servers/make-ca.sh" "$T_TMP/tls" git.remote.test
	assert_succeeds "git http-backend serves the origin in the namespace, over HTTP :80 and HTTPS :443" \
		net_serve bbremote githttp 0.0.0.0 80 "$SRV" , \
		githttps 0.0.0.0 443 "$SRV" "$T_TMP/tls/server.pem" "$T_TMP/tls/server.key"
	fresh
	assert_succeeds "git clone http:// through the proxy, then commit" sh_in "
		set -e; $GS clone -q http://git.remote.test/origin.git $W/h1; cd $W/h1; echo h >h; $GS add h; $GS commit -qm h"
	assert_eq "two" "$(cat "$W/h1/b" 2>/dev/null)" "the HTTP clone has the origin's files"
	assert_contains "$T_TMP/http.log" "POST /origin.git/git-upload-pack" \
		"the server spoke git's smart protocol"
	: >"$T_TMP/http.log"
	assert_succeeds "git clone https:// through the proxy (CONNECT), then commit" sh_in "
		set -e; $GS -c http.sslCAInfo=$T_TMP/tls/ca.pem clone -q https://git.remote.test/origin.git $W/h2
		cd $W/h2; echo h >h; $GS add h; $GS commit -qm h"
	assert_eq "two" "$(cat "$W/h2/b" 2>/dev/null)" "the HTTPS clone has the origin's files"
	assert_contains "$T_TMP/http.log" "POST /origin.git/git-upload-pack" "the HTTPS server spoke git's smart protocol"
else
	t_skip "git clone over smart HTTP and HTTPS through the proxy" "its subject is user space: it runs in $(t_share_where 1)"
fi

# 3. Hooks: no name git would run, in a new repository or an existing one.
for h in pre-commit post-checkout fsmonitor-watchman; do
	fresh
	assert_fails "a $h hook written into a new repository is refused" \
		sh_in "$GS init -q $W/hk-$h && printf '#!/bin/sh\ntouch $T_TMP/ran\n' >$W/hk-$h/.git/hooks/$h"
	assert_event "" "$W/hk-$h/.git/hooks/$h" "mandatory:.git/hooks" "$h in a new repository: event"
	assert_succeeds "...and nothing is there" test ! -e "$W/hk-$h/.git/hooks/$h"
	fresh
	assert_fails "a $h hook written into an existing repository is refused" \
		sh_in "printf '#!/bin/sh\n' >$W/old/.git/hooks/$h"
	assert_event "" "$W/old/.git/hooks/$h" "mandatory:.git/hooks" "$h in an existing repository: event"
done
fresh
assert_fails "a sample renamed to a hook's name is refused" \
	sh_in "$GS init -q $W/hk2 && mv $W/hk2/.git/hooks/pre-commit.sample $W/hk2/.git/hooks/pre-commit"
assert_event rename "$W/hk2/.git/hooks/pre-commit" "mandatory:.git/hooks" "rename into hooks: event"
fresh
assert_fails "a hard link to a hook's name is refused" \
	sh_in "$GS init -q $W/hk3 && echo x >$W/x && ln $W/x $W/hk3/.git/hooks/post-merge"
assert_fails "a symbolic link at a hook's name is refused" \
	sh_in "$GS init -q $W/hk4 && ln -s /bin/true $W/hk4/.git/hooks/post-checkout"
assert_fails "a directory of hooks moved in as hooks/ is refused" sh_in "
	$GS init -q $W/hk5 && mkdir $W/evil && printf '#!/bin/sh\n' >$W/evil/pre-commit &&
	rm -rf $W/hk5/.git/hooks && mv $W/evil $W/hk5/.git/hooks"
assert_fails "a symbolic link as hooks/ is refused" sh_in "
	$GS init -q $W/hk6 && rm -rf $W/hk6/.git/hooks && ln -s $W $W/hk6/.git/hooks"
for r in hk3/.git/hooks/post-merge hk4/.git/hooks/post-checkout hk5/.git/hooks/pre-commit; do
	assert_succeeds "no hook at $r" test ! -e "$W/$r" -a ! -L "$W/$r"
done
assert_succeeds "hooks/ of hk6 is no link" test ! -L "$W/hk6/.git/hooks"
assert_succeeds "a sample may be made executable (git never runs *.sample)" \
	sh_in "$GS init -q $W/hk7 && chmod +x $W/hk7/.git/hooks/pre-push.sample"

# 4. Executing keys in a new repository's config: removed at the end under strict, reported either way.
fresh
assert_succeeds "keys that run commands are written into a new repository's config" sh_in "
	set -e; $GS init -q $W/k1; cd $W/k1
	$GS config core.fsmonitor $T_TMP/evil; $GS config alias.st '!touch $T_TMP/ran'
	$GS config core.hooksPath $T_TMP/hooks; $GS config user.name agent"
assert_eq "" "$(git -C "$W/k1" config core.fsmonitor)" "strict: core.fsmonitor is gone after the sandbox"
assert_eq "" "$(git -C "$W/k1" config core.hooksPath)" "strict: core.hooksPath is gone"
assert_eq "" "$(git -C "$W/k1" config alias.st)" "strict: the ! alias is gone"
assert_eq "agent" "$(git -C "$W/k1" config user.name)" "strict: an ordinary key stays"
assert_contains "$W/k1/.git/config.bpfbox-removed" "$T_TMP/evil" \
	"the original config is kept aside for review"
assert_succeeds "git still works in the repository" git -C "$W/k1" status --short
L=$(git_line git-config-key core.fsmonitor)
has "$L" '"action":"removed"' "the event names core.fsmonitor and says it was removed"
has "$L" "\"repository\":\"$W/k1/.git\"" "...and names the repository"
has "$L" "\"value\":\"$T_TMP/evil\"" "...and the value"
has "$(git_line git-config-key alias.st)" "runs a shell command" "the ! alias has its event"
has "$(git_line git-config-key core.hookspath)" "core.hookspath" "core.hooksPath has its event"
has "$(jq -r 'select(.event.action == "sandbox-exit") | .message' "$LOG")" "3 findings in repositories it made \(removed\)" \
	"the exit summary says so"
assert_eq 3 "$(jq -r 'select(.event.action == "sandbox-exit") | .bpfbox.counts.git_findings' "$LOG")" \
	"...and counts them"
fresh
assert_succeeds "under \"report\" the same keys" sh_report "
	set -e; $GS init -q $W/k2; $GS -C $W/k2 config core.sshCommand 'touch $T_TMP/ran'"
assert_eq "touch $T_TMP/ran" "$(git -C "$W/k2" config core.sshCommand)" "report: the key stays"
has "$(git_line git-config-key core.sshcommand)" '"action":"reported"' "report: the event says reported"
fresh
assert_succeeds "an existing repository's config stays unwritable" bash -c \
	"! $BPFBOX exec --policy $P --log-file $LOG -- git -C $W/old config core.fsmonitor $T_TMP/evil"
assert_event "" "$W/old/.git/config*" "mandatory:.git/config" "existing config: event"
assert_succeeds "...and is unchanged" cmp -s "$T_TMP/old-config" "$W/old/.git/config"
fresh
assert_fails "a .git file made in a new directory may not be rewritten by a later sandbox" \
	sh_in "echo 'gitdir: /elsewhere' >$W/wt1/.git"
assert_event "" "$W/wt1/.git" "mandatory:.git" "rewriting an earlier sandbox's .git file: event"
assert_succeeds "nothing planted ran" test ! -e "$T_TMP/ran"

# 5. Attacks on the end-of-run check and its bound.
fresh
mkdir -p "$T_TMP/victim/.git/hooks" && printf '[core]\n\tfsmonitor = /victim/own\n' >"$T_TMP/victim/.git/config"
printf '#!/bin/sh\n' >"$T_TMP/victim/.git/hooks/pre-commit"
cp "$T_TMP/victim/.git/config" "$T_TMP/victim-config"
assert_fails "a symbolic link named .git is refused" sh_in "
	set -e; $GS init -q $W/sw; rm -rf $W/sw/.git; ln -s $T_TMP/victim/.git $W/sw/.git"
assert_event symlink "$W/sw/.git" "mandatory:.git" "...with its event"
assert_succeeds "...and there is none" test ! -L "$W/sw/.git"
fresh
assert_succeeds "a .git file made in the sandbox may point at another repository" sh_in "
	set -e; mkdir -p $W/ptr; echo 'gitdir: $T_TMP/victim/.git' >$W/ptr/.git"
assert_succeeds "...the check changes nothing there: its config is byte-identical" \
	cmp -s "$T_TMP/victim-config" "$T_TMP/victim/.git/config"
assert_succeeds "...and its hook is where it was" test -f "$T_TMP/victim/.git/hooks/pre-commit"
assert_succeeds "...strict sets the pointer aside instead" test ! -e "$W/ptr/.git" -a -f "$W/ptr/.git.bpfbox-removed"
L=$(git_line git-config-key core.fsmonitor)
has "$L" "\"directory\":\"$T_TMP/victim/.git\"" "...the finding names where the pointer led"
lacks "$L" "/victim/own" "...without the value, which the sandbox's policy may not let it read"
fresh
assert_fails "RENAME_EXCHANGE of a prepared directory with a new repository's hooks/ is refused" sh_in "
	set -e; $GS init -q $W/ex; mkdir $W/exh; printf '#!/bin/sh\n' >$W/exh/pre-commit
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, b\"$W/ex/.git/hooks\", -100, b\"$W/exh\", 2): sys.exit(os.strerror(ctypes.get_errno()))'"
assert_succeeds "...no hook took hooks/'s place" test ! -e "$W/ex/.git/hooks/pre-commit"
fresh
assert_fails ".git/commondir cannot be written, in a new repository or an existing one" sh_in "
	$GS init -q $W/cd; echo $T_TMP/victim/.git >$W/cd/.git/commondir"
assert_event "" "$W/cd/.git/commondir" "mandatory:.git/commondir" ".git/commondir: event"
assert_fails "...nor in an existing one" sh_in "echo $T_TMP/victim/.git >$W/old/.git/commondir"
fresh
assert_succeeds "a hook planted in a new repository's .git/modules/NAME/hooks" sh_in "
	set -e; $GS init -q $W/md; mkdir -p $W/md/.git/modules/s/hooks
	printf '#!/bin/sh\n' >$W/md/.git/modules/s/hooks/post-checkout; chmod +x $W/md/.git/modules/s/hooks/post-checkout"
assert_succeeds "...is disabled when the sandbox ends" \
	test ! -e "$W/md/.git/modules/s/hooks/post-checkout" -a -f "$W/md/.git/modules/s/hooks/post-checkout.bpfbox-disabled"
has "$(git_line git-hook "")" "modules/s/hooks/post-checkout" "...and logged"
fresh
assert_fails "a sandbox may make 64 .git directories, not 65" sh_in \
	"for i in \$(seq 1 65); do mkdir -p $W/many/\$i/.git || exit 1; done"
assert_succeeds "...the 64th was made" test -d "$W/many/64/.git"
assert_succeeds "...the 65th was not" test ! -e "$W/many/65/.git"
assert_event mkdir "$W/many/65/.git" "limit:new-git-repositories" "the 65th: event names the limit"

fresh
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$ALL"
