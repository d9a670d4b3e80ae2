#!/usr/bin/env python3
"""Each systemd unit's command, run under the unit's own sandbox as far as
this machine can without systemd: its capability bounding set and no new
privileges (setpriv), and its SystemCallFilter= and
SystemCallArchitectures=native (tests/host/seccomp_run.c, the filter's
groups expanded by systemd-analyze syscall-filter, as systemd expands
them; a system call outside it kills the command with SIGSYS, as under
systemd).  Each command does its work there: the textfile exporter
rewrites its file, the HTTP exporter answers a scrape, the flight recorder
writes an incident for its trigger file and one for SIGUSR1 (the unit's
ExecReload), and each stops on SIGTERM with exit 0.  Paths are the test's
own; the rest of ExecStart is the unit's.  Also systemd-analyze security
--offline: each unit's exposure.

usage: units.py HVNOISE SECCOMP_RUN WORKDIR       (root)
Prints KTAP (tests/host/hvntest.py).
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hvntest  # noqa: E402

hvn, seccomp_run, work = (os.path.abspath(a) for a in sys.argv[1:4])
top = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
check = hvntest.checker("units/")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def unit_keys(path):
    """The unit's keys (continued lines joined), last value of each."""
    text = re.sub(r"\\\n\s*", " ", open(path).read())
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^(\w+)=(.*)$", text, re.M)}


numbers = {}
out = subprocess.run(["gcc", "-dM", "-E", "-"], input="#include <sys/syscall.h>\n",
                     capture_output=True, text=True).stdout
for m in re.finditer(r"^#define __NR_(\w+) (\d+)$", out, re.M):
    numbers[m.group(1)] = int(m.group(2))


def expand(items, seen=None):
    """System call names of a SystemCallFilter= allow-list."""
    seen = set() if seen is None else seen
    names = set()
    for it in items:
        if not it.startswith("@"):
            names.add(it)
            continue
        if it in seen:
            continue
        seen.add(it)
        p = subprocess.run(["systemd-analyze", "syscall-filter", it], capture_output=True, text=True)
        sub = [ln.strip() for ln in p.stdout.splitlines()[1:]
               if ln.strip() and not ln.strip().startswith("#")]
        names |= expand(sub, seen)
    return names


