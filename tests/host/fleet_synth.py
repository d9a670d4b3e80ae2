#!/usr/bin/env python3
"""Write one trace.dat per host of an NCCL-like job whose ranks span
several hosts, with known stalls, known culprits and known clock errors,
for hvnoise correlate over many hosts (tests/host/fleet.py, bench/).

A job of HOSTS hosts x RANKS ranks, one communicator, all-reduces every
PERIOD ms.  Each host's CLOCK_REALTIME is off the true time by its own
error (host 1 by +2 s: a broken NTP) and its CLOCK_MONOTONIC has its own
base.  Injected:

- an arrival stall: one rank of host B enters collective ARRIVE 30 ms late,
  its proxy CPU's vCPU taken by the hypervisor (hvnoise:lost) meanwhile;
- an in-flight stall: every rank enters collective INFLIGHT, one rank of
  host A's proxy thread makes no progress for 25 ms (hvnoise:lost, steal);
- a quiet stall: collective QUIET takes 20 ms longer on every rank with no
  host noise anywhere;
- a whole host late: every rank of host A enters collective HOSTLATE 40 ms
  late, the vCPUs of both its proxy CPUs taken meanwhile (a paused VM).

usage: fleet_synth.py DIR [HOSTS [RANKS [COLLS [SEED]]]]
Prints the truth as JSON: hosts, their clock errors, the stalls.
"""
import json
import os
import sys

import synth_events as se

COMM = 0xC0FFEE0012345678
PERIOD = 10_000_000
T0 = 100 * 10**9                     # true time of the first collective
EPOCH = 1_796_000_000 * 10**9        # CLOCK_REALTIME of true time 0
ARRIVE, INFLIGHT, QUIET, HOSTLATE = 150, 300, 450, 520
LATE, STUCK, SLOW, HOSTLATE_NS = 30_000_000, 25_000_000, 20_000_000, 40_000_000


DRIFT = {}                           # host: its oscillator's rate error


def host_clock(h):
    """(mono base, realtime error) of host @h: mono = true - base."""
    return 10**9 * (7 + 13 * (h % 7)), (2 * 10**9 if h == 1 else 37_000 * h)


def mono(h, t):
    """Host @h's CLOCK_MONOTONIC at true time @t: its own base and rate."""
    return int((t - host_clock(h)[0]) * (1 + DRIFT.get(h, 0)))


def real(h, m):
    """Host @h's CLOCK_REALTIME at its CLOCK_MONOTONIC @m (one rate: NTP
    slews both, and a broken one neither)."""
    base, err = host_clock(h)
    return EPOCH + m + base + err


def jitter(seed, i, h, r, salt, n):
    """A fixed pseudo-random 0..n-1 for collective @i of host @h's rank @r:
    each host's events are made alone, the same as with the others'."""
    x = (i * 1000003 + h * 7919 + r * 104729 + salt * 15485863 + seed * 31) & 0xFFFFFFFF
    x = (x * 2654435761) & 0xFFFFFFFF
    x ^= x >> 15
    return (x * 2246822519 & 0xFFFFFFFF) % n


def culprits(nhosts, nranks):
    return (1 % nhosts, nranks - 1), (0, min(1, nranks - 1))


