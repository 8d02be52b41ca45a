#!/usr/bin/env python3
"""The structure rules of docs/architecture.md, checked on the tree and on BUILD's objects.

- user/ folders include each other without a cycle;
- inside a folder, no files call each other in a loop (from the objects' symbols: nm);
- no user/ file over 600 lines unless its first comment says why ("Over 600 lines: ...");
- no function in user/ over 100 lines of body;
- docs/architecture.md names every user/ source and every bpf/ file.
Usage: tools/check-structure.py BUILD
"""
import os
import re
import subprocess
import sys

FILE_LINES = 600
FUNCTION_LINES = 100
REASON = re.compile(r"Over 600 lines:")


def sources():
    for folder in sorted(os.listdir("user")):
        path = os.path.join("user", folder)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith((".c", ".h")):
                    yield folder, os.path.join(path, name)


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def folder_includes(problems):
    graph = {}
    for folder, path in sources():
        graph.setdefault(folder, set())
        for m in re.finditer(r'^#include "([a-z_]+)/', open(path).read(), re.M):
            if m.group(1) != folder and os.path.isdir(os.path.join("user", m.group(1))):
                graph[folder].add(m.group(1))
    for comp in cycles(graph):
        problems.append("user/ folders include each other in a loop: " + " <-> ".join(comp))


def call_loops(build, problems):
    defined, used = {}, {}
    for folder, path in sources():
        if not path.endswith(".c"):
            continue
        obj = os.path.join(build, path[:-2] + ".o")
        if not os.path.exists(obj):
            problems.append(f"{obj}: missing (build first)")
            continue
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        used[path] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = path
            elif len(parts) == 2 and parts[0] == "U":
                used[path].add(parts[1])
    graph = {}
    for path, syms in used.items():
        folder = path.split("/")[1]
        graph[path] = {defined[s] for s in syms
                       if s in defined and defined[s] != path and defined[s].split("/")[1] == folder}
    for comp in cycles(graph):
        problems.append("files call each other in a loop: " + " <-> ".join(comp))


def sizes(problems):
    for _, path in sources():
        lines = open(path).read().split("\n")
        head = "\n".join(lines[:20])
        if len(lines) > FILE_LINES and not REASON.search(head):
            problems.append(f"{path}: {len(lines)} lines; split it, or say why at its top "
                            f"(\"Over 600 lines: ...\")")
        start = None
        for i, line in enumerate(lines):
            if line == "{":
                start = i
            elif line.startswith("}") and start is not None:
                if i - start - 1 > FUNCTION_LINES:
                    name = lines[start - 1].strip()
                    problems.append(f"{path}:{start}: function of {i - start - 1} lines "
                                    f"(over {FUNCTION_LINES}): {name}")
                start = None


def architecture_names(problems):
    text = open("docs/architecture.md").read()
    files = [path for _, path in sources() if path.endswith(".c")]
    for root, _, names in os.walk("bpf"):
        files += [os.path.join(root, n) for n in names if n.endswith((".c", ".h"))]
    for path in sorted(files):
        if os.path.basename(path) not in text:
            problems.append(f"{path}: docs/architecture.md does not say what it holds")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    problems = []
    folder_includes(problems)
    call_loops(sys.argv[1], problems)
    sizes(problems)
    architecture_names(problems)
    for p in problems:
        print("structure: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
