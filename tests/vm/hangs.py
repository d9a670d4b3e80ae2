#!/usr/bin/env python3
"""The livelock hunt (host side; make soak-hangs): Debian's 6.1 running
tests/vm/guest-hangs.sh, start/stop cycles of the BPF source and then
tracepoints switched on and off through tracefs, on the TCG layout asked
for.  A guest silent for HVN_HANG_S seconds (60 here) is a hang: where
each vCPU is gets named from the kernel's symbols, which the guest wrote
to a second disk (tests/vm/inject.py hang_report()).  The run passes when
every cycle ran and no hang was seen.

HANGS_ACCEL (tcg,thread=single; tcg: a host thread per vCPU) and
HANGS_CPUS (4) set the layout.

usage: hangs.py KERNEL INITRD OUTDIR HOSTSTOPS LOOPS TLOOPS
"""
import os
import re
import sys

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

check = hvntest.checker("vm-hangs/")


def main():
    kernel, initrd, out, stops, loops, tloops = sys.argv[1:7]
    accel = os.environ.get("HANGS_ACCEL", "tcg,thread=single")
    ksyms = os.path.join(out, "hangs-ksyms.img")
    with open(ksyms, "wb") as f:
        f.truncate(32 << 20)
    env = dict(os.environ, HVN_VM_ACCEL=accel, HVN_VM_CPUS=os.environ.get("HANGS_CPUS", "4"),
               HVN_VM_ARGS=f"-drive file={ksyms},if=none,format=raw,id=d1 "
                           "-device virtio-blk-pci,drive=d1,addr=09",
               HVN_VM_APPEND=f"hvn.loops={loops} hvn.tloops={tloops}")
    console = inject.run_vm("hangs", kernel, initrd, out, env, stops, None,
                            300 + 60 * int(loops) + int(tloops), check)
    for line in console.splitlines():
        if hvntest.parse(line):
            hvntest.relay(line)
        elif line.startswith("guest:"):
            print("  " + line.strip())
    last = {w: n for w, n in re.findall(r"^HVN-LOOP (\w+) (\d+)", console, re.M)}
    print(f"# {accel}: {last.get('bpf', 0)} BPF cycles, {last.get('tracefs', 0)} tracefs cycles")
    check(not inject.hangs, f"no hang on {accel} ({len(inject.hangs)} seen" +
          (f": {inject.hangs[0]}" if inject.hangs else "") + ")")
    check("HVNOISE-VM-DONE" in console, "completed")


if __name__ == "__main__":
    main()
