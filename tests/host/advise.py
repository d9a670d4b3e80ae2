#!/usr/bin/env python3
"""hvnoise advise on recordings whose truth is known (tests/host/jobsim.py:
one host, two ranks whose NCCL proxy threads run on CPUs 1 and 2 and whose
enqueuing threads on CPU 3; CPU 0 serves nothing).  Each kind of advice is
made to appear by what is injected, its evidence checked against what was
injected, and made not to appear where it must not: noise off the serving
CPUs, a quiet job, noise below --min-ms.  The provider's bundle is checked
for its episodes and for the identity it reads only on the recording's own
host.

usage: advise.py HVNOISE WORKDIR
Prints KTAP (tests/host/hvntest.py).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import hvntest
from jobsim import Host, Job

check = hvntest.checker("advise/")
MS = 1_000_000


def job(name=None, irq_cpus=(1,), steps=120):
    """A two-rank job on one host; returns (job, host)."""
    hs = Host(0, irq_cpus=irq_cpus, name=name)
    j = Job([hs], 2)
    j.comm("tp", [0, 1])
    j.steps = steps
    return j, hs


def run_job(j, inject=None):
    """@steps all-reduces; @inject(j, step) may add noise or return the
    collective's arguments."""
    for s in range(j.steps):
        kw = inject(j, s) if inject else None
        j.coll("tp", "AllReduce", 1 << 20, **(kw or {}))


def advise(hvn, work, name, j, *args):
    d = os.path.join(work, name)
    j.write(d)
    trace = os.path.join(d, "host0.dat")
    p = subprocess.run([hvn, "advise", "--json", *args, trace], capture_output=True,
                       text=True, env=hvntest.sanitizer_env())
    t = subprocess.run([hvn, "advise", *args, trace], capture_output=True, text=True,
                       env=hvntest.sanitizer_env())
    doc = None
    if p.returncode == 0:
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            pass
    return p, t, doc, trace


def kinds(doc):
    return [a["kind"] for a in doc["advice"]] if doc else None


def of(doc, kind):
    return [a for a in doc["advice"] if a["kind"] == kind] if doc else []


def storm(j, cpu, ms, irq=40, name=b"mlx5_comp0"):
    """An IRQ storm of @ms on @cpu now (host 0's clock)."""
    j.noise(0, cpu, j.t[0] + 100_000, ms * MS, kind="storm", irq=irq, name=name)
    return ms * MS // 20_000        # the interrupts jobsim gives it


