#!/usr/bin/env python3
"""Hypervisor-noise injection for the detector VM test (host side).

usage: detectors.py KERNEL INITRD OUTDIR HOG HOSTSTOPS

Boots the VM (tests/vm/qemu.sh, 2 vCPUs, a host thread each) with
tests/vm/guest-detectors.sh and answers its injection requests
(tests/vm/inject.py): pauses of the whole QEMU process (every vCPU loses
the time) and bursts of a SCHED_FIFO spinner (HOG, tests/vm/tools/hog.c)
on vCPU 1's host core (only vCPU 1 loses it).  The same schedule runs for
the module, then for the BPF source, then under the NCCL-like job (judged
by tests/host/nccl_e2e.py from the recording).  Every injection must
give a lost event on each vCPU it stopped within 20% or 2 ms, and nothing
else may appear but this host's own stops, witnessed by HOSTSTOPS
(tests/vm/tools/hoststops.c; inject.py): no tolerance.  The same holds
for the guest's quiet phases (its TCG baseline and the quiet guest).  Prints the guest's results and its own as
KTAP (tests/host/hvntest.py), and the tables.
"""
import os
import re
import sys

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

NCPU = 2
check = hvntest.checker("vm-detect/")


def versus(mod, bpf):
    """The module's and BPF's episodes side by side, injection by
    injection (the same schedule, injected once for each)."""
    rows, worst = [], 0.0
    for (sa, (wa, ga, da)), (sb, (wb, gb, db)) in zip(sorted(mod.items()), sorted(bpf.items())):
        for c in set(da) & set(db):
            worst = max(worst, abs((db[c] - gb) - (da[c] - ga)))
        rows.append(f"{wa} " + ", ".join(f"cpu{c} {da.get(c, 0):.2f}/{db.get(c, 0):.2f}"
                                         for c in sorted(set(da) | set(db))) +
                    f" (injected {ga:.2f}/{gb:.2f})")
    print("  lost ms, module/BPF: " + "; ".join(rows))
    print(f"  largest difference between their errors {worst:.2f} ms")


# The kernel tracepoints hvnoise.ko (kmod/detect.c's hvn_probes) and the BPF
# source attach to.  Under multi-threaded TCG, flipping their static keys
# (the kernel patches hot interrupt-path text with int3 while other vCPUs
# run it) has hung the VM at insmod: a vCPU looping in the int3 handler, the
# patching one waiting in smp_call_function_many_cond.  Enabled on the
# command line, they are on before the other CPUs start, so loading the
# module and attaching BPF only add probes; the guest filters them out of
# the top-level buffer.
BOOT_TRACEPOINTS = (
    "irq:irq_handler_entry", "irq:irq_handler_exit", "timer:hrtimer_start", "timer:hrtimer_expire_entry",
    "nmi:nmi_handler", "cpuhp:cpuhp_enter", "cpuhp:cpuhp_exit",
    "irq_vectors:local_timer_entry", "irq_vectors:local_timer_exit",
    "irq_vectors:reschedule_entry", "irq_vectors:reschedule_exit",
    "irq_vectors:call_function_entry", "irq_vectors:call_function_exit",
    "irq_vectors:call_function_single_entry",
    "irq_vectors:call_function_single_exit", "irq_vectors:vector_update")


def main():
    kernel, initrd, outdir, hogbin, stopsbin = sys.argv[1:6]
    # One TCG thread per vCPU (the host hog takes one vCPU's core); see
    # BOOT_TRACEPOINTS.
    env = dict(os.environ, HVN_VM_CPUS=str(NCPU), HVN_VM_ACCEL="tcg",
               HVN_VM_APPEND="trace_event=" + ",".join(BOOT_TRACEPOINTS) + " " +
               os.environ.get("HVN_VM_APPEND", ""))
    console = inject.run_vm("detect", kernel, initrd, outdir, env, stopsbin, hogbin, 1200, check)
    for line in console.splitlines():
        if hvntest.parse(line):
            hvntest.relay(line)
        elif line.startswith(("BASELINE", "QUIET", "STORM", "DRIVE", "MIGRATE", "irq=", "BPF-VS-MODULE",
                                  "  OTHER")):
            print(line)
    clock = inject.guest_clock(console, ("anchor", "module", "bpf"))
    print(f"the guest's clock on this host's: {clock}")
    check(clock.valid, f"the guest's clock is placed on this host's ({clock})")
    inject.quiet(console, clock, NCPU, check)
    seen = {}
    for source in ("module", "bpf"):
        evs = inject.events(console, source)
        wins = inject.windows(console, source)
        if not check(evs is not None and len(wins) == 8 and source in inject.spans(console),
                     f"{source}: its 8 injections ran and its lost events came back ({len(wins)})"):
            continue
        print(f"\n{source}: injected vs detected (hvnoise:lost duration per vCPU it stopped)")
        got, _, _ = inject.judge(source, wins, evs, NCPU,
                                 lambda ok, name: check(ok, name), clock,
                                 inject.spans(console).get(source))
        seen[source] = {s: (w[0], w[2], got[s]) for s, w in wins.items()}
    if len(seen) == 2:
        versus(seen["module"], seen["bpf"])
    job = [m.groups() for m in re.finditer(
        r"^HVN-DO (\d+) (pause|hog) \d+ 500\n(?:.*\n)*?HVN-WIN \1 \S+ \S+ \d+ ([0-9.]+)",
        console, re.M)]
    for what in ("pause", "hog"):
        print(f"JOB {what}: injected " + ", ".join(f"{float(g):.1f}" for _, w, g in job if w == what)
              + " ms")
    check("HVNOISE-VM-DONE" in console, "completed")


if __name__ == "__main__":
    main()
