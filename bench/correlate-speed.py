#!/usr/bin/env python3
"""hvnoise correlate's time and peak RSS on synthesized traces of three
sizes (issue #5: 10 M noise events and 1 M collectives across 64 ranks in
under 10 s and 500 MB, scaling linearly).

usage: correlate-speed.py [--sizes 1,3,10]   (millions of noise events;
                                              collectives are a tenth)
Template: build/check/vm-record.dat (make check leaves it).
"""
import os
import subprocess
import sys
import time

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def main():
    sizes = [1, 3, 10]
    if "--sizes" in sys.argv:
        sizes = [float(x) for x in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
    hvn = os.path.join(top, "build/tools/hvnoise")
    tmpl = os.path.join(top, "build/check/vm-record.dat")
    if not os.path.exists(tmpl):
        sys.exit("correlate-speed: no build/check/vm-record.dat: run make check first")
    subprocess.run(["make", "-C", top, "-s", "build/tools/hvnoise"], check=True)
    os.makedirs(os.path.join(top, "build/bench"), exist_ok=True)
    rows = []
    for m in sizes:
        noise, colls = int(m * 1e6), int(m * 1e5)
        path = os.path.join(top, f"build/bench/nccl-{m:g}M.dat")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(top, "bench/synth-nccl.py"), tmpl, path,
                            str(noise), str(colls), "64"], check=True)
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL)      # warm the cache
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-f", "HVN-RSS %M", hvn, "correlate", "--json", path],
                           capture_output=True, text=True)
        wall = time.monotonic() - t0
        rss = [int(l.split()[1]) for l in p.stderr.splitlines() if l.startswith("HVN-RSS")][0] / 1024
        out = p.stdout
        import json
        c = json.loads(out)
        causes = {}
        for s in c["stalls"]:
            causes[s["cause"]] = causes.get(s["cause"], 0) + 1
        rows.append((noise, colls, os.path.getsize(path) / 2**20, wall, rss, c["collectives"],
                     len(c["stalls"]), causes, p.returncode))
    print(f"\n{'noise events':>13}{'collectives':>12}{'file MB':>9}{'seconds':>9}{'peak RSS MB':>13}"
          f"{'found':>9}{'stalls':>8}  causes")
    for r in rows:
        print(f"{r[0]:>13}{r[1]:>12}{r[2]:>9.0f}{r[3]:>9.2f}{r[4]:>13.1f}{r[5]:>9}{r[6]:>8}  {r[7]}"
              + ("" if r[8] == 0 else f"  exit {r[8]}"))
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        print(f"\nscaling: {b[0] / a[0]:.0f}x the events took {b[3] / a[3]:.1f}x the time "
              f"and {b[4] / a[4]:.1f}x the memory")


if __name__ == "__main__":
    main()
