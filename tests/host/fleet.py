#!/usr/bin/env python3
"""hvnoise correlate over many hosts, on synthesized traces whose truth is
known (tests/host/fleet_synth.py): the clocks' offsets and drift recovered
from the collectives, each job stall's class and culprit (host, rank and
cause), the waiting ranks not blamed, a quiet stall blamed on no host, and
the errors: the same host twice, missing hosts, options that take one
trace.

usage: fleet.py HVNOISE WORKDIR
Prints KTAP (tests/host/hvntest.py).
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import fleet_synth
import hvntest
import jobsim
import synth_events

check = hvntest.checker("fleet/")


def run(hvn, *args):
    p = subprocess.run([hvn, "correlate", *args], capture_output=True, text=True,
                       env=hvntest.sanitizer_env())
    if hvntest.sanitizer_report(p.stderr):
        print("  " + p.stderr[-2000:].replace("\n", "\n  "))
    return p


def stall(doc, seq):
    for s in doc["job_stalls"]:
        if s["seq"] == seq:
            return s
    return None


def host(doc, name):
    return next(h for h in doc["hosts"] if h["host"] == name)


def main():
    hvn, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    plain, drift, three = (os.path.join(work, d) for d in ("plain", "drift", "three"))
    fleet_synth.write(plain)
    fleet_synth.write(drift, period=200_000_000, drift={1: 50e-6})
    fleet_synth.write(three, nhosts=3, only=(0, 1))

    p = run(hvn, "--json", plain)
    ok = check(p.returncode == 0 and not p.stderr,
               f"correlate DIR of two hosts' traces (exit {p.returncode})")
    if not ok:
        print("  " + p.stderr[-1000:])
        return
    doc = json.loads(p.stdout)
    check(doc["schema_version"] == 2 and len(doc["hosts"]) == 2 and len(doc["job_stalls"]) == 4,
          f"schema 2, both hosts, the 4 injected job stalls ({len(doc['job_stalls'])})")
    # A DIR is a name, not a pattern: the same traces under a directory
    # named with glob's characters read the same.
    odd = os.path.join(work, "plain[1]*?")
    shutil.copytree(plain, odd)
    q = run(hvn, "--json", odd)
    check(q.returncode == 0 and [h["host"] for h in json.loads(q.stdout)["hosts"]] ==
          [h["host"] for h in doc["hosts"]],
          f"correlate DIR named {os.path.basename(odd)}: the same hosts read (exit {q.returncode})",
          q.stderr[-300:])

    h1 = host(doc, "host1")
    err = h1["offset_ns"] - 2e9
    check(h1["aligned"] and abs(err) <= h1["uncertainty_ns"] and 0 < h1["uncertainty_ns"] < 50_000,
          f"host1's clock, 2 s off, recovered from the collectives: {h1['offset_ns'] / 1e6:.4f} ms "
          f"+- {h1['uncertainty_ns'] / 1e3:.1f} us (error {err / 1e3:.2f} us)")
    check(h1["clock_disagrees"] and not host(doc, "host0")["clock_disagrees"],
          "host1's CLOCK_REALTIME is flagged as disagreeing, the reference's is not")

    s = stall(doc, fleet_synth.ARRIVE)
    c = s and s["culprit"]
    check(s and s["class"] == "arrival" and c and c["host"] == "host1" and c["rank"] == 3,
          f"the late arrival is an arrival stall, host1 rank 3 its culprit ({c and c['host']} rank {c and c['rank']})")
    check(c and c["cause"] == "hypervisor" and c["share"] >= 0.9 and
          29.9e6 <= s["late_ns"] <= 30.0e6,
          f"... the time taken from its vCPU while the others waited explains {c and c['share']:.0%} "
          f"of {s and s['late_ns'] / 1e6:.3f} ms late")
    check(s and [r["waiting"] for r in s["ranks"]] == [False, True, True, True],
          "... the three ranks that waited for it are waiting, not guilty")

    s = stall(doc, fleet_synth.INFLIGHT)
    c = s and s["culprit"]
    check(s and s["class"] == "in-flight" and c and c["host"] == "host0" and c["rank"] == 1 and
          c["cause"] == "hypervisor" and c["share"] >= 0.9,
          f"the stuck proxy thread is an in-flight stall, host0 rank 1 its culprit, steal "
          f"({c and c['host']} rank {c and c['rank']}, {c and c['cause']}, {c and c['share']:.0%})")

    s = stall(doc, fleet_synth.HOSTLATE)
    c = s and s["culprit"]
    check(s and s["class"] == "arrival" and c and c["host"] == "host0" and c["cause"] == "hypervisor"
          and 39.8e6 <= s["late_ns"] <= 40.0e6 and
          [r["waiting"] for r in s["ranks"]] == [False] + [True] * (len(s["ranks"]) - 1),
          f"a whole host late (both its ranks): an arrival stall of that host, judged against the "
          f"other host's ranks ({c and c['host']} rank {c and c['rank']}, {s and s['late_ns'] / 1e6:.3f} ms late)")

    s = stall(doc, fleet_synth.QUIET)
    check(s and s["class"] == "in-flight" and s["culprit"] is None and not s["also_noisy"],
          "a stall with no host noise anywhere blames no host")

    p = run(hvn, plain)
    check(p.returncode == 0 and "culprit: host1 rank 3" in p.stdout and
          "CLOCK: its CLOCK_REALTIME is 2000.0" in p.stdout and
          "no host noise explains this" in p.stdout,
          "the text names the culprit host and rank, the clock off, and the quiet stall")
    for line in p.stdout.splitlines()[:14]:
        print("  | " + line)

    p = run(hvn, "--json", drift)
    doc = json.loads(p.stdout) if p.returncode == 0 else None
    if check(doc is not None, f"correlate of hosts whose clocks drift (exit {p.returncode})"):
        h1 = host(doc, "host1")
        base, err1 = fleet_synth.host_clock(1)
        t = h1["offset_at_realtime_ns"] - fleet_synth.EPOCH - err1
        want = (t - base) * 50e-6 + err1
        check(abs(h1["drift_ppm"] - 50) < 0.5 and abs(h1["offset_ns"] - want) <= h1["uncertainty_ns"] + 1000,
              f"a 50 ppm drift over 2 minutes is fitted: {h1['drift_ppm']:.2f} ppm, offset off by "
              f"{(h1['offset_ns'] - want) / 1e3:.2f} us (+- {h1['uncertainty_ns'] / 1e3:.1f} us)")
        s = stall(doc, fleet_synth.ARRIVE)
        check(s and s["culprit"] and s["culprit"]["host"] == "host1" and 29.9e6 <= s["late_ns"] <= 30.0e6,
              f"... and the late rank is still found, {s and s['late_ns'] / 1e6:.3f} ms late")

    # --- summaries: made per host, joined as the traces are ---------------
    sums = os.path.join(work, "sum")
    os.makedirs(sums)
    rcs = []
    for h in ("host0", "host1"):
        p = run(hvn, "--summary", os.path.join(sums, h + ".sum"), os.path.join(plain, h + ".dat"))
        rcs.append(p.returncode)
    check(rcs == [0, 0] and all(os.path.getsize(os.path.join(sums, h + ".sum")) <
                                os.path.getsize(os.path.join(plain, h + ".dat")) for h in ("host0", "host1")),
          f"correlate --summary reduces each host's trace (exits {rcs}, "
          f"{os.path.getsize(os.path.join(sums, 'host1.sum'))} of {os.path.getsize(os.path.join(plain, 'host1.dat'))} bytes)")

    def verdicts(args):
        p = run(hvn, "--json", *args)
        if p.returncode:
            return p.returncode
        d = json.loads(p.stdout)
        for h in d["hosts"]:
            del h["trace"]
        return d
    full = verdicts([plain])
    check(verdicts([sums]) == full and
          verdicts([os.path.join(plain, "host0.dat"), os.path.join(sums, "host1.sum")]) == full,
          "the join of summaries, and of a trace and a summary, says exactly what the traces' does")
    # Small ones for the fuzzer's seeds (tests/fuzz/run.sh): 2 x 1 ranks.
    small = os.path.join(work, "small")
    fleet_synth.write(small, nranks=1, ncoll=200)
    for h in ("host0", "host1"):
        run(hvn, "--summary", os.path.join(small, h + ".sum"), os.path.join(small, h + ".dat"))
    # An older writer's summary has no record of what saw its host (type
    # 9): its host, quiet here (no episode), must not be called unseen.
    with open(os.path.join(small, "host0.sum"), "rb") as f:
        data = f.read()
    old, off = bytearray(data[:8]), 8
    while off < len(data):
        typ, _, size = struct.unpack_from("<HHI", data, off)
        if typ != 9:
            old += data[off:off + 8 + size]
        off += 8 + size
    older = os.path.join(work, "older.sum")
    with open(older, "wb") as f:
        f.write(old)
    p = run(hvn, "--json", older, os.path.join(small, "host1.sum"))
    seen = p.returncode == 0 and {h["host"]: h["seen"] for h in json.loads(p.stdout)["hosts"]}
    check(len(old) < len(data) and seen == {"host0": "detectors", "host1": "detectors"},
          f"a summary from before the seen record: its quiet host is not called unseen ({seen})")
    cut = os.path.join(work, "cut.sum")
    with open(os.path.join(sums, "host1.sum"), "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2 + 3])
    p = run(hvn, os.path.join(plain, "host0.dat"), cut)
    check(p.returncode == 3 and "cut.sum" in p.stderr and "offset" in p.stderr,
          f"a summary cut short: exit 3 naming it and the offset ({p.stderr.strip()[:100]})")
    with open(cut, "wb") as f:
        f.write(data[:-(8 + 32)])                   # all but the END record
    p = run(hvn, os.path.join(plain, "host0.dat"), cut)
    check(p.returncode == 3 and "no end record" in p.stderr,
          f"a summary cut on a record's boundary: exit 3 ({p.stderr.strip()[:100]})")
    bad = bytearray(data)
    i = bad.find(b"host1")
    bad[i - 8:i - 6] = (6).to_bytes(2, "little")    # HOST record retyped as a STALL
    with open(cut, "wb") as f:
        f.write(bad)
    p = run(hvn, cut, os.path.join(plain, "host0.dat"))
    check(p.returncode == 3 and "bad summary record at offset" in p.stderr,
          f"a summary with a bad record: exit 3 naming the offset ({p.stderr.strip()[:100]})")
    p = run(hvn, "--summary", os.path.join(work, "x.sum"), os.path.join(plain, "host0.dat"),
            os.path.join(plain, "host1.dat"))
    check(p.returncode == 2 and not os.path.exists(os.path.join(work, "x.sum")),
          "--summary of two traces is refused, nothing written")

    shutil.copy(os.path.join(plain, "host0.dat"), os.path.join(work, "again.dat"))
    p = run(hvn, os.path.join(plain, "host0.dat"), os.path.join(work, "again.dat"))
    check(p.returncode == 2 and "both of host host0" in p.stderr and "again.dat" in p.stderr,
          f"two traces of one host are refused, naming both (exit {p.returncode}: {p.stderr.strip()[:120]})")

    p = run(hvn, three)
    check(p.returncode == 0 and "MISSING: comm c0ffee0012345678 has 6 ranks, 4 in these traces (rank 4 has none)" in p.stdout,
          "a host left out: its communicator's missing ranks are named")

    synth_events.write(os.path.join(work, "other.dat"))
    p = run(hvn, os.path.join(plain, "host0.dat"), os.path.join(work, "other.dat"))
    check(p.returncode == 0 and "NOT ALIGNED" in p.stdout,
          "a host sharing no collective with the others is said not to be aligned")

    p = run(hvn, "--json", os.path.join(plain, "host0.dat"))
    check(p.returncode == 0 and json.loads(p.stdout)["schema_version"] == 1,
          "one trace file is correlated alone, as before (schema 1)")
    p = run(hvn, os.path.join(plain, "host0.dat"), os.path.join(plain, "host1.dat"),
            "--nccl", os.path.join(work, "other.dat"))
    check(p.returncode == 2 and "one host's trace" in p.stderr,
          "--nccl with many hosts' traces is refused (exit 2)")
    p = run(hvn, os.path.join(work, "empty-dir-that-is-not-there"), os.path.join(plain, "host0.dat"))
    check(p.returncode == 3, f"a missing trace among many: exit 3 ({p.returncode})")
    pictures(hvn, work)


def trace_events(path):
    """The Chrome trace events of @path, or None if it is not JSON."""
    try:
        with open(path) as f:
            return json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError):
        return None


def pictures(hvn, work):
    """--perfetto over many hosts, over one, and report --perfetto: valid
    JSON whatever the names hold, named tracks, the culprit's arrow."""
    d = os.path.join(work, "picture")
    weird = b'we"ird\\q'                # a quote and a backslash
    job = jobsim.Job([jobsim.Host(0), jobsim.Host(1, err=2 * 10**9)], 1)
    job.comm("dp", [0, 1])
    for s in range(40):
        if s == 10:
            job.noise(0, 3, job.t[0] + 100_000, 2_000_000, kind="storm", irq=40, name=weird)
        job.coll("dp", "AllReduce", 1 << 24, compute=2_000_000,
                 stuck=(1, 80_000_000) if s == 25 else None)
    job.write(d)
    out = os.path.join(work, "picture.json")
    p = run(hvn, "--perfetto", out, d)
    ev = trace_events(out) if p.returncode == 0 else None
    if not check(ev is not None, f"correlate --perfetto over two hosts writes JSON (exit {p.returncode})"):
        print("  " + p.stderr[-500:])
        return
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    host = {v: k for k, v in procs.items()}
    slices = [e for e in ev if e["ph"] == "X"]
    ncoll = sum(1 for e in slices if e["tid"] < 1000000)
    check({"host0", "host1"} <= set(procs.values()) and
          tracks.get((host["host0"], 0)) == "rank 0" and tracks.get((host["host1"], 1)) == "rank 1" and
          any(v.startswith("CPU ") for (pid, _), v in tracks.items() if pid == host["host1"]) and
          ncoll == 80,
          f"... a process per host, a named track per rank and per CPU, every collective ({ncoll} of 80)")
    storm = [e["name"] for e in slices if e["name"].startswith("storm ")]
    check(storm == ['storm we"ird\\q'],
          f"... an IRQ named with a quote and a backslash comes back exactly ({storm})")
    flows = [e for e in ev if e["ph"] in ("s", "f")]
    src = [e for e in flows if e["ph"] == "s"]
    dst = [e for e in flows if e["ph"] == "f"]
    check(src and len(src) == len(dst) and all(e["pid"] == host["host1"] and
                                                e["tid"] >= 1000000 for e in src) and
          all(e["pid"] == host["host0"] and e["tid"] == 0 for e in dst),
          f"... arrows from the paused host's noise to the rank that waited ({len(src)})")
    one = os.path.join(work, "picture-one.json")
    p = run(hvn, "--perfetto", one, os.path.join(d, "host0.dat"))
    ev = trace_events(one) if p.returncode == 0 else None
    check(ev is not None and ['storm we"ird\\q'] ==
          [e["name"] for e in ev if e["ph"] == "X" and e["name"].startswith("storm ")],
          "correlate --perfetto of one host: valid JSON, the storm's name exact")
    noise = os.path.join(work, "noise.json")
    r = subprocess.run([hvn, "report", "--perfetto", noise, os.path.join(d, "host1.dat")],
                       capture_output=True, text=True, env=hvntest.sanitizer_env())
    ev = trace_events(noise) if r.returncode == 0 else None
    check(ev is not None and
          {e["name"] for e in ev if e["ph"] == "X"} == {"lost"} and
          {e["args"]["name"] for e in ev if e.get("name") == "thread_name"} ==
          {"CPU 0", "CPU 1", "CPU 2", "CPU 3"},
          f"report --perfetto: a host's noise without NCCL records, a track per CPU (exit {r.returncode})")
    # Every kind of noise, on its CPU's track: as many as report counts.
    every = os.path.join(work, "every.dat")
    synth_events.write(every, 1)
    r = subprocess.run([hvn, "report", "--perfetto", noise, every], capture_output=True,
                       text=True, env=hvntest.sanitizer_env())
    ev = trace_events(noise) if r.returncode == 0 else []
    rep = json.loads(subprocess.run([hvn, "report", "--json", every], capture_output=True,
                                    text=True, check=True).stdout)["reports"][0]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    got, want = {}, {}
    for e in ev:
        if e["ph"] in ("X", "i"):
            kind = {"lost": "lost_events", "steal": "steal_events", "storm": "storms",
                    "IRQ": "migrations_in"}.get(e["name"].split()[0], e["name"])
            cpu = names.get((e["pid"], e["tid"]), "?")
            got[(cpu, kind)] = got.get((cpu, kind), 0) + 1
    for c in rep["cpus"]:
        for k in ("lost_events", "steal_events", "storms", "migrations_in"):
            if c[k]:
                want[(f"CPU {c['cpu']}", k)] = c[k]
    check(got == want and len(want) >= 12,
          f"report --perfetto: lost, steal, storms and IRQ moves, each on its CPU's named track, "
          f"as many as report counts ({sum(got.values())} of {sum(want.values())})")
    if got != want:
        print(f"  perfetto {sorted(got.items())}\n  report {sorted(want.items())}")
    r = subprocess.run([hvn, "report", "--perfetto", noise, os.path.join(d, "host0.dat"),
                        os.path.join(d, "host1.dat")], capture_output=True, text=True)
    check(r.returncode == 2 and "--perfetto reads one file" in r.stderr,
          f"report --perfetto of two files is refused (exit {r.returncode})")


if __name__ == "__main__":
    main()
