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
import re
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
    os.makedirs(os.path.dirname(path), exist_ok=True)
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
i0 = inspector(1).splitlines()      # rank 1: its good lines pair with rank 0's
i0[7] = i0[7].replace('"dump_timestamp_us"', '"dump_time"')
# Values that were cast unchecked (undefined behaviour) or taken as given.
k1 = kineto(0)
k1["traceEvents"][3]["dur"] = -5.0
k2 = kineto(0)
k2["traceEvents"][4]["args"]["In msg nelems"] = 1e30
i1 = inspector(1).splitlines()
i1[6] = i1[6].replace('"coll_sn": 6', '"coll_sn": 1e30')
bad = [
    ("fr", write("nccl_trace_rank_7", '{"version": "2.5", "entries": ['), "neither a pickle nor JSON"),
    ("fr", write("nccl_trace_rank_8", f0), "\"time_created_ns\" is missing"),
    ("fr", write("nccl_trace_rank_9", f1), "\"collective_seq_id\" is not a 64-bit integer"),
    ("kineto", write("kineto_rank8.json", k0), "without \"baseTimeNanoseconds\""),
    ("inspector", write("node8-pid108.log", "\n".join(i0) + "\n"), "\"dump_timestamp_us\" is missing"),
    ("kineto", write("kineto_rank9.json", k1), "\"dur\" is -5, not a duration"),
    ("kineto", write("kineto_rank10.json", k2), "\"In msg nelems\" is not a 64-bit integer"),
    ("inspector", write("node9-pid109.log", "\n".join(i1) + "\n"), "line 7: key \"coll_sn\" is not a 64-bit integer"),
]
# An Inspector file's lines are independent: the bad line is skipped, the
# other 39 kept.  A file of the others is skipped whole.
for kind, path, msg in bad:
    rc, out, err = correlate(f"--{kind}", path, good[kind][0])
    whole = kind != "inspector"
    named = os.path.basename(path) in err and msg in err and \
        ("the file is skipped" if whole else "the line is skipped") in err
    print(f"  {os.path.basename(path)}: exit {rc}: {err.strip().splitlines()[0] if err.strip() else ''}")
    check(rc == 3 and named and out is not None and out["collectives"] == (40 if whole else 79)
          and "Sanitizer" not in err,
          f"{kind}: {msg.strip(chr(34))} -> exit 3 naming {os.path.basename(path)}, the good "
          + ("file still read" if whole else "lines and file still read"))

# --- Flight Recorder dumps as PyTorch writes them -------------------------
# The default dump is a pickle: torch's jit pickler (protocol 2, every
# string memoized, shared frame dicts fetched from the memo), or Python's
# pickle of a converted dump.  PyTorch's own JSON (dump_json) has sorted
# keys, no frames, 0 for times not seen, no duration_ms when unknown.
import pickle
import struct


def jit_pickle(obj):
    """The opcodes torch::jit::Pickler writes for a dump's IValues."""
    out, memo, ids = [b"\x80\x02"], {}, {}

    def put():
        n = len(memo) + len(ids)
        out.append(b"q" + bytes([n]) if n < 256 else b"r" + struct.pack("<I", n))
        return n

    def get(n):
        out.append(b"h" + bytes([n]) if n < 256 else b"j" + struct.pack("<I", n))

    def val(v):
        if isinstance(v, bool):
            out.append(b"\x88" if v else b"\x89")
        elif v is None:
            out.append(b"N")
        elif isinstance(v, int):
            if 0 <= v < 256:
                out.append(b"K" + bytes([v]))
            elif 0 <= v < 65536:
                out.append(b"M" + struct.pack("<H", v))
            elif -2**31 <= v < 2**31:
                out.append(b"J" + struct.pack("<i", v))
            else:
                out.append(b"\x8a\x08" + struct.pack("<q", v))
        elif isinstance(v, float):
            out.append(b"G" + struct.pack(">d", v))
        elif isinstance(v, str):
            if v in memo:
                return get(memo[v])
            b = v.encode()
            out.append(b"X" + struct.pack("<I", len(b)) + b)
            memo[v] = put()
        elif isinstance(v, tuple):
            for x in v:
                val(x)
            out.append({0: b")", 1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(v)])
        elif isinstance(v, (list, dict)):
            if id(v) in ids:
                return get(ids[id(v)])
            out.append(b"](" if isinstance(v, list) else b"}(")
            for x in (v if isinstance(v, list) else v.items()):
                if isinstance(v, dict):
                    val(x[0])
                    x = x[1]
                val(x)
            out.append(b"e" if isinstance(v, list) else b"u")
            shared.get(id(v)) and ids.__setitem__(id(v), put())
        else:
            raise TypeError(v)
    shared = {}

    def count(v):               # containers referenced more than once
        if isinstance(v, (list, dict)):
            shared[id(v)] = id(v) in seen
            if id(v) in seen:
                return
            seen.add(id(v))
        for x in (v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else ()):
            count(x)
    seen = set()
    count(obj)
    val(obj)
    return b"".join(out) + b"."


frame = {"name": "all_reduce", "filename": "torch/distributed/distributed_c10d.py", "line": 2501}


def fr_real(rank, unfinished=False):
    """fr(rank) as the pickle holds it: version 2.10, tuples, None, frames."""
    d = fr(rank)
    d["version"] = "2.10"
    d["comm_lib_version"] = "2.21.5"
    for e in d["entries"]:
        e["process_group"] = tuple(e["process_group"])
        e["thread_name"] = "pt_nccl_watchdg"
        e["frames"] = [frame, frame]
    if unfinished:          # a hang: the last all-reduce never ends
        e = d["entries"][-1]
        e.update(state="started" if rank == 2 else "scheduled", time_discovered_completed_ns=None)
        del e["duration_ms"]
        if rank != 2:
            e["time_discovered_started_ns"] = None
    return d


