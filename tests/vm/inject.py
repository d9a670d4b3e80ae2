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

This host may be a VM itself, stopped now and then by its own hypervisor
for 10-20 ms with no steal reported (seen on the CI machines): every vCPU
of the test VM then loses the time, and the detectors rightly say so.
Witness runs tests/vm/tools/hoststops.c, a SCHED_FIFO thread on every
host CPU; a lost event is the host's when a host CPU its QEMU threads ran
on stopped then, for as long as the event says (stop_fits).  And a stop
of every host CPU at once of 20 ms or more must be seen on every vCPU, as
an injection.
"""
import bisect
import json
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import threading
import time

SLACK_NS = 20_000_000    # a window's edges: the guest's clock has 10 ms steps

# What the host saw, for the judge: (host ns, host steal ns, {vCPU: run
# delay ns}, {vCPU or "main": host CPU}) every poll (host_sample); each
# injection's (host ns it began, ms); the
# intervals each host CPU was stopped (hoststops), and how many CPUs it
# watched (0: no witness ran).
host_samples = []
host_inject = {}
host_stops = {}
host_ncpu = 0


class Witness:
    """tests/vm/tools/hoststops, running: start() returns one once it
    runs on every host CPU, or None (said) if it cannot."""

    def __init__(self, proc):
        self.proc = proc
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, stopsbin):
        global host_ncpu
        try:
            proc = subprocess.Popen([stopsbin], stdout=subprocess.PIPE, text=True)
        except OSError as e:
            print(f"# {stopsbin}: {e}", flush=True)
            return None
        ready = select.select([proc.stdout], [], [], 10)[0]
        line = proc.stdout.readline().split() if ready else []
        if line[:1] != ["ready"]:
            proc.kill()
            proc.wait()
            print(f"# {stopsbin} did not start", flush=True)
            return None
        host_ncpu = int(line[1])
        return cls(proc)

    def _read(self):
        for line in self.proc.stdout:
            v = line.split()
            if v[:1] == ["stop"]:
                host_stops.setdefault(int(v[1]), []).append((int(v[2]), int(v[3])))

    def stop(self):
        """Stop it; whether it ran to the end (else nothing it saw counts)."""
        global host_ncpu
        alive = self.proc.poll() is None
        self.proc.kill()
        self.proc.wait()
        self.thread.join()
        if not alive:
            host_ncpu = 0
        return alive


_common = (None, [])


def common_stops():
    """The intervals in which every host CPU was stopped at once."""
    global _common
    if not host_ncpu or len(host_stops) < host_ncpu:
        return []
    key = (host_ncpu, tuple(sorted((c, len(v)) for c, v in host_stops.items())))
    if _common[0] != key:
        lists = [sorted(v) for v in host_stops.values()]
        common = lists[0]
        for stops in lists[1:]:
            out, i = [], 0
            for x, y in common:     # both sorted: a merge, not a product
                while i < len(stops) and stops[i][1] <= x:
                    i += 1
                j = i
                while j < len(stops) and stops[j][0] < y:
                    u, v = stops[j]
                    if max(x, u) < min(y, v):
                        out.append((max(x, u), min(y, v)))
                    j += 1
            common = sorted(out)
        _common = (key, sorted(common))
    return _common[1]


def overlap(a, b, ivs):
    """ns of [a, b] inside the intervals @ivs (disjoint)."""
    return sum(max(0, min(b, v) - max(a, u)) for u, v in ivs)


def host_stopped(a, b):
    """ns of host time [a, b] in which every host CPU was stopped at once."""
    return overlap(a, b, common_stops())


def host_cpu_stopped(a, b):
    """{host CPU: ns of [a, b] it was stopped}."""
    return {c: overlap(a, b, st) for c, st in sorted(host_stops.items())}


def host_stop_summary():
    """One line on this host's stops over the run, for the log."""
    if not host_ncpu:
        return "no witness of this host's stops ran throughout"
    every = [(v - u) / 1e6 for u, v in common_stops()]
    per = ", ".join(f"cpu{c} {len(st)} (largest {max(v - u for u, v in st) / 1e6:.1f} ms)"
                    for c, st in sorted(host_stops.items()))
    return (f"this host stopped (wakeups 2 ms late or more): {per or 'never'}; every CPU at once "
            f"{len(every)} times" + (f", largest {max(every):.1f} ms" if every else ""))


