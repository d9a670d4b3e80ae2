#!/usr/bin/env python3
"""hvnoise advise in the 6.1 guest (host side): boots tests/vm/guest-advise.sh
(4 vCPUs, one TCG thread), relays its checks (an IRQ moved and stormed on
the job's CPU: advise, --apply, --verify, --restore; a managed queue
refused), answers its two requests to pause the whole VM
(tests/vm/inject.py), and judges the provider's bundle the guest wrote
of them against what this host did: every vCPU has an unreported episode
for each pause, as long as the pause this host measured (within 20% or
5 ms), and the two pauses are as far apart in the bundle's UTC times as
they were here (within 20 ms).

usage: advise.py KERNEL INITRD OUTDIR HOSTSTOPS
       advise.py --again OUTDIR   judge a run's files again (no VM)
"""
import datetime
import json
import os
import re
import sys

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

NCPU = 4
check = hvntest.checker("vm-advise/")


def utc_ns(s):
    """ns since the epoch of the bundle's "2026-12-03T04:15:40.315028Z"."""
    d = datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 10**9 + d.microsecond * 1000


def main():
    env = dict(os.environ, HVN_VM_CPUS=str(NCPU))
    console = inject.console_of("advise", sys.argv[1:], env, check)
    for line in console.splitlines():
        if hvntest.parse(line):
            hvntest.relay(line)
    m = re.search(r"^HVN-BUNDLE (\{.*\})\s*$", console, re.M)
    try:
        b = json.loads(m.group(1)) if m else {}
    except ValueError:
        b = {}
    pauses = [inject.host_inject[s] for s in sorted(inject.host_inject)]
    if not check(len(pauses) == 2 and b.get("schema") == "hvnoise-provider-evidence",
                 f"the host paused the VM twice ({len(pauses)}) and the guest's bundle came back"):
        return
    eps = [e for e in b["episodes"] if e["kind"] == "unreported"]
    found = []
    for i, (_, got) in enumerate(pauses):
        tol = max(0.2 * got, 5.0)
        per = {}
        for e in eps:
            if abs(e["ms"] - got) <= tol:
                per.setdefault(e["vcpu"], e)
        found.append(per)
        check(sorted(per) == list(range(NCPU)),
              f"pause {i + 1} ({got:.1f} ms here): an unreported episode within "
              f"{tol:.1f} ms of it on every vCPU ({sorted(per)}: "
              f"{', '.join('%.1f' % per[c]['ms'] for c in sorted(per))} ms)")
    if all(sorted(p) == list(range(NCPU)) for p in found):
        host_gap = (pauses[1][0] - pauses[0][0]) / 1e6
        gaps = [(utc_ns(found[1][c]["at"]) - utc_ns(found[0][c]["at"])) / 1e6
                for c in range(NCPU)]
        # Each vCPU tells its loss when it runs again: one TCG thread runs
        # them in turn, a few ms apart.
        check(all(abs(g - host_gap) <= 20 for g in gaps),
              f"the bundle's UTC times put the pauses {host_gap:.0f} ms apart, as this host "
              f"did them (vCPUs: {', '.join('%.1f' % g for g in gaps)} ms; within 20 ms)")
    vc = {v["vcpu"]: v for v in b.get("vcpus", [])}
    check(sorted(vc) == list(range(NCPU)) and b.get("method") and
          b.get("window", {}).get("span_s", 0) > 0,
          f"the bundle's per-vCPU totals cover vCPUs 0-{NCPU - 1} ({sorted(vc)}), with "
          "how it was measured and its window")


if __name__ == "__main__":
    main()
    sys.exit(hvntest.exit_status())
