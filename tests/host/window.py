#!/usr/bin/env python3
"""usage: window.py [--date] HVNOISE FILE
--since/--until in each accepted form (mono:, +SECONDS, @EPOCH, local
date-time, local time of day) must select exactly the records whose
timestamps trace-cmd report -t --nodate prints inside the window.

With --date: trace-cmd report (the file's DATE option applied) must show
each event at its wall-clock time, hvnoise's newest clock pair's within
1 ms."""
import json
import re
import subprocess
import sys
import time

date = sys.argv[1] == "--date"
hvn, path = sys.argv[1 + date:3 + date]


def tc_times(*opts):
    tc = subprocess.run(["trace-cmd", "report", "-t", *opts, "-i", path],
                        capture_output=True, text=True, check=True).stdout
    return [int(m.group(1)) * 10**9 + int(m.group(2))
            for m in re.finditer(r"\] +(\d+)\.(\d{9}): ", tc)]


ts = tc_times("--nodate")
full = json.loads(subprocess.run([hvn, "report", "--json", path], capture_output=True,
                                 text=True, check=True).stdout)["reports"][0]
m0, r0 = full["clock_pairs"][0]
if date:
    # DATE is taken from the newest pair (tools/lib/tracedat/write.c).
    m0, r0 = full["clock_pairs"][-1]
    wall_ts = tc_times()
    offs = {w - t for w, t in zip(wall_ts, ts)}
    # DATE holds microseconds: one offset for all, a whole number of them.
    err = (min(offs) - (r0 - m0)) / 1e6 if offs else None
    print(f"  {len(ts)} events, trace-cmd's wall-clock offsets {sorted(offs)[:3]}, "
          f"hvnoise's clock pair's {r0 - m0} ns: {err} ms apart")
    sys.exit(0 if len(ts) == len(wall_ts) >= 4 and len(offs) == 1 and
             min(offs) % 1000 == 0 and abs(err) < 1 else 1)
ts.sort()
if len(ts) < 4:
    print(f"  only {len(ts)} events in the file")
    sys.exit(1)
a, b = len(ts) // 3, 2 * len(ts) // 3
lo = (ts[a - 1] + ts[a]) // 2   # boundaries between events: no rounding edge
hi = (ts[b - 1] + ts[b]) // 2
want = sum(lo <= t <= hi for t in ts)


def wall(mono, date):
    real = r0 + (mono - m0)
    s = time.strftime("%Y-%m-%d %H:%M:%S" if date else "%H:%M:%S",
                      time.localtime(real // 10**9))
    return f"{s}.{real % 10**9:09d}"


forms = {
    "mono": (f"mono:{lo / 1e9:.9f}", f"mono:{hi / 1e9:.9f}"),
    "relative": (f"+{(lo - m0) / 1e9:.9f}", f"+{(hi - m0) / 1e9:.9f}"),
    "epoch": (f"@{(r0 + lo - m0) / 1e9:.9f}", f"@{(r0 + hi - m0) / 1e9:.9f}"),
    "date-time": (wall(lo, True), wall(hi, True)),
    "time of day": (wall(lo, False), wall(hi, False)),
}
ok = True
for name, (since, until) in forms.items():
    out = subprocess.run([hvn, "report", "--json", "--since", since, "--until", until, path],
                         capture_output=True, text=True)
    got = json.loads(out.stdout)["reports"][0]["records_in_window"] if out.returncode == 0 else None
    print(f"  window {name:<12} {since} .. {until}: {got} records, trace-cmd shows {want}")
    ok &= got == want
sys.exit(0 if ok else 1)
