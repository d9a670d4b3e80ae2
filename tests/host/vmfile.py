#!/usr/bin/env python3
"""hvnoise report against trace-cmd report, on the file hvnoise record wrote
in the detector VM while the noise was injected.

usage: vmfile.py DISK CONSOLE OUT.dat HVNOISE

Takes the file from the VM's disk image (a "HVNTRACE SIZE" block, then the
file), the guest's `hvnoise report --json` from the console, and checks that
its counts and summed durations equal those of the events as trace-cmd
report prints them from the same file; also that the host's report of the
file equals the guest's.  Then the files trace-cmd record wrote there with
its time options (--ts-offset, --tsc2nsec: "HVNTSOPT NAME SIZE" blocks from
128 MiB on) must read at trace-cmd report's times (tsopts.py).  Prints KTAP
(tests/host/hvntest.py).
"""
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

import hvntest
import tdat

check = hvntest.checker("vm-tools/")


def main():
    disk, console, out, hvn = sys.argv[1:5]
    with open(disk, "rb") as f:
        head = f.read(512)
        m = re.match(rb"HVNTRACE (\d+)\n", head)
        if not check(m is not None, "the recording came out of the VM"):
            return
        data = f.read(int(m.group(1)))
    with open(out, "wb") as f:
        f.write(data)
    text = open(console, errors="replace").read()
    m = re.search(r"^HVN-REPORT-JSON (.*)$", text, re.M)
    if not check(m is not None, "the guest printed hvnoise report --json"):
        return
    try:
        guest = json.loads(m.group(1))["reports"][0]
    except (ValueError, KeyError, IndexError) as e:
        check(False, f"the guest's JSON parses ({e})")
        return

    host = json.loads(subprocess.run([hvn, "report", "--json", out], check=True,
                                     capture_output=True, text=True).stdout)["reports"][0]
    for r in (host, guest):
        r.pop("file")
    check(host == guest, "the host's report of the file equals the guest's")

    # The name fields: nothing after the NUL but NULs (the ring's pages
    # are reused: a copy that stops at the NUL leaves an older event's
    # bytes there).
    raw = open(out, "rb").read()
    names = tdat.v6_array_fields(raw, ("watch", "irq_storm_begin", "irq_storm",
                                       "irq_migrate"), "name")
    seen = dirty = 0
    example = ""
    for evid, body in tdat.v6_events(raw):
        if evid not in names:
            continue
        off, size = names[evid]
        name = body[off:off + size]
        seen += 1
        tail = name[name.find(b"\0"):] if b"\0" in name else b""
        if tail.strip(b"\0"):
            dirty += 1
            example = example or repr(name)
    check(seen > 0 and not dirty and len(names) == 4,
          f"every IRQ name field is NUL-padded ({seen} names in {len(names)} event "
          f"kinds, {dirty} with stale bytes{': ' + example if example else ''})")

    tc = subprocess.run(["trace-cmd", "report", "-i", out], capture_output=True,
                        text=True)
    check(tc.returncode == 0, "trace-cmd report reads the file on the host")
    count = defaultdict(int)
    per_cpu = defaultdict(lambda: defaultdict(int))
    for line in tc.stdout.splitlines():
        irq = re.search(r"\[(\d+)\]\s+[\d.]+: irq_handler_entry:", line)
        if irq:
            count["irq_handler_entry"] += 1
            per_cpu[int(irq.group(1))]["irqs"] += 1
            continue
        ev = re.search(r"\s(watch|steal|lost|irq_storm_begin|irq_storm|irq_migrate): (.*)", line)
        if not ev:
            continue
        name, rest = ev.groups()
        count[name] += 1
        f = dict(re.findall(r"(\w+)=(-?\d+)\b", rest))
        if name == "lost":
            c = per_cpu[int(f["cpu"])]
            c["lost_events"] += 1
            c["lost_ns"] += int(f["duration"])
            c["lost_unexplained_ns"] += int(f["unexplained_ns"])
            c["lost_steal_ns"] += int(f["steal_ns"])
            c["lost_irq_ns"] += int(f["irq_ns"])
        elif name == "steal":
            c = per_cpu[int(f["cpu"])]
            c["steal_events"] += 1
            c["steal_ns"] += int(f["duration"])
        elif name == "irq_storm":
            c = per_cpu[int(f["cpu"])]
            c["storms"] += 1
            c["storm_irqs"] += int(f["count"])
        elif name == "irq_migrate":
            per_cpu[int(f["to_cpu"])]["migrations_in"] += 1
            per_cpu[int(f["from_cpu"])]["migrations_out"] += 1

    print("  event          trace-cmd report  hvnoise report")
    ok = True
    for name in ("watch", "steal", "lost", "irq_storm_begin", "irq_storm", "irq_migrate",
                 "irq_handler_entry"):
        print(f"  {name:<15}{count[name]:>16}  {guest['events'][name]:>14}")
        ok &= count[name] == guest["events"][name]
    check(ok, "event counts equal trace-cmd report's")
    check(count["lost"] > 0 and count["irq_storm"] > 0 and count["irq_migrate"] > 0
          and count["irq_handler_entry"] > 0,
          "the recording holds lost, irq_storm, irq_migrate and irq_handler_entry events")

    cpus = {c["cpu"]: c for c in guest["cpus"]}
    keys = ("lost_events", "lost_ns", "lost_unexplained_ns", "lost_steal_ns", "lost_irq_ns",
            "steal_events", "steal_ns", "storms", "storm_irqs", "migrations_in",
            "migrations_out", "irqs")
    bad = []
    for cpu in sorted(set(per_cpu) | set(cpus)):
        for k in keys:
            want = per_cpu[cpu][k]
            got = cpus.get(cpu, {}).get(k, 0)
            if want != got:
                bad.append(f"cpu{cpu} {k}: trace-cmd {want}, hvnoise {got}")
        if cpu in cpus:
            print(f"  cpu{cpu}: lost {cpus[cpu]['lost_events']} events "
                  f"{cpus[cpu]['lost_ns'] / 1e6:.3f} ms, storms {cpus[cpu]['storms']} "
                  f"({cpus[cpu]['storm_irqs']} IRQs), migrations in/out "
                  f"{cpus[cpu]['migrations_in']}/{cpus[cpu]['migrations_out']}")
    for b in bad:
        print("  " + b)
    check(not bad, "per-CPU sums of durations and counts equal trace-cmd report's")
    top = guest["top"]
    check(all(top[i]["duration_ns"] >= top[i + 1]["duration_ns"] for i in range(len(top) - 1))
          and (not top or top[0]["duration_ns"] == max(
              [c["worst"][k]["duration_ns"] for c in guest["cpus"] for k in ("steal", "lost", "storm")
               if c["worst"][k]] or [0])),
          "top episodes are sorted and the first is the worst of all CPUs")
    check(len(guest["clock_pairs"]) >= 2 and guest["overruns"]["unreadable_pages"] == 0,
          "the file holds clock pairs and no unreadable pages")
    tsopts(disk, out, hvn)


def tsopts(disk, out, hvn):
    """The files of trace-cmd record's time options, from the disk."""
    here = os.path.dirname(os.path.abspath(__file__))
    seen = []
    with open(disk, "rb") as f:
        f.seek(128 << 20)
        while True:
            m = re.match(rb"HVNTSOPT (\S+) (\d+)\n", f.read(512))
            if not m:
                break
            name, size = m.group(1).decode(), int(m.group(2))
            path = f"{out}.{name}.dat"
            with open(path, "wb") as o:
                o.write(f.read(size))
            f.seek((512 - size % 512) % 512, 1)
            seen.append(name)
            p = subprocess.run([sys.executable, os.path.join(here, "tsopts.py"), hvn, path,
                                f"trace-cmd record --{name}"], capture_output=True, text=True)
            print(p.stdout + p.stderr, end="")
            check(p.returncode == 0, f"trace-cmd record --{name}'s file (in the VM): report's "
                  "times and windows match trace-cmd report's")
    # The guest says why where trace-cmd could not record with one.
    check("ts-offset" in seen, "trace-cmd record --ts-offset's file came out of the VM")


if __name__ == "__main__":
    main()
