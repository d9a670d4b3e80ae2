#!/usr/bin/env python3
"""The flight recorder under faults, on this host (live tracefs; the
kernel's irq events, with or without the module).

usage: flight_faults.py HVNOISE WORKDIR     (HVNOISE: the ASan/UBSan build; root)

- a full disk while an incident is written: the incident is lost, said,
  and counted; no partial file stays; the recorder goes on, and its next
  incident (and its stop) say how many were lost with how many pages;
- SIGKILL at moments after a trigger, as an OOM kill or a crash: every
  incident file on disk is complete, and the next recorder (systemd
  restarts it) removes the partial files and the killed ones' tracefs
  instances, and keeps --max-files counting the incidents of earlier runs;
- its tracefs instance removed under it: the kernel refuses while the
  recorder holds it open, and the recorder goes on.

The module unloaded and loaded again under it and a 1 h clock step are
tested in the VM (tests/vm/guest-flight.sh).  Prints KTAP (hvntest.py).
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

import hvntest

hvn, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
env = hvntest.sanitizer_env()
T = "/sys/kernel/tracing"
check = hvntest.checker("flight-faults/")

direct = os.path.join(work, "direct.bin")
with open(direct, "wb") as o:
    o.write(b"\0" * (4 << 20))


def burst():
    """Disk interrupts: events for the ring."""
    subprocess.run(["dd", f"if={direct}", "of=/dev/null", "bs=4k", "iflag=direct"],
                   capture_output=True)


def wait_for(errf, pattern, n=1, timeout=20):
    """The n-th match of pattern in the recorder's stderr, once there."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        errf.seek(0)
        m = re.findall(pattern, errf.read())
        if len(m) >= n:
            return m[n - 1]
        time.sleep(0.05)
    return None


def start(prefix, name, *extra):
    """A recorder of the kernel's irq events writing PREFIX-*.dat."""
    errf = open(os.path.join(work, name + ".err"), "w+")
    p = subprocess.Popen([hvn, "flight-recorder", "--keep", "5", "-o", prefix, "--source", "kernel",
                          "-e", "irq:irq_handler_entry", *extra], stderr=errf, env=env)
    inst = wait_for(errf, r"flight-recorder: recording (hvnoise-fr-\d+) \(pid")
    return p, errf, inst


def report(path):
    p = subprocess.run([hvn, "report", "--json", path], capture_output=True, text=True,
                       env=env)
    try:
        return json.loads(p.stdout)["reports"][0]
    except (ValueError, KeyError, IndexError):
        return {}


def leftovers(d):
    return sorted(glob.glob(os.path.join(d, "*hvnoise-tmp")))


# --- a full disk while an incident is written -----------------------------------------
full = os.path.join(work, "full")
os.makedirs(full, exist_ok=True)
subprocess.run(["umount", full], capture_output=True)
mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", full],
                         capture_output=True, text=True)
if mounted.returncode:
    why = f"cannot mount a small tmpfs: {mounted.stderr.strip()}"
    for name in ("a full disk: the incident is lost, said and counted; nothing partial stays",
                 "... the recorder goes on: its next incident says 1 was lost, with its pages",
                 "... and its stop says so"):
        check.skip(name, why)
