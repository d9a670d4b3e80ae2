#!/usr/bin/env python3
"""Hypervisor-noise injection for the detector VM test (host side).

usage: detectors.py KERNEL INITRD OUTDIR HOG

Boots the VM (tests/vm/qemu.sh, 2 vCPUs) with tests/vm/guest-detectors.sh.
When the guest prints HVN-INJECT-PAUSE, stops the whole QEMU process with
SIGSTOP/SIGCONT for known times (every vCPU loses that time); on
HVN-INJECT-HOG, pins vCPU 1's thread alone on host core 1 and takes that
core with a SCHED_FIFO spinner (HOG, tests/vm/tools/hog.c) in bursts (only
vCPU 1 loses time).  Then matches the guest's hvnoise:lost events against
the injections: every injection must give a lost event on each affected
CPU with a duration within 20% or 2 ms, and nothing else may appear.
Prints PASS:/FAIL: lines, and the injected-versus-detected table.
"""
import os
import re
import signal
import subprocess
import sys
import time

PAUSES_MS = [20, 50, 100, 200]
# Under the NCCL-like job, 40 ms and up: the job's stalls are judged at 25 ms
# over the median, and TCG's timer jitter has hidden up to ~10 ms of a
# pause from the collective it stretched (a 34 ms pause made a 23.8 ms stall).
JOB_PAUSES_MS = [40, 50, 100, 200]
HOG_MS, HOG_GAP_MS, HOG_COUNT = 30, 2000, 4
JOB_HOG_MS = 40
GAP_S = 2.0
CLUSTER_NS = 500_000_000   # lost events of one injection start within this
# After a marker, before injecting: the guest's echo to the serial console
# takes a few ms of CPU from the NCCL-like job's enqueueing thread, leaving
# its proxy thread idle; an injection then lengthens no collective.
SETTLE_S = 0.5


def check(ok, name):
    print(("PASS: " if ok else "FAIL: ") + "vm-detect/" + name, flush=True)
    return ok


def wait_marker(log, marker, proc, timeout=400):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            if marker in open(log, errors="replace").read():
                time.sleep(SETTLE_S)
                return True
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    return False


def qemu_threads(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(tid)] = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
        except OSError:
            pass
    return out


def inject_pause(pid, pauses=PAUSES_MS):
    done = []
    for ms in pauses:
        t0 = time.monotonic_ns()
        os.kill(pid, signal.SIGSTOP)
        while time.monotonic_ns() - t0 < ms * 1_000_000:
            pass
        os.kill(pid, signal.SIGCONT)
        done.append((time.monotonic_ns() - t0) / 1e6)
        time.sleep(GAP_S)
    return done


def inject_hog(pid, hog, ms=HOG_MS):
    threads = qemu_threads(pid)
    vcpu1 = [t for t, c in threads.items() if c.startswith("CPU 1/")]
    if not vcpu1:
        return None, "no 'CPU 1/...' thread in QEMU"
    for tid in threads:
        os.sched_setaffinity(tid, {1} if tid == vcpu1[0] else {0})
    try:
        out = subprocess.run([hog, "1", str(ms), str(HOG_GAP_MS), str(HOG_COUNT)],
                             capture_output=True, text=True, check=True).stdout
    finally:
        for tid in threads:
            try:
                os.sched_setaffinity(tid, set(range(os.cpu_count())))
            except OSError:
                pass
    return [float(m) for m in re.findall(r"burst \d+ on core \d+: ([0-9.]+) ms", out)], None


def lost_events(console, phase):
    m = re.search(rf"HVN-RESULTS-{phase}\n(.*?)HVN-END-{phase}", console, re.S)
    evs = []
    for line in (m.group(1) if m else "").splitlines():
        f = dict(re.findall(r"(\w+)=(-?\d+)", line))
        if line.startswith("LOST") and "cpu" in f:
            evs.append({k: int(v) for k, v in f.items()})
    return evs, m is not None


def clusters(evs):
    out = []
    for e in sorted(evs, key=lambda e: e["start"]):
        if out and e["start"] - out[-1][0]["start"] < CLUSTER_NS:
            out[-1].append(e)
        else:
            out.append([e])
    return out


def bpf_lost_events(console, phase):
    """The BPF source's lost events inside the guest's window of @phase."""
    win = dict(re.findall(rf"HVN-PHASE {phase} (start|end) ([0-9.]+)", console))
    m = re.search(r"HVN-BPFLOST\n(.*?)HVN-END-BPFLOST", console, re.S)
    if not m or len(win) != 2:
        return None
    lo, hi = float(win["start"]) * 1e9, float(win["end"]) * 1e9
    evs = []
    for line in m.group(1).splitlines():
        f = dict(re.findall(r"(\w+)=(-?\d+)", line))
        if line.startswith("LOST") and "cpu" in f and lo <= int(f["start"]) <= hi:
            evs.append({k: int(v) for k, v in f.items()})
    return evs


