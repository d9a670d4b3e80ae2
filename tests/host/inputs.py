#!/usr/bin/env python3
"""hvnoise correlate's other inputs: Flight Recorder dumps, Kineto traces,
NCCL Inspector lines, written here from their documented formats.

usage: inputs.py HVNOISE TRACE.dat WORKDIR

TRACE must hold clock pairs (hvnoise record's).  Three ranks, 40
all-reduces each, 2 ms every 10 ms; rank 2 reaches seq 10 50 ms after the
others; rank 0's seq 25 takes 30 ms.  Each format must give the stall and
the late rank.  Malformed files (bad JSON, a missing key, a wrong type, no
time) must be refused naming the file and key, the good files still read.
Prints KTAP (tests/host/hvntest.py).
"""
import json
import os
import subprocess
import sys

import hvntest

hvn, trace, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
env = hvntest.sanitizer_env(ubsan=False, lsan_print=True)


check = hvntest.checker("inputs/")


rep = json.loads(subprocess.run([hvn, "report", "--json", trace], capture_output=True,
                                text=True, env=env).stdout)["reports"][0]
base = rep["clock_pairs"][0][1] + 10**9          # realtime ns, during the trace's day


def timeline(rank):
    for seq in range(40):
        start = base + seq * 10_000_000 + rank * 1000
        if rank == 2 and seq == 10:
            start += 50_000_000
        dur = 30_000_000 if (rank == 0 and seq == 25) else 2_000_000
        yield seq, start, dur


def fr(rank):
    return {"version": "2.5", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}},
            "pg_status": {"0": {"last_enqueued_collective": "39"}},
            "entries": [{"record_id": seq, "pg_id": 0, "process_group": ["0", "default_pg"],
                         "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
                         "profiling_name": "nccl:all_reduce", "time_created_ns": start,
                         "duration_ms": dur / 1e6, "input_sizes": [[1024]], "input_dtypes": ["Float"],
                         "output_sizes": [[1024]], "output_dtypes": ["Float"], "state": "completed",
                         "time_discovered_started_ns": start + 100_000,
                         "time_discovered_completed_ns": start + dur + 500_000,
                         "retired": True, "timeout_ms": 600000, "is_p2p": False}
                        for seq, start, dur in timeline(rank)]}


def kineto(rank):
    b = base - 5 * 10**9
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 3},
            "baseTimeNanoseconds": b, "displayTimeUnit": "ms",
            "traceEvents": [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                             "pid": 0, "tid": 7, "ts": round((start - b) / 1e3, 3), "dur": dur / 1e3,
                             "args": {"Process Group Name": "0", "In msg nelems": 1024, "dtype": "Float",
                                      "Seq": seq}}
                            for seq, start, dur in timeline(rank)]
            + [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0}]}


def inspector(rank):
    return "".join(json.dumps({"header": {"id": "0xb0a7", "rank": rank, "n_ranks": 3, "nnodes": 1},
                               "metadata": {"inspector_output_format_version": "v4.0",
                                            "dump_timestamp_us": (start + dur) // 1000,
                                            "hostname": f"node{rank}", "pid": 100 + rank},
                               "coll_perf": {"coll": "AllReduce", "coll_sn": seq, "coll_msg_size_bytes": 4096,
                                             "coll_exec_time_us": dur // 1000, "coll_timing_source": "kernel_gpu",
                                             "coll_algobw_gbs": 1.0, "coll_busbw_gbs": 1.0}}) + "\n"
                   for seq, start, dur in timeline(rank))


def write(name, obj):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def correlate(*args):
    p = subprocess.run([hvn, "correlate", "--json", trace, *args], capture_output=True,
                       text=True, env=env)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, None, p.stderr


good = {
    "fr": [write(f"nccl_trace_rank_{r}", fr(r)) for r in range(3)],
    "kineto": [write(f"kineto_rank{r}.json", kineto(r)) for r in range(3)],
    "inspector": [write(f"node{r}-pid{100 + r}.log", inspector(r)) for r in range(3)],
}
for kind, files in good.items():
    rc, out, err = correlate(f"--{kind}", *files)
    ok = rc == 0 and out is not None
    stall = ok and any(s["rank"] == 0 and s["seq"] == 25 and s["duration_ns"] >= 29e6 for s in out["stalls"])
    late = ok and any(l["rank"] == 2 and l["seq"] == 10 and 45e6 < l["late_ns"] < 55e6 for l in out["late"])
    print(f"  {kind}: exit {rc}, {out['collectives'] if out else '-'} collectives, "
          f"stalls {[(s['rank'], s['seq']) for s in out['stalls']] if out else '-'}, "
          f"late {[(l['rank'], l['seq'], round(l['late_ns'] / 1e6, 1)) for l in out['late']] if out else '-'}")
    check(ok and out["collectives"] == 120, f"{kind}: all 120 collectives of 3 ranks read")
    check(stall, f"{kind}: rank 0's 30 ms seq 25 is a stall")
    check(late, f"{kind}: rank 2 is 50 ms late at seq 10")

# Malformed files: refused with file and key, the good one still read.
f0 = fr(0)
del f0["entries"][3]["time_created_ns"]
f1 = fr(1)
f1["entries"][5]["collective_seq_id"] = "five"
k0 = kineto(0)
del k0["baseTimeNanoseconds"]
i0 = inspector(0).splitlines()
i0[7] = i0[7].replace('"dump_timestamp_us"', '"dump_time"')
bad = [
    ("fr", write("nccl_trace_rank_7", '{"version": "2.5", "entries": ['), "not JSON"),
    ("fr", write("nccl_trace_rank_8", f0), "\"time_created_ns\" is missing"),
    ("fr", write("nccl_trace_rank_9", f1), "\"collective_seq_id\" is not a number"),
    ("kineto", write("kineto_rank8.json", k0), "without \"baseTimeNanoseconds\""),
    ("inspector", write("node8-pid108.log", "\n".join(i0) + "\n"), "\"dump_timestamp_us\" is missing"),
]
for kind, path, msg in bad:
    rc, out, err = correlate(f"--{kind}", path, good[kind][0])
    named = os.path.basename(path) in err and msg in err
    print(f"  {os.path.basename(path)}: exit {rc}: {err.strip().splitlines()[0] if err.strip() else ''}")
    check(rc == 3 and named and out is not None and out["collectives"] == 40
          and "Sanitizer" not in err,
          f"{kind}: {msg.strip(chr(34))} -> exit 3 naming {os.path.basename(path)}, the good file still read")

# Random damage to each format: never a crash or a sanitizer report.
import random
rng = random.Random(5)
crashes = []
for kind, files in good.items():
    src = open(files[1], "rb").read()
    for n in range(40):
        b = bytearray(src)
        for _ in range(rng.randrange(1, 6)):
            b[rng.randrange(len(b))] = rng.choice(b'{}[]",:0123456789aez \\\n')
        path = os.path.join(work, f"mut-{kind}-{n}")
        open(path, "wb").write(bytes(b))
        rc, out, err = correlate(f"--{kind}", path)
        if rc not in (0, 3) or "Sanitizer" in err or "runtime error" in err:
            crashes.append((kind, n, rc, err[-200:]))
check(not crashes, f"120 damaged files: no crash or sanitizer report {crashes[:2]}")
