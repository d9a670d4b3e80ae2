#!/usr/bin/env python3
"""Turn the BENCH lines of bench/guest-overhead.sh into the overhead table.

usage: table.py CONSOLE_LOG
"""
import statistics
import sys

CONFIGS = ("none", "module-unwatched", "module-watched", "bpf-unwatched",
           "bpf-watched", "ftrace-irq")


def main():
    runs = {}
    for line in open(sys.argv[1], errors="replace"):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "BENCH" and parts[2].isdigit():
            runs.setdefault(parts[1], []).append(int(parts[2]))
    if "none" not in runs:
        print("table: no baseline runs in the log", file=sys.stderr)
        return 1
    base = statistics.median(runs["none"])
    # The spread says how far apart two medians must be to mean anything.
    print(f"{'configuration':<18} {'runs':>4} {'ns/read (median)':>17} {'vs none':>8} "
          f"{'p25..p75':>17}")
    for name in CONFIGS:
        vals = runs.get(name, [])
        if not vals:
            continue
        m = statistics.median(vals)
        q = statistics.quantiles(vals, n=4) if len(vals) > 1 else [m, m, m]
        print(f"{name:<18} {len(vals):>4} {m:>17.0f} {m / base - 1:>+8.1%} "
              f"{q[0]:>8.0f}..{q[2]:<8.0f}")
    if "module-watched" in runs and "bpf-watched" in runs:
        w = statistics.median(runs["module-watched"]) - base
        b = statistics.median(runs["bpf-watched"]) - base
        ratio = f"{b / w:.2f}" if w > 0 else "n/a (the module added nothing measurable)"
        print(f"extra ns/read, bpf-watched / module-watched: {ratio}")
    if "module-watched" in runs and "ftrace-irq" in runs:
        w = statistics.median(runs["module-watched"]) - base
        f = statistics.median(runs["ftrace-irq"]) - base
        ratio = f"{w / f:.2f}" if f > 0 else "n/a (ftrace-irq added nothing measurable)"
        print(f"extra ns/read, module-watched / ftrace-irq: {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
