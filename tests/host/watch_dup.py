#!/usr/bin/env python3
"""usage: watch_dup.py HVNOISE DIR
The watched set emitted twice in one generation (the event enabled, then
emit=1 or a re-emission racing with it, interleaved on two CPUs' buffers),
then a newer generation, then the older one again: report keeps the
newest set, each record once."""
import json
import os
import subprocess
import sys

import synth_events as se

hvn, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
_, _, fmts = se.fixture()
sets = {1: [dict(kind=0, why=3, cpu=c, irq=-1, dev=0, node=-1, nirqs=0, name=b"") for c in (1, 2)],
        2: [dict(kind=0, why=3, cpu=c, irq=-1, dev=0, node=-1, nirqs=0, name=b"") for c in (1, 2, 3)]}
ok = True
for name, order in (("twice", [(1, 0), (1, 1)]),
                    ("newer-then-older", [(1, 0), (2, 1), (2, 0), (1, 1)])):
    cpus = [se.Cpu() for _ in range(se.NCPU)]
    ts = 10 * 10**9
    # Each emission's records on its own CPU, interleaved in time.
    recs = []
    for k, (gen, cpu) in enumerate(order):
        for i, w in enumerate(sets[gen]):
            recs.append((ts + i * 1000 + k * 100, cpu, dict(gen=gen, idx=i, count=len(sets[gen]), **w)))
    for t, cpu, vals in sorted(recs, key=lambda r: r[0]):
        cpus[cpu].add(t, se.payload(fmts["watch"], vals))
    for c in cpus:
        c.flush()
    path = os.path.join(work, name + ".dat")
    se.write_file(path, cpus)
    out = subprocess.run([hvn, "report", "--json", path], capture_output=True, text=True)
    got = sorted(w["cpu"] for w in json.loads(out.stdout)["reports"][0]["watched"]) \
        if out.returncode == 0 else out.stderr
    want = [c["cpu"] for c in sets[max(g for g, _ in order)]]
    print(f"  {name}: watched CPUs {got}, want {want}")
    ok &= got == want
sys.exit(0 if ok else 1)
