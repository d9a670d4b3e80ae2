#!/usr/bin/env python3
"""Every command line of the manual pages and Documentation/, run as typed.

usage: docs.py HVNOISE WORKDIR

The shell examples are the literal blocks of Documentation/*.rst (hvnoise(8)
included) whose lines start with a command.  Each line (continuations
joined) runs through bash in an empty directory, with hvnoise (also as
build/tools/hvnoise, and under srun or env) checking its command line and
stopping there (HVNOISE_CHECK_ARGS: options, values and operands as the
command would take them, nothing done), and the other programs (trace-cmd,
systemctl, make, ...) standing in as no-ops: it must exit 0 and leave no
file but those its own redirections name.  hvnoise report, correlate and
advise (without --apply, --restore or an absolute --bundle) run for real
on the files the line names, made for it first: a jobsim job's recording
of that host name for each NAME.dat, its summary for NAME.sum, a job of
two hosts in each DIR/.  An unquoted ">" in an argument,
an option that does not exist, a value out of range or a missing quote
fails.  Lines that write into the system (a redirection to an absolute
path) are skipped, saying so; a line with no hvnoise in it is checked for
the shell's syntax only.  Prints KTAP (tests/host/hvntest.py).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jobsim
from hvntest import checker

check = checker("docs/")
TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STARTS = re.compile(r"((hvnoise|trace-cmd|make|insmod|modprobe|rmmod|echo|systemctl|touch|srun|"
                    r"kubectl|sh|bash|env|export|cat|ls|promtool|curl|python3|dkms|ip|taskset|"
                    r"nvidia-smi|torchrun|journalctl|mv|cp|rm|mkdir|sudo|git|apt-get|cd)(\s|$)|"
                    r"(build|tests|scripts|bench)/|[A-Z][A-Z0-9_]*=)")
# hvnoise run as a command (not a path or a unit that has hvnoise in it).
HVNOISE = re.compile(r"(^|[\s;&|(`'\"])(build/tools/)?hvnoise\s")
OUTPUT = re.compile(r"(build/tools/)?hvnoise( [\w-]+)?:")
STUBS = ("trace-cmd", "make", "insmod", "modprobe", "rmmod", "systemctl", "kubectl",
         "promtool", "curl", "dkms", "ip", "taskset", "nvidia-smi", "torchrun", "journalctl",
         "sudo", "git", "apt-get", "python3", "systemd-analyze")


def examples(path):
    """(line number, command) of the shell lines of @path's literal blocks."""
    lines = open(path).read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if not lines[i].rstrip().endswith("::"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines):
            break
        ind = len(lines[j]) - len(lines[j].lstrip())
        if ind == 0:
            i = j
            continue
        block = []
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) >= ind):
            block.append((j + 1, lines[j][ind:]))
            j += 1
        i = j
        first = next((t for _, t in block if t.strip()), "")
        if not STARTS.match(first.lstrip("$# ")):
            continue
        cur, at = "", None
        for n, t in block:
            code = re.sub(r"(^|\s)#.*$", "", t).rstrip()
            if not code and not cur:
                continue
            at = at or n
            if code.endswith("\\"):
                cur += code[:-1] + " "
                continue
            # A line that ends in && or | goes on on the next one.
            if code.endswith(("&&", "|")):
                cur += code + " "
                continue
            cur += code
            # A command, not its output shown after it ("hvnoise record:
            # ..." is a message).
            c = cur.strip()
            if STARTS.match(c.lstrip("$# ")) and not OUTPUT.match(c):
                out.append((at, c))
            cur, at = "", None
    return out


# The wrapper runs hvnoise for real where the command only reads what the
# line names (every operand there), else has it check its command line.
WRAPPER = """#!/bin/bash
real=1
case "$1" in report|correlate|advise) ;; *) real= ;; esac
prev=
for a in "${@:2}"; do
	case "$a" in
	--apply|--restore|--yes|--verify|--bundle*|-o*|--output*|--summary*|--perfetto*|\\
	--nccl*|--fr|--fr=*|--kineto*|--inspector*) real= ;;
	-*) ;;
	*) case "$prev" in
	   --since|--until|--min-ms|-k|-w|--top|--fail-if|--window|-d) ;;
	   *) [ -e "$a" ] || real= ;;
	   esac ;;
	esac
	prev=$a
done
[ $# -gt 1 ] || real=
if [ -n "$real" ]; then
	"%s" "$@"
else
	HVNOISE_CHECK_ARGS=1 "%s" "$@"
fi
rc=$?
echo "$rc ${real:+real }$*" >>"$HVNOISE_DOCS_REAL"
exit $rc
"""


def stubs(bindir, hvn):
    os.makedirs(os.path.join(bindir, "build", "tools"), exist_ok=True)
    real = os.path.abspath(hvn)
    for p in (os.path.join(bindir, "hvnoise"), os.path.join(bindir, "build", "tools", "hvnoise")):
        with open(p, "w") as f:
            f.write(WRAPPER % (real, real))
        os.chmod(p, 0o755)
    for s in STUBS:
        with open(os.path.join(bindir, s), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(bindir, s), 0o755)
    # srun runs its command after its options, as Slurm does.
    with open(os.path.join(bindir, "srun"), "w") as f:
        f.write('#!/bin/bash\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n')
    os.chmod(os.path.join(bindir, "srun"), 0o755)


