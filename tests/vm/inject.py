"""Host-side hypervisor noise for the VM tests, and the judge of the
guest's hvnoise:lost events against it (detectors.py, soak.py).

The guest asks for each injection on its console, "HVN-DO SEQ pause|hog
MS SETTLE_MS", and waits on its second serial port (tests/vm/guest-lib.sh), which
serve() answers with "SEQ MEASURED_MS" once the injection is done.  The
guest then prints "HVN-WIN SEQ T0 T1 SEQ MEASURED_MS", the window (its
CLOCK_MONOTONIC seconds, 10 ms steps) it waited in.

A pause stops the whole QEMU process with SIGSTOP/SIGCONT (every vCPU
loses the time; QMP "stop" would stop the guest's clocks too and hide
it); a hog takes vCPU 1's host core with a SCHED_FIFO spinner (only
vCPU 1 loses it).
"""
import os
import re
import signal
import socket
import statistics
import subprocess
import time

SLACK_NS = 20_000_000    # a window's edges: the guest's clock has 10 ms steps

# What the host saw, for the judge: (host ns, host steal ns, {vCPU: run
# delay ns}) every poll, and the host time each injection began.
host_samples = []
host_inject = {}


def host_sample(pid):
    """This host's steal (it may be a VM itself) and each QEMU vCPU
    thread's time spent runnable but not running (schedstat)."""
    steal = 0
    with open("/proc/stat") as f:
        v = f.readline().split()
        steal = int(v[8]) * 10_000_000 if len(v) > 8 else 0   # USER_HZ=100
    delay = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                comm = open(f"/proc/{pid}/task/{tid}/comm").read()
                m = re.match(r"CPU (\d+)/", comm)
                if m:
                    delay[int(m.group(1))] = int(
                        open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[1])
            except (OSError, IndexError, ValueError):
                pass
    except OSError:
        pass
    host_samples.append((time.monotonic_ns(), steal, delay))


def qemu_args(sockpath):
    """QEMU arguments for the guest's ttyS1, answered through @sockpath."""
    return (f"-chardev socket,id=ack,path={sockpath},server=on,wait=off "
            f"-device isa-serial,chardev=ack")


def qemu_threads(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(tid)] = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
        except OSError:
            pass
    return out


def pause(pid, ms):
    t0 = time.monotonic_ns()
    os.kill(pid, signal.SIGSTOP)
    while time.monotonic_ns() - t0 < ms * 1_000_000:
        pass
    os.kill(pid, signal.SIGCONT)
    return (time.monotonic_ns() - t0) / 1e6


def hog(pid, hogbin, ms):
    """vCPU 1's thread alone on host core 1, the rest on core 0, while the
    spinner takes core 1 for @ms; every thread free again after."""
    threads = qemu_threads(pid)
    vcpu1 = [t for t, c in threads.items() if c.startswith("CPU 1/")]
    if not vcpu1:
        raise RuntimeError("no 'CPU 1/...' thread in QEMU")
    for tid in threads:
        os.sched_setaffinity(tid, {1} if tid == vcpu1[0] else {0})
    try:
        out = subprocess.run([hogbin, "1", str(ms), "0", "1"], capture_output=True,
                             text=True, check=True).stdout
    finally:
        for tid in threads:
            try:
                os.sched_setaffinity(tid, set(range(os.cpu_count())))
            except OSError:
                pass
    m = re.search(r"burst \d+ on core \d+: ([0-9.]+) ms", out)
    return float(m.group(1)) if m else 0.0


def serve(log, sockpath, pidfile, proc, hogbin, on_line=None):
    """Answer the guest's HVN-DO requests until QEMU exits.  @on_line(line,
    pid) sees every other console line (the marker-driven injections)."""
    conn = None
    for _ in range(600):
        if proc.poll() is not None:
            return
        try:
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(sockpath)
            break
        except OSError:
            conn = None
            time.sleep(0.05)
    pos, buf = 0, ""
    while proc.poll() is None:
        try:
            with open(log, errors="replace") as f:
                f.seek(pos)
                chunk = f.read()
                pos = f.tell()
        except FileNotFoundError:
            chunk = ""
        buf += chunk
        lines = buf.split("\n")
        buf = lines.pop()
        for line in lines:
            m = re.match(r"HVN-DO (\d+) (pause|hog) (\d+)(?: (\d+))?", line)
            if not m:
                if on_line:
                    on_line(line, int(open(pidfile).read()))
                continue
            pid = int(open(pidfile).read())
            ms = int(m.group(3))
            time.sleep(int(m.group(4) or 0) / 1000)
            host_inject[int(m.group(1))] = time.monotonic_ns()
            try:
                got = pause(pid, ms) if m.group(2) == "pause" else hog(pid, hogbin, ms)
            except (RuntimeError, subprocess.CalledProcessError) as e:
                print(f"# injection {m.group(1)} failed: {e}", flush=True)
                got = 0.0
            if conn:
                conn.sendall(f"{m.group(1)} {got:.3f}\n".encode())
        try:
            host_sample(int(open(pidfile).read()))
        except (OSError, ValueError):
            pass
        if conn:
            try:
                conn.setblocking(False)
                conn.recv(4096)       # whatever the guest's tty echoes
            except (BlockingIOError, OSError):
                pass
        time.sleep(0.02)


