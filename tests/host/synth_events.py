#!/usr/bin/env python3
"""Write a trace-cmd version 6 file of hvnoise events and NCCL records, in
the ring-buffer format and with the event formats of Debian 12's 6.1 kernel
(tests/host/hvnoise-formats.txt), for tests that need hvnoise events on a
host where the module cannot load.

usage: synth_events.py OUT.dat [SEED]    (prints the events written, JSON)

As a module: write(path, seed) returns the list of events written, each a
dict with "event", "buffer" (its CPU's buffer), "ts" and "fields" (values;
char arrays as text, raw_data's buf as hex).
"""
import json
import os
import random
import re
import struct
import sys

PAGE = 4096
HDR = 16                        # page header: timestamp, commit (64-bit)
HERE = os.path.dirname(os.path.abspath(__file__))
NCPU = 4


def fixture():
    """Sections of hvnoise-formats.txt: header texts and formats by name."""
    text = open(os.path.join(HERE, "hvnoise-formats.txt")).read()
    sec = {}
    for m in re.finditer(r"^== (\w+)\n(.*?)(?=^== |\Z)", text, re.S | re.M):
        sec[m.group(1)] = m.group(2)
    fmts = {}
    for system in ("ftrace", "hvnoise"):
        for f in sec[system].split("--\n"):
            name = re.search(r"^name: (\w+)", f, re.M).group(1)
            eid = int(re.search(r"^ID: (\d+)", f, re.M).group(1))
            fields = {m.group(1): (int(m.group(2)), int(m.group(3)), m.group(4) == "1")
                      for m in re.finditer(r"field:[^;]*?(\w+)(?:\[\d*\])?;\s*offset:(\d+);"
                                           r"\s*size:(\d+);\s*signed:(\d);", f)}
            fmts[name] = (system, eid, fields, f)
    return sec["header_page"], sec["header_event"], fmts


def payload(fmt, values):
    """A record of event @fmt with @values (ints, or bytes for arrays)."""
    _, eid, fields, _ = fmt
    end = max(o + s for o, s, _ in fields.values())
    b = bytearray(end)
    struct.pack_into("<H", b, 0, eid)
    for k, v in values.items():
        o, s, signed = fields[k]
        if isinstance(v, bytes):
            b[o:o + s] = v[:s].ljust(s, b"\0")
        else:
            b[o:o + s] = v.to_bytes(s, "little", signed=signed)
    return bytes(b)


