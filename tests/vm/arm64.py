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
    if sys.argv[1:2] == ["--again"]:
        outdir = sys.argv[2]
        inject.load_host(os.path.join(outdir, "arm64-host.json"))
        console = open(os.path.join(outdir, "arm64-console.log"), errors="replace").read()
    else:
        kernel, initrd, outdir, stopsbin = sys.argv[1:5]
        env = dict(os.environ, HVN_VM_ARCH="aarch64", HVN_VM_CPUS=str(NCPU))
        console = inject.run_vm("arm64", kernel, initrd, outdir, env, stopsbin, None, 600,
                                check)
    for line in console.splitlines():
        if hvntest.parse(line):
            hvntest.relay(line)
        elif line.startswith(("guest:", "QUIET", "  ")) or " irq_migrate: " in line or \
                " irq_storm" in line:
            print("  " + line.strip())
    clock = inject.guest_clock(console, ("anchor", "module", "bpf"))
    print(f"the guest's clock on this host's: {clock}")
    check(clock.valid, f"the guest's clock is placed on this host's ({clock})")
    inject.quiet(console, clock, NCPU, check)
    for source in ("module", "bpf"):
        evs = inject.events(console, source)
        wins = inject.windows(console, source)
        if not check(evs is not None and len(wins) == PAUSES and source in inject.spans(console),
                     f"{source}: its {PAUSES} pauses ran and its lost events came back ({len(wins)})"):
            continue
        print(f"\n{source}: injected vs detected (hvnoise:lost duration per vCPU)")
        # One TCG thread runs the vCPUs in turn: after a pause, the last
        # to run again loses up to TCG's own lateness more (4.5 and 5.9 ms
        # over a 20 ms pause, with 4.1 ms measured in the baseline).
        inject.judge(source, wins, evs, NCPU, lambda ok, name: check(ok, name), clock,
                     inject.spans(console).get(source), late_ms=inject.tcg_jitter_ms)
    check("HVNOISE-VM-DONE" in console, "completed")


if __name__ == "__main__":
    main()