def wait_until(cond, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def run_unit(name, paths, work_fn):
    """Starts @name's ExecStart (@paths: the unit's path -> the test's) in
    its sandbox; @work_fn(proc, errfile) does and checks its work; then
    SIGTERM: its exit status."""
    u = unit_keys(os.path.join(top, "tools", "systemd", name))
    cmd = u["ExecStart"].replace("@SBINDIR@/hvnoise", hvn)
    for a, b in paths.items():
        cmd = cmd.replace(a, b)
    caps = u["CapabilityBoundingSet"].split()
    allow = u["SystemCallFilter"].split()
    names = expand(allow)
    nrs = sorted({numbers[n] for n in names if n in numbers})
    ok = u.get("NoNewPrivileges") == "yes" and u.get("SystemCallArchitectures") == "native"
    check(ok and len(nrs) > 100 and {"bpf", "perf_event_open"} <= names,
          f"{name}: NoNewPrivileges, native only, and SystemCallFilter={' '.join(allow)} "
          f"({len(nrs)} system calls of this architecture)")
    sandbox = ["setpriv", "--no-new-privs", "--bounding-set",
               "-all," + ",".join("+" + c[4:].lower() for c in caps),
               seccomp_run, ",".join(map(str, nrs))]
    errf = open(os.path.join(work, name + ".err"), "w+")
    pr = subprocess.Popen(sandbox + cmd.split(), stderr=errf, stdout=subprocess.DEVNULL)
    try:
        work_fn(pr, errf)
    finally:
        rc, err = hvntest.stop(pr, signal.SIGTERM, errf, timeout=20)
    check(rc == 0, f"{name}: stops on SIGTERM with exit 0 under its sandbox (exit {rc}"
          f"{', SIGSYS: a system call outside its filter' if rc == -signal.SIGSYS else ''})",
          err[-600:])
    return rc


def errtext(errf):
    errf.seek(0)
    return errf.read()


# The textfile exporter: its file rewritten, twice.
tdir = os.path.join(work, "node-exporter")
os.makedirs(tdir)
prom = os.path.join(tdir, "hvnoise.prom")


def textfile(pr, errf):
    first = wait_until(lambda: os.path.exists(prom) or pr.poll() is not None, 30) and \
        os.path.exists(prom) and os.stat(prom).st_mtime_ns
    again = first and wait_until(lambda: os.stat(prom).st_mtime_ns != first or pr.poll() is not None, 30) \
        and os.stat(prom).st_mtime_ns != first
    body = open(prom).read() if first else ""
    check(again and "hvnoise_watched{" in body and pr.poll() is None,
          "hvnoise-exporter.service: its file written and rewritten, under the filter",
          errtext(errf)[-600:])


run_unit("hvnoise-exporter.service",
         {"/var/lib/prometheus/node-exporter/hvnoise.prom": prom, "-I 15s": "-I 0.2"}, textfile)

# The HTTP exporter: a scrape answered.
port = hvntest.free_port()


def http(pr, errf):
    up = wait_until(lambda: "serving http://" in errtext(errf) or pr.poll() is not None, 30)
    body = ""
    if up and pr.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                body = r.read().decode()
        except OSError as e:
            body = str(e)
    check("hvnoise_watched{" in body and pr.poll() is None,
          "hvnoise-exporter-http.service: a scrape answered, under the filter",
          (errtext(errf) + body)[-600:])


run_unit("hvnoise-exporter-http.service", {"127.0.0.1:9464": f"127.0.0.1:{port}"}, http)

# The flight recorder: an incident for its trigger file, one for SIGUSR1.
fdir = os.path.join(work, "flight")
os.makedirs(fdir)
trigger = os.path.join(fdir, "trigger")


def flight(pr, errf):
    up = wait_until(lambda: "recording " in errtext(errf) or pr.poll() is not None, 60)
    p = subprocess.run([hvn, "trigger", "--trigger-file", trigger, "units.py"],
                       capture_output=True, text=True) if up and pr.poll() is None else None
    got = wait_until(lambda: glob.glob(os.path.join(fdir, "incident-*-file.dat")) or
                     pr.poll() is not None, 60)
    check(p is not None and p.returncode == 0 and got and glob.glob(os.path.join(fdir, "incident-*-file.dat")),
          "hvnoise-flight-recorder.service: hvnoise trigger's incident written, under the filter "
          f"({p and p.stdout.strip()[:80]})", errtext(errf)[-600:])
    if pr.poll() is None:
        pr.send_signal(signal.SIGUSR1)
    got = wait_until(lambda: glob.glob(os.path.join(fdir, "incident-*-signal.dat")) or
                     pr.poll() is not None, 60)
    check(got and glob.glob(os.path.join(fdir, "incident-*-signal.dat")),
          "hvnoise-flight-recorder.service: SIGUSR1 (its ExecReload)'s incident written, under the filter",
          errtext(errf)[-600:])


run_unit("hvnoise-flight-recorder.service",
         {"/var/lib/hvnoise/incident": os.path.join(fdir, "incident"), "/run/hvnoise/trigger": trigger,
         }, flight)

# What systemd-analyze security says of each (the lower, the less exposed).
for u in sorted(glob.glob(os.path.join(top, "tools", "systemd", "*.service"))):
    t = os.path.join(work, os.path.basename(u))
    with open(t, "w") as f:
        f.write(open(u).read().replace("@SBINDIR@", "/usr/sbin"))
    p = subprocess.run(["systemd-analyze", "security", "--offline=true", t], capture_output=True, text=True)
    m = re.search(r"Overall exposure level for \S+: ([\d.]+)", p.stdout)
    check(m and float(m.group(1)) <= 3.0,
          f"{os.path.basename(u)}: systemd-analyze security --offline: exposure "
          f"{m and m.group(1)} (3.0 at most: the filter and the rest of its sandbox)", p.stdout[-800:])
