#!/usr/bin/env python3
"""hvnoise.ko on arm64 (host side): Debian 12's arm64 kernel on QEMU's virt
machine (tests/vm/qemu.sh with HVN_VM_ARCH=aarch64, single-threaded TCG)
running tests/vm/guest-arm64.sh, whose pauses of the whole VM this side
makes and judges as the x86 detector test does (tests/vm/inject.py):
every pause a lost event on every vCPU within 20% or 2 ms, nothing else
but this host's own stops, witnessed by HOSTSTOPS; the same for the
guest's quiet phases.  The module's pauses, then the BPF source's (the
module watching nothing), each judged so.

usage: arm64.py KERNEL INITRD OUTDIR HOSTSTOPS
       arm64.py --again OUTDIR   judge a run's files again (no VM)
"""
import os
import sys

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

NCPU = 4
PAUSES = 6
check = hvntest.checker("vm-arm64/")


def main():
    env = dict(os.environ, HVN_VM_ARCH="aarch64", HVN_VM_CPUS=str(NCPU))
    console = inject.console_of("arm64", sys.argv[1:], env, check)
    for line in console.splitlines():
        if hvntest.parse(line):
            hvntest.relay(line)
        elif line.startswith(("guest:", "QUIET", "  ")) or " irq_migrate: " in line or \
                " irq_storm" in line:
            print("  " + line.strip())
    inject.judge_pauses(console, NCPU, PAUSES, check)


if __name__ == "__main__":
    main()
