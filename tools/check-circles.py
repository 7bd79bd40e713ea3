#!/usr/bin/env python3
"""check-circles.py: no two files call each other, directly or round a
circle, outside src/core (docs/design.md, "Rules"): a file's callers sit
above it. A node is a C file of src/, module/, programs/ or the
Python binding (not src/redis/none, built instead of src/redis); an edge, a call of a function another file defines (not
static). Prints each circle with the calls that close it; exit 1 if any."""
import glob
import os
import re
import sys

ROOTS = ["src", "module", "programs", "bindings/python/src"]
ALLOWED = "src/core/"  # the core's registry, filter and store know each other


def read(path):
    text = open(path, encoding="utf-8").read()
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def main():
    os.chdir(os.path.join(os.path.dirname(__file__), ".."))
    # src/redis/none stands in for src/redis when there is no hiredis: never beside it
    files = sorted(f for r in ROOTS for f in glob.glob(r + "/**/*.c", recursive=True)
                   if not f.startswith("src/redis/none/"))
    defines, calls = {}, {}
    for f in files:
        text = read(f)
        defines[f] = set(re.findall(
            r"^(?!static)[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;{]*\)\s*\n\{", text, flags=re.M))
        calls[f] = set(re.findall(r"\b(\w+)\s*\(", text))
    owner = {}
    for f in files:
        for name in defines[f]:
            owner.setdefault(name, f)
    edges = {f: {owner[c] for c in calls[f] if c in owner and owner[c] != f} for f in files}
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                circles.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for f in files:
        if f not in index:
            visit(f)
    bad = [c for c in circles if not all(f.startswith(ALLOWED) for f in c)]
    for c in bad:
        print("check-circles: these files call each other: " + " ".join(c), file=sys.stderr)
        for a in c:
            for b in c:
                if a == b:
                    continue
                names = sorted(n for n in calls[a] if owner.get(n) == b)
                if names:
                    print(f"  {a} -> {b}: {', '.join(names)}", file=sys.stderr)
    if not bad:
        print(f"check-circles: {len(files)} files, no circle of calls outside {ALLOWED}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
