#!/usr/bin/env python3
"""usage: window.py HVNOISE FILE TRACE-CMD-REPORT.txt
--since/--until in each accepted form (mono:, +SECONDS, @EPOCH, local
date-time, local time of day) must select exactly the records whose
timestamps trace-cmd report -t prints inside the window."""
import json
import re
import subprocess
import sys
import time

hvn, path = sys.argv[1:3]
tc = subprocess.run(["trace-cmd", "report", "-t", "-i", path], capture_output=True,
                    text=True, check=True).stdout
ts = sorted(int(m.group(1)) * 10**9 + int(m.group(2))
            for m in re.finditer(r"\] +(\d+)\.(\d{9}): ", tc))
if len(ts) < 4:
    print(f"  only {len(ts)} events in the file")
    sys.exit(1)
full = json.loads(subprocess.run([hvn, "report", "--json", path], capture_output=True,
                                 text=True, check=True).stdout)["reports"][0]
m0, r0 = full["clock_pairs"][0]
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
