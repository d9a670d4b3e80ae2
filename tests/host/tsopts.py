#!/usr/bin/env python3
"""usage: tsopts.py HVNOISE FILE [WHAT]
FILE's events must come out of hvnoise report at the times trace-cmd report
-t --nodate shows (its OFFSET and TSC2NSEC options applied, as trace-cmd
applies them): the same count, first and last time to the nanosecond, and
a window from one event exactly to another selects [since, until): the
first event in, the last one out.

usage: tsopts.py --make-option SRC DST ID PAYLOAD_HEX
Writes DST: SRC (a version 6 file hvnoise record wrote) with its own
option (0x4856) turned into option ID carrying PAYLOAD, zero-padded to the
same size, so that every offset after it stays."""
import json
import re
import subprocess
import sys

if sys.argv[1] == "--make-option":
    src, dst, oid, payload = sys.argv[2], sys.argv[3], int(sys.argv[4]), bytes.fromhex(sys.argv[5])
    d = bytearray(open(src, "rb").read())
    i = d.find(b"hvnoise-record ")
    assert i > 6 and d[i - 6:i - 4] == b"\x56\x48", "no hvnoise option"
    size = int.from_bytes(d[i - 4:i], "little")
    assert len(payload) <= size
    d[i - 6:i - 4] = oid.to_bytes(2, "little")
    d[i:i + size] = payload + bytes(size - len(payload))
    open(dst, "wb").write(d)
    sys.exit(0)

hvn, path = sys.argv[1:3]
what = sys.argv[3] if len(sys.argv) > 3 else path


def report(*opts):
    out = subprocess.run([hvn, "report", "--json", *opts, path], capture_output=True, text=True)
    if out.returncode:
        print(f"  {what}: hvnoise report exit {out.returncode}: {out.stderr.strip()}")
        sys.exit(1)
    return json.loads(out.stdout)["reports"][0]


tc = subprocess.run(["trace-cmd", "report", "-t", "--nodate", "-i", path],
                    capture_output=True, text=True, check=True).stdout
ts = sorted(int(m.group(1)) * 10**9 + int(m.group(2))
            for m in re.finditer(r"\] +(\d+)\.(\d{9}): ", tc))
if len(ts) < 4:
    print(f"  {what}: only {len(ts)} events")
    sys.exit(1)
r = report()
got = (r["records"], r["first_ns"], r["last_ns"])
want = (len(ts), ts[0], ts[-1])
print(f"  {what}: hvnoise report {got}, trace-cmd report {want} (records, first, last ns)")
ok = got == want
a, b = ts[len(ts) // 3], ts[2 * len(ts) // 3]
n = sum(a <= t < b for t in ts)
w = report("--since", f"mono:{a // 10**9}.{a % 10**9:09d}",
           "--until", f"mono:{b // 10**9}.{b % 10**9:09d}")["records_in_window"]
print(f"  {what}: --since and --until exactly at two events' times: {w} records, want {n}")
sys.exit(0 if ok and w == n else 1)
