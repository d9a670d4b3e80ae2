#!/usr/bin/env python3
"""hvnoise report against trace-cmd report and cat, on one large trace.dat.

usage: report-speed.py [FILE.dat] [--size MB]

Without FILE, synthesizes build/bench/big.dat (default 1024 MB) from the
detector VM's recording, build/check/vm-record.dat (make check writes it).
Each reader runs on a warm page cache (the file is read once before);
prints wall time, events/s and peak RSS, and the two ratios of issue #4:
trace-cmd report / hvnoise report (goal >= 5) and hvnoise report / cat
(goal <= 4), and hvnoise report's peak RSS (goal < 100 MB).
"""
import json
import os
import subprocess
import sys
import time

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def timed(cmd):
    """Wall seconds, peak RSS (MB) and exit code of cmd, via GNU time: a
    child forked from Python would count Python's own pages."""
    t0 = time.monotonic()
    with open(os.devnull, "wb") as null:
        p = subprocess.run(["/usr/bin/time", "-f", "HVN-RSS %M", *cmd], stdout=null,
                           stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    rss = [int(l.split()[1]) for l in p.stderr.splitlines() if l.startswith("HVN-RSS ")]
    return wall, (rss[-1] if rss else 0) / 1024, p.returncode


def main():
    args = sys.argv[1:]
    size = 1024
    if "--size" in args:
        i = args.index("--size")
        size = int(args[i + 1])
        del args[i:i + 2]
    hvn = os.path.join(top, "build/tools/hvnoise")
    if not os.access(hvn, os.X_OK):
        subprocess.run(["make", "-C", top, "-s", "build/tools/hvnoise"], check=True)
    if args:
        path = args[0]
    else:
        tmpl = os.path.join(top, "build/check/vm-record.dat")
        if not os.path.exists(tmpl):
            sys.exit("report-speed: no build/check/vm-record.dat: run make check first, or give a FILE")
        os.makedirs(os.path.join(top, "build/bench"), exist_ok=True)
        path = os.path.join(top, "build/bench/big.dat")
        if not os.path.exists(path) or os.path.getsize(path) < size * 2**20 * 0.9:
            subprocess.run([sys.executable, os.path.join(top, "bench/synth-trace.py"), tmpl,
                            path, str(size)], check=True)
    mb = os.path.getsize(path) / 2**20
    rep = json.loads(subprocess.run([hvn, "report", "--json", path], capture_output=True,
                                    text=True).stdout)["reports"][0]
    events = rep["records"]
    timed(["cat", path])                         # warm the page cache
    rows = []
    for name, cmd in (("cat", ["cat", path]),
                      ("hvnoise report", [hvn, "report", path]),
                      ("hvnoise report --json", [hvn, "report", "--json", path]),
                      ("trace-cmd report", ["trace-cmd", "report", "-i", path])):
        best = None
        for _ in range(1 if name == "trace-cmd report" else 3):
            r = timed(cmd)
            if best is None or r[0] < best[0]:
                best = r
        rows.append((name,) + best)
    print(f"\nfile {path}: {mb:.0f} MB, {events} events "
          f"({', '.join(f'{k} {v}' for k, v in rep['events'].items() if v)})")
    print(f"{'reader':<24}{'seconds':>9}{'events/s':>14}{'peak RSS MB':>13}{'exit':>6}")
    for name, t, rss, rc in rows:
        print(f"{name:<24}{t:>9.2f}{events / t:>14.3g}{rss:>13.1f}{rc:>6}")
    t = {name: s for name, s, _, _ in rows}
    rss = {name: r for name, _, r, _ in rows}
    print(f"\ntrace-cmd report / hvnoise report = {t['trace-cmd report'] / t['hvnoise report']:.1f}"
          " (goal >= 5)")
    print(f"hvnoise report / cat               = {t['hvnoise report'] / t['cat']:.2f}"
          " (goal <= 4)")
    print(f"hvnoise report peak RSS            = {rss['hvnoise report']:.1f} MB (goal < 100)")


if __name__ == "__main__":
    main()