def events(console, tag):
    """The LOST lines the guest printed under HVN-EVENTS @tag, or None."""
    m = re.search(rf"HVN-EVENTS {re.escape(tag)}\n(.*?)HVN-END-EVENTS", console, re.S)
    if not m:
        return None
    evs = []
    for line in m.group(1).splitlines():
        f = dict(re.findall(r"(\w+)=(-?\d+)", line))
        if line.startswith("LOST") and "cpu" in f and "start" in f:
            evs.append({k: int(v) for k, v in f.items()})
    return evs


def windows(console, tag):
    """The injections whose events the guest printed under HVN-EVENTS @tag
    (the first HVN-EVENTS after them): seq -> (what, ms asked, ms injected,
    t0 ns, t1 ns)."""
    req = {int(s): (w, int(ms)) for s, w, ms in
           re.findall(r"^HVN-DO (\d+) (pause|hog) (\d+)", console, re.M)}
    out = {}
    for m in re.finditer(r"^HVN-WIN (\d+) ([0-9.]+) ([0-9.]+) \d+ ([0-9.]+)", console, re.M):
        nxt = re.compile(r"^HVN-EVENTS (\S+)", re.M).search(console, m.end())
        if not nxt or nxt.group(1) != tag:
            continue
        s = int(m.group(1))
        w, ms = req[s]
        out[s] = (w, ms, float(m.group(4)), float(m.group(2)) * 1e9, float(m.group(3)) * 1e9)
    return out


def host_delay(e, off):
    """ms event @e's vCPU thread spent runnable but not running on this
    host, around the event; 0 without samples."""
    if off is None:
        return 0.0
    a, b = e["start"] + off - 50_000_000, e["start"] + e["duration"] + off + 50_000_000
    win = [x for x in host_samples if a <= x[0] <= b]
    if len(win) < 2:
        return 0.0
    return (win[-1][2].get(e["cpu"], 0) - win[0][2].get(e["cpu"], 0)) / 1e6


def host_context(e, off):
    """What the host saw around guest event @e (guest-to-host clock offset
    @off, from the injections: about 20 ms exact)."""
    if off is None or not host_samples:
        return ""
    a, b = e["start"] + off - 50_000_000, e["start"] + e["duration"] + off + 50_000_000
    win = [x for x in host_samples if a <= x[0] <= b]
    if len(win) < 2:
        return " (host: no samples)"
    steal = (win[-1][1] - win[0][1]) / 1e6
    delay = {c: (win[-1][2].get(c, 0) - win[0][2].get(c, 0)) / 1e6 for c in win[0][2]}
    return (f" (host around it: steal {steal:.0f} ms, vCPU threads waiting to run " +
            ", ".join(f"cpu{c} {d:.1f} ms" for c, d in sorted(delay.items())) + ")")


def tol(ms):
    return max(0.2 * ms, 2.0)


