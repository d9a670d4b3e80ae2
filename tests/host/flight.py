#!/usr/bin/env python3
"""hvnoise record --flight-recorder on this host (live tracefs; no module,
so irq:irq_handler_entry and the SIGUSR1 and trigger-file triggers).

usage: flight.py HVNOISE WORKDIR     (HVNOISE: the ASan/UBSan build; root)

Two bursts of disk interrupts 1.6 s apart, then SIGUSR1 with --keep 1: the
incident file must hold the second burst and at most the one straddling
page per CPU from before the last second, though the first burst filled
several; a trigger file there before the start is not a trigger, touching
it is; --max-files keeps the newest; an NCCL-like job writing into the
recorder's instance has all its collectives in the next incident; SIGTERM
stops it with its instance removed; bad options are refused with one line
and exit 2.  Prints KTAP (tests/host/hvntest.py).
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import hvntest

hvn, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
env = hvntest.sanitizer_env()
T = "/sys/kernel/tracing"
PAGE_EVENTS = 4080 // 16        # irq_handler_entry records per page, at most
check = hvntest.checker("flight/")


def mono():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def irqs_total():
    n = 0
    for ln in open("/proc/interrupts").readlines()[1:]:
        f = ln.split()
        if f and f[0].rstrip(":").isdigit():
            n += sum(int(x) for x in f[1:] if x.isdigit())
    return n


direct = os.path.join(work, "direct.bin")
with open(direct, "wb") as o:
    o.write(b"\0" * (8 << 20))


def burst():
    before = irqs_total()
    subprocess.run(["dd", f"if={direct}", "of=/dev/null", "bs=4k", "iflag=direct"],
                   capture_output=True)
    return irqs_total() - before


# --- bad command lines ---------------------------------------------------------------
for args, words in ((["--keep", "0"], "--keep 0: not a time from 1s"),
                    (["--keep", "x"], "--keep x: not a time"),
                    (["--lost-ms", "-1"], "--lost-ms -1: not a number"),
                    (["--max-files", "1.5x"], "--max-files 1.5x"),
                    (["--", "sleep", "1"], "runs no command")):
    p = subprocess.run([hvn, "record", "--flight-recorder", *args], capture_output=True,
                       text=True, env=env, timeout=20)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and words in p.stderr,
          f"record --flight-recorder {' '.join(args)}: exit {p.returncode}, "
          f"{p.stderr.strip()}", p.stderr[-300:])
p = subprocess.run([hvn, "record", "--flight-recorder", "--help"], capture_output=True,
                   text=True, env=env)
q = subprocess.run([hvn, "record", "--help"], capture_output=True, text=True, env=env)
check(p.returncode == 0 and "--trigger-file" in p.stdout and "--flight-recorder" in q.stdout,
      "record --help names --flight-recorder; --flight-recorder --help its options")
c = subprocess.run([hvn, "flight-recorder", "--help"], capture_output=True, text=True, env=env)
check(c.returncode == 0 and c.stdout == p.stdout,
      "hvnoise flight-recorder is the same command as record --flight-recorder (the same --help)")

# --- a live recorder ------------------------------------------------------------------
prefix = os.path.join(work, "inc")
trig = os.path.join(work, "trigger")
for f in glob.glob(prefix + "-*.dat"):
    os.unlink(f)
open(trig, "w").close()             # there before the start: not a trigger
errf = open(os.path.join(work, "fr.err"), "w+")
pr = subprocess.Popen([hvn, "record", "--flight-recorder", "--keep", "1", "-b", "1024",
                       "-o", prefix, "--trigger-file", trig, "--max-files", "2",
                       "-e", "irq:irq_handler_entry"], stderr=errf, env=env)
inst = None
for _ in range(100):
    errf.seek(0)
    # One whole line, prefixed once.
    m = re.search(r"^hvnoise flight-recorder: recording (hvnoise-fr-\d+) \(pid [^\n]*"
                  r"touch [^\n]*\n", errf.read(), re.M)
    if m or pr.poll() is not None:
        break
    time.sleep(0.05)
inst = m and m.group(1)
if not check(inst and os.path.isdir(f"{T}/instances/{inst}") and
             m.group(0).count("hvnoise flight-recorder:") == 1,
             f"the recorder runs in its own instance ({inst}), saying so in one line",
             open(errf.name).read()):
    pr.kill()
    sys.exit(1)
idir = f"{T}/instances/{inst}"
check(open(f"{idir}/options/overwrite").read().strip() == "1" and
      1024 <= int(open(f"{idir}/buffer_size_kb").read().split()[0]) < 1100 and
      open(f"{idir}/tracing_on").read().strip() == "1",
      "its ring: overwrite mode, -b 1024 KB per CPU (the kernel rounds to pages), tracing on")


def wait_line(what, n):
    """The n-th 'wrote' line of stderr, once there."""
    for _ in range(100):
        errf.seek(0)
        lines = re.findall(r"flight-recorder: wrote (\S+) \((.*?)\): (\d+) pages", errf.read())
        if len(lines) >= n:
            return lines[n - 1]
        time.sleep(0.05)
    return None


time.sleep(0.5)
check(not glob.glob(prefix + "-*.dat"), "a trigger file there before the start is no trigger")
a = burst()
time.sleep(1.6)
b = burst()
sent = mono()
pr.send_signal(signal.SIGUSR1)
w = wait_line("SIGUSR1", 1)
check(w and w[1] == "SIGUSR1" and w[0].endswith("-signal.dat") and os.path.exists(w[0]),
      f"SIGUSR1 writes an incident ({w and os.path.basename(w[0])}, {w and w[2]} pages)",
      open(errf.name).read()[-300:])
if w:
    path = w[0]
    tc = subprocess.run(["trace-cmd", "report", "-t", "--nodate", "-i", path], capture_output=True,
                        text=True)
    ts = [(int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")))
          for m in re.finditer(r"\[(\d+)\]\s+(\d+)\.(\d+): irq_handler_entry", tc.stdout)]
    check(tc.returncode == 0 and ts and "FAILED TO PARSE" not in tc.stdout + tc.stderr,
          f"trace-cmd report reads it ({len(ts)} irq_handler_entry)", tc.stderr[-300:])
    cutoff = sent - 10**9
    old = {}
    for cpu, t in ts:
        if t < cutoff:
            old[cpu] = old.get(cpu, 0) + 1
    recent = sum(1 for _, t in ts if t >= cutoff)
    check(a > 3 * PAGE_EVENTS and all(n <= PAGE_EVENTS for n in old.values())
          and recent >= b // 2,
          f"--keep 1: of the first burst ({a} IRQs, 1.6 s earlier) at most the page "
          f"straddling the cut per CPU ({old or 'none'}); the second ({b} IRQs) is there "
          f"({recent} events in the last second)")
    rep = subprocess.run([hvn, "report", "--json", path], capture_output=True, text=True,
                         env=env)
    data = open(path, "rb").read()
    check(rep.returncode == 0 and b"flight-recorder SIGUSR1" in data and
          '"clock_pairs":[[' in rep.stdout and "recorded_by\":\"hvnoise record" in rep.stdout,
          "hvnoise report reads it: clock pair, recorder, trigger in its metadata",
          rep.stderr[-300:])

os.utime(trig) if os.path.exists(trig) else open(trig, "w").close()
w2 = wait_line("file", 2)
check(w2 and w2[1] == f"trigger file {trig}" and w2[0].endswith("-file.dat")
      and not os.path.exists(trig),
      f"touching the trigger file writes an incident ({w2 and os.path.basename(w2[0])}) "
      f"and removes the file for the next touch")
pr.send_signal(signal.SIGUSR1)
w3 = wait_line("SIGUSR1", 3)
left = sorted(glob.glob(prefix + "-*.dat"))
check(w3 and w2 and left == sorted([w2[0], w3[0]]),
      f"--max-files 2: the two newest incidents stay ({len(left)} files)", left)

# An NCCL-like job (0.5 s, inside --keep 1) writing into the recorder's
# instance: its collectives are in the next incident, where hvnoise
# correlate finds every one.
fake = os.path.join(os.path.dirname(hvn), "nccl_fake")
plugin = os.path.join(os.path.dirname(hvn), "libnccl-profiler-hvnoise.so")
if os.path.exists(fake) and os.path.exists(plugin):
    nccl_env = dict(env, HVNOISE_NCCL_TRACEFS=idir, HVNOISE_NCCL_TRIGGER=trig,
                    HVNOISE_NCCL_STALL_MS="100")
    job = subprocess.run([fake, "work", plugin, "0.5", "1", "2000"], capture_output=True, text=True,
                         env=nccl_env, timeout=60)
    m = re.search(r"nccl_fake: (\d+) collectives", job.stdout + job.stderr)
    pr.send_signal(signal.SIGUSR1)
    w4 = wait_line("SIGUSR1", 4)
    got = None
    if w4 and m:
        c = subprocess.run([hvn, "correlate", "--json", w4[0]], capture_output=True, text=True,
                           env=env)
        try:
            got = json.loads(c.stdout)["collectives"]
        except (ValueError, KeyError) as e:
            got = f"unreadable: {e} {c.stderr[-200:]}"
    check(m and got == int(m.group(1)) and w4[1] == "SIGUSR1",
          f"an NCCL-like job writing into the recorder's instance: hvnoise correlate finds "
          f"its {m and m.group(1)} collectives in the incident ({got}); no collective took "
          f"100 ms, so the plugin's stall trigger stayed quiet",
          (job.stderr + job.stdout)[-300:])

    # A stall: the job stopped for 300 ms in the middle of its collectives.
    jp = subprocess.Popen([fake, "work", plugin, "1.2", "1", "2000"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=nccl_env, text=True)
    # Stopped once its collectives run (not after a fixed time: a loaded
    # host may still be starting it), mid-collective.
    early = []
    for ln in jp.stdout:
        early.append(ln)
        if "collectives running" in ln:
            break
    jp.send_signal(signal.SIGSTOP)
    time.sleep(0.3)
    jp.send_signal(signal.SIGCONT)
    jp.communicate(timeout=60)
    w5 = wait_line("stall", 5)
    ms = re.search(r"took ([0-9.]+) ms", w5[1]) if w5 else None
    stalls = None
    if w5:
        c = subprocess.run([hvn, "correlate", "--json", w5[0]], capture_output=True, text=True,
                           env=env)
        try:
            stalls = [x["duration_ns"] for x in json.loads(c.stdout)["stalls"]]
        except (ValueError, KeyError) as e:
            stalls = f"unreadable: {e}"
    check(w5 and w5[0].endswith("-stall.dat") and w5[1].startswith(f"trigger file {trig}: nccl stall:")
          and ms and float(ms.group(1)) >= 290 and isinstance(stalls, list)
          and any(d >= 290_000_000 for d in stalls),
          f"a 300 ms stall of the job: the plugin's trigger (HVNOISE_NCCL_STALL_MS=100) writes a "
          f"stall incident ({w5 and w5[1][len(trig) + 15:]}), where hvnoise correlate finds it "
          f"(stalls {stalls if not isinstance(stalls, list) else [round(d / 1e6, 1) for d in stalls]} ms)",
          open(errf.name).read()[-400:])
    errf.seek(0)
    n_stall = len(re.findall(r"-stall\.dat", errf.read()))
    check(n_stall == 1, f"one incident for the stall, however many operations it held ({n_stall})")
else:
    check(False, f"NCCL-like job (no {fake} or {plugin})")

# --- hvnoise trigger --at: a past window, and one to come ------------------------
def wrote_count():
    errf.seek(0)
    return len(re.findall(r"flight-recorder: wrote ", errf.read()))


def burst_at():
    """A burst's IRQ count and its middle (mono ns, CLOCK_REALTIME s)."""
    m0, r0 = mono(), time.time()
    n = burst()
    m1, r1 = mono(), time.time()
    return n, (m0 + m1) // 2, (r0 + r1) / 2, (m1 - m0) // 2


