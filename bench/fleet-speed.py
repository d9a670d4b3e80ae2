#!/usr/bin/env python3
"""What correlate over many hosts costs: each host's --summary, and the
fleet join of the summaries, timed with their peak memory.

A job of HOSTS hosts x RANKS ranks running RATE all-reduces a second for
SECONDS (the incident window), synthesized in the recordings' formats
(tests/host/fleet_synth.py: host1's clock 2 s off, an arrival stall, an
in-flight stall and a quiet one).  One host's trace at a time is written,
summarized and removed, so the disk holds one trace and the summaries.
The join is run over the first quarter, half and all of the hosts (is it
linear?) and must name the injected culprits.

usage: fleet-speed.py [--keep DIR] HVNOISE [HOSTS [RANKS [SECONDS [RATE]]]]
       (default 128 8 60 100: a +-30 s window of 128 hosts)
--keep DIR keeps the summaries in DIR, and takes them from there when a
run of the same job left them (the join alone, timed again).
Each join runs three times after the summaries are on disk (sync: no
writeback of them in its time); the median wall time and the largest
peak are printed.
Prints a table; exits 1 if a join fails or names a wrong culprit.  Needs
GNU time (/usr/bin/time, Debian's "time") for the peak memory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "host"))
import fleet_synth  # noqa: E402


def peak_rss(cmd, outfile):
    """(exit code, wall s, peak RSS MiB) of @cmd, its stdout to @outfile:
    GNU time's count (a child of this process would inherit its
    high-water mark through fork, so rusage here would not do)."""
    tf = outfile + ".time"
    t0 = time.monotonic()
    with open(outfile, "wb") as o:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf] + cmd, stdout=o,
                           stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    if p.returncode:
        sys.stderr.write(p.stderr.decode(errors="replace")[-2000:])
    try:
        kb = int(open(tf).read().split()[-1])
    except (OSError, ValueError, IndexError):
        kb = 0
    return p.returncode, wall, kb / 1024


def main():
    args = sys.argv[1:]
    keep = None
    if args[:1] == ["--keep"]:
        keep, args = args[1], args[2:]
    hvn = args[0]
    hosts, ranks, secs, rate = (int(a) for a in (args[1:] + ["128", "8", "60", "100"][len(args) - 1:])[:4])
    ncoll = secs * rate
    period = 10**9 // rate
    work = tempfile.mkdtemp(prefix="hvn-fleet-bench-")
    sums = keep or os.path.join(work, "sum")
    os.makedirs(sums, exist_ok=True)
    job = "%d %d %d %d\n" % (hosts, ranks, secs, rate)
    stamp = os.path.join(sums, "job")
    reuse = os.path.exists(stamp) and open(stamp).read() == job
    fleet_synth.DRIFT.clear()
    gen = summ = 0.0
    rss = tsize = ssize = 0
    try:
        for h in range(0 if reuse else hosts):
            t0 = time.monotonic()
            trace = os.path.join(work, "host%d.dat" % h)
            fleet_synth.write_host(trace, h, fleet_synth.host_events(h, hosts, ranks, ncoll, 1, period))
            gen += time.monotonic() - t0
            rc, wall, mib = peak_rss([hvn, "correlate", "-q", "--summary",
                                      os.path.join(sums, "host%03d.sum" % h), trace],
                                     os.path.join(work, "summary.out"))
            if rc:
                print(f"correlate --summary of host {h}: exit {rc}")
                return 1
            summ += wall
            rss = max(rss, mib)
            tsize += os.path.getsize(trace)
            ssize += os.path.getsize(os.path.join(sums, "host%03d.sum" % h))
            os.unlink(trace)
        if not reuse:
            with open(stamp, "w") as f:
                f.write(job)
        os.sync()
        print(f"# {hosts} hosts x {ranks} ranks, {rate} all-reduces/s for {secs} s "
              f"({ncoll * ranks} collectives a host); synthesizing took {gen:.0f} s"
              + (f" (summaries of an earlier run: {sums})" if reuse else ""))
        print(f"{'step':<34} {'wall s':>8} {'peak MiB':>9}")
        if not reuse:
            print(f"{'--summary, one host (mean)':<34} {summ / hosts:8.3f} {rss:9.1f}")
            print(f"{'  trace -> summary, one host':<34} {tsize / hosts / 2**20:7.1f}M -> {ssize / hosts / 2**20:.1f}M")
        bad = 0
        want = fleet_synth.truth(hosts, ranks)["stalls"]
        for n in sorted({max(2, hosts // 4), max(2, hosts // 2), hosts}):
            d = os.path.join(work, "join%d" % n)
            os.makedirs(d)
            for h in range(n):
                os.symlink(os.path.join(sums, "host%03d.sum" % h), os.path.join(d, "host%03d.sum" % h))
            runs = [peak_rss([hvn, "correlate", "-q", "--json", d], d + ".json") for _ in range(3)]
            rc = max(r[0] for r in runs)
            wall = sorted(r[1] for r in runs)[1]
            mib = max(r[2] for r in runs)
            ok = rc == 0
            if ok:
                doc = json.load(open(d + ".json"))
                got = {s["seq"]: s["culprit"] and (s["culprit"]["host"], s["culprit"]["rank"])
                       for s in doc["job_stalls"]}
                for w in want:
                    if w["host"] and int(w["host"][4:]) >= n:
                        continue
                    g = got.get(w["seq"], "none")
                    if w["host"] is None:
                        ok &= g is None
                    elif w["rank"] is None:     # a whole host: any of its ranks
                        ok &= bool(g) and g != "none" and g[0] == w["host"]
                    else:
                        ok &= g == (w["host"], w["rank"])
            bad += not ok
            print(f"{'join of %d hosts' % n:<34} {wall:8.3f} {mib:9.1f}  {'culprits right' if ok else 'WRONG'}")
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