def fr_torch_json(rank):
    """What PyTorch's dump_json writes."""
    d = fr(rank)
    d["pg_status"] = {"0": {k: "39" for k in ("last_enqueued_collective", "last_started_collective",
                                               "last_completed_collective")}}
    d["nccl_comm_state"] = {}
    for i, e in enumerate(d["entries"]):
        if i % 2:
            del e["duration_ms"]        # unknown: the discovered time ends it
        else:
            e["time_discovered_started_ns"] = 0     # not seen
    return json.dumps(d, sort_keys=True)


def write_bin(name, data):
    path = os.path.join(work, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def perfetto_names(*args):
    out = os.path.join(work, "fr.perfetto.json")
    p = subprocess.run([hvn, "correlate", "--perfetto", out, trace, *args], capture_output=True,
                       text=True, env=env)
    names = []
    if p.returncode == 0:
        names = [e["name"] for e in json.load(open(out))["traceEvents"] if e.get("pid") == 1 and e.get("ph") == "X"]
    return p.returncode, names, p.stderr


forms = {
    "jit pickle": [write_bin(f"fr-pickle/nccl_trace_rank_{r}", jit_pickle(fr_real(r))) for r in range(3)],
    "Python pickle 2": [write_bin(f"fr-py2/nccl_trace_rank_{r}", pickle.dumps(fr_real(r), 2)) for r in range(3)],
    "Python pickle 5": [write_bin(f"fr-pickle/comm_lib_trace_rank_{r}", pickle.dumps(fr_real(r), 5))
                        for r in range(3)],
    "PyTorch's JSON": [write(f"fr-torch-json-rank{r}.json", fr_torch_json(r)) for r in range(3)],
}
for form, files in forms.items():
    rc, out, err = correlate("--fr", *files)
    ok = rc == 0 and out is not None
    print(f"  fr {form}: exit {rc}, {out['collectives'] if out else '-'} collectives {err.strip()[:200]}")
    check(ok and out["collectives"] == 120
          and any(s["rank"] == 0 and s["seq"] == 25 for s in out["stalls"])
          and any(la["rank"] == 2 and la["seq"] == 10 for la in out["late"]),
          f"fr: {form} dumps read: 120 collectives, rank 0's stall, rank 2 late")

# PyTorch's JSON leaves "entries" out when there are none.
rc, out, err = correlate("--fr", write("nccl_trace_rank_5", '{"version": "2.10", "pg_config": {}}'),
                         good["fr"][0])
check(rc == 0 and out and out["collectives"] == 40, f"fr: a dump with no entries key is empty, not bad (exit {rc})")

# A hang: what Flight Recorder exists for.
hang = [write_bin(f"fr-hang/nccl_trace_rank_{r}", jit_pickle(fr_real(r, unfinished=True))) for r in range(3)]
rc, out, err = correlate("--fr", *hang)
unf = sorted((u["rank"], u["state"], u["func"], u["seq"]) for u in out.get("unfinished", [])) if out else None
print(f"  hang: exit {rc}, unfinished {unf}")
check(rc == 0 and out["collectives"] == 117
      and unf == [(0, "scheduled", "AllReduce", 39), (1, "scheduled", "AllReduce", 39),
                  (2, "started", "AllReduce", 39)],
      "fr: entries never completed are reported (rank 2 started seq 39, ranks 0 and 1 scheduled), not dropped")
p = subprocess.run([hvn, "correlate", trace, "--fr", *hang], capture_output=True, text=True, env=env)
check("rank 2 never completed AllReduce seq 39: started at" in p.stdout,
      "fr: the text says which rank never completed which collective")

# Every op name PyTorch records, with each backend's prefix.
names = {
    "nccl:all_reduce": "AllReduce", "nccl:_all_gather_base": "AllGather",
    "nccl:all_gather_into_tensor_coalesced": "AllGather",
    "nccl:reduce_scatter_tensor_coalesced": "ReduceScatter",
    "nccl:_reduce_scatter_base": "ReduceScatter", "nccl:allreduce_coalesced": "AllReduce",
    "nccl:all_reduce_barrier": "AllReduce", "nccl:_broadcast_oop": "Broadcast",
    "nccl:_reduce_oop": "Reduce", "nccl:coalesced": "Coalesced", "nccl:ALLGATHER_coalesced": "AllGather",
    "nccl:REDUCE_SCATTER_coalesced": "ReduceScatter", "nccl:all_to_all": "AlltoAll",
    "nccl:send 0->1": "Send", "nccl:recv 1<-0": "Recv", "ncclx:all_reduce": "AllReduce",
    "gloo:broadcast": "Broadcast", "xccl:all_gather": "AllGather", "nccl:gather": "Gather",
    "nccl:scatter": "Scatter",
}
d = fr(0)
d["entries"] = d["entries"][:len(names)]
for e, n in zip(d["entries"], names):
    e["profiling_name"] = n
    if " " in n:
        e.update(is_p2p=True, p2p_seq_id=e["collective_seq_id"])
rc, got, err = perfetto_names("--fr", write_bin("fr-names/nccl_trace_rank_0", pickle.dumps(d, 4)))
got = [g.replace("STALL ", "") for g in got]
wrong = [(n, g) for n, g in zip(names, got) if names[n] != g]
print(f"  names: exit {rc}, wrong {wrong}")
check(rc == 0 and len(got) == len(names) and not wrong,
      f"fr: {len(names)} op names (coalesced, _oop, barrier, send/recv, ncclx/gloo/xccl) -> NCCL's functions")

# The rank in the name: a copy with a date after it, the new default name.
rc, out, err = correlate("--fr", write_bin("fr-name/nccl_trace_rank_1_20250101", jit_pickle(fr_real(1))))
p = subprocess.run([hvn, "correlate", "--perfetto", os.path.join(work, "r.json"), trace, "--fr",
                    os.path.join(work, "fr-name/nccl_trace_rank_1_20250101")], capture_output=True, text=True, env=env)
tids = {e.get("tid") for e in json.load(open(os.path.join(work, "r.json")))["traceEvents"]
        if e.get("pid") == 1 and e.get("ph") == "X"} if p.returncode == 0 else None
print(f"  nccl_trace_rank_1_20250101: exit {rc}, tids {tids}")
check(rc == 0 and out["collectives"] == 40 and tids == {1},
      "fr: nccl_trace_rank_1_20250101 is rank 1, not rank 20250101")

# Damage that was read silently before.
def fr_with(rank, **change):
    d = fr_real(rank)
    for k, v in change.items():
        if k == "version":
            d["version"] = v
        else:
            d["entries"][4][k] = v
    return d


bad_fr = [
    ("nccl_trace_rank_6", jit_pickle(fr_with(0, version=2.5)), 'key "version" is not a string'),
    ("nccl_trace_rank_7", jit_pickle(fr_with(0, input_sizes="[[1024]]")), '"input_sizes" is not a list of shapes'),
    ("nccl_trace_rank_8", jit_pickle(fr_with(0, duration_ms=-3.0)), '"duration_ms" is -3, not a duration'),
    ("nccl_trace_rank_9", jit_pickle(fr_with(0, time_created_ns=1.7e30)),
     "entries[4]: key \"time_created_ns\" is not a 64-bit integer"),
    ("dump7_20250101", jit_pickle(fr_real(0)), "which digits of the file name are the rank"),
    ("rank_99999999999", jit_pickle(fr_real(0)), "too large"),
    ("nccl_trace_rank_10", b"\x80\x02cposix\nsystem\nX\x02\x00\x00\x00id\x85R.", "(GLOBAL) would build an object"),
    ("nccl_trace_rank_11", jit_pickle(fr_real(0))[:3000], "a pickle that is not a Flight Recorder dump"),
    ("nccl_trace_rank_12", b"\x80\x02N.", "no \"version\" key"),
]
for name, data, msg in bad_fr:
    path = write_bin(f"fr-bad/{name}", data)
    rc, out, err = correlate("--fr", path, good["fr"][1])
    print(f"  {name}: exit {rc}: {err.strip().splitlines()[0] if err.strip() else ''}")
    check(rc == 3 and name in err and msg in err and out is not None and out["collectives"] == 40
          and "Sanitizer" not in err,
          f"fr: {msg} -> exit 3 naming {name}, the good file still read")

# --- Kineto traces as the profiler writes them ------------------------------
import gzip


def kineto_real(rank, pg=True, seq=False, swap=True, p2p_late=0):
    """kineto(rank) as real files are: no Seq before 2026, kernels out of ts
    order in places, SendRecv kernels between the collectives."""
    d = kineto(rank)
    ev = d["traceEvents"]
    for e in ev:
        if not seq:
            e.get("args", {}).pop("Seq", None)
        if not pg:
            e.get("args", {}).pop("Process Group Name", None)
    if rank == 2 and not seq:   # a stream runs in order: 5 ms late, not 50
        ev[10]["ts"] -= 45000.0
    if swap and rank == 1:      # 1-7 adjacent inversions per file, as seen
        for k in (3, 17, 30):
            ev[k], ev[k + 1] = ev[k + 1], ev[k]
    for n in range(5):          # point-to-point: not collectives
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 0, "tid": 7,
                   "ts": ev[2 * n]["ts"] + 5000 + (p2p_late if n == 2 else 0), "dur": 100.0,
                   "args": {"Process Group Name": "0"} if pg else {}})
    return d


