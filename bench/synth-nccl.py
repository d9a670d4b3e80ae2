#!/usr/bin/env python3
"""Synthesize a trace.dat of NCCL records and hvnoise noise, for
bench/correlate-speed.py.

usage: synth-nccl.py TEMPLATE.dat OUT.dat NOISE COLLS RANKS

TEMPLATE is a version 6 recording that holds the formats of hvnoise:lost
and ftrace:raw_data (make check leaves build/check/vm-record.dat).  OUT
gets COLLS collectives spread over RANKS ranks of one communicator (each a
COLL, a PROXYOP and a KERNCH record, as the plugin writes them), one in a
thousand made ten times longer, and NOISE hvnoise:lost events, some of them
over the long collectives, all in the template's ring-buffer format.
"""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "host"))
from tdat import v6_parse  # noqa: E402

PAGE = 4096
HDR = 16                    # timestamp, commit (64-bit kernel)


def formats(d):
    """id and field offsets of lost and raw_data, from the template's text."""
    out = {}
    for m in re.finditer(rb"name: (lost|raw_data)\nID: (\d+)\nformat:\n(.*?)\n\nprint fmt", d, re.S):
        name, eid, body = m.group(1).decode(), int(m.group(2)), m.group(3).decode()
        f = {fm.group(1): int(fm.group(2))
             for fm in re.finditer(r"field:[^;]*?(\w+)(?:\[\])?;\s*offset:(\d+);", body)}
        out[name] = (eid, f)
    return out


class Cpu:
    def __init__(self):
        self.pages = bytearray()
        self.page = bytearray(PAGE)
        self.used = 0
        self.ts = None
        self.last = 0

    def add(self, ts, payload):
        n = len(payload)
        if n <= 112:
            hdr = struct.pack("<I", ((n + 3) // 4) | (0 << 5))
            size = 4 + ((n + 3) & ~3)
        else:
            hdr = struct.pack("<II", 0, n + 4)
            size = 8 + ((n + 3) & ~3)
        if (self.ts is None or self.used + size > PAGE - HDR or ts < self.last
                or ts - self.last >= 1 << 27):
            self.flush()
            self.ts = self.last = ts
        delta = ts - self.last
        h = bytearray(hdr)
        v = struct.unpack_from("<I", h)[0] | (delta << 5)
        struct.pack_into("<I", h, 0, v)
        o = HDR + self.used
        self.page[o:o + len(h)] = h
        self.page[o + len(h):o + len(h) + n] = payload
        self.used += size
        self.last = ts

    def flush(self):
        if self.ts is not None and self.used:
            struct.pack_into("<QQ", self.page, 0, self.ts, self.used)
            self.pages += self.page
        self.page = bytearray(PAGE)
        self.used = 0
        self.ts = None


def main():
    tmpl, out, noise, colls, ranks = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    d = open(tmpl, "rb").read()
    p = v6_parse(d)
    fm = formats(d)
    lost_id, lf = fm["lost"]
    raw_id, rf = fm["raw_data"]
    ncpu = len(p["cpus"])
    cpus = [Cpu() for _ in range(ncpu)]
    t0 = 10**12
    period = 4_000_000                     # a collective every 4 ms per rank
    comm = 0xB0A7
    # Collectives, a sequence number at a time across the ranks; each CPU's
    # events leave a heap in time order once nothing earlier can come.
    import heapq
    per_rank = colls // ranks
    slow = []
    op_id = 0
    heaps = [[] for _ in range(ncpu)]
    n = 0
    for s in range(per_rank):
        horizon = t0 + s * period
        for i, h in enumerate(heaps):
            while h and h[0][0] < horizon:
                ts, _, payload = heapq.heappop(h)
                cpus[i].add(ts, payload)
        for r in range(ranks):
            op_id += 1
            start = t0 + s * period + r * 1000
            dur = 2_000_000 if s % 1000 != 999 else 20_000_000
            if dur > 2_000_000:
                slow.append((start, dur, r % ncpu))
            coll = struct.pack("<QQQQQQiIiiBBBB8s8s", comm, op_id, s, start, start + 20_000,
                               262144, r, 1000 + r, r % ncpu, -1, 2, 4, 2, 0, b"RING",
                               b"SIMPLE") + b"\0" * 4   # C pads to 88
            op = struct.pack("<QQQQQ6QiIiiiiiBBBB", comm, op_id, s, start + 30_000, start + dur,
                             0, 0, 0, 0, 0, 0, r, 2000 + r, r % ncpu, r % ncpu, 1, 1, 4096,
                             1, 1, 2, 0)
            kch = struct.pack("<QQQQQQQiIiBBBB", comm, op_id, s, start + 25_000, start + dur - 1000,
                              0, 0, r, 2000 + r, r % ncpu, 1, 2, 0, 0)
            for ts, typ, rec in ((start + 20_000, 2, coll), (start + dur, 3, op), (start + dur, 4, kch)):
                payload = struct.pack("<HBBiI", raw_id, 0, 0, 1000 + r, 0x4E430000 | typ) + rec
                n += 1
                heapq.heappush(heaps[r % ncpu], (ts, n, payload))
    for i, h in enumerate(heaps):
        while h:
            ts, _, payload = heapq.heappop(h)
            cpus[i].add(ts, payload)
    # Noise: lost events spread over the same time, and one over each slow one.
    span = per_rank * period
    step = max(1, span * ncpu // max(1, noise))
    lost_tmpl = bytearray(max(lf.values()) + 8)
    struct.pack_into("<H", lost_tmpl, 0, lost_id)
    events = []
    for i in range(noise - len(slow)):
        events.append((t0 + (i // ncpu) * step + (i % ncpu) * 7, i % ncpu, 20_000))
    for start, dur, cpu in slow:
        events.append((start + 1_000_000, cpu, dur - 4_000_000))
    events.sort()
    # Noise goes to a second pass of pages per CPU: buffers stay per CPU.
    noise_cpus = [Cpu() for _ in range(ncpu)]
    for ts, cpu, dur in events:
        b = bytearray(lost_tmpl)
        struct.pack_into("<i", b, lf["cpu"], cpu)
        struct.pack_into("<Q", b, lf["start"], ts)
        struct.pack_into("<Q", b, lf["duration"], dur)
        struct.pack_into("<Q", b, lf["unexplained_ns"], dur)
        noise_cpus[cpu].add(ts + dur, bytes(b))
    for c in cpus + noise_cpus:
        c.flush()
    data = [cpus[i].pages + noise_cpus[i].pages for i in range(ncpu)]
    head = d[:p["table"]]
    off = (len(head) + 16 * ncpu + PAGE - 1) // PAGE * PAGE
    table = b""
    for i in range(ncpu):
        table += struct.pack("<QQ", off if data[i] else 0, len(data[i]))
        off += len(data[i])
    with open(out, "wb") as f:
        f.write(head + table)
        f.write(b"\0" * ((-(len(head) + len(table))) % PAGE))
        for b in data:
            f.write(b)
    print(f"synth-nccl: {out}: {os.path.getsize(out) / 2**20:.0f} MB, {colls} collectives "
          f"on {ranks} ranks ({len(slow)} slow), {noise} lost events")


if __name__ == "__main__":
    main()
