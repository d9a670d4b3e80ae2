#!/usr/bin/env python3
"""The flight recorder in a VM with hvnoise.ko (host side).

usage: flight.py KERNEL INITRD OUTDIR

Boots tests/vm/guest-flight.sh (tests/vm/qemu.sh, 2 vCPUs); when the guest
prints HVN-INJECT-PAUSE, stops the whole QEMU process for 100 ms (every
vCPU loses that time, as under a hypervisor's preemption), which the
recorder's lost threshold must turn into an incident file.  Prints the
guest's results and vm-flight/completed as KTAP (tests/host/hvntest.py).
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
import hvntest  # noqa: E402

kernel, initrd, out = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
log = os.path.join(out, "flight-console.log")
pidfile = os.path.join(out, "flight-qemu.pid")
for f in (log, pidfile):
    if os.path.exists(f):
        os.unlink(f)
env = dict(os.environ, HVN_VM_CPUS="2")
proc = subprocess.Popen([os.path.join(here, "qemu.sh"), kernel, initrd, log,
                         "/lib/hvnoise/guest.sh", "600", pidfile], env=env)
paused = None
while proc.poll() is None:
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    if paused is None and "HVN-INJECT-PAUSE" in text and os.path.exists(pidfile):
        pid = int(open(pidfile).read())
        t0 = time.monotonic_ns()
        os.kill(pid, signal.SIGSTOP)
        while time.monotonic_ns() - t0 < 100_000_000:
            pass
        os.kill(pid, signal.SIGCONT)
        paused = (time.monotonic_ns() - t0) / 1e6
        print(f"  host: paused the VM for {paused:.1f} ms")
    time.sleep(0.05)
text = open(log, errors="replace").read()
for ln in text.splitlines():
    if hvntest.parse(ln):
        hvntest.relay(ln)
    elif ln.startswith(("hvnoise ", "guest: ")) or " lost: " in ln:
        print(ln.rstrip())
ok = "HVNOISE-VM-DONE" in text and paused is not None
hvntest.result(ok, "vm-flight/completed" +
               ("" if paused is not None else " (the guest never asked for the pause)"))
