"""The layout of a trace-cmd version 6 file (trace-cmd.dat.v6(5)), for the
tests and benchmarks that cut or rebuild one."""
import re
import struct


def v6_parse(d):
    """Where each part of a version 6 header begins and ends, where the
    flyrecord CPU table is, and each CPU's (offset, size)."""
    b = [0, 10]
    o = d.index(b"\0", 10) + 1
    b += [o, o + 1, o + 2, o + 6]
    o += 6
    for tag in (b"header_page\0", b"header_event\0"):
        o += len(tag)
        b.append(o)
        n, = struct.unpack_from("<Q", d, o)
        o += 8
        b.append(o)
        o += n
        b.append(o)

    def formats(o):
        n, = struct.unpack_from("<I", d, o)
        o += 4
        b.append(o)
        for _ in range(n):
            sz, = struct.unpack_from("<Q", d, o)
            b.extend([o + 8, o + 8 + sz // 2])
            o += 8 + sz
            b.append(o)
        return o
    o = formats(o)
    nsys, = struct.unpack_from("<I", d, o)
    o += 4
    b.append(o)
    for _ in range(nsys):
        o = d.index(b"\0", o) + 1
        b.append(o)
        o = formats(o)
    for width in ("<I", "<I", "<Q"):      # kallsyms, printk, cmdlines
        n, = struct.unpack_from(width, d, o)
        o += struct.calcsize(width) + n
        b.append(o)
    ncpu, = struct.unpack_from("<I", d, o)
    o += 4
    b.append(o)
    if d[o:o + 10] == b"options  \0":
        o += 10
        b.append(o)
        while True:
            oid, = struct.unpack_from("<H", d, o)
            o += 2
            if oid == 0:
                break
            n, = struct.unpack_from("<I", d, o)
            o += 4 + n
            b.append(o)
        b.append(o)
    o += 10
    b.append(o)
    table = o
    cpus = []
    for i in range(ncpu):
        off, size = struct.unpack_from("<QQ", d, o + 16 * i)
        cpus.append((off, size))
        b.append(o + 16 * i + 8)
    o += 16 * ncpu
    b.append(o)
    data_start = min([off for off, size in cpus if size] or [len(d)])
    return {"bounds": sorted(set(x for x in b if 0 < x < data_start)),
            "table": table, "cpus": cpus, "data_start": data_start}


def v6_boundaries(d):
    """Header boundaries, and where the CPU data begins."""
    p = v6_parse(d)
    return p["bounds"], p["data_start"]


def v6_events(d, page_size=4096):
    """Every event record of a version 6 file's CPU data, as (event id,
    payload bytes): the ring-buffer page format (include/linux/
    ring_buffer.h), 8-byte commit field."""
    p = v6_parse(d)
    for off, size in p["cpus"]:
        for pg in range(off, off + size, page_size):
            page = d[pg:pg + page_size]
            if len(page) < 16:
                continue
            length = struct.unpack_from("<Q", page, 8)[0] & ((1 << 27) - 1)
            data = page[16:16 + length]
            i = 0
            while i + 4 <= len(data):
                h, = struct.unpack_from("<I", data, i)
                t = h & 31
                if t == 29:                     # padding
                    if i + 8 > len(data):
                        break
                    i += 4 + struct.unpack_from("<I", data, i + 4)[0]
                    continue
                if t in (30, 31):               # time extend, time stamp
                    i += 8
                    continue
                if t == 0:
                    n, = struct.unpack_from("<I", data, i + 4)
                    body = data[i + 8:i + 4 + n]
                    i += 4 + ((n + 3) & ~3)
                else:
                    body = data[i + 4:i + 4 + 4 * t]
                    i += 4 + 4 * t
                if len(body) >= 2:
                    yield struct.unpack_from("<H", body, 0)[0], body


def v6_array_fields(d, events, field):
    """{event id: (offset, size)} of the char array @field of the events
    named in @events, from the format texts in the file."""
    out = {}
    for m in re.finditer(rb"name: (\w+)\nID: (\d+)\nformat:\n(.*?)\nprint fmt:", d, re.S):
        if m.group(1).decode() not in events:
            continue
        f = re.search(rb"field:char " + field.encode() + rb"\[\d+\];\toffset:(\d+);\tsize:(\d+);",
                      m.group(3))
        if f:
            out[int(m.group(2))] = (int(f.group(1)), int(f.group(2)))
    return out
