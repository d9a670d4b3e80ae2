#!/usr/bin/env python3
"""Busy but innocent (host side): Debian's 6.1 in a 4-vCPU VM (single-
threaded TCG) running tests/vm/guest-innocent.sh, the module then the BPF
source, each for SECS seconds of what real hosts do that is not the
hypervisor's doing: timers armed already due, NMI bursts, CPU hotplug
(stop_machine; managed vectors shut down and started again), a NIC's
vectors freed and requested again, a second disk's vector spread on two
CPUs shut down with both offline.  Each cycle ends with one pause of the
whole VM by this host.

Judged (tests/vm/inject.py): the quiet phases as everywhere; each pause
seen on every watched CPU within 20% or 2 ms; every other lost event a
stop of this host that its witness saw, strictly (no "whole VM stopped"
excuse around CPU hotplug: stop_machine stops every CPU alike, and is
the guest's own; away from it, every watched vCPU stopped alike is the
VM's, as in the other VM tests), or
time the vCPU did not run because the one TCG thread ran other vCPUs'
NMI handlers (all of its unexplained time but TCG's own lateness); and
each IRQ's reported moves (irq_migrate from -> to) exactly the changes of
CPU /proc showed for it between the guest's steps (HVN-PLACE), a vector
freed or shut down being on no CPU, where it was last seen before.

usage: innocent.py KERNEL INITRD OUTDIR HOSTSTOPS [SECS]
       innocent.py --again OUTDIR   judge a run's files again (no VM)
"""
import os
import re
import sys

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

NCPU = 4
WATCHED = 3		# CPUs 0-2 watched for lost time: each pause seen there
E1K = "-netdev hubport,id=n2,hubid=1 -device e1000e,netdev=n2,addr=08"
# A second disk with 2 queues on the 4 vCPUs: one managed vector spread
# on CPUs 2-3, shut down when both go offline.
BLK2 = "-drive file={},if=none,format=raw,id=d1 -device virtio-blk-pci,drive=d1,addr=09,num-queues=2"
check = hvntest.checker("vm-innocent/")


def placements(console, source):
    """The guest's HVN-PLACE lines of @source's phase, in order: [(step,
    {irq: cpu})]."""
    out, on = [], False
    for m in re.finditer(r"^HVN-PLACE (\S+) (?:t=\S+ )?(.*)$", console, re.M):
        step = m.group(1)
        if step.endswith("-start"):
            on = step == source + "-start"
        if on:
            out.append((step, {int(i): int(c) for i, c in re.findall(r"(\d+):(\d+)", m.group(2))}))
    return out


def moves(console, source):
    """{irq: [(from, to)]} that the guest printed for @source, or None."""
    m = re.search(rf"HVN-MIGRATE {source}\n(.*?)HVN-END-MIGRATE", console, re.S)
    if not m:
        return None
    out = {}
    for line in m.group(1).splitlines():
        f = dict(re.findall(r"(\w+)=(-?\d+)", line))
        if line.startswith("MIGRATE") and "irq" in f:
            out.setdefault(int(f["irq"]), []).append((int(f["from_cpu"]), int(f["to_cpu"])))
    return out


def judge_moves(console, source):
    """Each IRQ's reported moves must be its changes of CPU as /proc had
    it at the guest's steps: none reported for a vector freed or shut
    down (no CPU), one for a vector that came back elsewhere."""
    steps = placements(console, source)
    got = moves(console, source)
    if not check(got is not None and len(steps) > 1,
                 f"{source}: its IRQ moves and the guest's {len(steps)} placements came back"):
        return
    want, last = {}, dict(steps[0][1])
    for _, where in steps[1:]:
        for irq, cpu in where.items():
            if irq in last and last[irq] != cpu:
                want.setdefault(irq, []).append((last[irq], cpu))
            last[irq] = cpu
    irqs = sorted(set(want) | set(got))
    bad = [f"IRQ {i}: moved {want.get(i, [])}, reported {got.get(i, [])}"
           for i in irqs if want.get(i, []) != got.get(i, [])]
    nwant = sum(len(v) for v in want.values())
    nfalse = sum(len(v) for i, v in got.items() if not want.get(i))
    print(f"  {source}: IRQ moves /proc showed {nwant}, reported "
          f"{sum(len(v) for v in got.values())} ({nfalse} on IRQs that never moved)")
    for b in bad[:10]:
        print(f"    MOVES {b}")
    check(not bad and nwant > 0, f"{source}: every IRQ move reported once, as /proc showed "
          f"it, and no other ({nwant} moves" + (f"; {bad[0]}" if bad else "") + ")")