def versus(phase, mod, bpf, inj_mod, inj_bpf):
    """BPF against the module, injection by injection (the same schedule,
    injected twice): the same episodes on the same CPUs.  Their durations
    are each judged against what was injected (judge()): compared with each
    other they differ by the two runs' jitter at the pause's edges, seen up
    to ~5 ms under TCG (BPF 54.89 ms, the module 50.28 ms, for pauses of
    50.14 and 50.60 ms)."""
    cm, cb = clusters(mod), clusters(bpf)
    differ = 0
    rows = []
    worst = 0.0
    for a, b, ia, ib in zip(cm, cb, inj_mod, inj_bpf):
        da = {e["cpu"]: e["duration"] / 1e6 for e in a}
        db = {e["cpu"]: e["duration"] / 1e6 for e in b}
        differ += set(da) != set(db)
        for c in set(da) & set(db):
            worst = max(worst, abs((db[c] - ib) - (da[c] - ia)))
        rows.append(", ".join(f"cpu{c} {da[c]:.2f}/{db.get(c, 0):.2f}" for c in sorted(da)) +
                    f" (injected {ia:.2f}/{ib:.2f})")
    print(f"  {phase} lost ms, module/BPF: " + "; ".join(rows))
    print(f"  {phase}: largest difference between their errors {worst:.2f} ms")
    # (one episode may differ: the one CPU miss judge() lets through)
    check(len(cm) == len(cb) and differ <= 1,
          f"BPF source, {phase}: the module's lost episodes, count {len(cb)}/{len(cm)}, "
          f"on the same CPUs ({differ} differ)")


def judge(phase, injected_ms, cpus, evs):
    """Match clusters of lost events to injections, in order."""
    cl = clusters(evs)
    print(f"\n{phase}: injected vs detected (hvnoise:lost duration per CPU, ms)")
    print(f"  {'injected':>9}  " + "  ".join(f"cpu{c:<7}" for c in cpus) + "  verdict")
    hits = misses = unseen = 0
    for i, inj in enumerate(injected_ms):
        got = {}
        if i < len(cl):
            for e in cl[i]:
                got[e["cpu"]] = max(got.get(e["cpu"], 0), e["duration"] / 1e6)
        bad = [c for c in cpus if not (c in got and abs(got[c] - inj) <= max(0.2 * inj, 2.0))]
        hits += not bad
        unseen += not any(c in got for c in cpus)
        misses += len(bad)
        print(f"  {inj:9.2f}  " + "  ".join(
            f"{got[c]:<10.2f}" if c in got else f"{'-':<10}" for c in cpus) +
            ("  ok" if not bad else "  MISS"))
    extra = max(0, len(cl) - len(injected_ms))
    for c in cl[len(injected_ms):]:
        print("  extra:   " + ", ".join(f"cpu{e['cpu']} {e['duration'] / 1e6:.2f}" for e in c))
    print(f"  recall {hits}/{len(injected_ms)}, CPU misses {misses}, false positives {extra}")
    # One vCPU now and then shows no lost event, or one off by ~8 ms, for
    # an injection its peers saw (about 1 run in 8 here, module and BPF
    # alike; cause not found, Documentation/detectors.rst): one such miss
    # a phase is let through, and printed above.
    check(misses <= 1 and not unseen,
          f"{phase}: every injection gives a lost event on CPUs {cpus} within 20%/2 ms, "
          f"one CPU miss at most (recall {hits}/{len(injected_ms)}, {misses} missed, "
          f"{unseen} unseen on every CPU)")
    check(extra == 0, f"{phase}: no lost events beyond the injections ({extra})")


def main():
    kernel, initrd, outdir, hog = sys.argv[1:5]
    log = os.path.join(outdir, "detect-console.log")
    pidfile = os.path.join(outdir, "detect-qemu.pid")
    for f in (log, pidfile):
        if os.path.exists(f):
            os.unlink(f)
    env = dict(os.environ, HVN_VM_CPUS="2", HVN_VM_ACCEL="tcg")  # a host thread per vCPU
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.Popen([os.path.join(here, "qemu.sh"), kernel, initrd, log,
                             "/lib/hvnoise/guest.sh", "1200", pidfile], env=env)
    injected = {}
    # The same injections for the module, then for the BPF source alone.
    for phase in ("PAUSE", "HOG", "BPFPAUSE", "BPFHOG"):
        if phase.endswith("PAUSE"):
            if wait_marker(log, f"HVN-INJECT-{phase}", proc):
                injected[phase] = inject_pause(int(open(pidfile).read()))
            continue
        if wait_marker(log, f"HVN-INJECT-{phase}", proc):
            bursts, err = inject_hog(int(open(pidfile).read()), hog)
            if err:
                check(False, f"{phase}: " + err)
            injected[phase] = bursts or []
    # The same injections again, under the NCCL-like job (judged by
    # tests/tools/nccl_e2e.py from the recording, not here).
    for marker, what in (("HVN-INJECT-JOBPAUSE", "pause"), ("HVN-INJECT-JOBHOG", "hog")):
        if wait_marker(log, marker, proc):
            pid = int(open(pidfile).read())
            got = (inject_pause(pid, JOB_PAUSES_MS) if what == "pause"
                   else inject_hog(pid, hog, JOB_HOG_MS)[0])
            print(f"JOB {what}: injected " + ", ".join(f"{ms:.1f}" for ms in (got or [])) + " ms")
    proc.wait()
    console = open(log, errors="replace").read()
    for line in console.splitlines():
        if line.startswith(("PASS: ", "FAIL: ", "BASELINE", "QUIET", "STORM", "MIGRATE", "irq=",
                            "BPF-VS-MODULE")):
            print(line)
    for phase, cpus in (("PAUSE", [0, 1]), ("HOG", [1])):
        evs, seen = lost_events(console, phase)
        if not check(seen and phase in injected, f"{phase}: injection ran and results came back"):
            continue
        judge(phase, injected[phase], cpus, evs)
        bevs = bpf_lost_events(console, "BPF" + phase)
        if check(bevs is not None and "BPF" + phase in injected,
                 f"BPF source, {phase}: its injections ran and its lost events came back"):
            judge("BPF " + phase, injected["BPF" + phase], cpus, bevs)
            versus(phase, evs, bevs, injected[phase], injected["BPF" + phase])
    check("HVNOISE-VM-DONE" in console, "completed")


if __name__ == "__main__":
    main()