else:
    try:
        pr, errf, inst = start(os.path.join(full, "inc"), "full", "-b", "1024")
        filler = os.path.join(full, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        os.close(fd)
        burst()
        pr.send_signal(signal.SIGUSR1)
        lost = wait_for(errf, r"the incident \(SIGUSR1\) is lost: (\d+) pages")
        left = [f for f in os.listdir(full) if f != "filler"]
        check(lost is not None and int(lost) > 0 and pr.poll() is None and not left,
              f"a full disk: the incident is lost, said and counted ({lost} pages); nothing "
              f"partial stays ({left})", open(errf.name).read()[-400:])
        os.unlink(filler)
        burst()
        pr.send_signal(signal.SIGUSR1)
        w = wait_for(errf, r"flight-recorder: wrote (\S+) \(SIGUSR1\)")
        r = report(w) if w else {}
        u = r.get("flight_recorder_unwritten", {})
        text = subprocess.run([hvn, "report", w], capture_output=True, text=True,
                              env=env).stdout if w else ""
        check(w and r.get("complete") and u.get("incidents") == 1 and
              u.get("pages") == int(lost or -1) and
              "could not write 1 incidents" in text,
              f"... the recorder goes on: its next incident says 1 was lost, with its pages "
              f"({u})", open(errf.name).read()[-400:])
        rc, err = hvntest.stop(pr, signal.SIGTERM, errf)
        check(rc == 0 and "1 incidents could not be written" in err and
              not hvntest.sanitizer_report(err),
              f"... and its stop says so (exit {rc})", err[-300:])
    finally:
        subprocess.run(["umount", full], capture_output=True)

# --- SIGKILL after a trigger, at moments through the write ----------------------------
kd = os.path.join(work, "killed")
os.makedirs(kd, exist_ok=True)
for f in glob.glob(os.path.join(kd, "*")):
    os.unlink(f)
prefix = os.path.join(kd, "inc")
delays = [0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]
mid = cleaned = reaped = 0
missed = []
left, prev = [], None
for d in delays + [None]:       # None: the recorder that stays
    pr, errf, inst = start(prefix, "kill", "-b", "4096", *(["--max-files", "2"] if d is None else []))
    errf.seek(0)
    err = errf.read()
    # Each start finds what the previous kill left.
    if left:
        mid += 1
        if "partial files an earlier recorder left" in err and not leftovers(kd):
            cleaned += 1
        else:
            missed.append(f"partial files {left}")
    if prev:
        if "instances hvnoise-fr-PID of recorders that were killed" in err and \
                not os.path.isdir(f"{T}/instances/{prev}"):
            reaped += 1
        else:
            missed.append(f"instance {prev}")
    if d is None:
        break
    burst()
    pr.send_signal(signal.SIGUSR1)
    time.sleep(d)               # where the kill lands, not a wait for a result
    pr.kill()
    pr.wait()
    left, prev = leftovers(kd), inst
    if d == delays[-1]:
        # Before the last start, whose --max-files prunes them.
        done = sorted(glob.glob(prefix + "-*.dat"))
        bad = [os.path.basename(f) for f in done if not report(f).get("complete")]
check(not bad, f"{len(delays)} recorders SIGKILLed 0 to 500 ms after SIGUSR1 ({mid} of them "
      f"while writing): each of the {len(done)} incident files on disk is complete", bad)
check(inst and not missed and reaped == len(delays) and cleaned == mid,
      f"each next recorder (as systemd restarts it) removes the partial files ({cleaned} "
      f"times) and the tracefs instance ({reaped} of {len(delays)}) the killed one left, "
      f"and says so", " ".join(missed))
pr.send_signal(signal.SIGUSR1)
w = wait_for(errf, r"flight-recorder: wrote (\S+) \(SIGUSR1\)")
after = sorted(glob.glob(prefix + "-*.dat"))
check(w and len(after) == min(2, len(done) + 1) and w in after,
      f"--max-files 2 counts the incidents of the killed runs too ({len(done)} before, "
      f"{len(after)} after)", open(errf.name).read()[-300:])

# --- its instance removed under it -----------------------------------------------------
idir = f"{T}/instances/{inst}" if inst else None
try:
    os.rmdir(idir)
    removed = None
except OSError as e:
    removed = e.errno
pr.send_signal(signal.SIGUSR1)
w2 = wait_for(errf, r"flight-recorder: wrote (\S+) \(SIGUSR1\)", n=2)
if removed is None:
    rc = pr.wait(timeout=10)
    errf.seek(0)
    check(rc == 1 and "instance was removed" in errf.read(),
          f"its instance removed under it: the recorder stops with exit 1 (got {rc})")
else:
    check(removed == 16 and w2 and pr.poll() is None,
          f"its instance removed under it: the kernel refuses (errno {removed}, EBUSY) and "
          f"the recorder goes on (an incident after: {w2 and os.path.basename(w2)})")
rc, err = hvntest.stop(pr, signal.SIGTERM, errf)
check(rc in (0, 1) and not hvntest.sanitizer_report(err) and
      not [i for i in os.listdir(f"{T}/instances") if i == inst],
      f"SIGTERM after the faults: exit {rc}, its instance removed, no sanitizer report",
      err[-300:])
sys.exit(hvntest.exit_status())