n0 = wrote_count()
burst()
time.sleep(1.5)
nb, mid, rmid, half = burst_at()
time.sleep(1.5)
na = burst()
win = half + 300_000_000
p = subprocess.run([hvn, "trigger", "--trigger-file", trig, "--at", f"@{rmid:.6f}",
                    "--window", f"{win / 1e9:.3f}", "the", "middle", "burst"],
                   capture_output=True, text=True, env=env)
w6 = wait_line("at", n0 + 1)
ts = []
if w6:
    tc = subprocess.run(["trace-cmd", "report", "-t", "--nodate", "-i", w6[0]],
                        capture_output=True, text=True)
    ts = [(int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")))
          for m in re.finditer(r"\[(\d+)\]\s+(\d+)\.(\d+): irq_handler_entry", tc.stdout)]
inside = sum(1 for _, t in ts if mid - win <= t <= mid + win)
after = sum(1 for _, t in ts if t > mid + win)
before = {}
for cpu, t in ts:
    if t < mid - win:
        before[cpu] = before.get(cpu, 0) + 1
# What came after the window was read out of the ring with it: kept in
# the file, not lost.
check(p.returncode == 0 and "taken by the flight recorder (pid" in p.stderr and
      w6 and w6[0].endswith("-at.dat") and "around" in w6[1] and
      w6[1].endswith(": the middle burst") and inside >= nb // 2 and after >= na // 2 and
      all(n <= PAGE_EVENTS for n in before.values()),
      f"hvnoise trigger --at a past moment: written from the window's start ({w6 and os.path.basename(w6[0])}: "
      f"{inside} interrupts of the {nb} of its burst; of the burst 1.5 s before at most the page "
      f"straddling the start per CPU, {before or 'none'}; the one after, read out with it, kept: {after} of {na})",
      p.stderr + open(errf.name).read()[-400:])
# The window ends 3.5 s after asked0 or later (time.time() is read after
# it): the incident must not be there just before that, and must come.
asked0 = mono()
p = subprocess.run([hvn, "trigger", "--trigger-file", trig, "--at", f"@{time.time() + 3:.6f}",
                    "--window", "0.5s"], capture_output=True, text=True, env=env)
early = None
if mono() < asked0 + 3_300_000_000:
    time.sleep((asked0 + 3_300_000_000 - mono()) / 1e9)
    errf.seek(0)
    early = len(re.findall(r"flight-recorder: wrote ", errf.read())) - n0 - 1
w7 = wait_line("at", n0 + 2)
got = (mono() - asked0) / 1e9
errf.seek(0)
log = errf.read()
check(p.returncode == 0 and early == 0 and w7 and w7[0].endswith("-at.dat") and
      "asked for +-0.500 s around" in log,
      f"hvnoise trigger --at a moment to come: written once its window has passed "
      f"(none written 3.3 s after asking: {early} early; "
      f"{w7 and os.path.basename(w7[0])} seen {got:.1f} s after, the window ending at 3.5 s)",
      log[-400:])
for args, rc_want, words in ((["--at", "soon"], 2, "--at soon: not"),
                             (["--at", "@1", "--window", "0"], 2, "--window 0"),
                             (["--window", "5s"], 2, "give --at too"),
                             (["--trigger-file", os.path.join(work, "no", "such", "trigger")], 1,
                              "cannot write")):
    p = subprocess.run([hvn, "trigger", *args], capture_output=True, text=True, env=env)
    check(p.returncode == rc_want and words in p.stderr and p.stderr.count("\n") == 1,
          f"hvnoise trigger {' '.join(args)}: exit {p.returncode}, {p.stderr.strip()[:110]}",
          p.stderr[-300:])

rc, err = hvntest.stop(pr, signal.SIGTERM, errf)
check(rc == 0 and "stopped by signal" in err and not os.path.exists(idir) and
      "Sanitizer" not in err and "runtime error" not in err,
      f"SIGTERM: exit {rc}, instance removed, no sanitizer report", err[-400:])

# --- what an operator runs next: hvnoise incidents, and a trigger nobody takes ---------
base = os.path.basename(prefix) + "-"
kept = sorted(glob.glob(prefix + "-*.dat"), key=lambda f: os.path.basename(f)[len(base):],
              reverse=True)
p = subprocess.run([hvn, "incidents", "-o", prefix], capture_output=True, text=True, env=env)
listed = re.findall(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  (\S+) +(\S+)\n    (.*)$",
                    p.stdout, re.M)
check(p.returncode == 0 and len(kept) >= 2 and [f for _, f, _ in listed] == kept and
      all(f.endswith(f"-{t}.dat") and w and not w.startswith("?") for t, f, w in listed),
      f"hvnoise incidents lists the {len(kept)} incidents kept, newest first, each with its "
      f"trigger and why ({listed[:1]})", p.stdout + p.stderr)
p = subprocess.run([hvn, "incidents", "-o", prefix, "--latest"], capture_output=True,
                   text=True, env=env)
check(p.returncode == 0 and kept and p.stdout == kept[0] + "\n",
      f"hvnoise incidents --latest prints the newest one's path ({p.stdout.strip()})",
      p.stderr)
tags = {t for t, _, _ in listed}
p = subprocess.run([hvn, "incidents", "-o", prefix, "--trigger", "at", "--latest"],
                   capture_output=True, text=True, env=env)
want = [f for f in kept if f.endswith("-at.dat")][:1]
check(p.returncode == 0 and want and p.stdout == want[0] + "\n",
      f"... --trigger at --latest: the newest -at.dat ({p.stdout.strip()}; kept: {sorted(tags)})",
      p.stderr)
# A prefix is a name, not a pattern: the same files under a directory
# named with glob's characters list the same.
odd = os.path.join(work, "odd[1]*?")
os.makedirs(odd, exist_ok=True)
for f in kept:
    shutil.copy(f, odd)
p = subprocess.run([hvn, "incidents", "-o", os.path.join(odd, os.path.basename(prefix))],
                   capture_output=True, text=True, env=env)
got = re.findall(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  \S+ +(\S+)\n", p.stdout, re.M)
check(p.returncode == 0 and got == [os.path.join(odd, os.path.basename(f)) for f in kept],
      f"... under a directory named {os.path.basename(odd)}: the same {len(kept)} listed, "
      f"the prefix taken as a name", p.stdout[-300:] + p.stderr)
p = subprocess.run([hvn, "incidents", "-o", os.path.join(work, "none"), "--latest"],
                   capture_output=True, text=True, env=env)
check(p.returncode == 3 and p.stdout == "" and "no incident matches" in p.stderr and
      p.stderr.count("\n") == 1,
      f"... none there: exit {p.returncode}, {p.stderr.strip()}", p.stdout + p.stderr)
t0 = time.monotonic()
p = subprocess.run([hvn, "trigger", "--trigger-file", trig, "nobody", "listens"],
                   capture_output=True, text=True, env=env)
check(p.returncode == 1 and "none runs here" in p.stderr and p.stderr.count("\n") == 1 and
      not os.path.exists(trig),
      f"hvnoise trigger with no recorder running: exit {p.returncode} after "
      f"{time.monotonic() - t0:.1f} s, the file taken back: {p.stderr.strip()[:120]}",
      p.stderr)

# --- a job that is not root triggers through the service's directory ----------------
# hvnoise-flight-recorder.service makes /run/hvnoise mode 1733 (sticky,
# anyone may create a file, none may list or remove another's): here a
# directory of that mode, a recorder on it, and an NCCL-like job with the
# plugin running as user nobody, whose first collective is a stall
# (HVNOISE_NCCL_STALL_MS=0.01): the plugin's own temporary file, renamed.
unit = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                         "tools", "systemd", "hvnoise-flight-recorder.service")).read()
mode = re.search(r"^RuntimeDirectoryMode=(\d+)$", unit, re.M)
rundir = subprocess.run(["mktemp", "-d", "/tmp/hvnoise-run.XXXXXX"], capture_output=True,
                        text=True).stdout.strip()