def judge(source, wins, evs, ncpu, check):
    """Every injection must give, on every vCPU it stopped (all for a
    pause, vCPU 1 for a hog), one lost event inside its window within 20%
    or 2 ms of what was injected: no tolerance for misses.  Events anywhere
    else are judged on their own: real stops that were not injected are
    told apart and printed (vCPU 0 stopped for a hog's length with vCPU 1,
    waiting on QEMU's big lock; every vCPU stopped at once, alike, outside
    any injection: QEMU or this host; a vCPU whose thread waited on this
    host's run queue for at least half the event), any other is an
    over-report.  Prints
    per-CPU recall and the error per injection size; returns
    ({seq: {cpu: ms}}, seen, vCPU-injections)."""
    per_cpu = {c: [0, 0] for c in range(ncpu)}
    err, misses, extra, coupled, seen = {}, [], [], [], {}
    used = set()
    for seq, (what, ms, got, t0, t1) in sorted(wins.items()):
        cpus = range(ncpu) if what == "pause" else [1]
        inside = [e for e in evs if t0 - SLACK_NS <= e["start"] <= t1 + SLACK_NS]
        used.update(id(e) for e in inside)
        seen[seq] = {}
        for c in range(ncpu):
            mine = [e["duration"] / 1e6 for e in inside if e["cpu"] == c]
            if c not in cpus:
                # A vCPU waiting for QEMU's big lock, held by the hogged
                # vCPU's thread, loses the hog's time with it.
                if len(mine) == 1 and abs(mine[0] - got) <= tol(got):
                    coupled.append(f"{what} {got:.1f} ms #{seq}: cpu{c} {mine[0]:.2f}")
                elif mine:
                    extra.append(f"{what} {got:.1f} ms #{seq}: cpu{c} " +
                                 ", ".join(f"{d:.2f}" for d in mine))
                continue
            per_cpu[c][1] += 1
            if mine:
                seen[seq][c] = max(mine)
            if len(mine) == 1 and abs(mine[0] - got) <= tol(got):
                per_cpu[c][0] += 1
                err.setdefault((what, ms), []).append(mine[0] - got)
            else:
                misses.append(f"{what} {got:.1f} ms #{seq}: cpu{c} " +
                              (", ".join(f"{d:.2f}" for d in mine) if mine else "nothing"))
    offs = sorted(host_inject[s] - w[3] for s, w in wins.items() if s in host_inject)
    off = offs[len(offs) // 2] if offs else None
    # Outside the injections: the whole VM stopped (every vCPU at once,
    # alike: QEMU or this host, not injected), or a false report.
    rest = sorted((e for e in evs if id(e) not in used), key=lambda e: e["start"])
    whole, hosts = [], []
    while rest:
        g = [e for e in rest if e["start"] - rest[0]["start"] <= 2_000_000]
        d = [e["duration"] / 1e6 for e in g]
        if (sorted(e["cpu"] for e in g) == list(range(ncpu)) and
                max(d) - min(d) <= tol(min(d))):
            whole.append(f"{min(d):.2f}..{max(d):.2f} ms at {g[0]['start'] / 1e9:.3f} s" +
                         host_context(g[0], off))
        else:
            for e in g:
                line = (f"cpu{e['cpu']} {e['duration'] / 1e6:.2f} ms at {e['start'] / 1e9:.3f} s" +
                        host_context(e, off))
                # Its vCPU thread waited on this host's run queue for at
                # least half of it: this host took the time.
                if host_delay(e, off) >= e["duration"] / 2e6:
                    hosts.append(line)
                else:
                    extra.append("outside any injection: " + line)
        rest = rest[len(g):]
    n = sum(t for _, t in per_cpu.values())
    hit = sum(h for h, _ in per_cpu.values())
    print(f"  {source}: {len(wins)} injections, {n} vCPU-injections seen {hit}: " +
          ", ".join(f"cpu{c} {h}/{t}" for c, (h, t) in per_cpu.items()), flush=True)
    for (what, ms), es in sorted(err.items()):
        es.sort()
        print(f"    {what:5} {ms:4} ms: n={len(es)} error ms min {es[0]:+.2f} "
              f"median {statistics.median(es):+.2f} max {es[-1]:+.2f}")
    for m in misses[:20]:
        print(f"    MISS {m}")
    for x in extra[:20]:
        print(f"    EXTRA {x}")
    for x in coupled[:20]:
        print(f"    WITH THE HOG {x}")
    for x in whole[:20]:
        print(f"    WHOLE VM STOPPED, NOT INJECTED {x}")
    for x in hosts[:20]:
        print(f"    THE HOST TOOK IT, NOT INJECTED {x}")
    check(n and not misses, f"{source}: every injection seen on every vCPU it stopped, "
          f"within 20%/2 ms ({hit}/{n} vCPU-injections)")
    check(not extra, f"{source}: no lost events but the injections' and real stops "
          f"({len(extra)} others; {len(coupled)} vCPUs stopped with a hog, "
          f"{len(whole)} whole-VM stops, {len(hosts)} taken by this host)")
    return seen, hit, n
