#!/usr/bin/env python3
"""The table of bench/instructions.sh scale: what hvnoise costs as the
watched IRQs grow.

usage: insn-scale.py CONSOLE.log COUNTS.txt KALLSYMS HVNOISE.ko

Segments are named KIND-IRQS (bench/guest-irq-scale.sh).  Per disk
interrupt (module-, storm-, bpf- on a watched CPU, unwmod-, unwbpf- on an
unwatched one, against none-0): instructions in the
module's text, the BPF programs and in all, the cost against none, and
the largest count over the smallest; per operation (resolve-, move-: per
write or move; poll-: per second): the module's instructions, the
kernel's, and the hvnoise:watch records written.
"""
import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location(
    "insn_table", os.path.join(os.path.dirname(os.path.abspath(__file__)), "insn-table.py"))
insn_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(insn_table)


PER_IRQ = ("module", "storm", "bpf", "unwmod", "unwbpf")
BPF = ("bpf", "unwbpf")


def main():
    meta, rows = insn_table.load(*sys.argv[1:5])
    kinds = {}
    for name, rnd, _, kv in meta:
        kind, n = name.rsplit("-", 1)
        kinds.setdefault(kind, []).append((int(n), rnd, name, kv))

    print("instructions per disk interrupt on a watched CPU (all vCPUs), "
          "by watched IRQs; unwmod and unwbpf: the module and the BPF source "
          "with the CPU unwatched")
    print(f"{'kind':<8}{'IRQs':>6}{'round':>6}{'interrupts':>11}{'module':>9}"
          f"{'BPF':>8}{'all':>10}{'cost':>9}")
    flat = {}
    for kind in PER_IRQ:
        for n, rnd, name, _ in sorted(kinds.get(kind, [])):
            r, base = rows[(name, rnd)], rows.get(("none-0", rnd))
            if not r["irqs"] or not base or not base["irqs"]:
                continue
            own = (r["bpf"] if kind in BPF else r["mod"]) / r["irqs"]
            cost = r["all"] / r["irqs"] - base["all"] / base["irqs"]
            flat.setdefault((kind, rnd), []).append((n, own, cost))
            print(f"{kind:<8}{n:>6}{rnd:>6}{r['irqs']:>11}{r['mod'] / r['irqs']:>9.1f}"
                  f"{r['bpf'] / r['irqs']:>8.1f}{r['all'] / r['irqs']:>10.1f}{cost:>9.1f}")
    print("\nflat as the IRQs grow: own instructions (the module's text, or the "
          "BPF programs) per interrupt, fewest IRQs against most:")
    for (kind, rnd), pts in sorted(flat.items()):
        if len(pts) < 2:
            continue
        (n0, o0, c0), (n1, o1, c1) = pts[0], pts[-1]
        pct = f"{100 * (o1 - o0) / o0:+.2f}%" if o0 else "none counted"
        print(f"  {kind:<7} round {rnd}: {o0:.1f} at {n0} IRQs, {o1:.1f} at {n1}: "
              f"{pct}; cost {c0:.1f} and {c1:.1f}")
    print("\nby function or program (round 1, per interrupt, fewest IRQs against "
          "most; those on the interrupt's path are equal, the samplers' follow "
          "time, not interrupts; the re-resolution is left out, see poll below):")
    for kind in PER_IRQ:
        pts = sorted(kinds.get(kind, []))
        pts = [p for p in pts if p[1] == 1]
        if len(pts) < 2:
            continue
        r0, r1 = rows[(pts[0][2], 1)], rows[(pts[-1][2], 1)]
        fns = {f for f in list(r0["fn"]) + list(r1["fn"])
               if (f.startswith("bpf:")) == (kind in BPF)}
        per = sorted(((f, r0["fn"].get(f, 0) / r0["irqs"], r1["fn"].get(f, 0) / r1["irqs"])
                      for f in fns), key=lambda x: -max(x[1], x[2]))
        print(f"  {kind} ({pts[0][0]} and {pts[-1][0]} IRQs): " + ", ".join(
            f"{f} {a:.1f}{'=' if abs(a - b) < 0.05 else '/'}{b:.1f}" for f, a, b in per[:12] if a or b))

    def mean(kind, n, key, per_op):
        rs = [(rows[(name, rnd)], kv) for m, rnd, name, kv in kinds.get(kind, []) if m == n]
        if not rs:
            return 0.0
        return sum(r[key] / per_op(kv) for r, kv in rs) / len(rs)

    ops = lambda kv: int(kv.get("seconds", 0)) or int(kv.get("ops", 1))
    e_k, e_a = mean("empty", 0, "kernel", ops), mean("empty", 0, "all", ops)
    print(f"\nper operation, by watched IRQs: the module's text; the kernel's and all "
          f"instructions less the markers' own ({e_k:.0f} and {e_a:.0f}); the "
          f"hvnoise:watch records written")
    for kind, unit in (("resolve", "a write of devices= (mean of 3)"),
                       ("poll", "a second of an idle guest, the set unchanged (5 s)"),
                       ("bpfpoll", "a second of an idle guest with the BPF source (35 s "
                        "holding one read of /proc/irq: x86 reads it after an "
                        "IRQ changes and every 30 s)"),
                       ("move", "an IRQ move, frames and the next set included")):
        print(f"  {kind}: per {unit}")
        for n in sorted({m for m, _, _, _ in kinds.get(kind, [])}):
            kv = [kv for m, _, _, kv in kinds[kind] if m == n][0]
            sec = int(kv.get("seconds", 0))
            k, a = mean(kind, n, "kernel", ops), mean(kind, n, "all", ops)
            if not sec:
                k, a = k - e_k, a - e_a
            spread = [rows[(name, rnd)]["mod"] for m, rnd, name, _ in kinds[kind] if m == n]
            extra = f"  irq_migrate events {kv['migrate']}" if "migrate" in kv else ""
            if kind == "poll":
                # The period is resolve_ms after the last poll ended, so
                # 5 s hold 4 or 5: per poll, by hvn_poll_fn's runs.
                polls = sum(rows[(name, rnd)]["calls"].get("hvn_poll_fn", 0)
                            for m, rnd, name, _ in kinds[kind] if m == n)
                mods = sum(rows[(name, rnd)]["mod"] for m, rnd, name, _ in kinds[kind] if m == n)
                extra += f"  ({polls} polls: module {mods / polls:.0f} a poll)" if polls else ""
            if len(spread) > 1:
                extra += f"  (module {min(spread)} to {max(spread)})"
            print(f"    {n:>5} IRQs: module {mean(kind, n, 'mod', ops):>10.0f}  kernel "
                  f"{k:>11.0f}  all {a:>11.0f}  records "
                  f"{int(kv.get('recs', 0)) / (sec or 1):>6.0f}{extra}")


if __name__ == "__main__":
    main()
