#!/usr/bin/env python3
"""The table of bench/instructions.sh: guest instructions per interrupt.

usage: insn-table.py CONSOLE.log COUNTS.txt KALLSYMS HVNOISE.ko

COUNTS.txt is bench/insn-plugin.c's output (per segment: each kernel
address run and how often), CONSOLE.log the guest's (SEGMENT lines, the
module's section addresses, the BPF programs' addresses and sizes).  Per
configuration and round: disk interrupts, then instructions per interrupt:
in hvnoise.ko's text, in the BPF programs' JIT images, in the kernel
(everything but those two, user space apart) and in all, and each less the
same in "none" (the cost).  Then the goals, the two rounds' agreement, and
the kernel functions that grew most against "none" for each configuration.
"""
import bisect
import re
import subprocess
import sys
from collections import defaultdict


def segments(path):
    segs, cur = [], None
    for line in open(path):
        w = line.split()
        if not w:
            continue
        if w[0] == "segment":
            cur = {"kernel": 0, "user": 0, "addr": {}}
            segs.append(cur)
        elif w[0] == "total" and cur is not None:
            cur["kernel"], cur["user"] = int(w[1]), int(w[2])
        elif cur is not None and len(w) == 2 and w[0] != "end" and not w[0].startswith("#"):
            cur["addr"][int(w[0], 16)] = int(w[1])
    return segs