def job(hosts):
    """A job of @hosts (names), a pause on the first: jobsim's Job."""
    j = jobsim.Job([jobsim.Host(i, name=h) for i, h in enumerate(hosts)], 2)
    j.comm("dp", list(range(2 * len(hosts))))
    for step in range(40):
        j.coll("dp", "AllReduce", 1 << 22, stuck=(0, 60_000_000) if step == 20 else None)
    return j


def fixtures(cmd, d, hvn):
    """The files of relative names @cmd reads, made in @d."""
    words = re.findall(r"[\w./-]+", cmd)
    dats = [w for w in words if w.endswith(".dat") and not w.startswith("/")]
    sums = [w for w in words if w.endswith(".sum") and not w.startswith("/")]
    dirs = [w for w in words if w.endswith("/") and not w.startswith("/")]
    names = [os.path.splitext(os.path.basename(w))[0] for w in dats + sums]
    if names:
        j = job(names)
        tmp = os.path.join(d, ".job")
        j.write(tmp)
        for i, w in enumerate(dats + sums):
            src = os.path.join(tmp, "host%d.dat" % i)
            dst = os.path.join(d, w)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if w.endswith(".sum"):
                subprocess.run([hvn, "correlate", "--summary", dst, src], check=True,
                               capture_output=True)
            else:
                shutil.copy(src, dst)
        shutil.rmtree(tmp)
    for w in dirs:
        job(["node-a", "node-b"]).write(os.path.join(d, w))


def redirected(cmd):
    """The files @cmd's own redirections name (a ">" that starts a word)."""
    return {os.path.basename(m) for m in re.findall(r"(?:^|\s)\d?>>?\s*([^\s;&|)]+)", cmd)}


def main():
    hvn, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    bindir = os.path.join(work, "bin")
    stubs(bindir, hvn)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", SHARED=work)
    total = real = 0
    # $SHARED/incident/ of nccl.rst: a job's recordings there.
    job(["node-a", "node-b"]).write(os.path.join(work, "incident"))
    for path in sorted(glob.glob(os.path.join(TOP, "Documentation", "*.rst"))):
        name = os.path.basename(path)
        for n, cmd in examples(path):
            total += 1
            what = f"{name}:{n} `{cmd if len(cmd) < 90 else cmd[:87] + '...'}`"
            if re.search(r"(?:^|\s)\d?>>?\s*/", cmd):
                check.skip(what, "writes into the system (a redirection to an absolute path)")
                continue
            d = tempfile.mkdtemp(dir=work)
            if not HVNOISE.search(cmd):
                r = subprocess.run(["bash", "-n", "-c", re.sub(r"^\$ ", "", cmd)],
                                   capture_output=True, text=True)
                check(r.returncode == 0, f"{what}: bash takes its syntax (not hvnoise's to run)",
                      r.stderr)
                shutil.rmtree(d)
                continue
            # build/tools/hvnoise as the README's users type it.
            os.symlink(os.path.join(bindir, "build"), os.path.join(d, "build"))
            fixtures(cmd, d, hvn)
            given = set(os.listdir(d))
            log = os.path.join(work, "real.log")
            open(log, "w").close()
            # The status of the line's (last) pipeline's first command: a
            # grep after a stub finds nothing; a "&" job of it is waited
            # for, not judged; a "$ " prompt is not typed.
            run = re.sub(r"^\$ ", "", cmd) + "\nrc=${PIPESTATUS[0]:-0}\nwait\nexit $rc"
            r = subprocess.run(["bash", "-c", run], cwd=d,
                               env=dict(env, HVNOISE_DOCS_REAL=log),
                               capture_output=True, text=True, timeout=120)
            made = set(os.listdir(d)) - given - redirected(cmd)
            calls = [ln.split() for ln in open(log).read().splitlines()]
            ran = [c[2] for c in calls if c[1:2] == ["real"]]
            bad = [" ".join(c[1:]) + f" (exit {c[0]})" for c in calls if c[0] != "0"]
            how = ("ran " + ", ".join(f"hvnoise {c}" for c in ran) + " on the files it names"
                   if ran else "bash and hvnoise take it as typed" if calls else
                   "runs as typed, its programs stood in for")
            check(r.returncode == 0 and not bad and not made,
                  f"{what}: {how} (exit {r.returncode}"
                  f"{', made ' + ', '.join(sorted(made)) if made else ''})",
                  "; ".join(bad) + r.stderr[-400:])
            real += bool(ran)
            shutil.rmtree(d)
    check(total > 40, f"the examples found in Documentation/: {total}")
    check(real >= 11, f"... of which {real} ran hvnoise report, correlate or advise for real")


if __name__ == "__main__":
    main()