class Cpu:
    """One CPU's ring-buffer pages."""
    def __init__(self):
        self.pages = bytearray()
        self.page = bytearray(PAGE)
        self.used = 0
        self.ts = None
        self.last = 0

    def add(self, ts, data):
        n = len(data)
        if n <= 28 * 4:
            hdr = struct.pack("<I", (n + 3) // 4)
        else:
            hdr = struct.pack("<II", 0, n + 4)
        size = len(hdr) + ((n + 3) & ~3)
        if (self.ts is None or self.used + size > PAGE - HDR or ts < self.last
                or ts - self.last >= 1 << 27):
            self.flush()
            self.ts = self.last = ts
        h = bytearray(hdr)
        struct.pack_into("<I", h, 0, struct.unpack_from("<I", h)[0] | ((ts - self.last) << 5))
        o = HDR + self.used
        self.page[o:o + len(h)] = h
        self.page[o + len(h):o + len(h) + n] = data
        self.used += size
        self.last = ts

    def flush(self):
        if self.ts is not None and self.used:
            struct.pack_into("<QQ", self.page, 0, self.ts, self.used)
            self.pages += self.page
        self.page = bytearray(PAGE)
        self.used = 0
        self.ts = None


# The NCCL plugin's records (include/hvnoise/nccl.h): a communicator, a
# collective, a proxy operation.
NCCL_COMM = struct.Struct("<Q4i2Q32s32s")
NCCL_COLL = struct.Struct("<QQQQQQiIiiBBBB8s8s4x")
NCCL_PROXY = struct.Struct("<QQQQQ6QiIiiiiiBBBB")


def nccl(typ, rec):
    return {"id": 0x4E430000 | typ, "buf": rec}


def meta_option(meta):
    """Our option 0x4856 of text @meta ("KEY VALUE" lines), for write_file()."""
    return struct.pack("<HI", 0x4856, len(meta)) + meta


def add_events(cpus, fmts, events, ts_of):
    """Events (true time, buffer CPU, event name, values) into @cpus'
    buffers in time order, each stamped ts_of(true time); raw_data's
    values are nccl()'s."""
    for true_ts, cpu, name, vals in sorted(events, key=lambda e: e[0]):
        if name == "raw_data":
            data = payload(fmts[name], {"id": vals["id"]})[:12] + vals["buf"]
        else:
            data = payload(fmts[name], vals)
        cpus[cpu].add(ts_of(true_ts), data)


def events(seed):
    """(event name, buffer CPU, field values) in time order, and NCCL truth."""
    rnd = random.Random(seed)
    out = []
    name = [b"mlx5_comp0@pci:0000:17:00.0"[:15], b"nvidia"]
    dev = (0x17 << 8) | (0 << 3)
    watch = [dict(kind=0, why=3, cpu=1, irq=-1, dev=0, node=-1, nirqs=0, name=b""),
             dict(kind=0, why=2, cpu=2, irq=-1, dev=0, node=-1, nirqs=0, name=b""),
             dict(kind=1, why=0, cpu=-1, irq=-1, dev=dev, node=0, nirqs=2, name=b""),
             dict(kind=2, why=0, cpu=1, irq=40, dev=dev, node=-1, nirqs=0, name=name[0]),
             dict(kind=2, why=0, cpu=2, irq=41, dev=dev, node=-1, nirqs=0, name=name[1])]
    for i, w in enumerate(watch):
        out.append(("watch", 0, dict(gen=1, idx=i, count=len(watch), **w)))
    for i in range(60):
        cpu = rnd.choice((1, 2, 3))
        start = 0
        k = rnd.choice(("steal", "lost", "lost", "storm", "migrate", "nccl"))
        if k == "steal":
            win = rnd.choice((10_000_000, 4_000_000))
            out.append(("steal", 0, dict(cpu=cpu, source=rnd.randint(0, 1), start=start,
                                         window=win, duration=rnd.randint(1, win))))
        elif k == "lost":
            irq, steal, unex = (rnd.randint(0, 2_000_000) for _ in range(3))
            out.append(("lost", cpu, dict(cpu=cpu, start=start, duration=irq + steal + unex,
                                          irq_ns=irq, steal_ns=steal, unexplained_ns=unex)))
        elif k == "storm":
            src = rnd.choice((0, 0, 1, 2, 5))
            irq = 40 if src == 0 else -1
            nm = name[0] if src == 0 else {1: b"all", 2: b"local_timer",
                                           5: b"call_function_s"}[src]
            out.append(("irq_storm_begin", cpu, dict(cpu=cpu, source=src, irq=irq, name=nm,
                                                     start=start, threshold=50)))
            out.append(("irq_storm", cpu, dict(cpu=cpu, source=src, irq=irq, name=nm,
                                               start=start, duration=rnd.randint(1, 10**8),
                                               count=rnd.randint(50, 10**6),
                                               peak_rate=rnd.randint(500, 10**7))))
        elif k == "migrate":
            frm = rnd.choice((-1, 1, 2, 3))
            out.append(("irq_migrate", cpu, dict(irq=41, name=name[1], dev=dev, from_cpu=frm,
                                                 to_cpu=cpu, how=rnd.randint(0, 2))))
        else:
            op = i + 1
            s0 = rnd.randint(1, 10**6)
            coll = NCCL_COLL.pack(0x5EED, op, i, s0, s0 + 20_000,
                               262144, 0, 4242, cpu, -1, 2, 4, 2, 0, b"RING", b"SIMPLE")
            waits = [rnd.randint(0, 10**6) for _ in range(6)]
            prox = NCCL_PROXY.pack(0x5EED, op, i, s0 + 30_000,
                               s0 + 30_000 + 2_000_000, *waits, 0, 4343, cpu, cpu, 1, 8,
                               4096, 1, 1, 2, 0)
            kch = struct.pack("<QQQQQQQiIiBBBB", 0x5EED, op, i, s0 + 25_000, s0 + 1_999_000,
                              10**9, 10**9 + 1_900_000, 0, 4343, cpu, 1, 2, 0, 0)
            for typ, rec in ((2, coll), (3, prox), (4, kch)):
                out.append(("raw_data", cpu, nccl(typ, rec)))
    out.insert(5, ("raw_data", 0, nccl(1, struct.pack(
        "<Q4i2Q32s32s", 0x5EED, 0, 1, 1, 4242, 5 * 10**9, 1_700_000_000 * 10**9,
        b"synth-job", b"synth-host"))))
    # Not ours, and one of ours cut short: printed as such, never misread.
    out.append(("raw_data", 1, {"id": 0x12345678, "buf": b"\x01\x02\x03\x04\x05\x06\x07"}))
    out.append(("raw_data", 2, nccl(2, b"\xaa" * 20)))
    return out


def write_file(path, cpus, options=b""):
    """A trace-cmd version 6 file of the fixture's formats and @cpus'
    pages; @options: more options (id, size, data), after the clock's."""
    hp, he, fmts = fixture()

    def fmt_section(texts):
        return struct.pack("<I", len(texts)) + b"".join(
            struct.pack("<Q", len(t)) + t for t in texts)
    h = bytearray(b"\x17\x08\x44tracing6\0" + bytes([0, 8]) + struct.pack("<I", PAGE))
    for tag, text in ((b"header_page\0", hp), (b"header_event\0", he)):
        h += tag + struct.pack("<Q", len(text)) + text.encode()
    h += fmt_section([fmts["raw_data"][3].encode()])
    hv = [f[3].encode() for f in fmts.values() if f[0] == "hvnoise"]
    h += struct.pack("<I", 1) + b"hvnoise\0" + fmt_section(hv)
    h += struct.pack("<I", 0) + struct.pack("<I", 0) + struct.pack("<Q", 0)
    h += struct.pack("<I", len(cpus))
    clock = b"[mono]\n"
    h += b"options  \0" + struct.pack("<HI", 4, len(clock)) + clock + options + struct.pack("<H", 0)
    h += b"flyrecord\0"
    off = (len(h) + 16 * len(cpus) + PAGE - 1) // PAGE * PAGE
    table = b""
    for c in cpus:
        table += struct.pack("<QQ", off if c.pages else 0, len(c.pages))
        off += len(c.pages)
    with open(path, "wb") as f:
        f.write(h + table)
        f.write(b"\0" * ((-(len(h) + len(table))) % PAGE))
        for c in cpus:
            f.write(c.pages)


def write(path, seed=1):
    _, _, fmts = fixture()
    cpus = [Cpu() for _ in range(NCPU)]
    written = []
    ts = 10 * 10**9
    for name, cpu, vals in events(seed):
        ts += 1_000_003
        vals = dict(vals)
        if "start" in vals:
            vals["start"] = ts - 500_000
        if name == "raw_data":
            data = payload(fmts[name], {"id": vals["id"]})
            data = data[:12] + vals["buf"]
        else:
            data = payload(fmts[name], vals)
        cpus[cpu].add(ts, data)
        written.append(dict(event=name, buffer=cpu, ts=ts,
                            fields={k: (v.hex() if k == "buf" else v.rstrip(b"\0").decode())
                                    if isinstance(v, bytes) else v for k, v in vals.items()}))
    for c in cpus:
        c.flush()

    write_file(path, cpus)
    return written


if __name__ == "__main__":
    ev = write(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    json.dump(ev, sys.stdout, indent=1)
    print()