def ko_functions(ko):
    """{section: [(offset, size, name)]} of the module's functions."""
    out = subprocess.run(["readelf", "-SsW", ko], capture_output=True, text=True,
                         check=True).stdout
    secname = {int(m.group(1)): m.group(2)
               for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+(\S+)", out, re.M)}
    funcs = defaultdict(list)
    for m in re.finditer(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+FUNC\s+\S+\s+\S+\s+(\d+)\s+(\S+)",
                         out, re.M):
        funcs[secname.get(int(m.group(3)), "?")].append(
            (int(m.group(1), 16), int(m.group(2)), m.group(4)))
    return funcs


def ko_sections(ko):
    """{name: size} of the module's executable sections."""
    out = subprocess.run(["readelf", "-SW", ko], capture_output=True, text=True,
                         check=True).stdout
    sizes = {}
    for m in re.finditer(r"\]\s+(\S+)\s+PROGBITS\s+\S+\s+\S+\s+(\S+)\s+\S+\s+(\S*X\S*)", out):
        sizes[m.group(1)] = int(m.group(2), 16)
    return sizes


def symbols(path):
    """The guest's text symbols (/proc/kallsyms lines), sorted."""
    syms = []
    for line in open(path):
        w = line.split()
        if len(w) >= 3 and w[1] in "tTwW":
            syms.append((int(w[0], 16), w[2] + (" " + w[3] if len(w) > 3 else "")))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def jit_sizes(progs):
    """The JIT images of (address, size, name), each its own: a program's
    size from bpftool (bytes_jited) is the sum of its own image and its
    subprograms', which the JIT places apart, with symbols of their own
    (bpf_prog_TAG_NAME) and no size.  So every image runs to the next
    image, and no further than its program's size (a subprogram: the
    largest program's).  Symbols that are not JIT images (bpf_prog_iter_init:
    kernel text) are left out."""
    jit = sorted(set(p for p in progs if re.match(r"bpf_prog_[0-9a-f]{16}_", p[2])))
    most = max((n for _, n, _ in jit), default=0)
    out = []
    for i, (lo, n, name) in enumerate(jit):
        nxt = [a for a, _, _ in jit[i + 1:] if a > lo]
        end = min([lo + (n or most)] + nxt[:1])
        if end > lo:
            out.append((lo, end - lo, name))
    return out


def load(console, counts, smap, ko):
    """The segments of CONSOLE and COUNTS, attributed: (meta, rows) with
    meta[i] = (name, round, irqs, {key: value} of its SEGMENT line) and
    rows[(name, round)] its instructions: in the module's text ("mod"), the
    BPF programs ("bpf"), the rest of the kernel ("kernel"), all ("all"),
    per kernel symbol ("sym"), per module function and BPF program
    ("fn"; the programs' names begin "bpf:"), and the runs of each module
    function's first instruction ("calls")."""
    segs = segments(counts)
    sizes = ko_sections(ko)
    starts, names = symbols(smap)
    meta, mod, bpf, secs = [], [], [], []     # per segment: its ranges
    cur_mod, cur_bpf, cur_sec = [], [], []
    funcs = ko_functions(ko)
    for line in open(console, errors="replace"):
        w = line.split()
        if not w:
            continue
        if w[0] == "SECTION" and len(w) == 3 and w[1] in sizes:
            cur_mod.append((int(w[2], 16), sizes[w[1]]))
            cur_sec.append((int(w[2], 16), w[1]))
        elif w[0] == "BPFPROG" and len(w) >= 4:
            cur_bpf.append((int(w[1], 16), int(w[2]), w[3]))
        elif w[0] == "SEGMENT":
            if cur_bpf and not any(n for _, n, _ in cur_bpf):
                print(f"insn-table: segment {w[1]} ({w[2]}): no BPF program has a size "
                      "(bpftool gave none): its BPF column counts nothing", file=sys.stderr)
            cur_bpf = jit_sizes(cur_bpf)
            kv = dict(x.split("=", 1) for x in w[3:] if "=" in x)
            meta.append((w[2], int(kv["round"]), int(kv["irqs"]), kv))
            mod.append(cur_mod)
            bpf.append(cur_bpf)
            secs.append(cur_sec)
            cur_mod, cur_bpf, cur_sec = [], [], []
    if len(meta) != len(segs):
        sys.exit(f"insn-table: {len(meta)} segments in the console, {len(segs)} counted")

    rows = {}
    for i, (name, rnd, irqs, _) in enumerate(meta):
        s = segs[i]
        in_mod = sum(c for a, c in s["addr"].items()
                     if any(lo <= a < lo + n for lo, n in mod[i]))
        in_bpf = sum(c for a, c in s["addr"].items()
                     if any(lo <= a < lo + n for lo, n, _ in bpf[i] if n))
        per_sym, per_fn, calls = defaultdict(int), defaultdict(int), defaultdict(int)
        for lo, n, prog in bpf[i]:
            # bpf_prog_TAG_NAME: by program name
            per_fn["bpf:" + prog.split("_", 3)[-1]] += sum(
                s["addr"].get(a, 0) for a in range(lo, lo + n))
        for base, sec in secs[i]:
            for off, size, fn in funcs.get(sec, ()):
                per_fn[fn] += sum(s["addr"].get(a, 0) for a in range(base + off, base + off + size))
                calls[fn] += s["addr"].get(base + off, 0)	# its first instruction
        for a, c in s["addr"].items():
            if any(lo <= a < lo + n for lo, n in mod[i]) or \
                    any(lo <= a < lo + n for lo, n, _ in bpf[i] if n):
                continue
            j = bisect.bisect_right(starts, a) - 1
            # Far from any symbol: BPF trampolines and dispatchers.
            per_sym["(no symbol)" if j < 0 or a - starts[j] > 65536
                    else names[j]] += c
        rows[(name, rnd)] = dict(irqs=irqs, mod=in_mod, bpf=in_bpf,
                                 kernel=s["kernel"] - in_mod - in_bpf,
                                 all=s["kernel"] + s["user"], sym=per_sym, fn=per_fn,
                                 calls=calls,
                                 nbpf=len([b for b in bpf[i] if b[1]]))
    return meta, rows


def main():
    console, counts, smap, ko = sys.argv[1:5]
    meta, rows = load(console, counts, smap, ko)
    idle, extra = {}, {}
    kvs = [m[3] for m in meta]
    for i, (_, _, _, kv) in enumerate(meta):
        idle[i] = (int(kv.get("seconds", 0)), int(kv.get("wakeups", 0)))
        if "wall" in kv:
            a, b = kv["wall"].split("-")
            extra[i] = (float(b) - float(a), int(kv.get("rss_kb", 0)))
    meta = [m[:3] for m in meta]

    order = []
    for name, _, _ in meta:
        if name not in order:
            order.append(name)
    print("instructions per disk interrupt (all vCPUs; the kernel column is "
          "everything but the module and the BPF programs)")
    print(f"{'configuration':<17}{'round':>6}{'IRQs':>7}{'module':>9}{'BPF':>9}"
          f"{'kernel':>10}{'all':>10}{'cost':>9}")
    cost = {}
    for name in order:
        for rnd in (1, 2):
            r = rows.get((name, rnd))
            base = rows.get(("none", rnd))
            if not r or not base or not r["irqs"]:
                continue
            per = {k: r[k] / r["irqs"] for k in ("mod", "bpf", "kernel", "all")}
            c = per["all"] - base["all"] / base["irqs"]
            cost[(name, rnd)] = c
            print(f"{name:<17}{rnd:>6}{r['irqs']:>7}{per['mod']:>9.1f}{per['bpf']:>9.1f}"
                  f"{per['kernel']:>10.1f}{per['all']:>10.1f}{c:>9.1f}")

    def per(name, rnd, k):
        r = rows.get((name, rnd))
        return r[k] / r["irqs"] if r and r["irqs"] else float("nan")

    readers = [(i, m) for i, m in enumerate(meta) if m[0].startswith("events-") and m[1] == 1]
    if readers:
        print("\nthe readers, at four irq events an interrupt (round 1): instructions per "
              "interrupt against nobody reading, and peak RSS")
        base = rows.get(("events-noreader", 1))
        for i, (name, rnd, irqs) in readers:
            r = rows[(name, rnd)]
            wall, rss = extra.get(i, (0, 0))
            rate = 4 * irqs / wall if wall else 0
            d = (r["all"] / r["irqs"] - base["all"] / base["irqs"]) if base and r["irqs"] else 0
            print(f"  {name:<17} {r['all'] / r['irqs']:9.1f} per interrupt ({d:+.1f}), "
                  f"{rate:8.0f} events a second, RSS {rss} KB")

    secs_rows = [(i, m) for i, m in enumerate(meta)
                 if idle.get(i, (0, 0))[0] and not m[0].startswith("rate-")]
    if secs_rows:
        print("\nthe always-on cost, per second of an idle guest (all vCPUs):")
        base = None
        for i, (name, _, _) in secs_rows:
            sec, wake = idle[i]
            r = rows[(name, 1)]
            k, u = (r["kernel"] + r["mod"] + r["bpf"]) / sec, (r["all"] - r["kernel"] - r["mod"] - r["bpf"]) / sec
            if base is None:
                base = (k, u)
            print(f"  {name:<12} kernel {k:12.0f}  user {u:12.0f}  module {r['mod'] / sec:9.0f}"
                  f"  (+{k + u - base[0] - base[1]:.0f} against idle)"
                  + (f"; the recorder woke {wake / sec:.1f} times a second" if name != "idle" else ""))
            if name != "idle":
                b = rows[(secs_rows[0][1][0], 1)]
                d = {f: (c - b["sym"].get(f, 0)) / sec for f, c in r["sym"].items()}
                top = sorted(d.items(), key=lambda kv: -kv[1])[:8]
                print("    grew: " + ", ".join(f"{f} {v:+.0f}" for f, v in top))

    rate_rows = [(i, m) for i, m in enumerate(meta) if m[0].startswith("rate-")]
    if rate_rows:
        print("\nthe readers at a set event rate (syscalls:sys_enter_getppid, 1 MB a CPU): "
              "per second, instructions against nobody reading, the reader's CPU time "
              "(its threads and children), wakeups and peak RSS, events overwritten unread")
        base = rows.get(("rate-none", 1))
        for i, (name, _, _) in rate_rows:
            kv, r = kvs[i], rows[(name, 1)]
            # evgen's own measure of the segment (it makes RATE x 5 calls
            # however long that takes)
            sec = float(kv.get("elapsed", 0)) or int(kv["seconds"])
            ev = int(kv.get("events", 0))
            bk = kvs[[m[0] for m in meta].index("rate-none")] if base else {}
            bsec = float(bk.get("elapsed", 0)) or int(bk.get("seconds", 1))
            d = r["all"] / sec - base["all"] / bsec if base else 0
            ku = (r["kernel"] + r["mod"] + r["bpf"]) / sec
            print(f"  {name[5:]:<9} {ev / sec:8.0f} events/s in {sec:.3f} s  all {r['all'] / sec:12.0f} "
                  f"({d:+12.0f}: {d * sec / ev if ev else 0:+7.1f} an event)  kernel {ku:12.0f}  "
                  f"CPU {int(kv.get('ticks', 0)) / sec:5.1f}%  wakeups "
                  f"{int(kv.get('wakeups', 0)) / sec:6.1f}/s  RSS {kv.get('rss_kb', 0)} KB (peaks summed)  "
                  f"overrun {kv.get('overrun', 0)}")

    print("\nround agreement (module and BPF instructions per interrupt, round 2 / round 1):")
    if not any(m[1] == 2 for m in meta):
        print("  one round only (BENCH_ROUNDS=1)")
    for name in order:
        for k in ("mod", "bpf"):
            a, b = per(name, 1, k), per(name, 2, k)
            if a > 0 and b == b:
                print(f"  {name:<17}{k:<4} {a:9.1f} {b:9.1f}  {100 * (b - a) / a:+.2f}%")

    print("\ngoals (round 1):")
    ft = cost.get(("ftrace-irq", 1))
    mw = per("module-watched", 1, "mod")
    mu = per("module-unwatched", 1, "mod")
    bw = per("bpf-watched", 1, "bpf")
    ms = per("module-storm", 1, "mod")
    if ft:
        print(f"  module, watched CPU: {mw:.1f} in its text, cost {cost.get(('module-watched', 1), 0):.1f}"
              f" vs the kernel's irq_handler_entry+exit events {ft:.1f}: "
              f"{cost.get(('module-watched', 1), 0) / ft:.2f}x (goal <= 0.5x)")
    print(f"  module, unwatched CPU: {mu:.1f} in its text (goal <= 20)")
    cb, cm = cost.get(("bpf-watched", 1), 0), cost.get(("module-watched", 1), 0)
    print(f"  BPF, watched CPU: cost {cb:.1f} vs the module's {cm:.1f}: "
          f"{cb / cm if cm else float('nan'):.2f}x (goal <= 2x); {bw:.1f} in its programs, "
          f"{mw:.1f} in the module's text")
    print(f"  unwatched CPU, cost against none: module {cost.get(('module-unwatched', 1), 0):.1f}, "
          f"BPF {cost.get(('bpf-unwatched', 1), 0):.1f} (all instructions, the tracepoint calls "
          f"and the reader's polling included)")
    print(f"  module with a storm active: {ms:.1f} in its text vs {mw:.1f} without")

    print("\nhvnoise.ko's functions (round 1, instructions per interrupt):")
    for name in order:
        r = rows.get((name, 1))
        top = sorted(((f, c / r["irqs"]) for f, c in r["fn"].items()
                      if c and not f.startswith("bpf:")),
                     key=lambda kv: -kv[1])[:8] if r and r["irqs"] else []
        if top:
            print(f"  {name}: " + ", ".join(f"{f} {v:.1f}" for f, v in top))

    print("\nBPF programs (round 1, instructions per interrupt; subprograms apart):")
    for name in order:
        r = rows.get((name, 1))
        top = sorted(((f[4:], c / r["irqs"]) for f, c in r["fn"].items()
                      if c and f.startswith("bpf:")),
                     key=lambda kv: -kv[1])[:8] if r and r["irqs"] else []
        if top:
            print(f"  {name}: " + ", ".join(f"{f} {v:.1f}" for f, v in top))

    print("\nkernel functions that grew most against \"none\" (round 1, per interrupt):")
    base = rows.get(("none", 1))
    for name in order:
        r = rows.get((name, 1))
        if name == "none" or not r or not base or not r["irqs"]:
            continue
        d = {s: r["sym"][s] / r["irqs"] - base["sym"].get(s, 0) / base["irqs"]
             for s in r["sym"]}
        top = sorted(d.items(), key=lambda kv: -kv[1])[:6]
        print(f"  {name}: " + ", ".join(f"{s} {v:+.1f}" for s, v in top))


if __name__ == "__main__":
    main()
