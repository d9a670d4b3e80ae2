#!/usr/bin/env python3
"""The tunables' table in Documentation/detectors.rst, made from
include/hvnoise/tunable-list.h (read through the C preprocessor, as the
module and the tool read it), between its ".. tunables-begin" and
".. tunables-end" lines.

usage: tunables.py --check   exit 1 if the document's table is not the header's
       tunables.py --update  write the header's table into the document
       tunables.py --list    name least most default zero_off, one a line
"""
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
HDR = os.path.join(TOP, "include", "hvnoise", "tunables.h")
DOC = os.path.join(TOP, "Documentation", "detectors.rst")


def tunables():
    """[(name, least, most, default, zero_off, what)] in the header's order."""
    src = ('#include "tunables.h"\n'
           '#define HVN_TUNABLE(n, lo, hi, d, z, what) @TUN@ n|lo|hi|d|z|what\n'
           '#include "tunable-list.h"\n')
    out = subprocess.run(["cpp", "-P", "-I", os.path.dirname(HDR)], input=src,
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for item in out.split("@TUN@")[1:]:
        n, lo, hi, d, z, what = item.strip().split("|", 5)
        rows.append((n.strip(), int(lo), int(hi), int(d), z.strip() == "1",
                     "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', what))))
    return rows


def table(rows):
    head = ("name", "default", "range", "meaning")
    body = [(f"``{n}``", str(d), ("0 (off) or " if z else "") + f"{lo}..{hi}", what)
            for n, lo, hi, d, z, what in rows]
    w = [max(len(r[i]) for r in [head] + body) for i in range(4)]
    rule = " ".join("=" * x for x in w)
    line = lambda r: " ".join(c.ljust(x) for c, x in zip(r, w)).rstrip()  # noqa: E731
    return "\n".join([rule, line(head), rule] + [line(r) for r in body] + [rule]) + "\n"


def main():
    rows = tunables()
    if sys.argv[1:] == ["--list"]:
        for n, lo, hi, d, z, _ in rows:
            print(n, lo, hi, d, int(z))
        return 0
    doc = open(DOC).read()
    m = re.search(r"(^\.\. tunables-begin\n\n)(.*?)(^\.\. tunables-end$)", doc, re.S | re.M)
    if not m:
        print(f"tunables.py: {DOC}: no '.. tunables-begin' / '.. tunables-end' lines",
              file=sys.stderr)
        return 2
    want = table(rows) + "\n"
    if sys.argv[1:] == ["--update"]:
        open(DOC, "w").write(doc[:m.start(2)] + want + doc[m.end(2):])
        return 0
    if sys.argv[1:] != ["--check"]:
        print(__doc__, file=sys.stderr)
        return 2
    if m.group(2) != want:
        print(f"tunables.py: {DOC}'s table is not include/hvnoise/tunable-list.h's; "
              "run scripts/tunables.py --update", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
