#!/usr/bin/env python3
"""A multi-host training job simulated rank by rank, causally, written as
one trace.dat per host, for hvnoise correlate's verdicts over many hosts
(tests/host/scenarios.py).

Unlike fleet_synth.py, nothing here is placed by hand: every rank runs the
same program (tensor-parallel all-reduces inside its host, data-parallel
all-gathers and reduce-scatters across hosts, pipeline sends and receives),
a collective ends when its last rank is in and its transfer is done, and
every rank goes on from there.  What is injected is what happens to hosts
(a paused VM, a slow rank, a slow GPU, an IRQ storm), and the delays it
causes propagate to whoever waited, as in a real job.  Each host's clocks
have their own base, CLOCK_REALTIME error, drift and steps.

Times are true nanoseconds; host h's CLOCK_MONOTONIC is
(true - base) * (1 + drift); its CLOCK_REALTIME is mono + base + error,
plus any step after the step's time.
"""
import os
import zlib

import synth_events as se

EPOCH = 1_796_000_000 * 10**9
T0 = 100 * 10**9
FN = dict(AllGather=1, AllReduce=2, AlltoAll=3, ReduceScatter=8, Send=11, Recv=6)


def mix(*v):
    """A fixed pseudo-random 0..2^32-1 from @v."""
    x = 0x9E3779B9
    for a in v:
        x = ((x ^ (a & 0xFFFFFFFF)) * 2654435761 + 0x7F4A7C15) & 0xFFFFFFFF
        x ^= x >> 15
    return x


class Host:
    def __init__(self, h, err=0, drift=0.0, step=None, seen=True, irq_cpus=(3,), name=None):
        self.h = h
        self.name = name or "host%d" % h      # its host name in the recording
        self.meta_extra = b""                  # more of the recording's meta lines
        self.irq_flags = 0                     # its IRQ records' "why" (HVN_IRQ_*)
        self.base = 10**9 * (7 + 13 * (h % 7))
        self.err = err                # CLOCK_REALTIME's error
        self.drift = drift            # rate error (50e-6: 50 ppm)
        self.step = step              # (true time, ns): CLOCK_REALTIME steps
        self.seen = seen              # the detectors ran there
        self.irq_cpus = irq_cpus
        self.events = []              # (true ts, cpu buffer, name, values)
        self.pauses = []              # (t0, t1) true time the host stood still

    def mono(self, t):
        return int((t - self.base) * (1 + self.drift))

    def real(self, t):
        r = self.mono(t) + self.base + self.err
        if self.step and t >= self.step[0]:
            r += self.step[1]
        return r


