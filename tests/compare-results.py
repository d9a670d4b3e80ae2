#!/usr/bin/env python3
"""Compare the checks of two make check runs by name.

usage: compare-results.py BEFORE AFTER

Each file is a build/check/results.txt: KTAP (tests/report.sh: a subtest per
stage) or the older "PASS: name" / "FAIL: name" lines.  Prints each run's
counts, then the names of BEFORE that AFTER lacks and the other way round.
Names that differ only in their numbers or in a parenthesised or trailing
detail ("... (12/12 vCPU-injections)", "style/checkpatch kmod/ (no errors;
3 warnings)") are matched to each other first and listed apart.  Exit
status 1 if a check of BEFORE is missing from AFTER.
"""
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "host"))
import hvntest  # noqa: E402


def checks(path):
    """[(status, name)]: status pass, fail, skip or xfail."""
    out = []
    for line in open(path, errors="replace"):
        r = hvntest.parse(line.strip())      # nested KTAP is indented
        if not r:
            continue
        ok, name, directive, _ = r
        out.append((directive.lower() if directive else ("pass" if ok else "fail"), name))
    return out


def loose(name):
    name = re.sub(r"\([^()]*\)", "()", name)
    name = re.sub(r"\d+(\.\d+)?", "#", name)
    return name.split(":")[0] if name.startswith("fuzz/") else name


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = checks(sys.argv[1]), checks(sys.argv[2])
    for label, c in (("before", before), ("after", after)):
        n = Counter(s for s, _ in c)
        print(f"{label}: {len(c)} checks: {n['pass']} passed, {n['fail']} failed, "
              f"{n['skip']} skipped, {n['xfail']} xfail")
    b, a = Counter(n for _, n in before), Counter(n for _, n in after)
    gone, new = b - a, a - b
    # The same check with other numbers or details.
    lb, la = {}, {}
    for n in gone.elements():
        lb.setdefault(loose(n), []).append(n)
    for n in new.elements():
        la.setdefault(loose(n), []).append(n)
    changed = []
    for key in list(lb):
        while lb[key] and la.get(key):
            changed.append((lb[key].pop(), la[key].pop()))
    missing = [n for v in lb.values() for n in v]
    added = [n for v in la.values() for n in v]
    status = {n: s for s, n in after}
    if changed:
        print(f"\n{len(changed)} the same but for numbers or details:")
        for x, y in sorted(changed):
            print(f"  - {x}\n  + {y}" + (f"  [{status[y]}]" if status[y] != "pass" else ""))
    print(f"\n{len(missing)} of before missing after:")
    for n in sorted(missing):
        print(f"  {n}")
    print(f"\n{len(added)} new after:")
    for n in sorted(added):
        print(f"  {n}  [{status[n]}]")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
