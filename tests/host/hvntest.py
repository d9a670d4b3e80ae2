"""What the host-side tests share (tests/host/*.py, tests/vm/*.py): KTAP
output, the sanitizer environment of the ASan/UBSan builds, and a free
loopback port.

KTAP, as KUnit and kselftest print it:

    KTAP version 1
    ok 1 prom/report --prom parses
    not ok 2 prom/...
    ok 3 flight/... # SKIP no BPF source on this host
    ok 4 nccl-e2e/... # XFAIL one injection between collectives is chance
    1..4

check() prints "ok N NAME" or "not ok N NAME", skip() "ok N NAME # SKIP
REASON", xfail() "ok N NAME # XFAIL REASON" (a failure that is let through
and said to be one).  The numbers run on across every test of one run: the
first emitter makes a counter file, HVN_KTAP_COUNTER in the environment,
which the tests it starts (host.sh starts corrupt.py) continue; that first
one prints the plan at its exit.  Every other line a test prints is
diagnostic (tests/check.sh shows lines that start with two spaces).
"""
import atexit
import os
import subprocess
import re
import socket
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LSAN_SUPP = os.path.join(HERE, "lsan.supp")

# The sanitizer options of every ASan/UBSan run: a leak or a UBSan report
# exits 99, which no exit code of hvnoise's is; known leaks of libraries
# are suppressed (lsan.supp).
ASAN_OPTIONS = "detect_leaks=1:exitcode=99"
UBSAN_OPTIONS = "halt_on_error=1:exitcode=99"
LSAN_OPTIONS = f"suppressions={LSAN_SUPP}:print_suppressions=0"


def sanitizer_env(ubsan=True, lsan_print=False, **extra):
    """os.environ with the sanitizer options (and EXTRA)."""
    env = dict(os.environ, ASAN_OPTIONS=ASAN_OPTIONS,
               LSAN_OPTIONS=f"suppressions={LSAN_SUPP}" if lsan_print else LSAN_OPTIONS)
    if ubsan:
        env["UBSAN_OPTIONS"] = UBSAN_OPTIONS
    env.update(extra)
    return env


def sanitizer_report(text):
    """Whether a run's stderr holds an ASan/LSan/UBSan report."""
    return "Sanitizer" in text or "runtime error" in text


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on (as of now)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- KTAP -------------------------------------------------------------------
_owner = False
_counter = os.environ.get("HVN_KTAP_COUNTER")
if not _counter:
    fd, _counter = tempfile.mkstemp(prefix="hvn-ktap-")
    os.close(fd)
    os.unlink(_counter)         # no file yet: nothing printed
    os.environ["HVN_KTAP_COUNTER"] = _counter
    _owner = True

counts = {"pass": 0, "fail": 0, "skip": 0, "xfail": 0}


def stop(proc, sig, errf, timeout=10):
    """Send sig to proc and wait for it: (exit status or "timeout", its
    stderr so far from the file errf)."""
    proc.send_signal(sig)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = "timeout"
    errf.seek(0)
    return rc, errf.read()


def _next():
    try:
        with open(_counter) as f:
            n = int(f.read().strip() or 0)
    except FileNotFoundError:
        n = 0
        print("KTAP version 1")
    with open(_counter, "w") as f:
        f.write(f"{n + 1}\n")
    return n + 1


def _line(ok, name, directive=""):
    # One line: a name or reason with a newline would end the result early.
    name = " ".join(str(name).split())
    directive = " ".join(directive.split())
    print(f"{'ok' if ok else 'not ok'} {_next()} {name}" +
          (f" # {directive}" if directive else ""), flush=True)


def result(ok, name, why=""):
    """A check: ok or not ok; WHY (a failure's details) printed under a
    failure, indented."""
    _line(ok, name)
    counts["pass" if ok else "fail"] += 1
    if not ok and why:
        print("  " + str(why)[:600], flush=True)
    return ok


