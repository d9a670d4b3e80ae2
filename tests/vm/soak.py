#!/usr/bin/env python3
"""Lost-time recall under injected hypervisor noise (host side).

usage: soak.py KERNEL INITRD OUTDIR HOG HOSTSTOPS MODE [ROUNDS]

Boots the VM (2 vCPUs, a host thread each) with tests/vm/guest-soak.sh and
answers its injection requests (tests/vm/inject.py).  Each injection must
give, on every vCPU it stopped, one lost event within 20% or 2 ms of what
was injected, and no event may fall anywhere else but this host's own
stops (HOSTSTOPS, tests/vm/tools/hoststops.c): no tolerance.  Prints
KTAP (tests/host/hvntest.py), per-CPU recall and the error per injection size.

MODE soak:   ROUNDS rounds of pauses and hogs, the module then BPF.
MODE anchor: the same through the kernel's osnoise, hwnoise and the
             module (tests/vm/guest-anchor.sh, tests/vm/anchor.sh).
MODE exp:    the mechanism experiments (Documentation/detectors.rst).
MODE baseline: TCG's own lateness with nothing injected (HVN_VM_APPEND
             and HVN_VM_ARGS add guest and QEMU settings to try).

SOAK_CPUS (2), SOAK_ACCEL (tcg: a host thread per vCPU; tcg,thread=single
for the demo's layout) and SOAK_PERF_RATE (perf_event_max_sample_rate in
the guest, forced low) change the VM.
"""
import os
import re
import subprocess
import sys
import time

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

NCPU = int(os.environ.get("SOAK_CPUS", "2"))
ok = hvntest.checker("")


def experiments(console):
    for tag in ("module", "bpf"):
        spins = re.findall(rf"^HVN-SPIN {tag} \d+ ([0-9.]+) ([0-9.]+) \d+ (\d+)", console, re.M)
        evs = inject.events(console, f"spin-{tag}") or []
        seen = []
        for t0, t1, ns in spins:
            t0, t1 = float(t0) * 1e9, float(t1) * 1e9
            mine = [e["duration"] / 1e6 for e in evs
                    if e["cpu"] == 1 and t0 - inject.SLACK_NS <= e["start"] <= t1]
            seen.append((int(ns) / 1e6, mine))
        hits = sum(1 for ms, d in seen if len(d) == 1 and abs(d[0] - ms) <= inject.tol(ms))
        print(f"# stop inside the sampler's callback ({tag}): {hits}/{len(seen)} seen: " +
              "; ".join(f"{ms:.1f}->{'/'.join(f'{x:.1f}' for x in d) or '-'}" for ms, d in seen))
        ok(seen and hits == len(seen),
           f"a 30 ms stop between the timer interrupt's clock read and the {tag} "
           f"sampler's re-arm is reported ({hits}/{len(seen)})")
    for line in re.findall(r"^HVN-(?:RATE|THROTTLE) .*", console, re.M):
        print("# " + line)
    thr = re.search(r"^HVN-THROTTLE throttled the BPF source's timers (\d+) times", console, re.M)
    ok(thr and int(thr.group(1)) > 0,
       "perf throttling forced: the recorder counts it (perf_event_max_sample_rate=500)")
    for tag in ("idle-bpf-1000", "idle-bpf-5000", "idle-module", "throttle-bpf"):
        evs = inject.events(console, tag)
        if ok(evs is not None, f"{tag}: events came back"):
            inject.judge(tag, inject.windows(console, tag), evs, NCPU, ok,
                         inject.guest_clock(console, (tag,)))


def main():
    kernel, initrd, outdir, hogbin, stopsbin, mode = sys.argv[1:7]
    rounds = int(sys.argv[7]) if len(sys.argv) > 7 else 10
    log = os.path.join(outdir, f"soak-{mode}-console.log")
    pidfile = os.path.join(outdir, f"soak-{mode}.pid")
    sockpath = os.path.join(outdir, f"soak-{mode}.sock")
    for f in (log, pidfile, sockpath):
        if os.path.exists(f):
            os.unlink(f)
    rate = os.environ.get("SOAK_PERF_RATE")
    env = dict(os.environ, HVN_VM_CPUS=str(NCPU), HVN_VM_ACCEL=os.environ.get("SOAK_ACCEL", "tcg"),
               HVN_VM_APPEND=f"hvn.soak={mode} hvn.rounds={rounds} " +
               (f"hvn.perf_rate={rate} " if rate else "") +
               os.environ.get("HVN_VM_APPEND", ""),
               HVN_VM_ARGS=inject.qemu_args(sockpath) + " " + os.environ.get("HVN_VM_ARGS", ""))
    here = os.path.dirname(os.path.abspath(__file__))
    t0 = time.time()
    witness = inject.Witness.start(stopsbin)
    proc = subprocess.Popen([os.path.join(here, "qemu.sh"), kernel, initrd, log,
                             "/lib/hvnoise/guest.sh", str(600 + rounds * 60), pidfile], env=env)
    print("KTAP version 1", flush=True)
    inject.serve(log, sockpath, pidfile, proc, hogbin)
    proc.wait()
    alive = witness.stop() if witness else False
    print("# " + inject.host_stop_summary(), flush=True)
    console = open(log, errors="replace").read()
    print(f"# VM ran {time.time() - t0:.0f} s")
    if mode == "exp":
        experiments(console)
    elif mode == "baseline":
        for line in re.findall(r"^HVN-BASELINE .*", console, re.M):
            print("# " + line)
    else:
        for line in re.findall(r"^HVN-(?:CPU|RATE|THROTTLE) .*", console, re.M):
            print("# " + line)
        ok(witness and alive, "this host's stops were witnessed on each of its CPUs throughout")
        tags = ("osnoise", "hwnoise", "module") if mode == "anchor" else ("module", "bpf")
        clock = inject.guest_clock(console, tags)
        ok(clock.valid, f"the guest's clock is placed on this host's ({clock})")
        total = [0, 0]
        for source in tags:
            evs = inject.events(console, source)
            if ok(evs is not None, f"{source}: the lost events came back"):
                _, h, n = inject.judge(source, inject.windows(console, source), evs, NCPU, ok,
                                       clock)
                total[0] += h
                total[1] += n
        print(f"# all: {total[0]}/{total[1]} vCPU-injections seen")
    ok("HVNOISE-VM-DONE" in console, "the VM completed")
    sys.exit(hvntest.exit_status())


if __name__ == "__main__":
    main()
