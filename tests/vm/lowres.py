#!/usr/bin/env python3
"""hvnoise.ko and the BPF source with hrtimers in low-resolution mode (host
side): Debian's 6.1 booted highres=off (tests/vm/qemu.sh, single-threaded
TCG, 2 vCPUs) running tests/vm/guest-lowres.sh.  Hard timers then run from
the tick, up to a tick late by design; the guest's quiet phases must hold
nothing but this host's own stops, and the host's pauses of the whole VM
must each be a lost event on every vCPU within 20% or 2 ms, for the module
and for BPF, judged as the x86 detector test does (tests/vm/inject.py).

usage: lowres.py KERNEL INITRD OUTDIR HOSTSTOPS
       lowres.py --again OUTDIR   judge a run's files again (no VM)
"""
import os
import re
import sys

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

NCPU = 2
PAUSES = 6
check = hvntest.checker("vm-lowres/")


def main():
    env = dict(os.environ, HVN_VM_CPUS=str(NCPU),
               HVN_VM_APPEND="highres=off " + os.environ.get("HVN_VM_APPEND", ""))
    console = inject.console_of("lowres", sys.argv[1:], env, check)
    for line in console.splitlines():
        if hvntest.parse(line):
            hvntest.relay(line)
        elif line.startswith(("guest:", "QUIET", "BASELINE")):
            print("  " + line.strip())
    # The guest's timer resolution: its tick (resolution N ns, checked).  A
    # stop is seen from the first tick it made a CPU miss (4.66 to 3.09 ms
    # short for 20 ms pauses in the first runs).
    m = re.search(r"resolution (\d+)\s+ns", console)
    inject.judge_pauses(console, NCPU, PAUSES, check,
                        res_ms=int(m.group(1)) / 1e6 if m else 0.0)


if __name__ == "__main__":
    main()
