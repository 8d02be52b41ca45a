#!/usr/bin/env bash
# The mandatory deny set: srt's names, write-protected (still readable) at any
# depth below every writable root, including names created after launch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/helpers/fs_lib.sh"

P=$T_TMP/policy.json
PG=$T_TMP/policy-gitconfig.json
LOG=$T_TMP/log.ndjson
ALL=$T_TMP/all.ndjson
W=$T_TMP/work
mkdir -p "$W/deep/a/b/c/d/e" "$W/proj/.git/hooks" "$W/proj/.vscode" "$W/proj/.claude"
echo 'alias x=y' >"$W/.bashrc"
echo '[core]' >"$W/proj/.git/config"
echo 'gitdir: /elsewhere' >"$W/deep/a/.git"
for f in "$P" "$PG"; do
	git=false
	[ "$f" = "$PG" ] && git=true
	cat >"$f" <<JSON
{
  "network": { "allowedDomains": [], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$W"], "denyWrite": [], "allowGitConfig": $git }
}
JSON
done
sh_in() { "$BPFBOX" exec --policy "$P" --log-file "$LOG" -- sh -c "$1"; }

# Every name of the set, existing or created in the sandbox, at any depth.
for n in .gitconfig .gitmodules .bashrc .bash_profile .zshrc .zprofile .profile .ripgreprc .mcp.json; do
	fresh
	assert_fails "mandatory $n refused deep below the writable root" sh_in "echo x >$W/deep/a/b/c/d/e/$n"
	assert_event create "$W/deep/a/b/c/d/e/$n" "mandatory:$n" \
		"$n: event names mandatory:$n"
done
assert_succeeds "no mandatory file was created" bash -c "! ls -A $W/deep/a/b/c/d/e | grep -q ."
fresh
assert_fails "an existing .bashrc cannot be written" sh_in "echo evil >>$W/.bashrc"
assert_event "open-write" "" "mandatory:.bashrc" ".bashrc: event"
assert_succeeds "...but can be read" sh_in "cat $W/.bashrc"
assert_fails "...nor removed" sh_in "rm -f $W/.bashrc"
assert_fails "...nor replaced by a rename" sh_in "echo x >$W/tmp1 && mv -f $W/tmp1 $W/.bashrc"
assert_eq "alias x=y" "$(cat "$W/.bashrc")" ".bashrc is unchanged"
for d in .vscode .idea; do
	fresh
	assert_fails "mandatory dir $d cannot be created" sh_in "mkdir $W/deep/$d"
	assert_event mkdir "" "mandatory:$d" "$d: event"
done
fresh
assert_fails "nothing may be written inside an existing .vscode" sh_in "echo '{}' >$W/proj/.vscode/settings.json"
assert_event "" "" "mandatory:.vscode" ".vscode content: event"
assert_succeeds ".claude itself may hold ordinary files" sh_in "echo ok >$W/proj/.claude/notes"
for d in commands agents; do
	fresh
	assert_fails ".claude/$d cannot be created" sh_in "mkdir -p $W/proj/.claude/$d"
	assert_event mkdir "$W/proj/.claude/$d" "mandatory:.claude/$d" ".claude/$d: event"
done

# .git: hooks always, config unless allowGitConfig, a .git file itself.
fresh
assert_fails "a hook cannot be written into an existing .git/hooks" \
	sh_in "printf '#!/bin/sh\n' >$W/proj/.git/hooks/pre-commit"
assert_event "" "$W/proj/.git/hooks/pre-commit" "mandatory:.git/hooks" "hooks: event"
assert_fails ".git/config cannot be written" sh_in "echo '[core] fsmonitor=evil' >>$W/proj/.git/config"
assert_event "" "" "mandatory:.git/config" ".git/config: event"
assert_succeeds "other files in .git stay writable (git works)" sh_in "echo ref >$W/proj/.git/HEAD"
assert_succeeds "with allowGitConfig .git/config is writable" \
	"$BPFBOX" exec --policy "$PG" --log-file "$LOG" -- sh -c "echo '[user]' >>$W/proj/.git/config"
fresh
assert_fails "with allowGitConfig .git/hooks stays protected" \
	"$BPFBOX" exec --policy "$PG" --log-file "$LOG" -- sh -c "echo x >$W/proj/.git/hooks/post-checkout"
assert_event "" "" "mandatory:.git/hooks" "hooks with allowGitConfig: event"
fresh
assert_fails "a .git file (worktree pointer) cannot be rewritten" sh_in "echo 'gitdir: /evil' >$W/deep/a/.git"
assert_event "" "" "mandatory:.git" ".git file: event"
assert_eq "gitdir: /elsewhere" "$(cat "$W/deep/a/.git")" "the .git file is unchanged"

# A repository made inside the sandbox is git's to build (test_46_git has the rest); a later
# sandbox finds it as an existing one.
fresh
assert_succeeds "git init inside the sandbox works" sh_in "git init -q $W/repo1"
assert_succeeds "git init without templates works when allowGitConfig is set" \
	"$BPFBOX" exec --policy "$PG" --log-file "$LOG" -- git init -q --template= "$W/repo2"
assert_succeeds "...and git commits there" "$BPFBOX" exec --policy "$PG" --log-file "$LOG" -- sh -c \
	"cd $W/repo2 && echo a >a && git add a && git -c user.name=t -c user.email=t@t commit -qm a"
fresh
assert_fails "in a later sandbox, that repository's hooks are protected like any existing one's" \
	"$BPFBOX" exec --policy "$PG" --log-file "$LOG" -- sh -c "mkdir -p $W/repo2/.git/hooks"
assert_event "" "$W/repo2/.git/hooks" "mandatory:.git/hooks" "new repo hooks: event"
fresh
assert_fails "mv .git x && mkdir -p .git/hooks is refused at the move" \
	sh_in "cd $W/proj && mv .git x && mkdir -p .git/hooks && echo evil >.git/hooks/pre-commit"
assert_event "rename" "" "mandatory:rename" "moving .git: event"
assert_succeeds ".git is still in place" test -d "$W/proj/.git/hooks"
assert_succeeds "no hook was written" test ! -e "$W/proj/.git/hooks/pre-commit"
fresh
assert_fails "renaming a directory to .git is refused" sh_in "mkdir -p $W/x/hooks && mv $W/x $W/deep/.git"

fresh
assert_succeeds "every log line validates against the schema" \
	python3 "$T_ROOT/tests/tools/validate-events.py" "$ALL"
