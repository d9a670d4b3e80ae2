#!/usr/bin/env python3
"""The README's command lines, run as written where this host can run them.

usage: readme.py OUTDIR

Every command of every ```sh block of README.md must have an entry in LINES
below: run here (from the top of the tree, through bash, exactly as the
README shows it, then checked), or skipped with the reason and the test that
covers it instead.  A line the README gains without an entry fails, so the
README cannot drift from what is tested.  `make` alone and `make KDIR=...`
(the README's prose) must each produce kmod/hvnoise.ko: once, `make` built
only build/bpf/vmlinux.h.
"""
import os
import pty
import re
import shutil
import select
import subprocess
import sys
import time

from hvntest import checker

check = checker("readme/")
TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KO = os.path.join(TOP, "kmod", "hvnoise.ko")

VM = "loads the module: no module support on this host; the vm stages load it"
INSTALL = ("installs into the system; the install stage runs make install, "
           "make uninstall and DKMS in private trees")
PACKAGES = ("installs into the system; the package stage installs, upgrades "
            "and purges these packages in an overlay of this system, and loads "
            "the module their DKMS built in the 6.1 guest")
FLIGHT = ("needs the installed flight recorder service; the flight and "
          "vm-flight stages trigger and read incidents")
JOB = ("`torchrun ...` stands for the user's job; the nccl-e2e stage runs a "
       "job with the plugin under hvnoise record and correlates it")


def sh(cmd, timeout=600, **kw):
    return subprocess.run(cmd, shell=True, executable="/bin/bash", cwd=TOP,
                          capture_output=True, text=True, timeout=timeout,
                          **kw)


def run_make_ko(cmd):
    """`make` or `make KDIR=...`: the module must come out of it."""
    if cmd == "make" and sh("scripts/kernel-dir.sh").returncode:
        return check.skip(f"`{cmd}` builds kmod/hvnoise.ko",
                          "no kernel build tree here (scripts/kernel-dir.sh)")
    try:
        os.unlink(KO)
    except FileNotFoundError:
        pass
    r = sh(cmd)
    ok = r.returncode == 0 and os.path.exists(KO)
    vermagic = ""
    if ok:
        vermagic = subprocess.run(["modinfo", "-F", "vermagic", KO],
                                  capture_output=True, text=True).stdout.split(" ")[0]
    return check(ok, f"`{cmd}` builds kmod/hvnoise.ko (exit {r.returncode}"
                 f"{', for ' + vermagic if vermagic else ''})",
                 (r.stdout + r.stderr)[-600:])


def run_ok(cmd, what, want=None, timeout=600):
    """CMD exits 0 (and its stdout matches WANT)."""
    r = sh(cmd, timeout=timeout)
    ok = r.returncode == 0 and (want is None or re.search(want, r.stdout, re.M))
    return check(ok, f"`{cmd}` {what} (exit {r.returncode})",
                 (r.stdout + r.stderr)[-600:])


def run_arm64(cmd):
    """CMD builds build/tools-arm64/hvnoise: an arm64 ELF executable with
    no program interpreter (static: it runs on any arm64 host).  Skipped,
    as the build stage's arm64 builds are, without the cross compiler or
    where Debian's arm64 packages cannot be had (the fetch's exit 2)."""
    if shutil.which("aarch64-linux-gnu-gcc") is None:
        return check.skip(f"`{cmd}`", "no aarch64-linux-gnu-gcc "
                          "(scripts/install-deps.sh installs gcc-aarch64-linux-gnu)")
    for what in ("--libs", "--vm"):
        r = sh(f"scripts/fetch-headers-6.1-arm64.sh {what}")
        if r.returncode == 2:
            return check.skip(f"`{cmd}`", "Debian 12's arm64 packages cannot be had "
                              f"here: {(r.stderr.strip().splitlines() or [''])[-1]}")
    if not run_ok(cmd, "cross-builds the arm64 tool"):
        return
    path = os.path.join(TOP, "build/tools-arm64/hvnoise")
    r = subprocess.run(["readelf", "-h", "-l", path], capture_output=True, text=True)
    arm64 = re.search(r"Machine:\s+AArch64", r.stdout) is not None
    static = r.returncode == 0 and "INTERP" not in r.stdout
    check(arm64 and static, f"build/tools-arm64/hvnoise is arm64 and static "
          f"({'AArch64' if arm64 else 'not AArch64'}, "
          f"{'no interpreter' if static else 'an interpreter'})", r.stderr[-300:])