class Job:
    """@hosts x @ranks ranks; comms: name -> list of global ranks."""

    def __init__(self, hosts, ranks, seed=1):
        self.hosts = hosts
        self.R = ranks
        self.N = len(hosts) * ranks
        self.seed = seed
        self.t = [T0] * self.N
        self.comms = {}
        self.seq = {}                 # (comm, func) -> next seq
        self.op_id = [0] * self.N
        self.ncoll = 0                # collectives so far: p2p jitter's salt
        self.cid = {}

    def host_of(self, g):
        return self.hosts[g // self.R]

    def comm(self, name, members):
        self.comms[name] = list(members)
        # The same ids every run (str's hash() is salted per process).
        self.cid[name] = (mix(zlib.crc32(name.encode()), 7) << 32) | mix(len(name), *members)
        for g in members:
            hs = self.host_of(g)
            m = hs.mono(T0 - 5 * 10**9)
            hs.events.append((T0 - 5 * 10**9, 0, "raw_data", se.nccl(1, se.NCCL_COMM.pack(
                self.cid[name], members.index(g), len(members),
                len(self.hosts), 1000 + g % self.R, m, hs.real(T0 - 5 * 10**9),
                b"jobsim", b"host%d" % hs.h))))

    def run_until(self, g, t0, dur):
        """Rank @g works @dur from @t0: its host's pauses stop it."""
        hs = self.host_of(g)
        t, left = t0, dur
        for a, b in sorted(hs.pauses):
            if b <= t:
                continue
            if a >= t + left:
                break
            if a > t:
                left -= a - t
            t = b
        return t + left

    def pause(self, h, t0, d, cpus=(0, 1, 2, 3)):
        """Host @h's VM stopped for @d from @t0: every vCPU loses it."""
        hs = self.hosts[h]
        hs.pauses.append((t0, t0 + d))
        if hs.seen:
            for cpu in cpus:
                hs.events.append((t0 + d + 1000, cpu, "lost", dict(
                    cpu=cpu, start=hs.mono(t0), duration=hs.mono(t0 + d) - hs.mono(t0),
                    irq_ns=0, steal_ns=0, unexplained_ns=hs.mono(t0 + d) - hs.mono(t0))))

    def noise(self, h, cpu, t0, d, kind="lost", irq=40, name=b"mlx5_comp0"):
        hs = self.hosts[h]
        if not hs.seen:
            return
        if kind == "lost":
            hs.events.append((t0 + d + 1000, cpu % se.NCPU, "lost", dict(
                cpu=cpu, start=hs.mono(t0), duration=d, irq_ns=0, steal_ns=0,
                unexplained_ns=d)))
        else:
            hs.events.append((t0 + d + 1000, cpu % se.NCPU, "irq_storm", dict(
                cpu=cpu, source=0, irq=irq, start=hs.mono(t0), duration=d,
                count=d // 20_000, peak_rate=50_000, name=name)))

    def coll(self, name, func, nbytes, compute=1_000_000, transfer=500_000,
             late=None, slow=0, stuck=None, hold=None):
        """One collective of comm @name.  late: {rank: extra compute};
        slow: its transfer takes that much longer (a slow GPU or link);
        stuck: (host, d): that host's VM stops right after its own ranks
        finished, its last data still inside, for d; hold: (host, d): that
        host's VM stops for d during the transfer."""
        members = self.comms[name]
        key = (name, func)
        seq = self.seq.get(key, 0)
        self.seq[key] = seq + 1
        arr = {}
        for g in members:
            c = compute + mix(self.seed, seq, g, 1) % 40_000
            c += (late or {}).get(g, 0)
            arr[g] = self.run_until(g, self.t[g], c)
        last = max(arr.values())
        tr = transfer + slow
        end = {g: last + tr for g in members}
        if hold:
            h, d = hold
            t0 = last + tr // 3
            self.pause(h, t0, d)
            end = {g: e + d for g, e in end.items()}
        if stuck:
            h, d = stuck
            t0 = last + tr + 30_000
            self.pause(h, t0, d)
            end = {g: (e if g // self.R == h else t0 + d + 200_000)
                   for g, e in end.items()}
        for g in members:
            e = end[g] + mix(self.seed, seq, g, 2) % 6_000
            self.record(g, name, FN[func], seq, arr[g], e, nbytes, members)
            self.t[g] = e
        self.ncoll += 1
        return seq

    def p2p(self, name, src, dst, nbytes, compute=300_000, transfer=400_000):
        members = self.comms[name]
        a = {g: self.run_until(g, self.t[g], compute + mix(self.seed, g, self.ncoll) % 20_000)
             for g in (src, dst)}
        end = max(a.values()) + transfer
        for g, fn, peer in ((src, "Send", dst), (dst, "Recv", src)):
            self.record(g, name, FN[fn], None, a[g], end, nbytes, members,
                        peer=members.index(peer))
            self.t[g] = end

    def record(self, g, name, fn, seq, a, e, nbytes, members, peer=-1):
        hs = self.host_of(g)
        self.op_id[g] += 1
        op = self.op_id[g] * 4096 + g
        rank = members.index(g)
        pcpu, ecpu = 1 + g % 2, 3
        ma, me = hs.mono(a), hs.mono(e)
        hs.events.append((a + 20_000, ecpu, "raw_data", se.nccl(2, se.NCCL_COLL.pack(
            self.cid[name], op,
            0xFFFFFFFFFFFFFFFF if seq is None else seq, ma, ma + 20_000, nbytes // 4,
            rank, 4000 + g, ecpu, peer, fn, 4, 2, int(seq is None), b"RING", b"SIMPLE"))))
        hs.events.append((e, pcpu, "raw_data", se.nccl(3, se.NCCL_PROXY.pack(
            self.cid[name], op,
            0xFFFFFFFFFFFFFFFF if seq is None else seq, ma + 30_000, me,
            0, 0, 0, 0, 0, 0, rank, 5000 + g, pcpu, pcpu, 1, 8, 4096, 0, 1, 2, 0))))

    def write(self, d, only=None):
        os.makedirs(d, exist_ok=True)
        for hs in self.hosts:
            if only is None or hs.h in only:
                write_host(os.path.join(d, "host%d.dat" % hs.h), hs)


def write_host(path, hs):
    _, _, fmts = se.fixture()
    cpus = [se.Cpu() for _ in range(se.NCPU)]
    first_t = min(e[0] for e in hs.events) - 10**6
    last_t = max(e[0] for e in hs.events)
    if hs.seen:
        watch = [dict(kind=0, why=3, cpu=1, irq=-1, dev=0, node=-1, nirqs=0, name=b""),
                 dict(kind=0, why=3, cpu=2, irq=-1, dev=0, node=-1, nirqs=0, name=b"")]
        for i, c in enumerate(hs.irq_cpus):
            watch.append(dict(kind=2, why=hs.irq_flags, cpu=c, irq=40 + i, dev=0x1700, node=-1,
                              nirqs=len(hs.irq_cpus), name=b"mlx5_comp%d" % i))
        for i, w in enumerate(watch):
            cpus[0].add(hs.mono(first_t), se.payload(fmts["watch"], dict(
                gen=1, idx=i, count=len(watch), **w)))
    se.add_events(cpus, fmts, hs.events, hs.mono)
    for c in cpus:
        c.flush()
    meta = b"hvnoise-record jobsim\nhost %s\nkernel 6.1.0-synth\nsource %s\n" % (
        hs.name.encode(), b"module" if hs.seen else b"kernel") + hs.meta_extra
    n = 8
    for i in range(n + 1):
        t = first_t + (last_t - first_t) * i // n
        meta += b"clock %d %d\n" % (hs.mono(t), hs.real(t))
    se.write_file(path, cpus, se.meta_option(meta))