def main():
    hvn, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # --- a quiet job: nothing to advise ---------------------------------------
    j, _ = job()
    run_job(j)
    p, t, doc, _ = advise(hvn, work, "quiet", j)
    check(p.returncode == 0 and t.returncode == 0 and doc and doc["advice"] == [] and
          doc["serving_cpus"] == "1-3" and doc["serving_from"] == "ranks" and
          "Nothing to advise" in t.stdout,
          "a quiet job: nothing to advise, the serving CPUs from the ranks' records (1-3), "
          f"exit {p.returncode}/{t.returncode}", p.stderr + t.stdout)

    # --- the same quiet job, but the module was away for 2 s: said, not all-clear --
    j, hs = job()
    run_job(j)
    hs.meta_extra = b"module-gap %d %d\n" % (hs.mono(100 * 10**9), hs.mono(102 * 10**9))
    p, t, doc, _ = advise(hvn, work, "quiet-gap", j)
    blind = doc.get("blind", []) if doc else []
    check(p.returncode == 0 and doc and doc["advice"] == [] and len(blind) == 1 and
          "hvnoise.ko was not loaded 1 times (2.000 s)" in blind[0] and
          "BLIND: hvnoise.ko was not loaded" in t.stdout and
          "Nothing to advise in what the recording saw" in t.stdout,
          "a quiet job whose recording lacks 2 s of the module: nothing to advise, but said "
          "to be within what it saw (BLIND)", json.dumps(blind) + t.stdout[-600:])

    # --- storms of the NIC's IRQ on the proxy thread's CPU -----------------------
    j, _ = job()
    want = {"n": 0, "irqs": 0}

    def storms(j, s):
        if s in (30, 60, 90):
            want["irqs"] += storm(j, 1, 12)
            want["n"] += 1
    run_job(j, storms)
    p, t, doc, _ = advise(hvn, work, "storm", j)
    irq = of(doc, "irq-affinity")
    a = irq[0] if len(irq) == 1 else {}
    check(a.get("irq") == 40 and a.get("name") == "mlx5_comp0" and a.get("cpu") == 1 and
          a.get("storms") == want["n"] and a.get("storm_irqs") == want["irqs"] and
          abs(a.get("storm_ms", 0) - 36) < 0.01 and a.get("target") == 0 and
          a.get("commands") == ["echo 0 > /proc/irq/40/smp_affinity_list"] and
          a.get("irqbalance") == "IRQBALANCE_BANNED_CPULIST=1-3",
          f"storms of IRQ 40 on the proxy CPU 1: move it to CPU 0, the one serving nothing, "
          f"with its evidence ({want['n']} storms, {want['irqs']} interrupts, 36 ms) and "
          "irqbalance's ban of the serving CPUs", json.dumps(irq) + p.stderr)
    pin = of(doc, "pin-threads")
    a = pin[0] if len(pin) == 1 else {}
    check(a.get("cpu") == 1 and a.get("irq") == 40 and a.get("thread") == "proxy" and
          a.get("rank") == 0 and a.get("pid") == 1000 and a.get("target") == 0 and
          a.get("commands") == ["taskset -a -c -p 0,2-3 %d" % a.get("pid")],
          "...and the rank whose proxy thread shares CPU 1 with IRQ 40 may move instead "
          "(taskset of its pid onto every CPU that takes no watched IRQ: 0,2-3)", json.dumps(pin))
    check(t.returncode == 0 and "echo 0 > /proc/irq/40/smp_affinity_list" in t.stdout and
          "IRQBALANCE_BANNED_CPULIST=1-3" in t.stdout and "taskset -a -c -p 0,2-3 1000" in t.stdout,
          "the text gives the same writes", t.stdout[-1500:])
    check(of(doc, "provider") == [] and of(doc, "isolate-cpus") == [],
          "storms are no hypervisor's nor the tick's: no provider or isolation advice",
          json.dumps(kinds(doc)))

    check(doc and doc.get("cpus") == "0-3" and doc.get("cpus_from") == "seen" and
          "CPUs there: 0-3 (up to the highest it saw" in t.stdout,
          "a recording that does not say which CPUs were online: advice names only CPUs up to the highest it saw "
          "(0-3), and says so", json.dumps(doc and doc.get("cpus")) + t.stdout[:600])

    # --- the same storms, the module having seen how each IRQ's affinity is set --
    for flags, what, text in ((0x8, "settable", None),
                              (0x8 | 0x10, "managed", "the kernel places it (a managed IRQ"),
                              (0x8 | 0x20, "fixed", "its affinity cannot be set from userspace")):
        j, hs = job()
        hs.irq_flags = flags
        run_job(j, lambda j, s: storm(j, 1, 12) and None if s in (30, 60, 90) else None)
        p, t, doc, trace = advise(hvn, work, "storm-" + what, j)
        irq = of(doc, "irq-affinity")
        a = irq[0] if len(irq) == 1 else {}
        dry = subprocess.run([hvn, "advise", "--apply", trace], capture_output=True, text=True,
                             env=hvntest.sanitizer_env())
        if text is None:
            check(a.get("affinity") == "settable" and
                  a.get("commands") == ["echo 0 > /proc/irq/40/smp_affinity_list"] and
                  "A managed IRQ" not in t.stdout,
                  "IRQ 40 recorded as settable: the same move, no warning that it may be managed",
                  json.dumps(irq) + t.stdout[-800:])
            continue
        pin = of(doc, "pin-threads")
        check(a.get("affinity") == what and a.get("commands") == [] and
              f"It cannot be moved: {text}" in t.stdout and "Move the rank off CPU 1 instead" in t.stdout and
              "/proc/irq/40/smp_affinity_list" not in t.stdout and
              len(pin) == 1 and pin[0].get("commands") == ["taskset -a -c -p 0,2-3 1000"],
              f"IRQ 40 recorded as {what}: no write of its affinity advised, the rank moved instead, and why",
              json.dumps(irq) + t.stdout[-1200:])
        check(f"IRQ 40 (mlx5_comp0): not moved: {text}" in dry.stdout and
              "smp_affinity_list 1 -> 0" not in dry.stdout,
              f"... and advise --apply does not plan its move (dry run, exit {dry.returncode})",
              dry.stdout[-800:] + dry.stderr[-300:])

    # --- the same storms, CPU 0 offline as the recording began ------------------
    j, hs = job()
    hs.meta_extra = b"online 1-3\n"
    run_job(j, lambda j, s: storm(j, 1, 12) and None if s in (30, 60, 90) else None)
    p, t, doc, _ = advise(hvn, work, "storm-cpu0-offline", j)
    irq = of(doc, "irq-affinity")
    pin = of(doc, "pin-threads")
    check(doc and doc.get("cpus") == "1-3" and doc.get("cpus_from") == "online" and
          len(irq) == 1 and irq[0].get("target") == -1 and not irq[0].get("commands"),
          "CPU 0 offline as the recording began (online 1-3): IRQ 40 is not sent there; "
          "every CPU left serves the job, so no target", json.dumps(irq) + json.dumps(doc and doc.get("cpus")))
    check(len(pin) == 1 and pin[0].get("target") == -1 and not pin[0].get("commands") and
          "echo 0 >" not in t.stdout and "taskset -a -c -p 0" not in t.stdout and
          "CPUs there: 1-3 (online when recorded)" in t.stdout,
          "...nor is the rank sent to CPU 0 (text alike: no write names it)",
          json.dumps(pin) + t.stdout[-1200:])

    # --- the same storms on CPU 0, which serves nothing: no advice --------------
    j, _ = job(irq_cpus=(0,))
    run_job(j, lambda j, s: storm(j, 0, 12) and None if s in (30, 60, 90) else None)
    p, t, doc, _ = advise(hvn, work, "storm-elsewhere", j)
    check(p.returncode == 0 and doc and doc["advice"] == [] and "Nothing to advise" in t.stdout,
          "storms on CPU 0, which serves no rank: nothing to advise", json.dumps(kinds(doc)))

    # --- storms on CPU 1 of an IRQ the newest watched set has on CPU 0 since --------
    j, _ = job(irq_cpus=(0,))
    run_job(j, lambda j, s: storm(j, 1, 12) and None if s in (30, 60, 90) else None)
    p, t, doc, _ = advise(hvn, work, "storm-moved-since", j)
    check(p.returncode == 0 and doc and doc["advice"] == [],
          "storms of IRQ 40 on CPU 1, which the newest watched set routes to CPU 0 "
          "since: nothing left to change", json.dumps(kinds(doc)))

    # --- an IRQ moved onto the other proxy CPU -----------------------------------
    j, hs = job(irq_cpus=(0,))

    def move(j, s):
        if s == 50:
            hs.events.append((j.t[0] + 50_000, 0, "irq_migrate", dict(
                irq=41, dev=0x1700, from_cpu=0, to_cpu=2, how=0, name=b"mlx5_comp1")))
    run_job(j, move)
    p, t, doc, _ = advise(hvn, work, "moved", j)
    irq = of(doc, "irq-affinity")
    a = irq[0] if len(irq) == 1 else {}
    # CPU 0 takes a watched IRQ (mlx5_comp0) but is the one serving no rank.
    check(a.get("irq") == 41 and a.get("moves") == 1 and a.get("cpu") == 2 and
          a.get("storms") == 0 and a.get("target") == 0 and a.get("target_takes_irqs") is True and
          "every one takes a watched IRQ" in t.stdout,
          "IRQ 41 moved onto the proxy CPU 2: advised, to CPU 0, the one serving no rank "
          "although it takes a watched IRQ (said)", json.dumps(irq) + t.stdout[-800:])

    # --- interrupt time in lost episodes on a serving CPU, no storm --------------
    j, hs = job(irq_cpus=(0,))

    def irqwork(j, s):
        if s % 20 == 10:
            t0 = j.t[0] + 50_000
            hs.events.append((t0 + 4 * MS, 2, "lost", dict(
                cpu=2, start=hs.mono(t0), duration=4 * MS, irq_ns=4 * MS, steal_ns=0,
                unexplained_ns=0)))
    run_job(j, irqwork)
    p, t, doc, _ = advise(hvn, work, "irqwork", j)
    iso = of(doc, "isolate-cpus")
    a = iso[0] if len(iso) == 1 else {}
    check(a.get("cpus") == "2" and abs(a.get("lost_irq_ms", 0) - 24) < 0.01 and
          "nohz_full=1-3 " in a.get("cmdline", "") and "irqaffinity=0" in a.get("cmdline", "") and
          of(doc, "irq-affinity") == [] and of(doc, "provider") == [],
          "24 ms of interrupt time in CPU 2's lost episodes, no storm: isolate the serving "
          "CPUs (nohz_full, rcu_nocbs, isolcpus, irqaffinity=0)", json.dumps(doc and doc["advice"]))
    p, t, doc, _ = advise(hvn, work, "irqwork-min", j, "--min-ms", "30")
    check(p.returncode == 0 and doc and doc["advice"] == [],
          "...not with --min-ms 30 (24 ms is below it)", json.dumps(kinds(doc)))

    # --- the hypervisor: a 50 ms pause of the VM inside a collective, and steal --
    me = socket.gethostname()
    for name, host in (("pause", None), ("pause-here", me)):
        j, hs = job(name=host, irq_cpus=(0,))

        def pause(j, s):
            if s == 60:
                return {"hold": (0, 50 * MS)}
            if s == 90:
                t0 = j.t[0] + 50_000
                hs.events.append((t0 + 20 * MS, 1, "steal", dict(
                    cpu=1, source=0, start=hs.mono(t0), window=20 * MS, duration=15 * MS)))
        run_job(j, pause)
        bundle = os.path.join(work, name + "-evidence")
        p, t, doc, trace = advise(hvn, work, name, j, "--bundle", bundle)
        prov = of(doc, "provider")
        a = prov[0] if len(prov) == 1 else {}
        per = {v["vcpu"]: v for v in a.get("per_vcpu", [])}
        ok = (a.get("vcpus") == "0-3" and abs(a.get("unreported_ms", 0) - 200) < 0.01 and
              abs(a.get("steal_ms", 0) - 15) < 0.01 and abs(a.get("longest_ms", 0) - 50) < 0.01 and
              sorted(per) == [0, 1, 2, 3] and all(abs(per[c]["longest_ms"] - 50) < 0.01 for c in per) and
              per[1]["episodes"] == 2 and (a.get("stall_share") or 0) > 0.5)
        if name == "pause":
            check(ok, "a 50 ms pause of the VM (lost on vCPUs 0-3) and 15 ms of steal on vCPU 1: "
                  "provider advice per vCPU, the stall it caused charged to it (share "
                  f"{a.get('stall_share')})", json.dumps(prov))
            check("Nothing in the guest removes it" in t.stdout and
                  "longest at (UTC)" in t.stdout,
                  "the text says so, with its table", t.stdout[-1500:])
        try:
            b = json.load(open(bundle + ".json"))
            txt = open(bundle + ".txt").read()
        except (OSError, ValueError) as e:
            b, txt = {}, str(e)
        eps = b.get("episodes", [])
        ok = (b.get("schema") == "hvnoise-provider-evidence" and len(eps) == 5 and
              sorted(e["vcpu"] for e in eps) == [0, 1, 1, 2, 3] and
              [e["kind"] for e in eps].count("steal") == 1 and
              all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$", e["at"]) for e in eps) and
              len({e["at"] for e in eps if e["kind"] == "unreported"}) == 1 and
              abs(b.get("unreported_ms", 0) - 200) < 0.01 and b.get("method") and
              "Each episode (UTC)" in txt and txt.count(" unreported\n") == 4)
        if name == "pause":
            ident = b.get("identity", {})
            check(ok and ident.get("read") is False and "recorded on host0" in ident.get("why", ""),
                  "--bundle: the evidence (5 episodes in UTC, totals, how measured); the identity "
                  "not read, the recording being another host's", json.dumps(b)[:1500] + txt[:500])
        else:
            ident = b.get("identity", {})
            dmi = {}
            for k, f in (("sys_vendor", "/sys/class/dmi/id/sys_vendor"),
                         ("product_name", "/sys/class/dmi/id/product_name"),
                         ("product_uuid", "/sys/class/dmi/id/product_uuid"),
                         ("instance_id", "/var/lib/cloud/data/instance-id")):
                try:
                    v = open(f).read().strip()
                    if v:
                        dmi[k] = v
                except OSError:
                    pass
            check(ok and ident.get("read") is bool(dmi) and
                  (dmi or "no DMI or cloud-init identity" in ident.get("why", "")) and
                  all(ident.get(k) == v for k, v in dmi.items()),
                  f"--bundle on the recording's own host ({me}): the instance's identity from "
                  f"DMI ({', '.join(sorted(dmi)) or 'none readable here'})", json.dumps(ident))

    # --- no NCCL records: the watched CPUs serve -----------------------------------
    j, hs = job()
    hs.events = [e for e in hs.events if e[2] != "raw_data"]
    t0 = 100 * 10**9
    j.noise(0, 1, t0 + MS, 20 * MS, kind="storm")
    p, t, doc, _ = advise(hvn, work, "no-nccl", j)
    irq = of(doc, "irq-affinity")
    check(doc and doc["serving_from"] == "watched" and doc["serving_cpus"] == "1-2" and
          len(irq) == 1 and irq[0]["cpu"] == 1 and irq[0]["target"] in (0, 3) and
          "the watched CPUs" in t.stdout,
          "without NCCL records the watched CPUs (1-2) serve: a storm on CPU 1 is advised",
          json.dumps(doc)[:1500])

    # --- over many hosts: the host to drain, and its own advice ---------------------
    hs = [Host(0, irq_cpus=(0,)), Host(1, irq_cpus=(0,))]
    j = Job(hs, 2)
    j.comm("world", [0, 1, 2, 3])
    for s in range(120):
        j.coll("world", "AllReduce", 1 << 20, **({"hold": (1, 50 * MS)} if s in (40, 80) else {}))
    d = os.path.join(work, "fleet")
    j.write(d)
    p = subprocess.run([hvn, "advise", "--json", d], capture_output=True, text=True,
                       env=hvntest.sanitizer_env())
    t = subprocess.run([hvn, "advise", d], capture_output=True, text=True,
                       env=hvntest.sanitizer_env())
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    dr = doc.get("drain", [])
    adv = dr[0]["advice"]["advice"] if len(dr) == 1 and dr[0].get("advice") else []
    check(p.returncode == 0 and t.returncode == 0 and doc.get("hosts") == 2 and len(dr) == 1 and
          dr[0]["host"] == "host1" and abs(dr[0]["delay_ms"] - 100) < 1 and dr[0]["held"] == 2 and
          [a["kind"] for a in adv] == ["provider"] and adv[0]["vcpus"] == "0-3" and
          "Hosts to drain" in t.stdout and "== host1 (" in t.stdout and "== host0" not in t.stdout,
          "over two hosts, host1 paused twice in the job's all-reduces: drained alone (100 ms, "
          "held 2 times), with its own advice (the provider's); host0 not named",
          p.stdout[:1200] + p.stderr + t.stdout[:600])
    p = subprocess.run([hvn, "advise", "--apply", d], capture_output=True, text=True)
    check(p.returncode == 2 and "one host's TRACE.dat" in p.stderr,
          f"--apply over many hosts: refused, exit 2 (exit {p.returncode})", p.stderr[:300])

    # --- --apply here: the recording is another host's ----------------------------
    storm_trace = os.path.join(work, "storm", "host0.dat")
    rf = os.path.join(work, "restore")
    p = subprocess.run([hvn, "advise", "--apply", "--restore-file", rf, storm_trace],
                       capture_output=True, text=True, env=hvntest.sanitizer_env())
    check(p.returncode == 0 and "a dry run" in p.stdout and
          re.search(r"IRQ 40 (is .* here now, not mlx5_comp0 as recorded|\(mlx5_comp0\): not on this host now)", p.stdout) and
          "not moved" in p.stdout and not os.path.exists(rf),
          "--apply of another host's recording: IRQ 40 is not mlx5_comp0 here, not moved, "
          "no restore file", p.stdout[-600:] + p.stderr)
    p = subprocess.run([hvn, "advise", "--apply", "--yes", "--restore-file", rf, storm_trace],
                       capture_output=True, text=True, env=hvntest.sanitizer_env())
    check(p.returncode == 1 and "the recording is of host host0, this is" in p.stdout and
          "nothing changed" in p.stdout and not os.path.exists(rf),
          "--apply --yes of another host's recording: refused before anything (exit 1, no "
          f"restore file; --any-host overrides) (exit {p.returncode})", p.stdout[-600:] + p.stderr)
    # A restore file whose IRQ name holds a space, of an IRQ gone since.
    with open(rf, "w") as f:
        f.write("hvnoise-advise-restore 1\nirq 99999 0-1 PCIe PME\n")
    p = subprocess.run([hvn, "advise", "--restore", "--restore-file", rf],
                       capture_output=True, text=True, env=hvntest.sanitizer_env())
    check(p.returncode == 0 and "IRQ 99999 is gone now, not PCIe PME: left alone" in p.stdout and
          not os.path.exists(rf),
          f"--restore of an IRQ named with a space (\"PCIe PME\"), gone since: read whole, "
          f"left alone, said (exit {p.returncode})", p.stdout + p.stderr)
    for args, want, what in (
            (["--yes", storm_trace], "--yes goes with --apply", "--yes without --apply"),
            (["--apply", "--verify", storm_trace], "--verify records after --apply --yes",
             "--verify without --yes"),
            (["--restore", storm_trace], "no TRACE", "--restore with a TRACE")):
        p = subprocess.run([hvn, "advise", *args], capture_output=True, text=True)
        check(p.returncode == 2 and want in p.stderr,
              f"{what}: exit 2, said (exit {p.returncode})", p.stderr[:300])
    with open(rf, "w") as f:
        f.write("not a restore file\n")
    p = subprocess.run([hvn, "advise", "--restore", "--restore-file", rf],
                       capture_output=True, text=True)
    check(p.returncode == 3 and "is not a restore file of hvnoise advise" in p.stderr and
          os.path.exists(rf),
          f"--restore of a file that is not a restore file: exit 3, said, left alone "
          f"(exit {p.returncode})", p.stderr)

    # --- bad input -------------------------------------------------------------
    p = subprocess.run([hvn, "advise", os.path.join(work, "none.dat")], capture_output=True,
                       text=True)
    check(p.returncode == 3 and p.stderr.count("\n") == 1 and "none.dat" in p.stderr,
          f"a missing file: exit 3, one line naming it (exit {p.returncode})", p.stderr)
    p = subprocess.run([hvn, "advise"], capture_output=True, text=True)
    check(p.returncode == 2 and "which TRACE.dat?" in p.stderr,
          f"no file: exit 2, which TRACE.dat? (exit {p.returncode})", p.stderr[:300])
    bad = os.path.join(work, "no-such-dir", "evidence")
    p = subprocess.run([hvn, "advise", "--bundle", bad,
                        os.path.join(work, "pause", "host0.dat")], capture_output=True, text=True)
    check(p.returncode == 1 and "cannot write" in p.stderr and p.stdout.count("provider") >= 1,
          f"--bundle into a missing directory: exit 1, said, the advice still printed "
          f"(exit {p.returncode})", p.stderr)


if __name__ == "__main__":
    main()
    sys.exit(hvntest.exit_status())