def host_sample(pid):
    """This host's steal (it may be a VM itself), each QEMU vCPU thread's
    time spent runnable but not running (schedstat), the time QEMU's main
    thread and single-threaded TCG's thread ran ("run_main", "run_all"),
    and the host CPU each vCPU thread and QEMU's main thread ("main") last
    ran on."""
    steal = 0
    with open("/proc/stat") as f:
        v = f.readline().split()
        steal = int(v[8]) * 10_000_000 if len(v) > 8 else 0   # USER_HZ=100
    delay, where = {}, {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                comm = open(f"/proc/{pid}/task/{tid}/comm").read()
                stat = open(f"/proc/{pid}/task/{tid}/stat").read()
                cpu = int(stat[stat.rindex(")") + 2:].split()[36])   # field 39
                m = re.match(r"CPU (\d+)/", comm)
                if m:
                    delay[int(m.group(1))] = int(
                        open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[1])
                    where[int(m.group(1))] = cpu
                elif comm.startswith("ALL CPUs/"):
                    # Single-threaded TCG: one thread for every vCPU.
                    where["all"] = cpu
                    ss = open(f"/proc/{pid}/task/{tid}/schedstat").read().split()
                    delay["all"] = int(ss[1])
                    delay["run_all"] = int(ss[0])
                elif tid == str(pid):
                    where["main"] = cpu
                    delay["run_main"] = int(
                        open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
            except (OSError, IndexError, ValueError):
                pass
    except OSError:
        pass
    host_samples.append((time.monotonic_ns(), steal, delay, where))


def qemu_args(sockpath, arch="x86_64"):
    """QEMU arguments for the guest's answer channel, through @sockpath:
    ttyS1 on x86 (an ISA UART); on aarch64's virt machine, which has no
    ISA bus, a PCI UART (ttyS0: the console is the PL011)."""
    dev = "isa-serial" if arch == "x86_64" else "pci-serial"
    return (f"-chardev socket,id=ack,path={sockpath},server=on,wait=off "
            f"-device {dev},chardev=ack -qmp unix:{sockpath}.qmp,server=on,wait=off")


# A guest whose console says nothing for this long is taken as hung: its
# vCPUs' registers are read through QMP and named (hang_report()).
HANG_S = int(os.environ.get("HVN_HANG_S", "240"))
# Where a hung vCPU sits, by function: what that hang is.  Multi-threaded
# TCG hangs in the kernel's text patching (make soak-hangs: with no hvnoise
# at all, tracepoints switched on and off through tracefs hung it after
# about 110 cycles, every vCPU at a tracepoint's jump label or in the int3
# handler; never under one TCG thread).
# Each: the sets of functions that must all have a vCPU in them.
INT3 = {"poke_int3_handler", "exc_int3", "asm_exc_int3", "text_poke_bp_batch",
        "text_poke_sync"}
KNOWN_HANGS = (
    ((INT3, {"smp_call_function_many_cond", "on_each_cpu_cond_mask"}),
     "the kernel's text patching under multi-threaded TCG (a vCPU in the int3 "
     "handler, another waiting for its IPI): the known TCG hang, not hvnoise's"),
    ((INT3,),
     "the kernel's text patching under multi-threaded TCG (a vCPU in the int3 "
     "handler of a patched jump label): the known TCG hang, which tracefs alone "
     "makes (make soak-hangs), not hvnoise's"),
)


def qmp(path, line):
    """The human monitor's answer to @line through QEMU's QMP socket."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    f = s.makefile("rw")
    json.loads(f.readline())        # the greeting
    r = {}
    for c in ({"execute": "qmp_capabilities"},
              {"execute": "human-monitor-command", "arguments": {"command-line": line}}):
        f.write(json.dumps(c) + "\n")
        f.flush()
        while True:
            r = json.loads(f.readline())
            if "return" in r or "error" in r:
                break
    s.close()
    return r.get("return", "") if isinstance(r.get("return"), str) else ""


def symbols(console, ksyms=None):
    """(sorted addresses, names) of the kernel's text symbols: all of
    them where the guest wrote /proc/kallsyms to the disk image @ksyms
    (tests/vm/guest-hangs.sh), else the functions the guest's init named
    (HVN-KSYM ADDR TYPE NAME), each followed by the symbol after it, where
    it ends; or None."""
    text = "\n".join(console.splitlines())
    pat = r"^HVN-KSYM ([0-9a-f]+) \w (\w+)"
    if ksyms and os.path.exists(ksyms):
        with open(ksyms, "rb") as f:
            text = f.read().split(b"\0", 1)[0].decode(errors="replace")
        pat = r"^([0-9a-f]+) [tTwW] (\S+)"
    rows = sorted((int(a, 16), n) for a, n in re.findall(pat, text, re.M))
    return ([a for a, _ in rows], [n for _, n in rows]) if rows else None


# The hangs serve() caught in this process: what each was.
hangs = []


def hang_report(qmp_path, console, samples=3, ksyms=None):
    """Where each vCPU of a hung guest is, sampled @samples times 0.5 s
    apart: its program counter, named where it lies in a function the
    guest named (@ksyms, else @console's HVN-KSYM lines: symbols(); the
    guests boot with nokaslr), and what hang that is.  Lines to print."""
    syms = symbols(console, ksyms)
    seen, out = {}, []
    for _ in range(samples):
        try:
            regs = qmp(qmp_path, "info registers -a")
        except (OSError, ValueError) as e:
            return [f"HANG: QMP unanswered ({e})"]
        for cpu, pc in re.findall(r"CPU#(\d+).*?(?:RIP|PC)=([0-9a-f]{8,16})", regs, re.S):
            a, name = int(pc, 16), pc
            if syms:
                i = bisect.bisect_right(syms[0], a) - 1
                if i >= 0 and i + 1 < len(syms[0]):
                    name = f"{syms[1][i]}+{a - syms[0][i]:#x}"
            seen.setdefault(int(cpu), []).append(name)
        time.sleep(0.5)
    funcs = {n.split("+")[0] for ns in seen.values() for n in ns}
    idle = {"native_safe_halt", "default_idle", "cpu_do_idle"}
    what = next((w for sets, w in KNOWN_HANGS if all(funcs & fs for fs in sets)),
                "every vCPU idle: the guest waits on something, none spins" if funcs <= idle
                else "not a known hang")
    hangs.append(what)
    out.append(f"HANG: the guest said nothing for {HANG_S} s: {what}")
    for cpu in sorted(seen):
        out.append(f"HANG: vCPU {cpu} at " + ", ".join(seen[cpu]))
    return out


def qemu_threads(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[int(tid)] = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
        except OSError:
            pass
    return out


def pause(pid, ms):
    """(host ns it began, ms it lasted)"""
    t0 = time.monotonic_ns()
    os.kill(pid, signal.SIGSTOP)
    while time.monotonic_ns() - t0 < ms * 1_000_000:
        pass
    os.kill(pid, signal.SIGCONT)
    return t0, (time.monotonic_ns() - t0) / 1e6


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
    m = re.search(r"burst \d+ on core \d+: ([0-9.]+) ms from (\d+) ns", out)
    return (int(m.group(2)), float(m.group(1))) if m else (0, 0.0)


def serve(log, sockpath, pidfile, proc, hogbin, on_line=None, ksyms=None):
    """Answer the guest's HVN-DO requests until QEMU exits.  @on_line(line,
    pid) sees every other console line (the marker-driven injections).  A
    console silent for HANG_S seconds is a hang: where the vCPUs are is
    printed (hang_report(), named from @ksyms if there) and QEMU is ended."""
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
    spoke = time.monotonic()
    while proc.poll() is None:
        try:
            with open(log, errors="replace") as f:
                f.seek(pos)
                chunk = f.read()
                pos = f.tell()
        except FileNotFoundError:
            chunk = ""
        buf += chunk
        if chunk:
            spoke = time.monotonic()
        elif time.monotonic() - spoke > HANG_S:
            for line in hang_report(sockpath + ".qmp", open(log, errors="replace").read(),
                                    ksyms=ksyms):
                print("# " + line, flush=True)
            try:
                os.kill(int(open(pidfile).read()), signal.SIGKILL)
            except (OSError, ValueError):
                pass
            spoke = time.monotonic()
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
            try:
                t0, got = pause(pid, ms) if m.group(2) == "pause" else hog(pid, hogbin, ms)
                host_inject[int(m.group(1))] = (t0, got)
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


def load_host(path):
    """What run_vm() saw of this host, from its NAME-host.json, for
    judging a run again offline."""
    def keys(d):
        return {int(k) if str(k).isdigit() else k: v for k, v in d.items()}
    global host_ncpu
    with open(path) as f:
        h = json.load(f)
    host_stops.update({int(k): [tuple(x) for x in v] for k, v in h["stops"].items()})
    host_ncpu = h["ncpu"]
    host_inject.update({int(k): tuple(v) for k, v in h["inject"].items()})
    host_samples.extend((t, st, keys(d), keys(w)) for t, st, d, w in h["samples"])


def console_of(name, argv, env, check, timeout_s=600):
    """The console of VM @name: booted (@argv: KERNEL INITRD OUTDIR
    HOSTSTOPS, @env for tests/vm/qemu.sh) as run_vm() does, or, with
    @argv --again OUTDIR, that run's files read back (load_host())."""
    if argv[:1] == ["--again"]:
        load_host(os.path.join(argv[1], f"{name}-host.json"))
        return open(os.path.join(argv[1], f"{name}-console.log"), errors="replace").read()
    kernel, initrd, outdir, stopsbin = argv[:4]
    return run_vm(name, kernel, initrd, outdir, env, stopsbin, None, timeout_s, check)


def judge_pauses(console, ncpu, pauses, check, res_ms=0.0):
    """A VM whose guest printed its quiet phases, then @pauses pauses of
    the whole VM for the module and for BPF (HVN-EVENTS module, bpf),
    on single-threaded TCG: the clock placed, the quiet phases (quiet()),
    every pause judged (judge(): one TCG thread runs the vCPUs in turn,
    so the last to run again loses up to TCG's own lateness more, 4.5 and
    5.9 ms over a 20 ms pause with 4.1 ms measured in an arm64 baseline;
    @res_ms: the guest's timer resolution), and the guest done."""
    clock = guest_clock(console, ("anchor", "module", "bpf"))
    print(f"the guest's clock on this host's: {clock}")
    check(clock.valid, f"the guest's clock is placed on this host's ({clock})")
    quiet(console, clock, ncpu, check)
    for source in ("module", "bpf"):
        evs = events(console, source)
        wins = windows(console, source)
        if not check(evs is not None and len(wins) == pauses and source in spans(console),
                     f"{source}: its {pauses} pauses ran and its lost events came back ({len(wins)})"):
            continue
        print(f"\n{source}: injected vs detected (hvnoise:lost duration per vCPU)")
        judge(source, wins, evs, ncpu, check, clock, spans(console).get(source),
              late_ms=tcg_jitter_ms, res_ms=res_ms)
    check("HVNOISE-VM-DONE" in console, "completed")


def run_vm(name, kernel, initrd, outdir, env, stopsbin, hogbin, timeout_s, check):
    """Boot tests/vm/qemu.sh (@env; its answer channel added for its
    HVN_VM_ARCH) with this host's stops witnessed, answer the guest's
    requests until it powers off, and return its console.  Files in
    @outdir: NAME-console.log, and NAME-host.json, what this side saw, for
    judging the run again offline."""
    log = os.path.join(outdir, f"{name}-console.log")
    pidfile = os.path.join(outdir, f"{name}-qemu.pid")
    sockpath = os.path.join(outdir, f"{name}-ack.sock")
    for f in (log, pidfile, sockpath):
        if os.path.exists(f):
            os.unlink(f)
    # The answer channel after the caller's own QEMU arguments.
    env = dict(env, HVN_VM_ARGS=(env.get("HVN_VM_ARGS", "") + " " +
                                 qemu_args(sockpath, env.get("HVN_VM_ARCH", "x86_64"))).strip())
    witness = Witness.start(stopsbin)
    check(witness, f"this host's stops are witnessed on each of its {host_ncpu} CPUs")
    proc = subprocess.Popen([os.path.join(os.path.dirname(os.path.abspath(__file__)), "qemu.sh"),
                             kernel, initrd, log, "/lib/hvnoise/guest.sh", str(timeout_s),
                             pidfile], env=env)
    serve(log, sockpath, pidfile, proc, hogbin, ksyms=os.path.join(outdir, f"{name}-ksyms.img"))
    proc.wait()
    if witness:
        check(witness.stop(), "the witness of this host's stops ran to the end")
        print("# " + host_stop_summary(), flush=True)
    with open(os.path.join(outdir, f"{name}-host.json"), "w") as f:
        json.dump({"stops": host_stops, "ncpu": host_ncpu,
                   "inject": host_inject, "samples": host_samples}, f)
    return open(log, errors="replace").read()


def events(console, tag):
    """The LOST lines the guest printed under HVN-EVENTS @tag, or None;
    where the guest said its span for @tag (HVN-SPAN), only those it
    emitted inside it.  After the span the guest reads its trace and
    prints hundreds of lines through an emulated UART, which takes its
    single TCG thread from the other vCPUs (20 ms events, seen in CI):
    that is the test's own load, not the phase judged."""
    m = re.search(rf"HVN-EVENTS {re.escape(tag)}\n(.*?)HVN-END-EVENTS", console, re.S)
    if not m:
        return None
    span = spans(console).get(tag)
    evs = []
    for line in m.group(1).splitlines():
        f = dict(re.findall(r"(\w+)=(-?\d+)", line))
        if line.startswith("LOST") and "cpu" in f and "start" in f:
            e = {k: int(v) for k, v in f.items()}
            if span is None or (span[0] <= e["start"] and
                                e["start"] + e.get("duration", 0) <= span[1]):
                evs.append(e)
    return evs


def nmis(console, tag):
    """{cpu: [(start ns, end ns)]}: the NMI handlers the guest printed under
    HVN-NMI @tag (guest-lib.sh nmis_of), or None where it printed none."""
    m = re.search(rf"HVN-NMI {re.escape(tag)}\n(.*?)HVN-END-NMI", console, re.S)
    if not m:
        return None
    out = {}
    for c, end_us, d in re.findall(r"^NMI (\d+) (\d+) (\d+)$", m.group(1), re.M):
        end = int(end_us) * 1000
        out.setdefault(int(c), []).append((end - int(d), end))
    return out


def _union(iv):
    """[(a, b)] sorted and merged."""
    out = []
    for x, y in sorted(iv):
        if out and x <= out[-1][1]:
            out[-1][1] = max(out[-1][1], y)
        else:
            out.append([x, y])
    return out


def others_nmi_ns(e, nmi):
    """ns of event @e's span in which another vCPU was in an NMI handler
    (the union over them) and @e's own vCPU was not in its own: the guest
    sends each burst to every CPU at once, so a product that stopped
    counting a CPU's own NMIs would leave time the others' cover too."""
    a, b = e["start"], e["start"] + e["duration"]

    def clip(cpus):
        return _union((max(a, x), min(b, y)) for c, l in nmi.items() if c in cpus
                      for x, y in l if min(b, y) > max(a, x))
    others = clip(set(nmi) - {e["cpu"]})
    own = clip({e["cpu"]})
    return sum(y - x - overlap(x, y, own) for x, y in others)


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


def spans(console):
    """{tag: (t0 ns, t1 ns)}: the guest's spans (HVN-SPAN TAG T0 T1, its
    uptime) in which its detector of @tag reported every lost event."""
    return {m.group(1): (float(m.group(2)) * 1e9, float(m.group(3)) * 1e9)
            for m in re.finditer(r"^HVN-SPAN (\S+) ([0-9.]+) ([0-9.]+)", console, re.M)}


class Clock:
    """guest ns <-> host ns: a line (the guest's clock runs a few hundred
    ppm off the host's) through (guest, host) points.  Good enough to place
    a host stop (valid) only from 3 points or more, within 1.5 ms of each,
    at a rate within 0.1% of the host's; then an interval is widened by 1
    ms (the witness's period), that residual, and what the slope's
    uncertainty makes of it away from the points (slop)."""

    def __init__(self, pts, used):
        n = len(pts)
        mx = sum(g for g, _ in pts) / n
        my = sum(h for _, h in pts) / n
        var = sum((g - mx) ** 2 for g, _ in pts)
        k = sum((g - mx) * (h - my) for g, h in pts) / var if n > 1 and var > 0 else 1.0
        self.mx, self.my, self.k = mx, my, k
        self.used = used
        self.resid = max(abs(self.host(g) - h) for g, h in pts) / 1e6
        self.lo, self.hi = min(g for g, _ in pts), max(g for g, _ in pts)
        self.valid = used >= 3 and self.resid <= 1.5 and abs(k - 1) < 1e-3
        self.slop0 = 1_000_000 + int(self.resid * 1e6)

    def slop(self, g):
        """How far host(@g) may be off: the residual, and the slope's
        uncertainty (residual over the points' span) beyond them."""
        away = max(0, self.lo - g, g - self.hi)
        span = max(self.hi - self.lo, 1)
        return self.slop0 + int(self.resid * 1e6 * away / span)

    def host(self, g):
        return self.my + self.k * (g - self.mx)

    def guest(self, h):
        return self.mx + (h - self.my) / self.k

    def __str__(self):
        return (f"fitted to {self.used} pauses, largest residual {self.resid:.2f} ms" +
                f", rate {self.k:.6f}" +
                ("" if self.valid else ": too coarse to place this host's stops"))


def guest_clock(console, tags):
    """The Clock of the pauses under HVN-EVENTS @tags: each stopped every
    vCPU at a host time known to the microsecond, and the guest's lost
    events of it begin then (within its 1 ms sampling).  A point more than
    1.5 ms off the line through the others (an event that was not the
    pause's) is dropped, down to 3 points and half of them.  Without three
    pauses, the windows' starts: their 10 ms steps and this side's 20 ms
    polls, good enough to print, not to place a stop (not valid)."""
    pts, coarse = [], []
    for tag in tags:
        evs = events(console, tag) or []
        for seq, (what, ms, got, t0, t1) in windows(console, tag).items():
            if not host_inject.get(seq, (0, 0))[0]:
                continue
            coarse.append((t0, host_inject[seq][0]))
            if what != "pause":
                continue
            mine = [e["start"] for e in evs if t0 - SLACK_NS <= e["start"] <= t1 + SLACK_NS
                    and abs(e["duration"] / 1e6 - got) <= tol(got)]
            if mine:
                pts.append((min(mine), host_inject[seq][0]))
    found = len(pts)
    while len(pts) > max(3, (found + 1) // 2):
        c = Clock(pts, len(pts))
        worst = max(pts, key=lambda p: abs(c.host(p[0]) - p[1]))
        if abs(c.host(worst[0]) - worst[1]) <= 1_500_000:
            break
        pts.remove(worst)
    if len(pts) >= 3:
        return Clock(pts, len(pts))
    return Clock(coarse or [(0, 0)], 0)


def host_interval(e, clock):
    """Event @e's host interval, widened by the clock's precision."""
    g0, g1 = e["start"], e["start"] + e["duration"]
    return clock.host(g0) - clock.slop(g0), clock.host(g1) + clock.slop(g1)


def samples_around(e, clock):
    """host_sample's samples within 50 ms of event @e."""
    a, b = host_interval(e, clock)
    return [x for x in host_samples if a - 50_000_000 <= x[0] <= b + 50_000_000]


def vmm_held(e, clock):
    """Single-threaded TCG: (ms its thread neither ran nor waited to run,
    ms QEMU's main thread ran) between the samples just around event @e,
    or None without them.  The main thread holding QEMU's big lock (its
    device models, its timers) stops every vCPU: QEMU took that time."""
    a, b = host_interval(e, clock)
    before = [x for x in host_samples if x[0] <= a and "run_all" in x[2]]
    after = [x for x in host_samples if x[0] >= b and "run_all" in x[2]]
    if not before or not after:
        return None
    x, y = before[-1], after[0]
    span = (y[0] - x[0]) / 1e6
    ran = (y[2]["run_all"] - x[2]["run_all"]) / 1e6
    waited = (y[2].get("all", 0) - x[2].get("all", 0)) / 1e6
    return span - ran - waited, (y[2].get("run_main", 0) - x[2].get("run_main", 0)) / 1e6


def host_delay(e, clock):
    """ms event @e's vCPU thread spent runnable but not running on this
    host, around the event; 0 without samples."""
    win = samples_around(e, clock)
    if len(win) < 2:
        return 0.0
    k = e["cpu"] if e["cpu"] in win[0][2] else "all"
    return (win[-1][2].get(k, 0) - win[0][2].get(k, 0)) / 1e6


def host_context(e, clock):
    """What this host saw around guest event @e."""
    a, b = host_interval(e, clock)
    if not host_ncpu:
        out = " (host: no stop witness"
    elif not clock.valid:
        out = " (host: its stops cannot be placed in the guest's time"
    else:
        stops = ", ".join(f"cpu{c} {ns / 1e6:.1f}" for c, ns in host_cpu_stopped(a, b).items())
        out = (f" (host: every CPU stopped {host_stopped(a, b) / 1e6:.1f} ms" +
               (f" [{stops}]" if stops else ""))
    win = samples_around(e, clock)
    if len(win) >= 2:
        steal = (win[-1][1] - win[0][1]) / 1e6
        delay = {c: (win[-1][2].get(c, 0) - win[0][2].get(c, 0)) / 1e6 for c in win[0][2]
                 if not str(c).startswith("run_")}
        out += (f"; around it steal {steal:.0f} ms, vCPU threads waiting to run " +
                ", ".join(f"cpu{c} {d:.1f} ms" for c, d in sorted(delay.items(), key=str)))
        held = vmm_held(e, clock)
        if held is not None:
            out += f"; QEMU's TCG thread stood still {held[0]:.1f} ms while its main thread ran {held[1]:.1f} ms"
    return out + ")"


def tol(ms):
    return max(0.2 * ms, 2.0)


def host_cpus(e, clock):
    """The host CPUs event @e's vCPU thread (single-threaded TCG's one for
    all) and QEMU's main thread were
    seen on around it: this side's samples (every 20 ms, none while it
    injects) from the last before the event to the first after it; empty
    without one on each side (then no stop is the event's)."""
    a, b = host_interval(e, clock)
    before = [x for x in host_samples if x[0] <= a]
    after = [x for x in host_samples if x[0] >= b]
    if not before or not after:
        return set()
    win = [x for x in host_samples if before[-1][0] <= x[0] <= after[0][0]]
    return {x[3][k] for x in win for k in (e["cpu"], "all", "main") if k in x[3]}


# TCG's own lateness, ms: the largest the guest's baseline showed away
# from this host's stops (detectors.py sets it; 0 where nothing measured
# it).  A lost event over a host stop holds the stop and then this much at
# most: the vCPU catching up under TCG.
tcg_jitter_ms = 0.0
MAX_SLOP_NS = 5_000_000     # beyond it, the clock cannot place an event


def stop_fits(d, a, b, clock, cpus=None, minus=(0, 0), slack=None, wait=0.0):
    """Whether a lost event of @d ms over host [a, b] is what this host
    stopped there: one of its CPUs @cpus (where the vCPU's thread or
    QEMU's main thread, which holds the lock the vCPUs wait on, ran; all
    when None) stopped (at least 1 ms) for as long as the event says,
    within an injection's tolerance and the witness's 1 ms, and longer by
    TCG's own measured lateness at most (tcg_jitter_ms: the VM catching up
    after the stop; events over a stop have run 5-8 ms past it); or within
    @slack ms.  Callers check placed() first.
    (A stop of host CPU 0 alone, 22.5 ms, stopped both vCPUs of an idle
    guest for 22.9 ms.)  @minus: a host interval not to count (the
    injection the event also holds; @d then excludes it too).  @wait: ms
    the event's vCPU thread then waited on this host's run queue, which
    it may hold too: the stop ended, the thread still had to be run (a
    CI run's 17.64 ms event over an 11.7 ms stop and 4.4 ms waiting)."""
    if not host_ncpu or not clock.valid:
        return False
    per, inj = host_cpu_stopped(a, b), host_cpu_stopped(*minus)
    best = max((per[c] - inj.get(c, 0) for c in per if cpus is None or c in cpus),
               default=0) / 1e6
    if slack is not None:
        return best >= 1 and abs(d - best) <= slack
    return best >= 1 and best - tol(best) - 1 <= d <= best + tol(best) + 1 + tcg_jitter_ms + wait


def placed(e, clock):
    """Whether the clock places event @e on this host's time within
    MAX_SLOP_NS at both ends (far from the pauses it cannot)."""
    return (clock.valid and clock.slop(e["start"]) <= MAX_SLOP_NS and
            clock.slop(e["start"] + e["duration"]) <= MAX_SLOP_NS)


def host_took(e, clock, strict):
    """Whether this host took event @e's time: a host CPU its threads were
    on stopped then, as long, with the run-queue wait after it (stop_fits);
    or QEMU did (single-threaded TCG: its thread stood still, neither
    running nor waiting to run, and its main thread ran, each for as long
    as the event but its tolerance: vmm_held); or, unless @strict, its vCPU
    thread waited on this host's run queue for at least half of it."""
    d = e["duration"] / 1e6
    held = vmm_held(e, clock) if placed(e, clock) else None
    return ((placed(e, clock) and
             stop_fits(d, *host_interval(e, clock), clock, host_cpus(e, clock),
                       wait=host_delay(e, clock))) or
            (held is not None and min(held) >= d - tol(d)) or
            (not strict and host_delay(e, clock) >= d / 2))


# A guest's stop-every-CPU window is widened by this each side: the lost
# event starts at the timer the stop made late, up to a sampler period
# (1 ms) or a tick (4 ms) before it.
STOPALL_SLACK_NS = 5_000_000


def real_stops(evs, ncpu, clock, strict=False, nmi=None, late_ms=0.0, serial=None,
               stopall=None, gone=None):
    """Sort lost events that no injection explains: (whole-VM stops, stops
    this host took, unexplained).  Every vCPU stopped at once, alike, is
    the whole VM (QEMU or this host), unless @strict; with @strict, only
    away from @stopall, the guest-ns windows in which the guest itself
    stops every CPU alike (stop_machine() taking a CPU down, x86's MTRR
    rendezvous bringing one up), where there are such windows.  One whose
    time this host took (host_took) is real; any other is an over-report.
    @gone ({cpu: [(guest ns, guest ns)]}): CPUs offline then, not needed
    for every vCPU to have stopped.
    @nmi (nmis()): single-threaded TCG runs one vCPU at a time, so while
    others spin in NMI handlers a vCPU does not run: an event whose time
    unexplained is theirs, outside its own handlers, but TCG's own
    lateness (@late_ms) is real, the
    vCPU stopped as on an overcommitted host; it goes to @serial."""
    whole, hosts, extra = [], [], []
    rest = sorted(evs, key=lambda e: e["start"])
    while rest:
        g = [e for e in rest if e["start"] - rest[0]["start"] <= 2_000_000]
        d = [e["duration"] / 1e6 for e in g]
        a, b = g[0]["start"], max(e["start"] + e["duration"] for e in g)
        guest_own = strict and (stopall is None or any(
            x - STOPALL_SLACK_NS < b and a < y + STOPALL_SLACK_NS for x, y in stopall))
        need = {c for c in range(ncpu) if not any(
            x < b and a < y for x, y in (gone or {}).get(c, []))}
        if (not guest_own and need and need <= {e["cpu"] for e in g} and
                max(d) - min(d) <= tol(min(d))):
            whole.append(f"{min(d):.2f}..{max(d):.2f} ms at {g[0]['start'] / 1e9:.3f} s" +
                         host_context(g[0], clock))
        else:
            for e in g:
                line = (f"cpu{e['cpu']} {e['duration'] / 1e6:.2f} ms at {e['start'] / 1e9:.3f} s" +
                        host_context(e, clock))
                busy = others_nmi_ns(e, nmi) if nmi and serial is not None else 0
                if host_took(e, clock, strict):
                    hosts.append(line)
                elif busy > 0 and e["unexplained_ns"] - busy <= late_ms * 1e6:
                    serial.append(f"{line}: unexplained {e['unexplained_ns'] / 1e6:.2f} ms, "
                                  f"other vCPUs in NMI handlers {busy / 1e6:.2f} ms")
                else:
                    extra.append(line)
        rest = rest[len(g):]
    return whole, hosts, extra


def stops_seen(source, evs, span, ncpu, check, clock, wins=None, min_ms=20, gone=None):
    """This host's stops are injections nobody asked for: each time every
    host CPU stopped for @min_ms or more (above the 15 ms test threshold by
    its tolerance) inside the guest's @span for @source, away from the
    injections @wins, every vCPU must report it (stop_fits), but one
    offline then (@gone: {cpu: [(guest ns, guest ns)]}).  Returns
    (seen, stops x vCPUs)."""
    if not host_ncpu or not clock.valid or span is None:
        return 0, 0
    away = [(host_inject[s][0] - 50_000_000, host_inject[s][0] + (w[2] + 50) * 1e6)
            for s, w in (wins or {}).items() if host_inject.get(s, (0, 0))[0]]
    placed_evs = [(e, host_interval(e, clock)) for e in evs if placed(e, clock)]
    seen, n, misses = 0, 0, []
    for u, v in common_stops():
        if (v - u < min_ms * 1e6 or not span[0] <= clock.guest(u) <= clock.guest(v) <= span[1]
                or any(x < v and u < y for x, y in away)
                or clock.slop(clock.guest(u)) > MAX_SLOP_NS):
            continue
        for c in range(ncpu):
            if any(x < clock.guest(v) and clock.guest(u) < y for x, y in (gone or {}).get(c, [])):
                continue
            n += 1
            mine = [e for e, (a, b) in placed_evs if e["cpu"] == c and a <= u and v <= b and
                    stop_fits(e["duration"] / 1e6, a, b, clock)]
            if mine:
                seen += 1
            else:
                misses.append(f"cpu{c}: this host stopped {(v - u) / 1e6:.1f} ms at guest "
                              f"{clock.guest(u) / 1e9:.3f} s, no lost event over it")
    for m in misses[:20]:
        print(f"    MISS {m}")
    check(not misses, f"{source}: every stop of this host of {min_ms} ms or more seen on every "
          f"vCPU ({seen}/{n})" + (f"; {misses[0]}" if misses else ""))
    return seen, n


def quiet(console, clock, ncpu, check):
    """The guest's phases without injections.  Its TCG baseline: lateness
    from 2 ms; the largest away from this host's witnessed stops is TCG's
    own, and must stay below the test threshold; it also bounds what an
    event over a host stop may hold beyond the stop (tcg_jitter_ms).
    Then the baseline's lateness at or above the threshold, the quiet
    guest's every lost event and those of the busy one (timers armed with
    deadlines already gone, where the guest ran that phase) hold nothing
    but witnessed stops of this host (real_stops, strict), and each stop
    of every host CPU of 20 ms or more is there on every vCPU."""
    global tcg_jitter_ms
    m = re.search(r"^QUIET .*\(threshold (\d+) us", console, re.M)
    if not check(m, "the guest said its test threshold"):
        return
    limit = int(m.group(1))
    base = events(console, "baseline")
    if base is not None and clock.valid:
        # TCG's own: away from this host's stops.
        own = [e for e in base if not any(
            ns >= 1_000_000 for ns in host_cpu_stopped(*host_interval(e, clock)).values())]
        j = max([2.0] + [e["duration"] / 1e6 for e in own])
        ok = check(j * 1000 < limit,
                   f"TCG's own baseline lateness {j:.2f} ms is below the test threshold {limit} us "
                   f"({len(base) - len(own)} of {len(base)} events from 2 ms were over this host's stops)")
        # No allowance from a baseline that failed.
        tcg_jitter_ms = j if ok else 0.0
    phases = [("baseline", f"TCG baseline lateness is below the test threshold {limit} us"),
              ("quiet", "no lost events without injections")]
    if "busy" in spans(console):
        phases.append(("busy", "no lost events from timers armed already due"))
    for tag, name in phases:
        evs = events(console, tag)
        if not check(evs is not None and tag in spans(console),
                     f"{tag}: the guest printed its lost events and when it watched"):
            continue
        if tag == "baseline":
            evs = [e for e in evs if e["duration"] >= limit * 1000]
        whole, hosts, extra = real_stops(evs, ncpu, clock, strict=True)
        for x in whole:
            print(f"  {tag}: WHOLE VM STOPPED {x}")
        for x in hosts:
            print(f"  {tag}: THE HOST TOOK IT {x}")
        for x in extra:
            print(f"  {tag}: EXTRA {x}")
        check(not extra, f"{name} but this host's own stops ({len(evs)} at or above it: "
              f"{len(hosts)} taken by this host" + (f"; {extra[0]}" if extra else "") + ")")
        stops_seen(tag, events(console, tag), spans(console).get(tag), ncpu, check, clock)


def judge(source, wins, evs, ncpu, check, clock, span=None, late_ms=0.0, res_ms=0.0,
          strict=False, gone=None, nmi=None, stopall=None):
    """Every injection must give, on every vCPU it stopped (all for a
    pause, vCPU 1 for a hog), one lost event over it (in host time, when
    the clock can say) within 20% or 2 ms of what was injected, or of that
    and what this host stopped on its own beside it (its vCPUs lost that
    too): no tolerance for misses.  Events anywhere else are judged on
    their own (real_stops; vCPU 0 stopped for a hog's length with vCPU 1,
    waiting on QEMU's big lock, is real too); any other is an over-report.
    And this host's own stops inside @span must be seen (stops_seen).
    @late_ms: what an event may hold beyond the tolerance, single-threaded
    TCG's own lateness (tcg_jitter_ms) when one host thread runs every
    vCPU in turn: a vCPU resumed after others lost that time too.
    @res_ms: what an event may lack beyond it, the guest's timer
    resolution where hrtimers run from the tick (highres=off): a stop is
    seen from the first tick it made the CPU miss, up to a tick after it
    began.
    @strict: an event outside the injections must be a witnessed stop of
    this host, even one on every vCPU alike (a guest that stops all its
    CPUs itself, as stop_machine does, makes such events too).
    @gone: CPUs offline when (stops_seen()).
    @nmi: the guest's NMI handlers (nmis(); real_stops()).
    @stopall: where the guest stops every CPU itself (real_stops()).
    @clock: guest_clock's.  Prints per-CPU recall and the error per
    injection size; returns ({seq: {cpu: ms}}, seen, vCPU-injections)."""
    per_cpu = {c: [0, 0] for c in range(ncpu)}
    err, misses, extra, coupled, seen, joined, beside = {}, [], [], [], {}, [], []
    used = set()
    if not clock.valid:
        print(f"  {source}: the guest's clock is not placed ({clock}): this host's stops "
              "explain nothing and the injections' host times are not used", flush=True)
    for seq, (what, ms, got, t0, t1) in sorted(wins.items()):
        cpus = range(ncpu) if what == "pause" else [1]
        inside = [e for e in evs if t0 - SLACK_NS <= e["start"] <= t1 + SLACK_NS]
        used.update(id(e) for e in inside)
        seen[seq] = {}
        h0 = host_inject.get(seq, (0, 0))[0]
        inj = (h0, h0 + got * 1e6) if h0 and clock.valid else None
        for c in range(ncpu):
            mine = [e for e in inside if e["cpu"] == c]
            if inj and c in cpus and len(mine) > 1:
                # Several in its window: the one over the injection in host
                # time is its; each other must be a witnessed stop of this
                # host (strict: no whole-VM or run-queue rule), as a stop
                # just before a pause was.
                # Over it by all of it but its tolerance, as "over" below:
                # a loss that only touches its edge in host time (the
                # clocks' placement) is another.
                its = [e for e in mine
                       if overlap(*host_interval(e, clock), [inj]) >= (got - tol(got)) * 1e6]
                if len(its) == 1:
                    beside += [e for e in mine if e is not its[0]]
                    mine = its
            ds = [e["duration"] / 1e6 for e in mine]
            if c not in cpus:
                # A vCPU waiting for QEMU's big lock, held by the hogged
                # vCPU's thread, loses the hog's time with it.
                if len(mine) == 1 and abs(ds[0] - got) <= tol(got):
                    coupled.append(f"{what} {got:.1f} ms #{seq}: cpu{c} {ds[0]:.2f}")
                else:
                    _, h, x = real_stops(mine, ncpu, clock)
                    coupled += [f"{what} {got:.1f} ms #{seq}: this host took " + y for y in h]
                    extra += [f"{what} {got:.1f} ms #{seq}: " + y for y in x]
                continue
            per_cpu[c][1] += 1
            if mine:
                seen[seq][c] = max(ds)
            # Over the injection in host time: by all of it but its tolerance.
            ab = host_interval(mine[0], clock) if len(mine) == 1 else None
            over = ab is not None and (
                inj is None or overlap(*ab, [inj]) >= (got - tol(got)) * 1e6)
            if over and -tol(got) - res_ms <= ds[0] - got <= tol(got) + late_ms:
                per_cpu[c][0] += 1
                err.setdefault((what, ms), []).append(ds[0] - got)
            elif (over and inj and placed(mine[0], clock) and
                  stop_fits(ds[0] - got, *ab, clock, host_cpus(mine[0], clock),
                            minus=inj, slack=tol(got) + 1)):
                per_cpu[c][0] += 1
                joined.append(f"{what} {got:.1f} ms #{seq}: cpu{c} {ds[0]:.2f} ms" +
                              host_context(mine[0], clock))
            else:
                misses.append(f"{what} {got:.1f} ms #{seq}: cpu{c} " +
                              (", ".join(f"{d:.2f}" for d in ds) if ds else "nothing") +
                              ("" if over or not mine else " not over the injection") +
                              (host_context(mine[0], clock) if mine else ""))
    serial = []
    whole, hosts, x = real_stops([e for e in evs if id(e) not in used], ncpu, clock, strict,
                                 nmi=nmi, late_ms=late_ms, serial=serial, stopall=stopall,
                                 gone=gone)
    extra += ["outside any injection: " + y for y in x]
    _, h, x = real_stops(beside, ncpu, clock, strict=True, nmi=nmi, late_ms=late_ms,
                         serial=serial)
    hosts += h
    extra += ["beside an injection: " + y for y in x]
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
    for x in joined[:20]:
        print(f"    WITH A STOP OF THIS HOST BESIDE IT {x}")
    for x in whole[:20]:
        print(f"    WHOLE VM STOPPED, NOT INJECTED {x}")
    for x in hosts[:20]:
        print(f"    THE HOST TOOK IT, NOT INJECTED {x}")
    for x in serial[:20]:
        print(f"    OTHER vCPUs RAN NMI HANDLERS (one TCG thread) {x}")
    check(n and not misses, f"{source}: every injection seen on every vCPU it stopped, "
          f"within 20%/2 ms" + (f" (+{late_ms:.1f} ms TCG's lateness)" if late_ms else "") +
          (f" (-{res_ms:.1f} ms, the timer resolution)" if res_ms else "") +
          f" ({hit}/{n} vCPU-injections" +
          (f"; {misses[0]}".replace("#", "no. ") if misses else "") + ")")
    check(not extra, f"{source}: no lost events but the injections' and real stops "
          f"({len(extra)} others; {len(coupled)} vCPUs stopped with a hog, "
          f"{len(whole)} whole-VM stops, {len(hosts)} taken by this host" +
          (f", {len(serial)} while other vCPUs ran NMI handlers" if nmi is not None else "") +
          (f"; {extra[0]}".replace("#", "no. ") if extra else "") + ")")
    stops_seen(source, evs, span, ncpu, check, clock, wins, gone=gone)
    return seen, hit, n
