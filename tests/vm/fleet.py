#!/usr/bin/env python3
"""Which host? Two VMs, one job: hvnoise correlate over both hosts'
recordings must name the host whose vCPUs the hypervisor took.

usage: fleet.py KERNEL INITRD OUTDIR HVNOISE [--demo]

Two VMs (tests/vm/qemu.sh, 2 vCPUs each, single-threaded TCG) joined by a
QEMU socket network (UDP between their two QEMU processes on this
machine's loopback: no packet leaves it), each with hvnoise.ko and
hvnoise record around one rank of an NCCL-like job (tests/host/nccl_fake.c
tcp: every all-reduce waits for the other rank's byte over TCP, so a rank
that stops stalls both).  VM B's RTC starts 2 s ahead of VM A's.  Once both ranks
run, this host pauses one VM's QEMU process (SIGSTOP) for 300 ms: first
VM B, then, in a second pair of VMs, VM A.  hvnoise correlate over the two
recordings must name the paused VM's rank as the culprit of the largest
job stall, with time taken from its vCPU, and the other's rank as waiting;
and the clocks' offset it finds from the collectives must agree with the
one the ranks measured over TCP (the round trip's half) within its stated
uncertainty.  Then the narrow case (three()): three VMs, a communicator of
two of them beside one of all three, VM B paused.  Prints the guests'
results and its own as KTAP (tests/host/hvntest.py).
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

import inject

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

check = hvntest.checker("vm-fleet/")
HERE = os.path.dirname(os.path.abspath(__file__))
PAUSE_MS = 300


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def boot(kernel, initrd, d, role, links, secs, rtc, append=""):
    """A VM with a NIC per (my UDP port, the peer's) of @links, at PCI
    slots 07, 08..."""
    os.makedirs(d, exist_ok=True)
    log = os.path.join(d, "console.log")
    pidfile = os.path.join(d, "qemu.pid")
    for f in (log, pidfile):
        if os.path.exists(f):
            os.unlink(f)
    nics = " ".join(f"-netdev socket,id=l{i},udp=127.0.0.1:{peer},localaddr=127.0.0.1:{me} "
                    f"-device virtio-net-pci,netdev=l{i},addr=0{7 + i}"
                    for i, (me, peer) in enumerate(links))
    env = dict(os.environ, HVN_VM_CPUS="2",
               HVN_VM_APPEND=f"hvn.role={role} hvn.secs={secs} {append}".strip(),
               HVN_VM_ARGS=f"{nics} -rtc base={rtc}")
    err = open(os.path.join(d, "qemu.err"), "w")
    p = subprocess.Popen([os.path.join(HERE, "qemu.sh"), kernel, initrd, log,
                          "/lib/hvnoise/guest.sh", "600", pidfile], env=env, stderr=err)
    return p, log, pidfile


def console(log):
    try:
        return open(log, errors="replace").read()
    except OSError:
        return ""


def wait_for(procs, logs, pattern, timeout):
    """Until every console shows @pattern (or a VM ends, or @timeout s)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(re.search(pattern, console(lg), re.M) for lg in logs):
            return True
        if any(p.poll() is not None for p in procs):
            return all(re.search(pattern, console(lg), re.M) for lg in logs)
        time.sleep(0.1)
    return False


def trace_from(d):
    with open(os.path.join(d, "vm-disk.img"), "rb") as f:
        m = re.match(rb"HVNTRACE (\d+)\n", f.read(512))
        if not m:
            return None
        data = f.read(int(m.group(1)))
    out = os.path.join(d, "job.dat")
    with open(out, "wb") as f:
        f.write(data)
    return out


def guest_results(log, tag):
    """The guest's KTAP lines, counted in this report."""
    for m in re.finditer(r"^(ok|not ok) \d+ vm-fleet/(.*?)(?: # (SKIP|XFAIL) (.*))?$",
                         console(log), re.M):
        if m.group(3) == "SKIP":
            hvntest.skip("vm-fleet/" + m.group(2), m.group(4))
        else:
            check(m.group(1) == "ok", f"{m.group(2)} ({tag})")


def job(kernel, initrd, hvn, d, links, skews, victim, tag, lines, append="", *,
        ran, came_out, correlated):
    """One job over VMs: a VM per role of @links (its NICs' (my UDP port,
    the peer's)), in @d/ROLE, its RTC @skews[role] s ahead, @append on its
    command line; @victim's QEMU paused once every rank runs; then
    hvnoise correlate over their recordings, the first @lines lines of its
    text printed.  @ran, @came_out: the names of those checks (" (@tag)"
    after them); @correlated(exit status): correlate's.  Returns
    (correlate's --json document, None if a check failed; {role: (QEMU's
    process, console log, pid file)})."""
    vms = {}
    for role in links:
        t = time.gmtime(time.time() + skews[role])
        vms[role] = boot(kernel, initrd, os.path.join(d, role), role, links[role],
                         15, time.strftime("%Y-%m-%dT%H:%M:%S", t), append)
    procs = [v[0] for v in vms.values()]
    logs = [v[1] for v in vms.values()]
    running = wait_for(procs, logs, r"^HVN-FLEET-RUNNING", 300)
    if check(running, f"{ran} ({tag})"):
        _, took = inject.pause(int(open(vms[victim][2]).read()), PAUSE_MS)
        print(f"  host: paused vm-{victim} for {took:.1f} ms")
    for p in procs:
        try:
            p.wait(timeout=400)
        except subprocess.TimeoutExpired:
            p.kill()
    for role in vms:
        guest_results(vms[role][1], f"vm-{role}, {tag}")
        check("HVNOISE-VM-DONE" in console(vms[role][1]), f"vm-{role} completed ({tag})")
    traces = [trace_from(os.path.dirname(vms[r][1])) for r in vms]
    if not check(all(traces), f"{came_out} ({tag})"):
        for lg in logs:
            print("  " + console(lg)[-1500:].replace("\n", "\n  "))
        return None, vms
    p = subprocess.run([hvn, "correlate", "--json", "--min-ms", "50", *traces],
                       capture_output=True, text=True, env=hvntest.sanitizer_env())
    if not check(p.returncode == 0, correlated(p.returncode)):
        print("  " + p.stderr[-1500:])
        return None, vms
    doc = json.loads(p.stdout)
    txt = subprocess.run([hvn, "correlate", "--min-ms", "50", "--top", "3", *traces],
                         capture_output=True, text=True).stdout
    for line in txt.splitlines()[:lines]:
        print("  | " + line)
    return doc, vms


def one(kernel, initrd, outdir, hvn, victim, lines=16):
    """One pair of VMs, @victim's QEMU paused: whether its rank was named."""
    tag = f"pause on vm-{victim}"
    pa, pb = free_udp_port(), free_udp_port()
    # Two hosts' clocks never agree: VM B's RTC, which its kernel reads
    # at boot (whole seconds), starts 2 s ahead of VM A's.
    doc, vms = job(kernel, initrd, hvn, os.path.join(outdir, f"pause-{victim}"),
                   {"a": [(pa, pb)], "b": [(pb, pa)]}, {"a": 0, "b": 2}, victim, tag, lines,
                   ran="both ranks run, over the network between the VMs",
                   came_out="both recordings came out of the VMs",
                   correlated=lambda rc: f"hvnoise correlate over both VMs' recordings (exit {rc}, {tag})")
    if doc is None:
        return False
    st = doc["job_stalls"][0] if doc["job_stalls"] else None
    c = st and st["culprit"]
    other = "b" if victim == "a" else "a"
    name = (f"the largest job stall ({st and st['lost_ns'] / 1e6:.1f} ms, {st and st['class']}) names "
            f"vm-{victim}'s rank, time taken from its vCPU ({c and c['host']} rank {c and c['rank']}, "
            f"{c and c['cause']}, {c and c['share']:.0%} of {c and c['interval_ns'] / 1e6:.1f} ms)")
    named = (st and st["lost_ns"] >= 0.6 * PAUSE_MS * 1e6 and c and c["host"] == f"vm-{victim}" and
             c["cause"] == "hypervisor")
    # The victim is named however the pause caught it: in its compute,
    # in a transfer, or just after it left an all-reduce with its last
    # data still inside its QEMU (the other rank then comes late to the
    # next one, and correlate follows that wait back to the victim).
    check(named, name)
    check(st and all(r["waiting"] for r in st["ranks"] if r["host"] == f"vm-{other}"),
          f"vm-{other}'s rank waited, not guilty ({tag})")
    # The pause is the victim's alone: it heads the hosts to drain, and
    # every stall the pause made names the victim only.  This machine's
    # own stops take time from both VMs at once (46.6 and 37.9 ms on their
    # CPU 1 in one all-reduce, seen in a CI run): the other VM may be
    # named for such a stall, but only where its own lost time says so.
    drain = [(b["host"], b["delay_ns"]) for b in doc.get("drain", [])]
    paused = [s for s in doc["job_stalls"] if s["lost_ns"] >= 0.6 * PAUSE_MS * 1e6]
    others = [c for s in doc["job_stalls"] for c in s["culprits"] if c["host"] == f"vm-{other}"]
    check(drain[:1] and drain[0][0] == f"vm-{victim}" and paused and
          all({c["host"] for c in s["culprits"]} == {f"vm-{victim}"} for s in paused) and
          all(c["cause"] == "hypervisor" and c["explained_ns"] > 0 for c in others),
          f"the hosts to drain: vm-{victim} first; the pause's {len(paused)} stalls name it alone; "
          f"vm-{other} only where its own lost time explains it "
          f"({', '.join(f'{h} {d / 1e6:.1f} ms' for h, d in drain) or 'none'}) ({tag})")
    # The offset the collectives give against the one TCP measured.
    m = re.search(r"^HVN-FLEET-CLOCK peer clock offset (-?\d+) ns rtt (\d+) ns",
                  console(vms["b"][1]), re.M)
    hosts = {h["host"]: h for h in doc["hosts"]}
    if check(m is not None and set(hosts) == {"vm-a", "vm-b"},
             f"the ranks measured their clocks' offset over TCP ({tag})"):
        a_minus_b, rtt = int(m.group(1)), int(m.group(2))
        if doc["reference"] == "vm-a":
            got, want = hosts["vm-b"]["offset_ns"], -a_minus_b
            unc = hosts["vm-b"]["uncertainty_ns"]
        else:
            got, want = hosts["vm-a"]["offset_ns"], a_minus_b
            unc = hosts["vm-a"]["uncertainty_ns"]
        # 2 s apart, give or take whole seconds twice: QEMU takes the
        # RTC base in whole seconds (B - A = 2 - frac(B's start) +
        # frac(A's start), in (1, 3) s), and each kernel reads its RTC in
        # whole seconds at boot (another (-1, 1) s): 3042 ms was seen.
        check(abs(got - want) <= unc + rtt / 2 and 0 < -a_minus_b < 4e9,
              f"vm-b's clock, set 2 s ahead, is found {abs(got) / 1e6:.3f} ms off by the collectives, "
              f"{abs(want) / 1e6:.3f} ms over TCP (difference {(got - want) / 1e3:.1f} us; "
              f"allowed {unc / 1e3:.1f} us stated + {rtt / 2e3:.1f} us half round trip) ({tag})")
    return named


def three(kernel, initrd, outdir, hvn):
    """The narrow case: three VMs, A linked to B and to C; A and B run an
    all-reduce of their own ("dp") before each of all three ("world").
    VM B paused: A waits for it in dp and comes late to world, where C
    waits for A.  The verdict must follow that wait back to B."""
    tag = "three VMs, dp of a and b only, pause on vm-b"
    ab, ba, ac, ca = (free_udp_port() for _ in range(4))
    doc, _ = job(kernel, initrd, hvn, os.path.join(outdir, "three"),
                 {"a": [(ab, ba), (ac, ca)], "b": [(ba, ab)], "c": [(ca, ac)]},
                 {"a": 0, "b": 2, "c": -1}, "b", tag, 30, "hvn.three=1",
                 ran="the three ranks run, over the networks between the VMs",
                 came_out="the three recordings came out of the VMs",
                 correlated=lambda rc: f"hvnoise correlate over the three recordings (exit {rc})")
    if doc is None:
        return
    st = doc["job_stalls"][0] if doc["job_stalls"] else None
    c = st and st["culprit"]
    check(st and st["lost_ns"] >= 0.6 * PAUSE_MS * 1e6 and c and c["host"] == "vm-b" and
          c["cause"] == "hypervisor",
          f"the largest job stall ({st and st['lost_ns'] / 1e6:.1f} ms, {st and st['class']}) names "
          f"vm-b's rank, time taken from its vCPU ({c and c['host']} rank {c and c['rank']}, "
          f"{c and c['cause']}) ({tag})")
    drain = [(b["host"], b["delay_ns"]) for b in doc.get("drain", [])]
    paused = [s for s in doc["job_stalls"] if s["lost_ns"] >= 0.6 * PAUSE_MS * 1e6]
    others = [c for s in doc["job_stalls"] for c in s["culprits"] if c["host"] != "vm-b"]
    check(drain[:1] and drain[0][0] == "vm-b" and paused and
          all({c["host"] for c in s["culprits"]} == {"vm-b"} for s in paused) and
          all(c["cause"] == "hypervisor" and c["explained_ns"] > 0 for c in others),
          f"the hosts to drain: vm-b first; the pause's {len(paused)} stalls name it alone; "
          f"vm-a and vm-c only where their own lost time explains it "
          f"({', '.join(f'{h} {d / 1e6:.1f} ms' for h, d in drain) or 'none'}) ({tag})")
    hosts = {h["host"] for h in doc["hosts"]}
    check(hosts == {"vm-a", "vm-b", "vm-c"} and all(h["aligned"] for h in doc["hosts"]),
          f"the three clocks aligned (vm-c's through vm-a) ({tag})")


def main():
    kernel, initrd, outdir, hvn = sys.argv[1:5]
    if sys.argv[5:] == ["--demo"]:
        # make demo: VM B paused, the whole verdict shown.
        sys.exit(0 if one(kernel, initrd, outdir, hvn, "b", lines=40) else 1)
    for victim in ("b", "a"):
        one(kernel, initrd, outdir, hvn, victim)
    three(kernel, initrd, outdir, hvn)


if __name__ == "__main__":
    main()