def run_top(cmd):
    """`hvnoise top` in a terminal: it draws, and q quits it."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(TOP)
        os.execv("/bin/bash", ["bash", "-c", cmd])
    out, drawn, st = b"", False, None
    deadline = time.time() + 20
    while st is None and time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:         # EIO: the terminal's other end closed
                pass
        # The first frame: its header and a CPU row.
        if not drawn and re.search(rb"CPU", out) and re.search(rb"\n *\d+\*? ", out):
            drawn = True
            os.write(fd, b"q")
            deadline = time.time() + 10
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            st = status
    if st is None:
        os.kill(pid, 9)
        st = os.waitpid(pid, 0)[1]
    os.close(fd)
    rc = os.waitstatus_to_exitcode(st)
    text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", out).decode(errors="replace")
    return check(drawn and rc == 0,
                 f"`{cmd}` draws per-CPU rows in a terminal, and q quits it "
                 f"(exit {rc})", text[-600:])


def apt_packages(cmd):
    """The install line: every package it names exists in Debian 12."""
    kver = os.path.basename(sh("scripts/kernel-dir.sh 6.1").stdout.strip())
    kver = kver.replace("linux-headers-", "")
    words = cmd.replace("$(uname -r)", kver or "6.1.0-0-amd64").split()
    pkgs = [w for w in words[3:] if not w.startswith("-")]
    missing = [p for p in pkgs
               if subprocess.run(["apt-cache", "show", p], capture_output=True
                                 ).returncode != 0]
    check(pkgs and not missing,
          f"the install line's {len(pkgs)} packages exist in this host's "
          f"Debian ({'$(uname -r) as ' + kver}; not installed: the deps stage "
          f"did that)", f"not found: {missing}")


# Each README command: (how to check it, argument).  Keyed by the command
# as the README writes it (continuation lines joined, comment dropped).
LINES = {
    "apt-get install -y build-essential pkg-config linux-headers-$(uname -r) dkms "
    "libtracefs-dev libtraceevent-dev libzstd-dev zlib1g-dev trace-cmd "
    "python3-docutils clang bpftool libbpf-dev debhelper dh-dkms": (apt_packages, None),
    "make deb": (run_ok, ("builds the Debian packages",
                          r"build/deb/hvnoise-dkms_[^ ]*_all\.deb")),
    "apt-get install -y ./build/deb/hvnoise_*.deb ./build/deb/hvnoise-dkms_*.deb "
    "./build/deb/libnccl-profiler-hvnoise_*.deb": ("skip", PACKAGES),
    "modprobe hvnoise devices=auto": ("skip", VM),
    "hvnoise status": ("skip", INSTALL + " (build/tools/hvnoise status runs here)"),
    "echo hvnoise >/etc/modules-load.d/hvnoise.conf": ("skip", INSTALL),
    'echo "options hvnoise devices=auto" >/etc/modprobe.d/hvnoise.conf':
        ("skip", INSTALL),
    "systemctl daemon-reload": ("skip", INSTALL),
    "systemctl enable --now hvnoise-flight-recorder": ("skip", INSTALL),
    "hvnoise trigger": ("skip", FLIGHT),
    "hvnoise incidents": ("skip", FLIGHT),
    'hvnoise report "$(hvnoise incidents --latest)"': ("skip", FLIGHT),
    'trace-cmd report -i "$(hvnoise incidents --latest)" | '
    "grep -E 'lost|steal|storm'": ("skip", FLIGHT),
    'hvnoise advise "$(hvnoise incidents --latest)"':
        ("skip", FLIGHT + "; tests/host/advise.py runs advise on recordings of known noise"),
    "make": (run_make_ko, None),
    "insmod kmod/hvnoise.ko devices=0000:17:00.0,0000:31:00.0 cpus=2-5":
        ("skip", VM),
    "make tools": (run_ok, ("builds the tool", None)),
    "build/tools/hvnoise status": (run_ok, ("says the source it would use",
                                            r"^source +\w+")),
    "build/tools/hvnoise record -d 10s -o hvnoise.dat":
        (run_ok, ("records 10 s here (the BPF source)", None)),
    "build/tools/hvnoise report hvnoise.dat":
        (run_ok, ("prints the per-CPU table of that recording", r"^ *CPU ")),
    "build/tools/hvnoise report --hist hvnoise.dat":
        (run_ok, ("prints each CPU's lost episodes by length", r"^Lost episodes by length")),
    "build/tools/hvnoise report --perfetto noise.json hvnoise.dat":
        (run_ok, ("writes the noise for ui.perfetto.dev", None)),
    "build/tools/hvnoise top": (run_top, None),
    "build/tools/hvnoise record -o job.dat -- env "
    "NCCL_PROFILER_PLUGIN=$PWD/build/tools/libnccl-profiler-hvnoise.so "
    "torchrun ...": ("skip", JOB),
    "build/tools/hvnoise correlate job.dat": ("skip", JOB),
    "build/tools/hvnoise record --devices auto -d 10s -o hvnoise.dat":
        (run_ok, ("records with --devices auto here", None)),
    "make tools-arm64": (run_arm64, None),
    "make demo": ("skip", "boots a VM for minutes: run by hand (README)"),
    "make check && make demo": ("skip", "is what runs this test, then the demo"),
}


def readme_commands(path):
    """The commands of the ```sh blocks, continuation lines joined and
    comments dropped, in order."""
    cmds, inside, cur = [], False, ""
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("```"):
            inside = line.strip() == "```sh"
            continue
        if not inside:
            continue
        # A comment: from " #" outside quotes (the README's own lines have
        # no "#" inside quotes).
        code = re.sub(r"(^|\s)#.*$", "", line).rstrip()
        if code.endswith("\\"):
            cur += code[:-1].strip() + " "
            continue
        cur += code.strip()
        if cur:
            cmds.append(" ".join(cur.split()))
        cur = ""
    return cmds


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # The README's prose: "make KDIR=... builds for another kernel"; first,
    # so that `make` leaves the module of the running kernel's tree.
    kdir = sh("scripts/kernel-dir.sh 6.1").stdout.strip()
    if kdir:
        run_make_ko(f"make KDIR={kdir}")
    else:
        check.skip("`make KDIR=...`", "no 6.1 headers here")
    # The README's lines write hvnoise.dat and noise.json at the top: keep
    # a user's.
    dat = os.path.join(TOP, "hvnoise.dat")
    kept = os.path.join(out, "hvnoise.dat.before")
    pf = os.path.join(TOP, "noise.json")
    pf_kept = os.path.join(out, "noise.json.before")
    if os.path.exists(dat):
        os.replace(dat, kept)
    if os.path.exists(pf):
        os.replace(pf, pf_kept)
    cmds = readme_commands(os.path.join(TOP, "README.md"))
    seen = set()
    for cmd in cmds:
        if cmd in seen:
            continue
        seen.add(cmd)
        how = LINES.get(cmd)
        if how is None:
            check(False, f"README line covered by this test: `{cmd}`",
                  "add it to LINES in tests/host/readme.py: run it, or say "
                  "why not and what covers it")
        elif how[0] == "skip":
            check.skip(f"`{cmd}`", how[1])
        elif how[0] is run_ok:
            run_ok(cmd, *how[1])
        else:
            how[0](cmd)
    for cmd in LINES:
        if cmd not in seen:
            check(False, f"`{cmd}` is still in the README",
                  "the README lost this line: drop it from LINES")
    for f, k in ((dat, kept), (pf, pf_kept)):
        try:
            os.replace(f, os.path.join(out, os.path.basename(f)))
        except FileNotFoundError:
            pass
        if os.path.exists(k):
            os.replace(k, f)


if __name__ == "__main__":
    main()