os.chmod(rundir, int(mode.group(1), 8) if mode else 0o755)
jobdir = subprocess.run(["mktemp", "-d", "/tmp/hvnoise-job.XXXXXX"], capture_output=True,
                        text=True).stdout.strip()
os.chown(jobdir, 65534, 65534)
jtrig = os.path.join(rundir, "trigger")
jprefix = os.path.join(work, "job")
errf = open(os.path.join(work, "fr-job.err"), "w+")
pr = subprocess.Popen([hvn, "flight-recorder", "--keep", "1", "-b", "1024", "-o", jprefix,
                       "--trigger-file", jtrig, "-e", "irq:irq_handler_entry"],
                      stderr=errf, env=env)
for _ in range(100):
    errf.seek(0)
    if "recording" in errf.read() or pr.poll() is not None:
        break
    time.sleep(0.05)
if os.path.exists(fake) and os.path.exists(plugin):
    job = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          fake, "work", plugin, "0.3", "0", "1000"], capture_output=True,
                         text=True, env=dict(env, HVNOISE_NCCL_TRIGGER=jtrig,
                                             HVNOISE_NCCL_STALL_MS="0.01",
                                             HVNOISE_NCCL_DIR=jobdir))
else:
    job = subprocess.CompletedProcess([], 1, "", f"no {fake} or {plugin}")
