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

usage: fleet-speed.py HVNOISE [HOSTS [RANKS [SECONDS [RATE]]]]
       (default 128 8 60 100: a +-30 s window of 128 hosts)
Prints a table; exits 1 if a join fails or names a wrong culprit.
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


def peak_rss(cmd):
    """(exit code, stdout, wall s, peak RSS MiB) of @cmd, its own rusage."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = b""
    while True:
        chunk = p.stdout.read(1 << 16)
        if not chunk:
            break
        out += chunk
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc:
        sys.stderr.write(err.decode(errors="replace")[-2000:])
    return rc, out, wall, ru.ru_maxrss / 1024


def main():
    hvn = sys.argv[1]
    hosts, ranks, secs, rate = (int(a) for a in (sys.argv[2:] + ["128", "8", "60", "100"][len(sys.argv) - 2:])[:4])
    ncoll = secs * rate
    period = 10**9 // rate
    work = tempfile.mkdtemp(prefix="hvn-fleet-bench-")
    sums = os.path.join(work, "sum")
    os.makedirs(sums)
    fleet_synth.DRIFT.clear()
    gen = summ = 0.0
    rss = tsize = ssize = 0
    try:
        for h in range(hosts):
            t0 = time.monotonic()
            trace = os.path.join(work, "host%d.dat" % h)
            fleet_synth.write_host(trace, h, fleet_synth.host_events(h, hosts, ranks, ncoll, 1, period))
            gen += time.monotonic() - t0
            rc, _, wall, mib = peak_rss([hvn, "-q", "correlate", "--summary",
                                         os.path.join(sums, "host%03d.sum" % h), trace])
            if rc:
                print(f"correlate --summary of host {h}: exit {rc}")
                return 1
            summ += wall
            rss = max(rss, mib)
            tsize += os.path.getsize(trace)
            ssize += os.path.getsize(os.path.join(sums, "host%03d.sum" % h))
            os.unlink(trace)
        print(f"# {hosts} hosts x {ranks} ranks, {rate} all-reduces/s for {secs} s "
              f"({ncoll * ranks} collectives a host); synthesizing took {gen:.0f} s")
        print(f"{'step':<34} {'wall s':>8} {'peak MiB':>9}")
        print(f"{'--summary, one host (mean)':<34} {summ / hosts:8.3f} {rss:9.1f}")
        print(f"{'  trace -> summary, one host':<34} {tsize / hosts / 2**20:7.1f}M -> {ssize / hosts / 2**20:.1f}M")
        bad = 0
        want = fleet_synth.truth(hosts, ranks)["stalls"]
        for n in sorted({max(2, hosts // 4), max(2, hosts // 2), hosts}):
            d = os.path.join(work, "join%d" % n)
            os.makedirs(d)
            for h in range(n):
                os.symlink(os.path.join(sums, "host%03d.sum" % h), os.path.join(d, "host%03d.sum" % h))
            rc, out, wall, mib = peak_rss([hvn, "-q", "correlate", "--json", d])
            ok = rc == 0
            if ok:
                doc = json.loads(out)
                got = {s["seq"]: s["culprit"] and (s["culprit"]["host"], s["culprit"]["rank"])
                       for s in doc["job_stalls"]}
                for w in want:
                    exp = w["host"] and (w["host"], w["rank"])
                    if w["host"] and int(w["host"][4:]) >= n:
                        continue
                    ok &= got.get(w["seq"], "none") == exp
            bad += not ok
            print(f"{'join of %d hosts' % n:<34} {wall:8.3f} {mib:9.1f}  {'culprits right' if ok else 'WRONG'}")
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