def late_of(out):
    return sorted((la["rank"], la["func"], la["seq"]) for la in out["late"]) if out else None


def write_gz(name, obj):
    return write_bin(name, gzip.compress(json.dumps(obj).encode()))


kin = [write_gz(f"kineto-gz/rank{r}.pt.trace.json.gz", kineto_real(r, p2p_late=40000 if r == 1 else 0))
       for r in range(3)]
rc, out, err = correlate("--kineto", *kin)
print(f"  kineto .json.gz, unsorted, SendRecv: exit {rc}, late {late_of(out)} {err.strip()[:200]}")
check(rc == 0 and out["collectives"] == 135 and late_of(out) == [(2, "AllReduce", 10)]
      and any(s["rank"] == 0 and s["seq"] == 25 for s in out["stalls"]),
      "kineto: .json.gz read; kernels out of ts order keep their sequence; SendRecv never a late rank")

# Files without process-group names: one job's files pair up; a second
# job's rank 0, or the same file twice, is refused, not paired.
nopg = [write(f"kineto-nopg/rank{r}.json", kineto_real(r, pg=False)) for r in range(3)]
other = kineto_real(0, pg=False)
for e in other["traceEvents"]:
    e["ts"] += 3_000_000.0                  # another job, 3 s later
other_path = write("kineto-nopg/other-job-rank0.json", other)
rc, out, err = correlate("--kineto", *nopg)
check(rc == 0 and late_of(out) == [(2, "AllReduce", 10)], f"kineto: files without group names pair up (late {late_of(out)})")
rc, out, err = correlate("--kineto", *nopg, other_path)
print(f"  other job's rank 0: exit {rc}: {err.strip()[:200]}")
check(rc == 3 and "other-job-rank0.json: rank 0 of communicator" in err and "rank0.json already" in err
      and late_of(out) == [(2, "AllReduce", 10)],
      "kineto: a second job's rank 0 is refused naming the file it collides with, not paired")
rc, out, err = correlate("--kineto", nopg[1], nopg[1])
check(rc == 3 and "already" in err and out and out["collectives"] == 45,
      f"kineto: the same file twice is read once, and said (exit {rc})")

# Part of a file's kernels named, part not: one communicator.
half = kineto_real(0)
for e in half["traceEvents"][::2]:
    e.get("args", {}).pop("Process Group Name", None)
rc, out, err = correlate("--kineto", write("kineto-half/rank0.json", half),
                         *[write(f"kineto-half/rank{r}.json", kineto_real(r)) for r in (1, 2)])
comms = {r["comm"] for r in out["ranks"]} if out else None
check(rc == 0 and comms is not None and len(comms) == 1 and late_of(out) == [(2, "AllReduce", 10)],
      f"kineto: kernels with and without a group name in one file are one communicator ({comms})")

