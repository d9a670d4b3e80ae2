#!/usr/bin/env python3
"""Check KTAP from the KUnit VM's console against the cases in the sources.

usage: ktap.py CONSOLE_LOG SOURCE...

Every case defined in the sources (HT_CASE/KUNIT_CASE in a file whose suite
is HT_SUITE(name, ...) or .name = "hvnoise_...") must appear as "ok" in the
KTAP block of its suite.  Prints one KTAP result per case
(tests/host/hvntest.py); a case that failed, was skipped or is missing is
"not ok".  Exit status 1 on any failure.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402


def expected_cases(paths):
    cases = []
    for path in paths:
        text = open(path, encoding="utf-8").read()
        m = re.search(r'HT_SUITE\((\w+),', text)
        suite = "hvnoise_" + m.group(1) if m else None
        if not suite:
            m = re.search(r'\.name\s*=\s*"(hvnoise_\w+)"', text)
            suite = m.group(1) if m else None
        if not suite:
            continue
        for name in re.findall(r'\b(?:HT_CASE|KUNIT_CASE)\((\w+)\)', text):
            cases.append((suite, name))
    return cases


def ktap_results(log):
    """{(suite, case): 'ok' | 'not ok' | 'skip'} from KTAP-BEGIN/END blocks."""
    results = {}
    suite = None
    for raw in log.splitlines():
        line = raw.strip()
        m = re.match(r'KTAP-BEGIN (\S+)', line)
        if m:
            suite = m.group(1)
            continue
        if line.startswith("KTAP-END"):
            suite = None
            continue
        if suite is None:
            continue
        m = re.match(r'(not ok|ok) \d+ (\w+)(.*)$', line)
        if m:
            status = m.group(1)
            if "# SKIP" in m.group(3):
                status = "skip"
            results[(suite, m.group(2))] = status
    return results


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    log = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    results = ktap_results(log)
    cases = expected_cases(sys.argv[2:])
    if not cases:
        hvntest.result(False, "kunit/no test cases found in the sources")
        return 1
    for suite, case in cases:
        status = results.get((suite, case), "missing")
        hvntest.result(status == "ok", f"kunit/{suite}.{case}" +
                       ("" if status == "ok" else f" ({status})"))
    return hvntest.exit_status()


if __name__ == "__main__":
    sys.exit(main())
