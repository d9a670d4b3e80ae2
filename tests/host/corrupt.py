#!/usr/bin/env python3
"""Corrupt input for hvnoise report (the ASan/UBSan build).

usage: corrupt.py HVNOISE WORKDIR V6.dat V7ZSTD.dat [MORE.dat...]

Zero-length, wrong magic, random bytes, the version 6 file truncated at
every section boundary of its header and at every page of its data, the
zstd file cut at points through it, and random byte mutations: never a
crash or sanitizer report; a clear error naming the file (exit 3) wherever
the file is unusable, and the report up to the cut, with INCOMPLETE, when
the data stops early.  Prints KTAP (tests/host/hvntest.py).
"""
import concurrent.futures
import os
import random
import struct
import subprocess
import sys

import hvntest
from tdat import v6_boundaries

hvn, work = sys.argv[1:3]
v6, v7 = sys.argv[3:5]
more = sys.argv[5:]
env = hvntest.sanitizer_env()
runs = 0
# The cases run one a CPU, each from a file of its own.
pool = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1)


check = hvntest.checker(os.environ.get("HVN_CHECK_PREFIX", "tools/corrupt/"))


def run_at(path, data, args):
    with open(path, "wb") as f:
        f.write(data)
    try:
        p = subprocess.run([hvn, "report", *args, path], capture_output=True, text=True,
                           env=env, timeout=60, errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", "timeout", path
    finally:
        os.unlink(path)
    return p.returncode, p.stdout, p.stderr, path


def run_all(datas, args=()):
    """hvnoise report of each of DATAS, in order: (rc, stdout, stderr, file)."""
    global runs
    first = runs
    runs += len(datas)
    return list(pool.map(lambda i: run_at(os.path.join(work, f"case-{first + i}.dat"),
                                          datas[i], args), range(len(datas))))


def run(data, args=()):
    return run_all([data], args)[0]


def sane(rc, err):
    return rc is not None and rc >= 0 and rc not in (99, 1) and \
        "Sanitizer" not in err and "runtime error" not in err


def clean_error(rc, err, path):
    lines = [l for l in err.splitlines() if ": warning: " not in l]
    return rc == 3 and len(lines) >= 1 and path in lines[0] and sane(rc, err)


d6 = open(v6, "rb").read()
d7 = open(v7, "rb").read()

rc, out, err, path = run(b"")
check(rc == 3 and "empty" in err and sane(rc, err), "zero-length file: exit 3, 'empty'")
rc, out, err, path = run(b"\x17\x08\x45" + d6[3:])
check(clean_error(rc, err, path) and "not a trace.dat" in err,
      "wrong magic: exit 3, 'not a trace.dat'")
rc, out, err, path = run(d6[:10] + b"9\0" + d6[12:])
check(clean_error(rc, err, path) and "version" in err, "unknown version: exit 3, naming it")

rng = random.Random(1)
res = run_all([bytes(rng.randrange(256) for _ in range(rng.randrange(1, 65536)))
               for _ in range(20)])
bad = [n for n, (rc, _, err, path) in enumerate(res) if not clean_error(rc, err, path)]
check(not bad, f"20 files of random bytes: exit 3 naming the file (failed: {bad})")
res = run_all([d6[:10] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8192)))
               for _ in range(20)])
bad = [n for n, (rc, _, err, _) in enumerate(res) if not sane(rc, err)]
check(not bad, f"20 files of the magic then random bytes: no crash (failed: {bad})")

bounds, data_start = v6_boundaries(d6)
cuts = [cut for cut in bounds + [x + 1 for x in bounds] + [x - 1 for x in bounds]
        if 0 < cut < data_start]
bad = [(cut, rc, err.strip()[:120]) for cut, (rc, _, err, path) in
       zip(cuts, run_all([d6[:cut] for cut in cuts])) if not clean_error(rc, err, path)]
check(not bad, f"truncated at each of {len(bounds)} header section boundaries (and +-1): "
      f"exit 3 naming the file and section {bad[:3]}")

full = run(d6, ("--json",))
pages = list(range(data_start, len(d6), 4096))[1:]
if len(pages) > 60:          # a large file: 60 cuts spread over its data
    pages = pages[::len(pages) // 60 + 1]
cuts = pages + [len(d6) - 100]
bad = [(cut, rc) for cut, (rc, out, err, _) in zip(cuts, run_all([d6[:cut] for cut in cuts]))
       if not (rc == 3 and "INCOMPLETE" in out and "cut short" in out and sane(rc, err))]
check(full[0] == 0 and not bad,
      f"truncated at {len(pages)} data pages: the report up to the cut, "
      f"INCOMPLETE, exit 3 {bad[:3]}")

cuts = [len(d7) * i // 21 for i in range(1, 21)]
bad = [(cut, rc, err.strip()[:100]) for cut, (rc, _, err, _) in
       zip(cuts, run_all([d7[:cut] for cut in cuts])) if not (rc == 3 and sane(rc, err))]
check(not bad, f"version 7 zstd file cut at 20 points: exit 3, no crash {bad[:3]}")

bad = []
for src in [d6, d7] + [open(f, "rb").read() for f in more]:
    datas = []
    for n in range(100):
        b = bytearray(src)
        for _ in range(rng.randrange(1, 9)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        datas.append(bytes(b))
    bad += [(n, rc, err.strip()[-200:]) for n, (rc, _, err, _) in enumerate(run_all(datas))
            if not sane(rc, err) and rc != 3]
check(not bad, f"{100 * (2 + len(more))} files with random bytes changed: no crash or "
      f"sanitizer report {bad[:2]}")
print(f"  ({runs} runs of hvnoise report)")
