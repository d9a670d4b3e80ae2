#!/usr/bin/env python3
"""usage: layers.py [--check]

The tool's layers as Documentation/layout.rst draws them (the diagram after
"The layers,"), each row calling only the rows below it: every #include of
tools/ between files of different rows must point down, and no chain of
includes may come back to the file it started from.  Prints each file's row
without --check; with it, exit 1 naming each include that points up and
each loop."""
import os
import re
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def rows():
    text = open(os.path.join(TOP, "Documentation/layout.rst")).read()
    m = re.search(r"The layers,.*?::\n\n((?:      [^\n]*\n)+)", text, re.S)
    if not m:
        sys.exit("layers: no layer diagram in Documentation/layout.rst")
    out = []
    for line in m.group(1).splitlines():
        names = re.split(r"\s{3,}", line.strip())[0]
        names = re.sub(r"^commands \((.*)\)$", r"\1", names)
        out.append([n.strip() for n in names.split(",")])
    return out[::-1]                    # 0: the bottom


def row_of(path, table):
    """The row of tools/ file @path, or None (not in the diagram)."""
    rel = os.path.relpath(path, TOP)
    for i, names in enumerate(table):
        for n in names:
            if n.startswith("tools/") and rel.startswith(n):
                return i
            if n.endswith("/") and rel.startswith("tools/lib/" + n):
                return i
            base = n[:-2] if n.endswith(".c") else None
            if base and rel in (f"tools/lib/{base}.c", f"tools/lib/{base}.h"):
                return i
    if rel == "tools/lib/hvn.h":        # declares sys.c's
        return row_of(os.path.join(TOP, "tools/lib/sys.c"), table)
    return None


def includes(path):
    dirs = [os.path.dirname(path)] + [os.path.join(TOP, d) for d in
                                      ("tools/lib", "tools/bpf", "tools/hvnoise")]
    for inc in re.findall(r'^#include "([^"]+)"', open(path).read(), re.M):
        for d in dirs:
            f = os.path.normpath(os.path.join(d, inc))
            if os.path.exists(f):
                yield f
                break


def main():
    table = rows()
    files = []
    for d in ("tools/lib", "tools/bpf", "tools/hvnoise"):
        for root, _, names in os.walk(os.path.join(TOP, d)):
            files += [os.path.join(root, n) for n in names
                      if n.endswith((".c", ".h")) and not n.endswith(".bpf.c")]
    bad, graph = [], {}
    for f in sorted(files):
        r = row_of(f, table)
        if r is None:
            bad.append(f"{os.path.relpath(f, TOP)}: in no row of the diagram")
            continue
        graph[f] = [g for g in includes(f) if g in files]
        for g in graph[f]:
            s = row_of(g, table)
            if s is not None and s > r:
                bad.append(f"{os.path.relpath(f, TOP)} (row {', '.join(table[r])}) includes "
                           f"{os.path.relpath(g, TOP)} (row {', '.join(table[s])}), above it")
        if "--check" not in sys.argv:
            print(f"{r} {os.path.relpath(f, TOP)}")
    # Loops: a depth-first walk, each file's chain of includes.
    state = {}

    def walk(f, chain):
        state[f] = 1
        for g in graph.get(f, []):
            if state.get(g) == 1:
                loop = chain[chain.index(g):] + [g]
                bad.append("an include loop: " + " -> ".join(os.path.relpath(x, TOP) for x in loop))
            elif not state.get(g):
                walk(g, chain + [g])
        state[f] = 2

    for f in graph:
        if not state.get(f):
            walk(f, [f])
    for b in bad:
        print(f"layers: {b}", file=sys.stderr)
    if "--check" in sys.argv:
        print(f"{len(graph)} files of tools/ in {len(table)} rows: "
              f"{len(bad)} includes up or loops")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