def host_events(h, nhosts, nranks, ncoll, seed, period):
    """Host @h's events: (true ts, buffer CPU, event name, values)."""
    ev = []
    culprit_arrive, culprit_inflight = culprits(nhosts, nranks)
    for r in range(nranks):
        rank = h * nranks + r
        m = mono(h, T0 - 5 * 10**9)
        ev.append((T0 - 5 * 10**9, 0, "raw_data", se.nccl(1, se.NCCL_COMM.pack(
            COMM, rank, nhosts * nranks, nhosts, 1000 + r,
            m, real(h, m), b"fleet-job", b"host%d" % h))))
    pack_coll, pack_prox = se.NCCL_COLL.pack, se.NCCL_PROXY.pack
    for i in range(ncoll):
        t = T0 + i * period
        work = 1_000_000 + (STUCK if i == INFLIGHT else 0) + (SLOW if i == QUIET else 0)
        # Every rank arrives within 50 us, the late one later: all leave
        # together once the last is in.
        end = t + {ARRIVE: LATE, HOSTLATE: HOSTLATE_NS}.get(i, 50_000) + work
        for r in range(nranks):
            rank = h * nranks + r
            a = t + jitter(seed, i, h, r, 1, 50_000)
            if i == ARRIVE and (h, r) == culprit_arrive:
                a = t + LATE
            if i == HOSTLATE and h == 0:
                a = t + HOSTLATE_NS - jitter(seed, i, h, r, 3, 20_000)
            e = end + jitter(seed, i, h, r, 2, 6_000) - 3_000
            true_a = a
            # The records' times are the host's CLOCK_MONOTONIC.
            a, e = mono(h, a), mono(h, e)
            op = i * nranks + r + 1
            pcpu, ecpu = 1 + r % 2, 3
            ev.append((true_a + 20_000, ecpu, "raw_data", se.nccl(2, pack_coll(
                COMM, op, i, a, a + 20_000, 262144, rank, 4000 + r, ecpu, -1, 2, 4,
                2, 0, b"RING", b"SIMPLE"))))
            ev.append((end, pcpu, "raw_data", se.nccl(3, pack_prox(
                COMM, op, i, a + 30_000, e, 0, 0, 0, 0, 0, 0, rank, 5000 + r, pcpu,
                pcpu, 1, 8, 4096, 0, 1, 2, 0))))
        if i == ARRIVE and h == culprit_arrive[0]:
            r = culprit_arrive[1]
            s0 = t + 200_000
            d = LATE - 400_000
            ev.append((s0 + d, 1 + r % 2, "lost", dict(
                cpu=1 + r % 2, start=s0, duration=d, irq_ns=0, steal_ns=0,
                unexplained_ns=d)))
        if i == HOSTLATE and h == 0:
            for cpu in sorted({1 + r % 2 for r in range(nranks)}):
                s0 = t + 200_000
                d = HOSTLATE_NS - 400_000
                ev.append((s0 + d, cpu, "lost", dict(
                    cpu=cpu, start=s0, duration=d, irq_ns=0, steal_ns=0,
                    unexplained_ns=d)))
        if i == INFLIGHT and h == culprit_inflight[0]:
            r = culprit_inflight[1]
            s0 = t + 50_000 + 300_000
            d = STUCK - 600_000
            ev.append((s0 + d, 1 + r % 2, "lost", dict(
                cpu=1 + r % 2, start=s0, duration=d, irq_ns=0, steal_ns=d,
                unexplained_ns=0)))
    return ev


def truth(nhosts, nranks):
    ca, ci = culprits(nhosts, nranks)
    return dict(
        hosts=[dict(host="host%d" % h, clock_error_ns=host_clock(h)[1]) for h in range(nhosts)],
        stalls=[dict(seq=ARRIVE, cls="arrival", host="host%d" % ca[0],
                     rank=ca[0] * nranks + ca[1], cause="hypervisor"),
                # Ranks 1, 3, 5... share its proxy CPU: any of them, if several.
                dict(seq=INFLIGHT, cls="in-flight", host="host%d" % ci[0],
                     rank=ci[0] * nranks + ci[1] if nranks <= 3 else None, cause="hypervisor"),
                dict(seq=QUIET, cls="in-flight", host=None, rank=None, cause="none"),
                dict(seq=HOSTLATE, cls="arrival", host="host0", rank=None, cause="hypervisor")])


def write_host(path, h, events):
    _, _, fmts = se.fixture()
    cpus = [se.Cpu() for _ in range(se.NCPU)]
    watch = [dict(kind=0, why=3, cpu=1, irq=-1, dev=0, node=-1, nirqs=0, name=b""),
             dict(kind=0, why=3, cpu=2, irq=-1, dev=0, node=-1, nirqs=0, name=b""),
             dict(kind=0, why=2, cpu=3, irq=-1, dev=0, node=-1, nirqs=0, name=b"")]
    first = mono(h, min(e[0] for e in events) - 10**6)
    for i, w in enumerate(watch):
        cpus[0].add(first, se.payload(fmts["watch"], dict(gen=1, idx=i, count=len(watch), **w)))
    # Detector events' starts are true time here: on the host's clock.
    events = [(t, cpu, name, dict(vals, start=mono(h, vals["start"])) if "start" in vals else vals)
              for t, cpu, name, vals in events]
    se.add_events(cpus, fmts, events, lambda t: mono(h, t))
    for c in cpus:
        c.flush()
    last = mono(h, max(e[0] for e in events))
    meta = b"hvnoise-record synth\nhost host%d\nkernel 6.1.0-synth\nsource module\n" % h
    for m in (first, (first + last) // 2, last):
        meta += b"clock %d %d\n" % (m, real(h, m))

    se.write_file(path, cpus, se.meta_option(meta))


def write(d, nhosts=2, nranks=2, ncoll=600, seed=1, period=PERIOD, drift=None,
          only=None):
    """The hosts' traces in @d (only those in @only, if given); host h's
    oscillator off by drift[h] (a rate error: 50e-6 is 50 ppm)."""
    os.makedirs(d, exist_ok=True)
    DRIFT.clear()
    DRIFT.update(drift or {})
    for h in range(nhosts):
        if only is not None and h not in only:
            continue
        write_host(os.path.join(d, "host%d.dat" % h), h,
                   host_events(h, nhosts, nranks, ncoll, seed, period))
    return truth(nhosts, nranks)


if __name__ == "__main__":
    a = sys.argv[1:]
    t = write(a[0], *(int(x) for x in a[1:5]))
    json.dump(t, sys.stdout, indent=1)
    print()
