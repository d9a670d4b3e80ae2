#!/usr/bin/env python3
"""usage: watch_delta.py HVNOISE DIR
A watched set emitted whole, then as deltas (hvnoise:watch records with
why's HVN_WATCH_DELTA: only what changed, GONE for what is no more), the
emissions spread over CPU buffers in an order the reader does not see in
time order.  hvnoise report must show the set the last emission it can
apply describes: a delta applies only to the generation before it, whole
and complete; records of a delta lost leave the set where it was.
Each case prints its watched set against the one wanted (worked out here
from the sets themselves, not from the records)."""
import json
import os
import subprocess
import sys

import synth_events as se

DELTA, GONE = 0x40, 0x80
CPU, DEV, IRQ = 0, 1, 2
NIC = 0x170000


def cpu(c, why):
    return dict(kind=CPU, why=why, cpu=c, irq=-1, dev=0, node=-1, nirqs=0, name=b"")


def route(irq, c, name, why=0x8):
    return dict(kind=IRQ, why=why, cpu=c, irq=irq, dev=NIC, node=-1, nirqs=0, name=name)


DEVICE = dict(kind=DEV, why=0, cpu=-1, irq=-1, dev=NIC, node=0, nirqs=3, name=b"")


def whole(routes, listed=(1,)):
    """The records of a whole set: listed CPUs and those the routes use."""
    cpus = {}
    for c in listed:
        cpus[c] = cpus.get(c, 0) | 1
    for irq, c, name in routes:
        cpus[c] = cpus.get(c, 0) | 2
    return ([cpu(c, w) for c, w in sorted(cpus.items())] + [DEVICE] +
            [route(i, c, n) for i, c, n in sorted(routes)])


def key(r):
    return (r["kind"], r["cpu"]) if r["kind"] == CPU else \
        (r["kind"], r["dev"]) if r["kind"] == DEV else (r["kind"], r["dev"], r["irq"], r["cpu"])


def delta(a, b):
    """The records that turn whole set @a into @b, as the module makes them."""
    ka, kb = {key(r): r for r in a}, {key(r): r for r in b}
    out = []
    for k in sorted(set(ka) | set(kb)):
        if k not in kb:
            out.append(dict(ka[k], why=DELTA | GONE))
        elif k not in ka or ka[k] != kb[k]:
            out.append(dict(kb[k], why=kb[k]["why"] | DELTA))
    return out


R1 = [(40, 1, b"nic0"), (41, 2, b"nic1"), (42, 2, b"nic2")]
R2 = [(40, 1, b"nic0"), (41, 3, b"nic1"), (42, 2, b"nic2")]      # 41 moved 2 -> 3
R3 = [(40, 1, b"nic0"), (41, 3, b"nic1"), (42, 3, b"nic2")]      # 42 too: CPU 2 left
R4 = [(40, 4, b"nic0"), (41, 3, b"nic1"), (42, 3, b"nic2-new")]  # 40 moved, 42 renamed
S = {1: whole(R1), 2: whole(R2), 3: whole(R3), 4: whole(R4)}
D = {g: delta(S[g - 1], S[g]) for g in (2, 3, 4)}
# A module reloaded: its generations start at its load's ms since boot,
# above the last load's (7001 after 4), or wrap past 2^32.
R5 = [(50, 5, b"nvme0q1")]
R6 = [(50, 6, b"nvme0q1")]
WRAP = 2**32 - 1
for g, r in ((7001, R5), (7002, R6), (WRAP, R5)):
    S[g] = whole(r, listed=(5,))
S[0] = S[7002]
D[7002] = delta(S[7001], S[7002])
D[0] = delta(S[WRAP], S[0])

# (name, emissions [(gen, "whole" | "delta", buffer CPU, records dropped)],
#  the generation whose set report must show, or None: none known)
CASES = [
    ("delta-after-whole", [(1, "whole", 2, ()), (2, "delta", 0, ())], 2),
    ("chain", [(1, "whole", 3, ()), (2, "delta", 1, ()), (3, "delta", 0, ()),
               (4, "delta", 2, ())], 4),
    ("delta-lost-a-record", [(1, "whole", 0, ()), (2, "delta", 1, ()),
                             (3, "delta", 2, (1,)), (4, "delta", 3, ())], 2),
    ("deltas-without-base", [(2, "delta", 0, ()), (3, "delta", 1, ())], None),
    ("whole-again-then-delta", [(1, "whole", 0, ()), (2, "delta", 1, ()),
                                (3, "whole", 2, ()), (3, "delta", 3, ()),
                                (4, "delta", 0, ())], 4),
    ("newest-whole-wins", [(1, "whole", 0, ()), (4, "whole", 1, ()), (2, "delta", 2, ()),
                           (3, "delta", 3, ())], 4),
    ("module-reloaded", [(1, "whole", 0, ()), (2, "delta", 1, ()), (7001, "whole", 2, ()),
                         (3, "delta", 3, ()), (7002, "delta", 0, ())], 7002),
    ("generation-wraps", [(WRAP, "whole", 1, ()), (0, "delta", 2, ())], 0),
]


def shown(recs):
    return sorted((r["kind"], r["cpu"], r["why"], r["irq"], r["name"]) for r in recs)


def main():
    hvn, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    _, _, fmts = se.fixture()
    kinds = {CPU: "cpu", DEV: "device", IRQ: "irq"}
    ok = True
    for name, emissions, want_gen in CASES:
        cpus = [se.Cpu() for _ in range(se.NCPU)]
        ts = 10 * 10**9
        for k, (gen, how, buf, drop) in enumerate(emissions):
            recs = S[gen] if how == "whole" else D[gen]
            for i, r in enumerate(recs):
                if i in drop:
                    continue
                cpus[buf % se.NCPU].add(ts + k * 10**6 + i * 1000, se.payload(
                    fmts["watch"], dict(r, gen=gen, idx=i, count=len(recs))))
        for c in cpus:
            c.flush()
        path = os.path.join(work, name + ".dat")
        se.write_file(path, cpus)
        out = subprocess.run([hvn, "report", "--json", path], capture_output=True, text=True)
        if out.returncode:
            got = out.stderr.strip()
        else:
            got = shown(dict(w, kind=[k for k, v in kinds.items() if v == w["kind"]][0],
                             name=w["name"].encode())
                        for w in json.loads(out.stdout)["reports"][0]["watched"])
        want = shown(S[want_gen]) if want_gen is not None else []
        good = got == want
        print(f"#  {'right' if good else 'WRONG'}: {name}: report shows "
              f"{'generation %d' % want_gen if want_gen is not None else 'no set'}"
              + ("" if good else f"\n#    got  {got}\n#    want {want}"))
        ok &= good
    sys.exit(0 if ok else 1)


main()