# After a CPU is back online, how long its detectors may take to see
# again: the module at once (its online callback), BPF at its next poll.
BACK_NS = 500_000_000


def hvn_off(console):
    """[(cpu, [guest s])]: the guest's HVN-OFF lines, take-down start to
    bring-up end (two times in an older guest's, four now)."""
    return [(int(m.group(1)), [float(x) for x in m.group(2).split()])
            for m in re.finditer(r"^HVN-OFF (\d+) ((?:[0-9.]+ ?)+)$", console, re.M)]


def offline(console):
    """{cpu: [(guest ns, guest ns)]}: when each CPU was taken down, to
    when it was back up and its detectors could see again."""
    out = {}
    for c, t in hvn_off(console):
        out.setdefault(c, []).append((t[0] * 1e9, t[-1] * 1e9 + BACK_NS))
    return out


def hotplug_windows(console):
    """[(guest ns, guest ns)]: each CPU's take-down and its bring-up, where
    the guest itself stops every CPU (stop_machine(); x86's MTRR
    rendezvous as a CPU comes up); the whole span from an older guest."""
    out = []
    for _, t in hvn_off(console):
        pairs = [(t[0], t[1]), (t[2], t[3])] if len(t) == 4 else [(t[0], t[-1])]
        out += [(a * 1e9, b * 1e9) for a, b in pairs]
    return out


def main():
    secs = sys.argv[5] if len(sys.argv) > 5 else os.environ.get("INNOCENT_SECS", "30")
    disk2 = os.path.join(sys.argv[-1 if sys.argv[1] == "--again" else 3], "disk2.img")
    if sys.argv[1] != "--again":
        with open(disk2, "wb") as f:
            f.truncate(16 << 20)
    env = dict(os.environ, HVN_VM_CPUS=str(NCPU), HVN_VM_ARGS=E1K + " " + BLK2.format(disk2),
               HVN_VM_APPEND=f"hvn.secs={secs} " + os.environ.get("HVN_VM_APPEND", ""))
    console = inject.console_of("innocent", sys.argv[1:], env, check,
                                timeout_s=600 + 4 * int(secs))
    for line in console.splitlines():
        if hvntest.parse(line):
            hvntest.relay(line)
        elif line.startswith(("guest:", "QUIET", "BASELINE", "BPF watch")):
            print("  " + line.strip())
    clock = inject.guest_clock(console, ("anchor", "module", "bpf"))
    print(f"the guest's clock on this host's: {clock}")
    check(clock.valid, f"the guest's clock is placed on this host's ({clock})")
    inject.quiet(console, clock, WATCHED, check)
    # Booted highres=off (make soak-innocent's second boot): a stop is
    # seen from the first tick it made a CPU miss, up to a tick short.
    m = re.search(r"hrtimer resolution (\d+) ns", console)
    res_ms = int(m.group(1)) / 1e6 if m and int(m.group(1)) > 1 else 0.0
    for source in ("module", "bpf"):
        evs = inject.events(console, source)
        wins = inject.windows(console, source)
        if check(evs is not None and wins and source in inject.spans(console),
                 f"{source}: its pauses ran and its lost events came back ({len(wins)})"):
            print(f"\n{source}: busy but innocent, one pause a cycle (hvnoise:lost per vCPU)")
            inject.judge(source, wins, evs, WATCHED, check, clock,
                         inject.spans(console).get(source), late_ms=inject.tcg_jitter_ms,
                         res_ms=res_ms, strict=True, gone=offline(console),
                         nmi=inject.nmis(console, source),
                         stopall=hotplug_windows(console))
        judge_moves(console, source)
    check("HVNOISE-VM-DONE" in console, "completed")


if __name__ == "__main__":
    main()