# NCCL 2.19+'s Generic kernel: the operation is in args.
gen = kineto_real(0)
for e in gen["traceEvents"]:
    if e["name"].startswith("ncclDevKernel_AllReduce"):
        e["name"] = "ncclDevKernel_Generic"
        e["args"]["Collective name"] = "allreduce"
rc, got, err = perfetto_names("--kineto", write("kineto-gen/rank0.json", gen))
got = [g.replace("STALL ", "") for g in got]
check(rc == 0 and got.count("AllReduce") == 40 and "Unknown" not in got,
      f"kineto: ncclDevKernel_Generic is the collective args names (exit {rc}, {sorted(set(got))})")

# Every family of NCCL kernel names (the names NCCL's src/device/generate.py
# and symmetric/generate.py give): the op runs to "_" or to "(".  PyTorch
# 1.8 and 1.9 wrote the category "Kernel".
FAMILIES = ["ncclKernel_AllReduce_RING_LL_Sum_float",                        # up to 2.18
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",                        # 2.19+
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32"]                   # 2.28 symmetric
fam = kineto_real(0)
k = 0
for e in fam["traceEvents"]:
    if e["name"].startswith("ncclDevKernel_AllReduce"):
        e["name"] = FAMILIES[k % len(FAMILIES)]
        e["cat"] = "Kernel" if k % 5 == 0 else "kernel"
        k += 1
    elif e["name"] == "ncclDevKernel_SendRecv":
        e["name"] = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
rc, got, err = perfetto_names("--kineto", write("kineto-families/rank0.json", fam))
got = [g.replace("STALL ", "") for g in got]
check(rc == 0 and got.count("AllReduce") == 40 and got.count("SendRecv") == 5 and "Unknown" not in got,
      f"kineto: every kernel name family (ncclKernel_, ncclDevKernel_ with and without its "
      f"arguments, ncclSymkDevKernel_) and cat \"Kernel\" read (exit {rc}, "
      f"{ {n: got.count(n) for n in sorted(set(got))} })", err[-300:])

# Epoch microseconds with three decimals are nanoseconds, read exactly
# (through a double they were off by up to 128 ns), here with sub-µs starts.
exact = []
for r in range(3):
    evs = []
    for seq, start, dur in timeline(r):
        start += (seq * 37) % 1000
        evs.append('{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", '
                   '"pid": 0, "tid": 7, "ts": %d.%03d, "dur": %d.%03d, "args": {"Process Group Name": '
                   '"0", "In msg nelems": 1024, "dtype": "Float", "Seq": %d}}'
                   % (start // 1000, start % 1000, dur // 1000, dur % 1000, seq))
    exact.append(write(f"kineto-exact/rank{r}.json",
                       '{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": %d, '
                       '"world_size": 3}, "traceEvents": [%s]}' % (r, ", ".join(evs))))
rc, out, err = correlate("--kineto", *exact)
lates = [la["late_ns"] for la in out["late"]] if out else None
# Rank 2's seq 10 starts 50 ms + 2 us + 370 ns after the others' base,
# rank 1's 1 us + 370 ns after it: 50,001,000 ns after the last of them.
check(rc == 0 and lates == [50_001_000],
      f"kineto: epoch microseconds with decimals read to the nanosecond (late by {lates} ns, "
      f"want [50001000])", err[-300:])

# More than three decimals (sub-ns digits, as other writers print them):
# rounded to the nearest ns, not through a double.  Rank 2's starts end in
# .000500 us (half a ns: up), the others' in .000499 (down).
sub = []
for r, f in enumerate(exact):
    t = open(f).read()
    t = re.sub(r'"ts": (\d+\.\d{3})', lambda m: '"ts": %s%s' % (m.group(1), "500" if r == 2 else "499"), t)
    sub.append(write(f"kineto-exact-sub/rank{r}.json", t))
rc, out, err = correlate("--kineto", *sub)
lates = [la["late_ns"] for la in out["late"]] if out else None
check(rc == 0 and lates == [50_001_001],
      f"kineto: microseconds with six decimals rounded to the nearest nanosecond (late by {lates} ns, "
      f"want [50001001])", err[-300:])

# A UTF-8 byte-order mark before the JSON, plain and gzipped.
bom = write_bin("kineto-bom/rank0.json", b"\xef\xbb\xbf" + json.dumps(kineto_real(0)).encode())
bomgz = write_bin("kineto-bom/rank1.json.gz",
                  gzip.compress(b"\xef\xbb\xbf" + json.dumps(kineto_real(1)).encode()))
rc, out, err = correlate("--kineto", bom, bomgz, write("kineto-bom/rank2.json", kineto_real(2)))
check(rc == 0 and out and out["collectives"] == 135,
      f"kineto: a UTF-8 byte-order mark before the JSON is read past, plain and .gz (exit {rc}, "
      f"{out and out['collectives']} collectives)", err[-300:])

# Kineto writes baseTimeNanoseconds after traceEvents; the reader streams
# the events and takes the keys wherever they are.  Keys in that order,
# pretty-printed, in two gzip members, with the events split across them:
# the same collectives and late rank as the compact files.
def keys_last(d):
    ev = d.pop("traceEvents")
    return {"traceEvents": ev, **d}


base_files = [write(f"kineto-order/base{r}/rank{r}.json", kineto_real(r, p2p_late=40000 if r == 1 else 0))
              for r in range(3)]
rc0, out0, err0 = correlate("--kineto", *base_files)
text = [json.dumps(keys_last(kineto_real(r, p2p_late=40000 if r == 1 else 0)), indent=1).encode()
        for r in range(3)]
order = [write_bin(f"kineto-order/rank{r}.json", text[r]) for r in range(2)]
order.append(write_bin("kineto-order/rank2.json.gz", gzip.compress(text[2][:len(text[2]) // 2])
                       + gzip.compress(text[2][len(text[2]) // 2:])))
rc, out, err = correlate("--kineto", *order)
check(rc == rc0 == 0 and out and out0 and out["collectives"] == out0["collectives"] > 0
      and late_of(out) == late_of(out0),
      f"kineto: baseTimeNanoseconds and distributedInfo after the events, pretty-printed, two gzip "
      f"members: as the compact files ({out and out['collectives']} collectives, late {late_of(out)}; "
      f"compact: {out0 and out0['collectives']}, {late_of(out0)})", err[-300:])
# Cut short: refused with the byte where it ends, nothing of it kept.
cutlen = text[0].rindex(b'"ts"', 0, len(text[0]) * 2 // 3) + 8     # in a number
cut = write_bin("kineto-order/cut/rank0.json", text[0][:cutlen])
rc, out, err = correlate("--kineto", cut, order[1], order[2])
check(rc == 3 and err.count("\n") == 1 and f"rank0.json: not JSON (expected ',' or '}}' at byte {cutlen})" in err
      and out and out["collectives"] == out0["collectives"] * 2 // 3,
      f"kineto: a trace cut short is refused once, at its end ({cutlen}), the other files read "
      f"(exit {rc}, {out and out['collectives']} collectives: {err.strip()[:200]})")

# A trace with no NCCL kernel: said once, exit 0.
cpu_only = kineto_real(0)
cpu_only["traceEvents"] = [e for e in cpu_only["traceEvents"] if not e["name"].startswith("nccl")]
rc, out, err = correlate("--kineto", write("kineto-cpu/rank0.json", cpu_only))
check(rc == 0 and err.count("no NCCL kernel in it") == 1 and err.count("\n") == 1,
      f"kineto: a trace without NCCL kernels says so once (exit {rc}: {err.strip()[:160]})")

def with_cpu_side(d, op_of):
    """d's NCCL kernels with the CPU side PyTorch writes: each kernel's
    launch (cuda_runtime, by "correlation") inside the CPU op op_of(kernel)
    names, a record_param_comms ("Collective name") or an nccl:<op>."""
    extra = []
    for n, e in enumerate(d["traceEvents"]):
        if not e["name"].startswith("nccl"):
            continue
        e.setdefault("args", {})["correlation"] = 5000 + n
        kind, op = op_of(e)
        extra.append({"ph": "X", "cat": "cpu_op" if kind == "record" else "user_annotation",
                      "name": "record_param_comms" if kind == "record" else op, "pid": 11,
                      "tid": 12, "ts": e["ts"] - 80.0, "dur": 60.0,
                      "args": {"Collective name": op} if kind == "record" else {}})
        extra.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11,
                      "tid": 12, "ts": e["ts"] - 50.0, "dur": 5.0, "args": {"correlation": 5000 + n}})
    d["traceEvents"] += extra
    return d


# ncclDevKernel_Generic without "Collective name" (PyTorch before 2.4):
# the op of the record_param_comms that launched it.
old_gen = kineto_real(0)
for e in old_gen["traceEvents"]:
    if e["name"].startswith("ncclDevKernel_AllReduce"):
        e["name"] = "ncclDevKernel_Generic"
with_cpu_side(old_gen, lambda e: ("record", "allreduce") if "Generic" in e["name"] else ("nccl", "nccl:send"))
rc, got, err = perfetto_names("--kineto", write("kineto-gen-old/rank0.json", old_gen))
got = [g.replace("STALL ", "") for g in got]
check(rc == 0 and got.count("AllReduce") == 40 and "Unknown" not in got,
      f"kineto: ncclDevKernel_Generic without \"Collective name\" is the op of the CPU op that "
      f"launched it (exit {rc}, { {n: got.count(n) for n in sorted(set(got))} })", err[-300:])

# all_to_all runs as SendRecv kernels: the nccl:all_to_all around their
# launch makes them a collective, judged for late ranks (rank 1's third
# all_to_all, 12 ms late: before its next, as a stream runs in order),
# not point-to-point.
a2a = [write(f"kineto-a2a/rank{r}.json",
             with_cpu_side(kineto_real(r, p2p_late=12000 if r == 1 else 0),
                           lambda e: ("nccl", "nccl:all_to_all") if "SendRecv" in e["name"]
                           else ("record", "allreduce")))
       for r in range(3)]
rc, out, err = correlate("--kineto", *a2a)
check(rc == 0 and late_of(out) == [(1, "AlltoAll", 2), (2, "AllReduce", 10)],
      f"kineto: SendRecv kernels launched by nccl:all_to_all are all-to-alls, a late rank judged "
      f"(late {late_of(out)})", err[-300:])

# Kernels without a size are one group per function, whatever their
# sizes: one op that always takes 5x the others' time (every third here)
# is no stall, and is said not judged; a lone 30 ms stall among them
# still is one.
mixed = kineto_real(0)
k = 0
for e in mixed["traceEvents"]:
    e.get("args", {}).pop("In msg nelems", None)
    if e["name"].startswith("ncclDevKernel_AllReduce"):
        if k % 3 == 0 and e["dur"] < 20000:
            e["dur"] = 10000.0
        k += 1
rc, out, err = correlate("--kineto", write("kineto-unsized/rank0.json", mixed))
check(rc == 0 and out and out["unjudged"] == 40 and not [s_ for s_ in out["stalls"] if s_["func"] == "AllReduce"],
      f"kineto: unsized kernels of mixed durations (every third 5x) are not stalls, "
      f"{out and out['unjudged']} said not judged", err[-200:])
lone = kineto_real(0)
for e in lone["traceEvents"]:
    e.get("args", {}).pop("In msg nelems", None)
rc, out, err = correlate("--kineto", write("kineto-unsized-lone/rank0.json", lone))
check(rc == 0 and out and out["unjudged"] == 0 and any(s_["seq"] == 25 for s_ in out["stalls"]),
      f"kineto: ... a lone 30 ms stall among unsized kernels is still one (unjudged "
      f"{out and out['unjudged']})", err[-200:])

# An error names the event at fault, not the NCCL kernel before it.
badname = kineto_real(0)
badname["traceEvents"].insert(12, {"ph": "X", "cat": "cpu_op", "name": 7, "ts": 1.0, "dur": 1.0})
rc, out, err = correlate("--kineto", write("kineto-bad/rank0.json", badname))
check(rc == 3 and "traceEvents[12]: key \"name\" is not a string" in err,
      f"kineto: a bad name is reported at its own event ({err.strip()[:160]})")

# The rank from the name: rank-70 of a dated name; a host_pid.time name has none.
dated = kineto_real(0)
del dated["distributedInfo"]
rc, out, err = correlate("--kineto", write("kineto-name/rank-70.Mar_25_20_48_12.2861.pt.trace.json", dated))
check(rc == 0 and out and [r["rank"] for r in out["ranks"]] == [70],
      f"kineto: rank-70.Mar_25_20_48_12.2861.pt.trace.json is rank 70 ({[r['rank'] for r in out['ranks']] if out else '-'})")
rc, out, err = correlate("--kineto", write("kineto-name/worker0.1623143089861.pt.trace.json", dated))
check(rc == 3 and "no rank: no distributedInfo.rank" in err,
      f"kineto: worker0.1623143089861.pt.trace.json without distributedInfo has no rank (exit {rc})")

# A file of another day: said, not silently compared.
shifted = fr(0)
for e in shifted["entries"]:     # decades back: before any host's boot
    e["time_created_ns"] -= 30 * 365 * 86400 * 10**9
rc, out, err = correlate("--fr", write("fr-old/nccl_trace_rank_0", shifted))
check(rc == 0 and "are outside" in err and "no noise of this trace can explain them" in err,
      "inputs: collectives outside the trace's time are warned about, with both dates")
import time
day = time.strftime("%Y-%m-%d", time.localtime((base - 30 * 365 * 86400 * 10**9) / 1e9))
times = [out["first_ns"], out["last_ns"]] + [st["start_ns"] for st in out["stalls"]] if out else []
p = subprocess.run([hvn, "correlate", trace, "--fr", os.path.join(work, "fr-old/nccl_trace_rank_0")],
                   capture_output=True, text=True, env=env)
print(f"  another day's file: JSON times {times[:3]}; text dated {day}: {day in p.stdout}")
check(times and all(-2**63 <= t < 0 for t in times) and day in p.stdout,
      "inputs: their times are signed in --json (never wrapped to 1.8e19) and dated in the text")

# --- NCCL Inspector as NCCL 2.28-2.30 writes it ------------------------------
def inspector_real(rank, verbose=False, p2p=True, hid="0xb0a7", coarse=False):
    """Compact lines as json.cc writes them; 2.30's p2p_perf lines (point-to-
    point is on by default) and comm_name; verbose times nested in the perf
    object, the execution in kernel_events; coarse: one dump a second."""
    lines = []
    for seq, start, dur in timeline(rank):
        dump = (start + dur) // 1000
        if coarse:
            dump = (dump // 1_000_000 + 1) * 1_000_000
        perf = {"coll": "AllReduce", "coll_sn": seq, "coll_msg_size_bytes": 4096,
                "coll_exec_time_us": dur // 1000, "coll_timing_source": "kernel_gpu",
                "coll_algobw_gbs": 1.0, "coll_busbw_gbs": 1.0}
        if verbose:
            # enqueued on time; rank 2's seq 10 ran 50 ms late on the GPU
            enq = (start - (50_000_000 if rank == 2 and seq == 10 else 0)) // 1000
            perf["event_trace_sn"] = {"coll_start_sn": 1, "coll_stop_sn": 2, "kernel_events": []}
            perf["event_trace_ts"] = {"coll_start_ts": enq, "coll_stop_ts": enq + 5,
                                      "kernel_events": [{"channel_id": ch, "kernel_start_ts": start // 1000 + ch,
                                                         "kernel_stop_ts": (start + dur) // 1000 - ch,
                                                         "kernel_record_ts": (start + dur) // 1000}
                                                        for ch in range(2)]}
        head = {"id": hid, "comm_name": "unknown", "rank": rank, "n_ranks": 3, "nnodes": 1}
        meta = {"inspector_output_format_version": "v4.0", "git_rev": "unknown",
                "rec_mechanism": "nccl_profiler_interface", "dump_timestamp_us": dump,
                "hostname": f"node{rank}", "pid": 100 + rank}
        lines.append(json.dumps({"header": head, "metadata": meta, "coll_perf": perf}, separators=(",", ":")))
        if p2p and seq % 5 == 0:
            lines.append(json.dumps({"header": head, "metadata": meta, "p2p_perf": {
                "p2p": "Send", "p2p_sn": seq // 5 + 1, "p2p_peer": (rank + 1) % 3, "p2p_msg_size_bytes": 65536,
                "p2p_exec_time_us": 30 + (40000 if rank == 1 else 0), "p2p_timing_source": "kernel_gpu",
                "p2p_algobw_gbs": 2.0, "p2p_busbw_gbs": 2.0}}, separators=(",", ":")))
    return "\n".join(lines) + "\n"


# Two gzip members one after the other (cat a.gz b.gz): one file.
text = inspector_real(1, p2p=False).encode()
cut = text.index(b"\n", len(text) // 2) + 1
rc, out, err = correlate("--inspector", write_bin("insp-gz/node1-pid101.log.gz",
                                                  gzip.compress(text[:cut]) + gzip.compress(text[cut:])),
                         good["inspector"][0])
check(rc == 0 and out and out["collectives"] == 80,
      f"inputs: a file of two gzip members is read whole (exit {rc}, "
      f"{out['collectives'] if out else '-'} collectives of 80)")

ins = [write(f"insp-230/node{r}-pid{100 + r}.log", inspector_real(r)) for r in range(3)]
rc, out, err = correlate("--inspector", *ins)
print(f"  inspector 2.30 with p2p_perf: exit {rc}, {out['collectives'] if out else '-'} collectives, late {late_of(out)}")
check(rc == 0 and out["collectives"] == 144 and late_of(out) == [(2, "AllReduce", 10)],
      "inspector: 2.30's p2p_perf lines read (144 operations), point-to-point never a late rank")

ins = [write(f"insp-verbose/node{r}-pid{100 + r}.log", inspector_real(r, verbose=True, coarse=True, p2p=False))
       for r in range(3)]
rc, out, err = correlate("--inspector", *ins)
late = [(la["rank"], la["seq"], round(la["late_ns"] / 1e6, 1)) for la in out["late"]] if out else None
print(f"  inspector verbose, dumps a second apart: exit {rc}, late {late}")
check(rc == 0 and late is not None and len(late) == 1 and late[0][:2] == (2, 10) and 49 < late[0][2] < 51
      and "without verbose times" not in err,
      "inspector: verbose times nested in coll_perf; the execution from kernel_events, not the enqueue")
ins = [write(f"insp-coarse/node{r}-pid{100 + r}.log", inspector_real(r, coarse=True)) for r in range(3)]
rc, out, err = correlate("--inspector", *ins)
check(rc == 0 and "without verbose times" in err and "up to one dump interval late" in err,
      "inspector: without verbose output the start's uncertainty is said")

# Without verbose times a collective ends at its dump, off by up to a
# dump interval (10 ms here): a rank 3 ms late is within that and not
# judged; 50 ms still is (above).
near = []
for r in range(3):
    lines = []
    for ln in inspector_real(r, p2p=False).splitlines():
        d = json.loads(ln)
        if r == 2 and d["coll_perf"]["coll_sn"] == 10:
            d["metadata"]["dump_timestamp_us"] -= 47_000      # 3 ms late, not 50
        lines.append(json.dumps(d))
    near.append(write(f"insp-near/node{r}-pid{100 + r}.log", "\n".join(lines) + "\n"))
rc, out, err = correlate("--inspector", *near)
check(rc == 0 and out and late_of(out) == [],
      f"inspector: without verbose times a rank 3 ms late, inside the 10 ms dump interval, "
      f"is not judged late (late {late_of(out)})", err[-200:])

# header.id keeps 14 hex digits of the hash: matched on the prefix with
# the communicator of another input (here Flight Recorder's group "0").
frs = good["fr"][:2]
ins2 = write("insp-prefix/node2-pid102.log", inspector_real(2, p2p=False, hid="0xaf63ad4c86019c"))
rc, out, err = correlate("--fr", *frs, "--inspector", ins2)
comms = {r["comm"] for r in out["ranks"]} if out else None
print(f"  FR ranks 0-1 + Inspector rank 2 with a 14-digit id: exit {rc}, comms {comms}, late {late_of(out)}")
check(rc == 0 and comms == {"af63ad4c86019caf"} and late_of(out) == [(2, "AllReduce", 10)],
      "inspector: a header.id cut to 14 hex digits joins the communicator it begins")

# A log cut by a kill, and a bandwidth of inf: the good lines count.
cut = inspector_real(1, p2p=False)
rc, out, err = correlate("--inspector", write("insp-cut/node1-pid101.log", cut[:-40]), good["inspector"][0])
print(f"  cut last line: exit {rc}: {err.strip().splitlines()[0] if err.strip() else ''}")
check(rc == 3 and out and out["collectives"] == 79 and "line 40: not JSON" in err and "cut by a kill" in err,
      "inspector: a cut last line is named, the 39 before it read")
inf = inspector_real(1, p2p=False).replace('"coll_algobw_gbs":1.0', '"coll_algobw_gbs":inf', 3)
rc, out, err = correlate("--inspector", write("insp-inf/node1-pid101.log", inf), good["inspector"][0])
check(rc == 0 and out and out["collectives"] == 80,
      f"inspector: a bandwidth of inf (%lf of a zero time) loses nothing (exit {rc})")

# Flight Recorder dumps named by host and rank, as users of pytorch#140879
# set the prefix: nccl_trace_rank_<host>_<N>.
named = [write(f"fr-hosts/nccl_trace_rank_gpu-node{7 + r}_{r}", fr(r)) for r in range(3)]
rc, out, err = correlate("--fr", *named)
check(rc == 0 and out and sorted(r["rank"] for r in out["ranks"]) == [0, 1, 2] and
      late_of(out) == [(2, "AllReduce", 10)],
      f"fr: dumps named nccl_trace_rank_<host>_<N> are ranks N (exit {rc}, "
      f"{sorted(r['rank'] for r in out['ranks']) if out else '-'})", err[-300:])

# A hang: ranks 0 and 2 started seq 39 and never completed it; rank 1's
# dump stops at seq 30: it never scheduled 31, the missing participant.
hang = []
for r in range(3):
    d = fr(r)
    if r == 1:
        d["entries"] = [e for e in d["entries"] if e["collective_seq_id"] <= 30]
    else:
        d["entries"][-1]["state"] = "started"
    hang.append(write(f"fr-hang/nccl_trace_rank_{r}", d))
rc, out, err = correlate("--fr", *hang)
uns = [(u["rank"], u["seq"], u["others"]) for u in out["unscheduled"]] if out else None
p = subprocess.run([hvn, "correlate", trace, "--fr", *hang], capture_output=True, text=True, env=env)
check(rc == 0 and uns == [(1, 31, 2)] and
      "rank 1 (host ?) never scheduled seq 31, which 2 other ranks did" in p.stdout,
      f"fr: in a hang, the rank whose dump stops first is named: it never scheduled the next "
      f"collective the others did (unscheduled {uns})", p.stdout[-400:] + err[-200:])
rc, out, err = correlate("--fr", *good["fr"])
check(rc == 0 and out["unscheduled"] == [],
      "fr: without a hang (every collective completed) no rank is named so")

# What the files say of their communicator: its size (Kineto's
# distributedInfo.world_size, Flight Recorder's pg_config ranks,
# Inspector's header.n_ranks) and the rank's process; a rank whose file
# was not given is named, as over many hosts.
for kind, files in good.items():
    rc, out, err = correlate(f"--{kind}", files[0], files[2])
    ranks = sorted((r["rank"], r["nranks"], r["pid"]) for r in out["ranks"]) if out else None
    miss = [(m["nranks"], m["seen"], m["first_missing_rank"]) for m in out["missing"]] if out else None
    pids = [100, 102] if kind == "inspector" else [-1, -1]
    check(rc == 0 and ranks == [(0, 3, pids[0]), (2, 3, pids[1])] and miss == [(3, 2, 1)],
          f"{kind}: the communicator's 3 ranks kept, the rank whose file is not given named "
          f"(ranks {ranks}, missing {miss})", err[-300:])
# A subgroup (ranks 4-6 of the job, the dumps' ranks global): its size
# says nothing of which global ranks to expect: no rank named missing.
sub = []
for r in range(3):
    d = fr(r)
    d["pg_config"] = {"1": {"name": "1", "desc": "tp", "ranks": "[4, 5, 6]"}}
    for e in d["entries"]:
        e["process_group"] = ["1", "tp"]
    sub.append(write(f"fr-subgroup/nccl_trace_rank_{4 + r}", d))
kin_sub = []
for r in range(3):
    d = kineto(r)
    d["distributedInfo"]["rank"] = 4 + r
    d["distributedInfo"]["world_size"] = 8
    for e in d["traceEvents"]:
        e.get("args", {})["Process Group Name"] = "1"
    kin_sub.append(write(f"kineto-subgroup/rank{4 + r}.json", d))
for kind, files in (("fr", sub), ("kineto", kin_sub)):
    rc, out, err = correlate(f"--{kind}", *files)
    check(rc == 0 and out and out["missing"] == [] and len(out["ranks"]) == 3,
          f"{kind}: a subgroup of global ranks 4-6 names no rank missing "
          f"({out and out['missing']})", err[-200:])
p = subprocess.run([hvn, "correlate", trace, "--kineto", good["kineto"][0], good["kineto"][2]],
                   capture_output=True, text=True, env=env)
check(p.returncode == 0 and re.search(r"MISSING: comm \w+ has 3 ranks, 2 in these files \(rank 1 has none\)",
                                      p.stdout),
      "... and in the text: MISSING names the rank", p.stdout[:400])

# A rank the trace's own NCCL records hold (the plugin ran) given again
# as Inspector output: refused, not counted twice as "3 ranks" with one
# 113610361.967 ms late; the same with the id cut to 14 hex digits.
import fleet_synth  # noqa: E402
fleet_synth.write(os.path.join(work, "plugin-host"), nhosts=2, nranks=2, ncoll=60, only=[0])
ptrace = os.path.join(work, "plugin-host", "host0.dat")
for hid in (f"0x{fleet_synth.COMM:x}", f"0x{fleet_synth.COMM:x}"[:16]):
    line = json.dumps({"header": {"id": hid, "rank": 0, "n_ranks": 4, "nnodes": 2},
                       "metadata": {"inspector_output_format_version": "v4.0",
                                    "dump_timestamp_us": 1_796_000_100_000_000, "hostname": "host0",
                                    "pid": 100},
                       "coll_perf": {"coll": "AllReduce", "coll_sn": 3, "coll_msg_size_bytes": 4096,
                                     "coll_exec_time_us": 2000, "coll_timing_source": "kernel_gpu",
                                     "coll_algobw_gbs": 1.0, "coll_busbw_gbs": 1.0}}) + "\n"
    p = subprocess.run([hvn, "correlate", "--json", ptrace, "--inspector",
                        write(f"insp-dup/host0-{len(hid)}.log", line)],
                       capture_output=True, text=True, env=env)
    out = json.loads(p.stdout) if p.stdout.strip() else None
    nr = len(out["ranks"]) if out else None
    check(p.returncode == 3 and "the trace's NCCL records (the plugin's) already" in p.stderr and nr == 2,
          f"inspector: a rank of the plugin's records given again ({len(hid) - 2} hex digits of id) "
          f"is refused, the plugin's 2 ranks kept (exit {p.returncode}, {nr} ranks)", p.stderr[-300:])

# Not Inspector output: refused once, saying what it looks like, not an
# error a line (a Kineto trace gave 23,478 lines).
kin_lines = json.dumps(kineto_real(0), indent=1)
pretty = json.dumps(json.loads(inspector_real(1, p2p=False).splitlines()[0]), indent=2)
others = {"a Kineto trace": (kin_lines, "--kineto reads it"),
          "Inspector's JSON printed over many lines": (pretty, "jq -c"),
          "Prometheus text": ("# HELP x y\n# TYPE x gauge\nx 1\n" * 50, "Prometheus text"),
          "an NCCL_DEBUG log": ("node1:1:1 [0] NCCL INFO Bootstrap : Using eth0\n" * 50, "NCCL_DEBUG log")}
for what, (text, words) in others.items():
    rc, out, err = correlate("--inspector", write(f"insp-other/{what.replace(' ', '_')}.log", text))
    check(rc == 3 and err.count("\n") == 1 and "not NCCL Inspector output" in err and words in err,
          f"inspector: {what} given to --inspector: one refusal naming it (exit {rc}, "
          f"{err.count(chr(10))} lines: {err.strip()[-90:]})")
# A log with many bad lines among good ones: three named, the rest counted.
lines = inspector_real(1, p2p=False).splitlines()
for k in range(5, 15):
    lines[k] = lines[k][:-3]
rc, out, err = correlate("--inspector", write("insp-many/node1-pid101.log", "\n".join(lines) + "\n"),
                         good["inspector"][0])
said = [ln for ln in err.splitlines() if "insp-many" in ln and "verbose times" not in ln]
check(rc == 3 and len(said) == 4 and "7 more bad lines, skipped" in said[-1] and out and
      out["collectives"] == 70,
      f"inspector: 10 bad lines: 3 named and 7 counted, the 30 good read (exit {rc}, "
      f"{len(said)} lines about the file)", err[-300:])

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
