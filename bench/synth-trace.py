#!/usr/bin/env python3
"""Synthesize a large trace.dat from a real one, for bench/report-speed.py.

usage: synth-trace.py TEMPLATE.dat OUT.dat SIZE_MB

Keeps TEMPLATE's header (formats, options) and repeats each CPU's recorded
pages until the file is SIZE_MB, shifting every copy's page timestamps past
the previous copy so that time only moves forward.  The events are the
template's own, byte for byte: with a recording of the detector VM (make
check leaves one in build/check/vm-record.dat) they are hvnoise and
irq_handler_entry events as the kernel wrote them.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "host"))
from tdat import v6_parse  # noqa: E402

PAGE = 4096


def main():
    src, out, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    d = open(src, "rb").read()
    if d[10:12] != b"6\0":
        sys.exit("synth-trace: the template must be a version 6 file")
    p = v6_parse(d)
    pages = {}
    span = 0
    for cpu, (off, size) in enumerate(p["cpus"]):
        if not size:
            continue
        pages[cpu] = [bytearray(d[o:o + PAGE]) for o in range(off, off + size, PAGE)]
        ts = [struct.unpack_from("<Q", pg)[0] for pg in pages[cpu]]
        span = max(span, max(ts) - min(ts))
    if not pages:
        sys.exit("synth-trace: the template has no events")
    span += 10**9          # a second between copies
    per_cpu = size_mb * 2**20 // len(pages) // PAGE     # pages per CPU
    head = bytearray(d[:p["table"]])
    ncpu = len(p["cpus"])
    data = (len(head) + 16 * ncpu + PAGE - 1) // PAGE * PAGE
    table = b""
    for cpu in range(ncpu):
        n = per_cpu if cpu in pages else 0
        table += struct.pack("<QQ", data if n else 0, n * PAGE)
        data += n * PAGE
    with open(out, "wb") as f:
        f.write(head + table)
        f.write(b"\0" * ((-(len(head) + len(table))) % PAGE))
        for cpu in range(ncpu):
            if cpu not in pages:
                continue
            src_pages = pages[cpu]
            written, copy = 0, 0
            while written < per_cpu:
                shift = copy * span
                chunk = bytearray()
                for pg in src_pages[:per_cpu - written]:
                    t, = struct.unpack_from("<Q", pg)
                    struct.pack_into("<Q", pg, 0, t + shift)
                    chunk += pg
                    struct.pack_into("<Q", pg, 0, t)
                f.write(chunk)
                written += min(len(src_pages), per_cpu - written + 0)
                copy += 1
    print(f"synth-trace: {out}: {os.path.getsize(out) / 2**20:.0f} MB, "
          f"{len(pages)} CPUs with data, template {src}")


if __name__ == "__main__":
    main()
