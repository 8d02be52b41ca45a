#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The differential test of tests/vm/test_48_fs_differential.sh: `bpfbox policy
explain` (user/policy/policy_decide.c) against the kernel's walk, on the same
policies and paths.

  fs_diff.py gen SEED CASES ROOT OUT   builds a file tree under ROOT (symbolic
        and hard links, bind mounts, a renamed directory, odd names) and
        writes OUT/policy-K.json with OUT/cases-K (one check a line: "OP HEX
        TAGS", OP read, write or create, HEX the path's bytes); OUT/mounts
        lists the bind mounts made, OUT/npolicies how many policies.
  fs_diff.py try CASES                 inside the sandbox: each check for real,
        one line each: "OK" or the errno's name.
  fs_diff.py explain BPFBOX POLICY CASES OUT   explain's verdict of each
        check, before the sandbox runs (its creates change the tree).
  fs_diff.py compare POLICY CASES EXPLAINED TRIED   explain's verdicts against
        the kernel's (TRIED, try's output); one line each:
        "ok|fail|skip<TAB>description". Removes what the creates made.

Paths travel as hex so that any byte (newline, quote, 0xff) survives.
"""
import errno
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

CHECKS_PER_POLICY = 75

# Names for directories (valid UTF-8: rules may name them) and for leaves (anything).
DIR_NAMES = ["a", "b", "src", "data", "sp ace", "quo'te", "dq\"x", "é-dir", "日本",
             "deep", "x.y", "-dash"]
LEAF_NAMES = [b"f", b"notes.txt", b".env", b"sp ace.txt", b"quo'te", b"dq\"x", b"nl\nname",
              "é.txt".encode(), "файл".encode(), b"hi\xffbyte", b"tab\there", b"back\\slash",
              b".bashrc", b".gitconfig", b".profile", b".mcp.json", b".bashrc.bak",
              b"x.gitconfig", b".ripgreprc"]


def fs(p):
    return p if isinstance(p, bytes) else os.fsencode(p)


def join(*parts):
    return b"/".join(fs(p) for p in parts)


def is_text(p):
    try:
        p.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


class Tree:
    def __init__(self, rng, root):
        self.rng = rng
        self.root = fs(root)
        self.dirs = [self.root]     # real directories (their real paths)
        self.files = []             # regular files (real paths)
        self.spellings = []         # (path, kind, tags): other ways to reach objects
        self.mounts = []
        self.missing = []           # paths that do not exist (rule targets)
        self.uplink = None          # a link to the tree's root, below it

    def depth(self, d):
        return d[len(self.root):].count(b"/")

    def mkdir(self, parent, name):
        d = join(parent, name)
        if os.path.lexists(d):
            return d if os.path.isdir(d) and not os.path.islink(d) else None
        os.mkdir(d)
        self.dirs.append(d)
        return d

    def mkfile(self, parent, name, data=b"x\n"):
        f = join(parent, name)
        if os.path.lexists(f):
            return None
        with open(f, "wb") as fh:
            fh.write(data)
        self.files.append(f)
        return f

    def text_dirs(self):
        return [d for d in self.dirs if is_text(d)]

    def build(self):
        rng = self.rng
        for _ in range(14):
            parent = rng.choice([d for d in self.dirs if self.depth(d) < 4])
            self.mkdir(parent, rng.choice(DIR_NAMES))
        for d in list(self.dirs):
            for name in rng.sample(LEAF_NAMES, rng.randint(1, 3)):
                self.mkfile(d, name)
        # Mandatory names at depth: a repository, a worktree's .git file, editors' folders.
        for d in rng.sample(self.dirs[1:], min(3, len(self.dirs) - 1)):
            g = self.mkdir(d, ".git")
            if g:
                self.mkfile(g, "config", b"[core]\n")
                self.mkfile(g, "HEAD", b"ref: refs/heads/main\n")
                self.mkfile(g, "commondir", b"..\n")
                h = self.mkdir(g, "hooks")
                if h:
                    self.mkfile(h, "pre-commit", b"#!/bin/sh\n")
        for d in rng.sample(self.dirs[1:], min(2, len(self.dirs) - 1)):
            if not os.path.lexists(join(d, ".git")):
                self.mkfile(d, ".git", b"gitdir: /elsewhere\n")
        for d in rng.sample(self.dirs, 2):
            v = self.mkdir(d, rng.choice([".vscode", ".idea"]))
            if v:
                self.mkfile(v, "settings.json", b"{}\n")
            c = self.mkdir(d, ".claude")
            if c:
                self.mkfile(c, "notes")
                cm = self.mkdir(c, rng.choice(["commands", "agents"]))
                if cm:
                    self.mkfile(cm, "x.md")
        # A directory renamed before the launch: rules may name its old place.
        old = self.mkdir(self.root, "renamed-old")
        self.mkfile(old, "inside")
        new = join(self.root, "renamed-new")
        os.rename(old, new)
        self.dirs = [new if d == old else d for d in self.dirs]
        self.files = [new + f[len(old):] if f.startswith(old + b"/") else f for f in self.files]
        self.missing += [old, join(old, "inside")]
        # Symbolic links to directories and files, absolute and relative.
        for i in range(6):
            at = self.rng.choice(self.dirs)
            to = self.rng.choice(self.dirs + self.files)
            link = join(at, "ln%d" % i)
            if os.path.lexists(link) or to == at:
                continue
            target = to if i % 2 else os.path.relpath(to, at)
            os.symlink(target, link)
            self.spellings.append((link, "dir" if os.path.isdir(to) else "file", "symlink"))
        # A link to an ancestor: a rule naming it keeps its spelling, not to widen (docs/policy.md).
        at = rng.choice([d for d in self.dirs if self.depth(d) >= 1])
        up = join(at, "up")
        if not os.path.lexists(up):
            os.symlink(b"/".join([b".."] * self.depth(at)), up)
            self.spellings.append((up, "dir", "symlink-up"))
            self.uplink = up
        # Hard links to files, in other directories.
        for i in range(4):
            f = rng.choice(self.files)
            at = rng.choice(self.dirs)
            link = join(at, "hl%d" % i)
            if os.path.lexists(link):
                continue
            os.link(f, link)
            self.spellings.append((link, "file", "hardlink"))
        # Bind mounts: a directory seen at a second place.
        for i in range(2):
            src = rng.choice(self.dirs)
            at = rng.choice([d for d in self.dirs if d != src and not d.startswith(src + b"/")])
            mnt = join(at, "bind%d" % i)
            if os.path.lexists(mnt):
                continue
            os.mkdir(mnt)
            subprocess.run([b"mount", b"--bind", src, mnt], check=True)
            self.mounts.append(mnt)
            self.spellings.append((mnt, "dir", "bind"))
            for f in self.files:
                if f.startswith(src + b"/"):
                    self.spellings.append((mnt + f[len(src):], "file", "bind"))
        # ".." in the argument: through a real directory and through a symbolic link.
        # The kernel takes ".." after a link from the link's target, a lexical reading from
        # the link's own directory: names in the target's parent tell the two apart.
        for link, kind, _ in list(self.spellings):
            if kind == "dir" and os.path.islink(link):
                up = os.path.dirname(os.path.realpath(link))
                names = sorted(n for n in os.listdir(up) if os.path.isfile(join(up, n)))
                for n in rng.sample(names, min(2, len(names))):
                    self.spellings.append((join(link, "..", n), "file", "dotdot-symlink"))
        for f in rng.sample(self.files, 4):
            sub = rng.choice(self.dirs)
            self.spellings.append((join(sub, *[b".."] * self.depth(sub)) +
                                   f[len(self.root):], "file", "dotdot"))
        for d in rng.sample(self.dirs, 4):
            self.missing.append(join(d, "later-%d" % rng.randint(0, 999)))


def gen_policy(rng, tree, k):
    """srt settings: nested deny/allow for reads, allow/deny for writes."""
    tdirs = tree.text_dirs()
    tfiles = [f for f in tree.files if is_text(f)]
    tlinks = [s[0] for s in tree.spellings if s[2] in ("symlink", "bind") and is_text(s[0])]
    miss = [m for m in tree.missing if is_text(m)]

    def some(pool, lo, hi):
        return rng.sample(pool, min(len(pool), rng.randint(lo, hi)))

    def below(pool, tops):
        return [p for p in pool if any(p.startswith(t + b"/") for t in tops)]

    deny_read = some(tdirs[1:], 1, 3) + some(tfiles, 0, 2) + some(miss, 0, 1) + some(tlinks, 0, 1)
    allow_read = some(below(tdirs + tfiles, deny_read), 0, 2)
    if deny_read and rng.random() < 0.3:
        allow_read.append(rng.choice(deny_read))     # the same entry lifts its deny
    deny_read += some(below(tdirs + tfiles, allow_read), 0, 1)
    allow_write = some(tdirs, 1, 3) + some(tlinks, 0, 1) + some(miss, 0, 1)
    if rng.random() < 0.5:
        allow_write.append(tree.root)
    deny_write = some(below(tdirs + tfiles, allow_write), 0, 2) + some(miss, 0, 1)
    if rng.random() < 0.2:
        deny_write.append(tree.root)                 # a deny above every allow
    allow_write += some(below(tdirs, deny_write), 0, 1)
    if tree.uplink and is_text(tree.uplink) and rng.random() < 0.3:
        rng.choice([deny_read, allow_write, deny_write]).append(tree.uplink)
    if rng.random() < 0.3 and len(tdirs) > 2:
        d = rng.choice(tdirs[1:])
        deny_read.append(join(d, "..", os.path.basename(rng.choice(tdirs[1:]))))

    def entries(paths):
        return sorted({p.decode() for p in paths})

    return {
        "network": {"allowedDomains": [], "deniedDomains": []},
        "filesystem": {
            "denyRead": entries(deny_read),
            "allowRead": entries(allow_read),
            "allowWrite": entries(allow_write),
            "denyWrite": entries(deny_write),
            "allowGitConfig": rng.random() < 0.3,
        },
    }


def gen_checks(rng, tree, k, n):
    pool = []
    for f in tree.files:
        pool += [("read", f, "file"), ("write", f, "file")]
    for d in tree.dirs:
        pool.append(("read", d, "dir"))
    for path, kind, tags in tree.spellings:
        pool.append(("read", path, tags))
        if kind == "file":
            pool.append(("write", path, tags))
    creates = []
    for d in tree.dirs:
        for name in (b"new-p%d" % k, b".bashrc", b".gitconfig", b".env", b"config", b"hooks",
                     b"n\xe9w p%d" % k):
            creates.append(("create", join(d, name), "create"))
    for m in tree.missing:
        if os.path.isdir(os.path.dirname(m)):
            creates.append(("create", m, "create-at-rule-path"))
    picked = rng.sample(pool, min(len(pool), n * 2 // 3))
    picked += rng.sample(creates, min(len(creates), n - len(picked)))
    rng.shuffle(picked)
    # A create changes the tree: each name once per policy, and only names missing now.
    seen, out = set(), []
    for op, path, tags in picked:
        if op == "create" and (path in seen or os.path.lexists(path)):
            continue
        seen.add(path)
        out.append((op, path, tags))
    return out


def cmd_gen(seed, cases, root, out):
    rng = random.Random(seed)
    tree = Tree(rng, root)
    tree.build()
    npol = max(1, (cases + CHECKS_PER_POLICY - 1) // CHECKS_PER_POLICY)
    per = (cases + npol - 1) // npol
    for k in range(npol):
        with open(os.path.join(out, "policy-%d.json" % k), "w") as fh:
            json.dump(gen_policy(rng, tree, k), fh, indent=1, ensure_ascii=False)
        with open(os.path.join(out, "cases-%d" % k), "w") as fh:
            for op, path, tags in gen_checks(rng, tree, k, per):
                fh.write("%s %s %s\n" % (op, path.hex(), tags))
    with open(os.path.join(out, "mounts"), "wb") as fh:
        fh.write(b"".join(m + b"\0" for m in reversed(tree.mounts)))
    with open(os.path.join(out, "npolicies"), "w") as fh:
        fh.write("%d\n" % npol)


def read_cases(path):
    with open(path) as fh:
        return [(op, bytes.fromhex(h), tags) for op, h, tags in (l.split() for l in fh)]


def cmd_try(cases):
    for op, path, _ in read_cases(cases):
        flags = {"read": os.O_RDONLY, "write": os.O_WRONLY,
                 "create": os.O_WRONLY | os.O_CREAT | os.O_EXCL}[op]
        try:
            os.close(os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY, 0o644))
            print("OK")
        except OSError as e:
            print(errno.errorcode.get(e.errno, str(e.errno)))
    sys.stdout.flush()


def show(path):
    return repr(path)[1:]


def cmd_explain(bpfbox, policy, cases, out):
    def explain(c):
        op, path, _ = c
        argv = [bpfbox, "policy", "explain", "--path"] + (["--write"] if op != "read" else [])
        r = subprocess.run(argv + [policy, "--", path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return "%d %s" % (r.returncode, r.stdout.strip().hex() or "-")

    with ThreadPoolExecutor(2) as ex:
        said = list(ex.map(explain, read_cases(cases)))
    with open(out, "w") as fh:
        fh.write("".join(l + "\n" for l in said))


def cmd_compare(policy, cases, explained, tried):
    name = os.path.basename(policy)
    checks = read_cases(cases)
    with open(explained) as fh:
        said = [l.split() for l in fh]
    with open(tried) as fh:
        kernel = fh.read().split()
    for i, (op, path, tags) in enumerate(checks):
        rc, text = int(said[i][0]), bytes.fromhex(said[i][1]) if said[i][1] != "-" else b""
        text = text.decode(errors="backslashreplace").replace("\n", " | ")
        k = kernel[i] if i < len(kernel) else "(no answer)"
        what = "%s %s %s [%s]" % (name, op, show(path), tags)
        if op == "create" and k == "OK":
            os.unlink(path)     # the next policy's sandbox may create it again
        if rc not in (0, 1):
            print("fail\t%s: explain exited %d: %s" % (what, rc, text))
            continue
        e = "allowed" if rc == 0 else "denied"
        if k not in ("OK", "EPERM"):
            print("skip\t%s: the kernel said %s, not a policy verdict (explain: %s)" % (what, k, e))
            continue
        kv = "allowed" if k == "OK" else "denied"
        line = "%s: explain %s, kernel %s" % (what, e, kv)
        if e == kv:
            print("ok\t%s" % line)
            continue
        print("fail\t%s; explain said: %s" % (line, text))


def main(argv):
    if len(argv) == 6 and argv[1] == "gen":
        cmd_gen(int(argv[2]), int(argv[3]), argv[4], argv[5])
    elif len(argv) == 3 and argv[1] == "try":
        cmd_try(argv[2])
    elif len(argv) == 6 and argv[1] == "explain":
        cmd_explain(*argv[2:])
    elif len(argv) == 6 and argv[1] == "compare":
        cmd_compare(*argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