def skip(name, reason):
    """A check that cannot run here, and why."""
    _line(True, name, "SKIP " + reason)
    counts["skip"] += 1


def xfail(name, reason):
    """A check whose failure is let through, and why: kselftest's XFAIL."""
    _line(True, name, "XFAIL " + reason)
    counts["xfail"] += 1


# A result line of a test's KTAP: "ok N stage/name[ # SKIP|XFAIL reason]";
# or the unit runner's "PASS: name" / "FAIL: name".  Only names with a
# stage prefix ("vm/", "kunit-vm/"): a VM's console also holds KUnit's own
# KTAP, whose suites have none.
RESULT = re.compile(r"^(?:(not ok|ok) \d+ |(PASS|FAIL): )([\w.-]+/.*?)"
                    r"(?: # (SKIP|XFAIL)(?: (.*))?)?$")


def parse(line):
    """(ok, name, directive, reason) of a result line, else None."""
    m = RESULT.match(line.rstrip("\r\n"))
    if not m:
        return None
    ok = m.group(1) == "ok" or m.group(2) == "PASS"
    return ok, m.group(3), m.group(4) or "", m.group(5) or ""


def results(text):
    """The result lines of a log (a VM's console), outside the KUnit KTAP
    blocks that tests/kunit/guest.sh prints between KTAP-BEGIN/END."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("KTAP-BEGIN "):
            inside = True
        elif line.startswith("KTAP-END"):
            inside = False
        elif not inside:
            r = parse(line)
            if r:
                out.append(r)
    return out


def relay(text):
    """Print the result lines of TEXT (a guest's console) again, numbered on
    from here; returns how many failed."""
    bad = 0
    for ok, name, directive, reason in results(text):
        if directive == "SKIP":
            skip(name, reason)
        elif directive == "XFAIL":
            xfail(name, reason)
        else:
            result(ok, name)
            bad += not ok
    return bad


def failed():
    return counts["fail"]


def exit_status():
    return 1 if counts["fail"] else 0


def checker(prefix):
    """check(ok, name, why="") for names under PREFIX ("prom/"); returns ok."""
    def check(ok, name, why=""):
        result(bool(ok), prefix + name, why)
        return ok
    check.skip = lambda name, reason: skip(prefix + name, reason)
    check.xfail = lambda name, reason: xfail(prefix + name, reason)
    return check


@atexit.register
def _plan():
    if not _owner:
        return
    try:
        with open(_counter) as f:
            n = int(f.read().strip() or 0)
        os.unlink(_counter)
    except (FileNotFoundError, ValueError):
        return
    print(f"1..{n}", flush=True)
    sys.stdout.flush()


def _main(argv):
    """usage: hvntest.py relay LOG [REGEX] | hvntest.py results LOG

    relay: a guest's results from its console LOG, numbered on (for the
    shell scripts that boot VMs), and the lines that match REGEX as they
    are; exit status 1 if a result failed.
    results: the result lines of LOG as "ok|not ok<TAB>NAME<TAB>DIRECTIVE"
    (DIRECTIVE: "", "SKIP reason" or "XFAIL reason"), for tests/report.sh."""
    if len(argv) == 2 and argv[0] == "results":
        with open(argv[1], errors="replace") as f:
            for ok, name, directive, reason in results(f.read()):
                d = (directive + " " + reason).strip() if directive else ""
                print(f"{'ok' if ok else 'not ok'}\t{name}\t{d}")
        return 0
    if len(argv) not in (2, 3) or argv[0] != "relay":
        print(_main.__doc__, file=sys.stderr)
        return 2
    also = re.compile(argv[2]) if len(argv) == 3 else None
    bad = 0
    with open(argv[1], errors="replace") as f:
        text = f.read()
    inside = False
    for line in text.splitlines():
        if line.startswith("KTAP-BEGIN "):
            inside = True
        elif line.startswith("KTAP-END"):
            inside = False
        elif not inside and parse(line):
            bad += relay(line)
        elif also and also.search(line):
            print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
