#!/usr/bin/env python3
"""hvnoise correlate --kineto: time and peak RSS on PyTorch profiler traces
of the sizes real jobs write (issue #30: peak RSS at most 2x the JSON, 1x
the aim), plain and .json.gz, with the ratio of RSS to the JSON's size.

usage: kineto-speed.py [--sizes 200,1024] [--hvnoise PATH]
                       (MB of JSON; make check's smoke run: --sizes 1)
Traces are synthesized as Kineto writes them: per step, compute ops each
with its CPU op, cudaLaunchKernel, kernel and flow event, then an
all-reduce through record_param_comms and an NCCL 2.19+ kernel
(ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)) whose "Collective name"
and sequence number are in args.  The correlation's trace is
build/check/vm-record.dat when make check left it, else a recording of
this host made here.  "baseline" is correlate on that trace alone: what
the Kineto reader adds is the rest.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
STEP_OPS = 20           # compute kernels between two all-reduces


def synth(path, mb, rank=0, step_ops=STEP_OPS):
    """A Kineto trace of about @mb MB: returns the NCCL kernels written.
    @step_ops compute kernels between two all-reduces (0: NCCL alone)."""
    base_us = 1000.0           # µs after baseTimeNanoseconds, as Kineto writes them
    pid, tid, corr, seq, ext = 4242, 4242, 1, 0, 1
    ts = 0.0
    n_nccl = 0
    target = int(mb * 2**20)
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", '
                '"totalGlobalMem": 85031714816}], '
                f'"distributedInfo": {{"backend": "nccl", "rank": {rank}, "world_size": 8}}, '
                '"record_shapes": 1, "with_stack": 0, "traceEvents": [\n')
        first = True
        while f.tell() < target:
            ev = []
            for k in range(step_ops):
                t = base_us + ts
                ev.append(f'{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": {pid}, "tid": {tid}, '
                          f'"ts": {t:.3f}, "dur": 18.250, "args": {{"External id": {ext}, '
                          f'"Record function id": 0, "Ev Idx": {ext}, "Input Dims": [[4096, 4096], [4096, 4096]], '
                          '"Input type": ["float", "float"], "Input Strides": [[4096, 1], [4096, 1]], '
                          '"Concrete Inputs": ["", ""]}}')
                ev.append(f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {pid}, '
                          f'"tid": {tid}, "ts": {t + 2:.3f}, "dur": 4.125, "args": {{"External id": {ext}, '
                          f'"cbid": 211, "correlation": {corr}}}}}')
                ev.append(f'{{"ph": "f", "id": {corr}, "pid": 0, "tid": 7, "ts": {t + 30:.3f}, '
                          '"cat": "ac2g", "name": "ac2g", "bp": "e"}')
                ev.append(f'{{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_'
                          f'tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", '
                          f'"pid": 0, "tid": 7, "ts": {t + 30:.3f}, "dur": 250.500, "args": {{"External id": {ext}, '
                          f'"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {corr}, '
                          '"registers per thread": 168, "shared memory": 213248, "blocks per SM": 1.0, '
                          '"warps per SM": 4.0, "grid": [132, 1, 1], "block": [384, 1, 1], '
                          '"est. achieved occupancy %": 6}}')
                ts += 260
                corr += 1
                ext += 1
            t = base_us + ts
            ev.append(f'{{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": {pid}, '
                      f'"tid": {tid}, "ts": {t:.3f}, "dur": 35.000, "args": {{"External id": {ext}, '
                      f'"Collective name": "allreduce", "Process Group Name": "0", '
                      '"Process Group Description": "default_pg", "Group size": 8, '
                      f'"In msg nelems": 1048576, "Out msg nelems": 1048576, "dtype": "Float", "Seq": {seq}}}}}')
            ev.append(f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": {pid}, '
                      f'"tid": {tid}, "ts": {t + 20:.3f}, "dur": 6.000, "args": {{"External id": {ext}, '
                      f'"cbid": 430, "correlation": {corr}}}}}')
            ev.append(f'{{"ph": "X", "cat": "kernel", '
                      '"name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", '
                      f'"pid": 0, "tid": 20, "ts": {t + 40:.3f}, "dur": 812.750, "args": {{"External id": {ext}, '
                      f'"queued": 0, "device": 0, "context": 1, "stream": 20, "correlation": {corr}, '
                      '"registers per thread": 96, "shared memory": 0, "blocks per SM": 0.25, '
                      '"warps per SM": 2.0, "grid": [32, 1, 1], "block": [512, 1, 1], '
                      '"est. achieved occupancy %": 3, "Collective name": "allreduce", '
                      '"Process Group Name": "0", "Process Group Description": "default_pg", '
                      f'"In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 8, '
                      f'"dtype": "Float", "Seq": {seq}}}}}')
            ts += 900
            corr += 1
            ext += 1
            seq += 1
            n_nccl += 1
            f.write(("" if first else ",\n") + ",\n".join(ev))
            first = False
        f.write('\n], "traceName": "rank0.pt.trace.json", "displayTimeUnit": "ms", '
                f'"baseTimeNanoseconds": 1733150000000000000}}\n')
    return n_nccl


def measure(hvn, trace, kineto):
    """(seconds, peak RSS MB, collectives read, exit status) of correlate."""
    args = [hvn, "correlate", "--json", trace] + (["--kineto", kineto] if kineto else [])
    subprocess.run(["cat"] + ([kineto] if kineto else []) + [trace], stdout=subprocess.DEVNULL)
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "HVN-RSS %M"] + args, capture_output=True, text=True)
    wall = time.monotonic() - t0
    rss = [int(l.split()[1]) for l in p.stderr.splitlines() if l.startswith("HVN-RSS")][0] / 1024
    try:
        colls = json.loads(p.stdout)["collectives"]
    except ValueError:
        colls = -1
        sys.stderr.write(p.stderr[-2000:])
    return wall, rss, colls, p.returncode


def main():
    sizes = [200, 1024]
    if "--sizes" in sys.argv:
        sizes = [float(x) for x in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
    hvn = os.path.join(top, "build/tools/hvnoise")
    if "--hvnoise" in sys.argv:
        hvn = sys.argv[sys.argv.index("--hvnoise") + 1]
    else:
        subprocess.run(["make", "-C", top, "-s", "build/tools/hvnoise"], check=True)
    work = os.path.join(top, "build/bench/kineto")
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(top, "build/check/vm-record.dat")
    if not os.path.exists(trace):
        trace = os.path.join(work, "host.dat")
        if not os.path.exists(trace):
            subprocess.run([hvn, "record", "-q", "-e", "irq:irq_handler_entry", "-d", "1", "-o", trace],
                           check=True)
    # The trace's own collectives (make check's has the NCCL-like job's)
    # are counted beside the file's.
    b_wall, b_rss, b_colls, rc = measure(hvn, trace, None)
    if rc:
        sys.exit(f"kineto-speed: correlate on {trace} alone: exit {rc}")
    rows, bad = [], []
    # Each size plain and gzip, and the smallest again with NCCL kernels
    # alone: what is kept per kernel is the most there.
    for mb, step_ops in [(mb, STEP_OPS) for mb in sizes] + [(min(sizes), 0)]:
        plain = os.path.join(work, f"rank0-{mb:g}MB{'' if step_ops else '-nccl'}.pt.trace.json")
        gz = plain + ".gz"
        meta = plain + ".n"
        # Each file under a temporary name first: one cut by an
        # interrupted run is never taken for a whole one.
        if not (os.path.exists(plain) and os.path.exists(meta)):
            n = synth(plain + ".tmp", mb, step_ops=step_ops)
            os.rename(plain + ".tmp", plain)
            with open(meta, "w") as f:
                f.write(str(n))
        if step_ops and not os.path.exists(gz):
            with open(plain, "rb") as i, gzip.open(gz + ".tmp", "wb", compresslevel=1) as o:
                while True:
                    b = i.read(1 << 22)
                    if not b:
                        break
                    o.write(b)
            os.rename(gz + ".tmp", gz)
        want = int(open(meta).read()) + b_colls
        jmb = os.path.getsize(plain) / 2**20
        for path in (plain, gz) if step_ops else (plain,):
            wall, rss, colls, rc = measure(hvn, trace, path)
            rows.append((os.path.basename(path), jmb, os.path.getsize(path) / 2**20, wall, rss,
                         (rss - b_rss) / jmb, colls, want, rc))
            if rc or colls != want:
                bad.append(f"{os.path.basename(path)}: exit {rc}, {colls} of {want} collectives read")
    print(f"\nbaseline (the trace alone): {b_wall:.2f} s, {b_rss:.1f} MB peak RSS, "
          f"{b_colls} collectives of its own")
    print(f"{'file':<38}{'JSON MB':>9}{'file MB':>9}{'seconds':>9}{'peak RSS MB':>13}"
          f"{'added/JSON':>12}{'collectives':>13}")
    for name, jmb, fmb, wall, rss, ratio, colls, want, rc in rows:
        print(f"{name:<38}{jmb:9.1f}{fmb:9.1f}{wall:9.2f}{rss:13.1f}{ratio:12.3f}{colls:>8}/{want}")
    if bad:
        sys.exit("kineto-speed: " + "; ".join(bad))


if __name__ == "__main__":
    main()