got = None
for _ in range(100):
    got = glob.glob(jprefix + "-*-stall.dat")
    if got:
        break
    time.sleep(0.05)
rc, err = hvntest.stop(pr, signal.SIGTERM, errf)
why = re.findall(r"flight-recorder: wrote \S+-stall\.dat \((.*?)\)", err)
left = sorted(os.listdir(rundir))
check(mode and mode.group(1) == "1733" and job.returncode == 0 and got and rc == 0 and
      why and why[0].startswith(f"trigger file {jtrig}: nccl stall: ") and
      left == ["trigger.taken"],
      f"a job running as nobody triggers through a directory of the unit's RuntimeDirectoryMode "
      f"({mode and mode.group(1)}): {got and os.path.basename(got[0])} "
      f"({why and why[0][len(jtrig) + 15:]}); left there: {left}",
      job.stderr[-300:] + err[-300:])
subprocess.run(["rm", "-rf", rundir, jobdir])

# --- the BPF source, where this host has it: a disk storm over --storm-irqs ----------
st = subprocess.run([hvn, "status"], capture_output=True, text=True, env=env).stdout
if re.search(r"^source +bpf", st, re.M):
    bprefix = os.path.join(work, "bpf")
    for f in glob.glob(bprefix + "-*.dat"):
        os.unlink(f)
    errf = open(os.path.join(work, "fr-bpf.err"), "w+")
    # As the systemd unit runs it: its capability bounding set, no new
    # privileges (taken from the unit, so that the two cannot drift).
    unit = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                             "tools", "systemd", "hvnoise-flight-recorder.service")).read()
    caps = re.search(r"^CapabilityBoundingSet=(.*)$", unit, re.M).group(1).split()
    sandbox = ["setpriv", "--no-new-privs", "--bounding-set",
               "-all," + ",".join("+" + c[4:].lower() for c in caps)]
    pr = subprocess.Popen(sandbox + [hvn, "flight-recorder", "--keep", "5", "-o", bprefix,
                                     "--cpus", "0-1", "--param", "storm_rate=500",
                                     "--storm-irqs", "300"], stderr=errf, env=env)
    time.sleep(1.5)
    n = burst()
    storm = None
    for _ in range(60):
        storm = sorted(glob.glob(bprefix + "-*-storm.dat"))
        if storm:
            break
        time.sleep(0.1)
    rc, err = hvntest.stop(pr, signal.SIGTERM, errf)
    rep = {}
    if storm:
        p = subprocess.run([hvn, "report", "--json", storm[-1]], capture_output=True,
                           text=True, env=env)
        try:
            rep = json.loads(p.stdout)["reports"][0]
        except (ValueError, KeyError, IndexError):
            rep = {}
    irqs = sum(c["storm_irqs"] for c in rep.get("cpus", []))
    check(storm and rc == 0 and irqs >= 300 and "Sanitizer" not in err and
          "runtime error" not in err,
          f"BPF source: a disk burst ({n} IRQs) over storm_rate=500 writes a storm incident "
          f"holding the storm ({irqs} IRQs >= --storm-irqs 300); exit {rc}; with only the "
          f"unit's capabilities ({' '.join(caps)}) and no new privileges", err[-400:])
    if storm:
        tc = subprocess.run(["trace-cmd", "report", "-i", storm[-1]], capture_output=True,
                            text=True)
        check(tc.returncode == 0 and " irq_storm: " in tc.stdout and
              "FAILED TO PARSE" not in tc.stdout + tc.stderr,
              "trace-cmd reads the BPF incident's hvnoise events", tc.stderr[-300:])
else:
    why = "no BPF source on this host (hvnoise status)"
    print(f"  {why}: its flight-recorder checks skipped")
    check.skip("BPF source: a disk burst over storm_rate=500 writes a storm incident "
               "holding the storm", why)
    check.skip("trace-cmd reads the BPF incident's hvnoise events", why)
sys.exit(hvntest.exit_status())
