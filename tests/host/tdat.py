"""The layout of a trace-cmd version 6 file (trace-cmd.dat.v6(5)), for the
tests and benchmarks that cut or rebuild one."""
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
