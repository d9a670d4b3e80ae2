#!/usr/bin/env python3
"""hvnoise report --prom and hvnoise exporter on this host (live tracefs; no
module here, so the exporter counts irq:irq_handler_entry).

usage: prom.py HVNOISE WORKDIR     (HVNOISE: the ASan/UBSan build; root)

report --prom of a synthesized file (synth_events.py) must parse as the
Prometheus text format and hold report --json's numbers.  The exporter is
scraped over loopback while disk interrupts happen: the text must parse,
counters must only grow, the IRQ count must grow, requests other than
GET/HEAD /metrics get their HTTP error, a stalled client does not block
another, bad --listen values are refused with one line and exit 2, and
SIGINT/SIGTERM stop it with exit 0 and its tracefs instance removed.
Prints KTAP (tests/host/hvntest.py).
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hvntest  # noqa: E402
import synth_events  # noqa: E402

hvn, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
env = hvntest.sanitizer_env()
T = "/sys/kernel/tracing"
check = hvntest.checker("prom/")


NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_]\w*="(?:[^"\\\n]|\\.)*",?)*)\})? '
                    r'(\S+)$')


def parse(text):
    """Prometheus text format 0.0.4 to {(name, labels): value}; raises
    ValueError naming the first line at fault."""
    help_, type_, out = {}, {}, {}
    if not text.endswith("\n"):
        raise ValueError("does not end with a newline")
    for n, ln in enumerate(text.splitlines(), 1):
        if ln.startswith("# HELP ") or ln.startswith("# TYPE "):
            parts = ln.split(" ", 3)
            if len(parts) < 4 or not NAME.match(parts[2]):
                raise ValueError(f"line {n}: {ln!r}")
            d = help_ if parts[1] == "HELP" else type_
            if parts[2] in d:
                raise ValueError(f"line {n}: second {parts[1]} for {parts[2]}")
            if parts[1] == "TYPE" and parts[3] not in ("counter", "gauge", "histogram", "untyped"):
                raise ValueError(f"line {n}: type {parts[3]}")
            d[parts[2]] = parts[3]
            continue
        if ln.startswith("#") or not ln:
            continue
        m = SAMPLE.match(ln)
        if not m:
            raise ValueError(f"line {n}: not a sample: {ln!r}")
        name, labels, value = m.groups()
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if base != name and type_.get(base) == "histogram":
            pass                        # a histogram's series
        elif name not in type_ or name not in help_:
            raise ValueError(f"line {n}: {name} has no HELP/TYPE before it")
        if type_.get(name) == "counter" and not name.endswith("_total"):
            raise ValueError(f"line {n}: counter {name} does not end in _total")
        key = (name, labels or "")
        if key in out:
            raise ValueError(f"line {n}: {key} twice")
        out[key] = float(value)
    return out, type_


# --- report --prom -----------------------------------------------------------------
syn = os.path.join(work, "synth.dat")
synth_events.write(syn)
p = subprocess.run([hvn, "report", "--prom", syn], capture_output=True, text=True, env=env)
try:
    prom, types = parse(p.stdout)
    err = None
except ValueError as e:
    prom, types, err = {}, {}, e
check(p.returncode == 0 and not err and prom,
      f"report --prom parses as the text format ({len(prom)} samples, "
      f"{len(types)} families, exit {p.returncode})", err or p.stderr[-300:])
rep = json.loads(subprocess.run([hvn, "report", "--json", syn], capture_output=True,
                                text=True, env=env).stdout)["reports"][0]
pairs = {"hvnoise_steal_seconds_total": ("steal_ns", 1e-9),
         "hvnoise_steal_samples_total": ("steal_events", 1),
         "hvnoise_lost_seconds_total": ("lost_ns", 1e-9),
         "hvnoise_lost_unexplained_seconds_total": ("lost_unexplained_ns", 1e-9),
         "hvnoise_lost_steal_seconds_total": ("lost_steal_ns", 1e-9),
         "hvnoise_lost_irq_seconds_total": ("lost_irq_ns", 1e-9),
         "hvnoise_lost_episodes_total": ("lost_events", 1),
         "hvnoise_irq_storms_total": ("storms", 1),
         "hvnoise_irq_storm_irqs_total": ("storm_irqs", 1),
         "hvnoise_irq_migrations_in_total": ("migrations_in", 1),
         "hvnoise_irq_migrations_out_total": ("migrations_out", 1)}
bad = []
for c in rep["cpus"]:
    for metric, (key, scale) in pairs.items():
        v = prom.get((metric, f'cpu="{c["cpu"]}"'))
        if v is None or abs(v - c[key] * scale) > 1e-9 * max(1, c[key] * scale):
            bad.append(f"{metric} cpu {c['cpu']}: {v}, report --json {c[key]}")
    w = prom.get(("hvnoise_watched", f'cpu="{c["cpu"]}"'))
    if w != (1.0 if c["watched"] else 0.0):
        bad.append(f"hvnoise_watched cpu {c['cpu']}: {w}")
for k, v in rep["events"].items():
    if prom.get(("hvnoise_events_total", f'event="{k}"')) != v:
        bad.append(f"events {k}: {prom.get(('hvnoise_events_total', f'event={k}'))}, json {v}")
check(not bad and len(rep["cpus"]) >= 3,
      f"report --prom holds report --json's per-CPU steal, lost, storms, migrations, "
      f"watched and event counts ({len(rep['cpus'])} CPUs)", "; ".join(bad[:4]))
# The lost-episode histogram, against the durations synth_events wrote.
LE = ["0.0005", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5"]
want = {}
for name, cpu, vals in synth_events.events(1):
    if name == "lost":
        want.setdefault(vals["cpu"], []).append(vals["duration"] / 1e9)
bad = []
for cpu, durs in want.items():
    lab = f'cpu="{cpu}"'
    for le in LE:
        got = prom.get(("hvnoise_lost_episode_seconds_bucket", f'{lab},le="{le}"'))
        exp = sum(d <= float(le) for d in durs)
        if got != exp:
            bad.append(f"cpu {cpu} le {le}: {got}, want {exp}")
    if prom.get(("hvnoise_lost_episode_seconds_bucket", f'{lab},le="+Inf"')) != len(durs) or \
            prom.get(("hvnoise_lost_episode_seconds_count", lab)) != len(durs) or \
            abs(prom.get(("hvnoise_lost_episode_seconds_sum", lab), -1) - sum(durs)) > 1e-6:
        bad.append(f"cpu {cpu}: +Inf/count/sum")
check(want and not bad and types.get("hvnoise_lost_episode_seconds") == "histogram",
      f"hvnoise_lost_episode_seconds: each CPU's buckets, count and sum are the "
      f"{sum(map(len, want.values()))} lost episodes written", "; ".join(bad[:4]))
# report --hist: the same episodes, a row per length bucket, a column per CPU.
p = subprocess.run([hvn, "report", "--hist", syn], capture_output=True, text=True, env=env)
lines = p.stdout.splitlines()
head = next((i for i, ln in enumerate(lines) if ln.startswith("length ")), None)
bad = []
if head is None:
    bad.append("no table")
else:
    cpus = [int(c) for c in re.findall(r"CPU-(\d+)", lines[head])]
    table = {ln.split()[0]: [int(x) for x in ln.split()[1:]] for ln in lines[head + 1:head + 16]}
    edges = [0.0] + [float(le) for le in LE] + [float("inf")]
    labels = [r.split()[0] for r in lines[head + 1:head + 15]]
    if sorted(cpus) != sorted(want):
        bad.append(f"CPUs {cpus}, want {sorted(want)}")
    for k, cpu in enumerate(cpus):
        durs = want.get(cpu, [])
        for b, lab in enumerate(labels):
            exp = sum(edges[b] < d <= edges[b + 1] for d in durs)
            if table[lab][k] != exp:
                bad.append(f"cpu {cpu} {lab}: {table[lab][k]}, want {exp}")
        if table.get("count", [None] * (k + 1))[k] != len(durs):
            bad.append(f"cpu {cpu} count")
    if any(sum(table[lab][:-1]) != table[lab][-1] for lab in labels):
        bad.append("a total is not its row's sum")
check(p.returncode == 0 and not bad,
      f"report --hist: each CPU's lost episodes by length are the "
      f"{sum(map(len, want.values()))} written, bucket by bucket", "; ".join(bad[:4]) + p.stderr[-200:])
# The textfile path (report --prom) says what the exporter says of itself:
# its source, the module, its version, and how fresh the counters are
# (the recording's end), so that the stale alert and the dashboard's age
# panel work on it too.
live = os.path.join(work, "live-prom.dat")
subprocess.run([hvn, "record", "--source", "kernel", "-d", "0.5", "-o", live],
               capture_output=True, env=env)
p = subprocess.run([hvn, "report", "--prom", live], capture_output=True, text=True, env=env)
lj = json.loads(subprocess.run([hvn, "report", "--json", live], capture_output=True, text=True,
                               env=env).stdout)["reports"][0]
try:
    lp, _ = parse(p.stdout)
except ValueError:
    lp = {}
end = lj["clock_pairs"][-1][1] / 1e9 if lj.get("clock_pairs") else None
upd = lp.get(("hvnoise_exporter_updated_timestamp_seconds", ""))
version = re.search(r'HVN_VERSION\s+"([^"]+)"', open(os.path.join(here, "..", "..", "include",
                                                                  "hvnoise", "version.h")).read())
check(lp.get(("hvnoise_source_info", 'source="kernel"')) == 1 and
      lp.get(("hvnoise_module_loaded", "")) == 0 and version and
      lp.get(("hvnoise_build_info", f'version="{version.group(1)}"')) == 1 and
      end is not None and upd is not None and abs(upd - end) < 0.002,
      f"report --prom of a recording: source_info, module_loaded, build_info, and the "
      f"recording's end as hvnoise_exporter_updated_timestamp_seconds ({upd} vs {end})",
      p.stdout[-600:])
p = subprocess.run([hvn, "report", "--hist", "--json", syn], capture_output=True, text=True, env=env)
check(p.returncode == 2 and p.stderr.count("\n") == 1 and "--hist is text" in p.stderr,
      f"report --hist --json: exit {p.returncode}, {p.stderr.strip()}")
# report --fail-if: exit 5 when a condition holds, naming it; 0 when none.
ev = synth_events.events(1)
longest = max(v["duration"] for n, c, v in ev if n == "lost")
cpu_of = [v["cpu"] for n, c, v in ev if n == "lost" and v["duration"] == longest][0]
nstorm = sum(n == "irq_storm" for n, c, v in ev)
res = {}
for cond in (f"lost>{(longest - 1000) / 1e6}ms", f"lost>{(longest + 1000) / 1e6}ms",
             f"storms>{nstorm - 1}", f"storms>{nstorm}", "overruns>0", "lost>2x", "nosuch>1"):
    p = subprocess.run([hvn, "report", "--fail-if", cond, syn], capture_output=True, text=True, env=env)
    res[cond] = (p.returncode, p.stderr.strip())
got = [rc for rc, _ in res.values()]
print(f"  --fail-if: {got}")
check(got == [5, 0, 5, 0, 0, 2, 2]
      and f"CPU {cpu_of}: the longest lost episode of a CPU {longest / 1e6:.3f} ms" in list(res.values())[0][1]
      and f"{nstorm} interrupt storms" in list(res.values())[2][1],
      f"report --fail-if: exit 5 naming the CPU and value (lost {longest / 1e6:.3f} ms, "
      f"{nstorm} storms), 0 just above them, 2 for a bad condition")
p = subprocess.run([hvn, "report", "--prom", syn, syn], capture_output=True, text=True, env=env)
check(p.returncode == 2 and p.stderr.count("\n") == 1 and "one file" in p.stderr,
      "report --prom of two files: exit 2, one line", p.stderr)
p = subprocess.run([hvn, "report", "--prom", "--json", syn], capture_output=True, text=True,
                   env=env)
check(p.returncode == 2 and "choose one" in p.stderr, "report --prom --json: exit 2", p.stderr)

# --- exporter: bad command lines ------------------------------------------------------
busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen(1)
busy_port = busy.getsockname()[1]
for args, rc, words in (([], 2, "--listen ADDR:PORT is required"),
                        (["--listen", "127.0.0.1"], 2, "not ADDR:PORT"),
                        (["--listen", "127.0.0.1:65536"], 2, "port 65536 is not 0..65535"),
                        (["--listen", "127.0.0.1:http"], 2, "port http is not"),
                        (["--listen", "::1:9464"], 2, "in brackets"),
                        (["--listen", "localhost:9464"], 2, '"localhost" is not a numeric'),
                        (["--listen", "127.0.0.1:0", "-I", "0"], 2, "-I 0: not"),
                        (["--listen", f"127.0.0.1:{busy_port}"], 1, "Address already in use")):
    p = subprocess.run([hvn, "exporter", *args], capture_output=True, text=True, env=env,
                       timeout=20)
    check(p.returncode == rc and p.stderr.count("\n") == 1 and words in p.stderr
          and "Sanitizer" not in p.stderr,
          f"exporter {' '.join(args) or '(no --listen)'}: exit {p.returncode} (want {rc}): "
          f"{p.stderr.strip()}", p.stderr[-300:])
busy.close()
check(not [i for i in os.listdir(f"{T}/instances") if i.startswith("hvnoise-exporter")],
      "a refused command line leaves no tracefs instance")


# --- exporter: live ---------------------------------------------------------------------
def http(port, req, timeout=5):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(req)
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n")[0].decode()
    hdrs = dict(ln.decode().split(": ", 1) for ln in head.split(b"\r\n")[1:])
    return status, hdrs, body.decode()


def scrape(port):
    st, h, body = http(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    if not st.startswith("HTTP/1.1 200") or int(h["Content-Length"]) != len(body.encode()):
        raise ValueError(f"{st}, {len(body)} bytes of {h.get('Content-Length')}")
    return parse(body)[0]


def disk_irqs():
    f = os.path.join(work, "direct.bin")
    if not os.path.exists(f):
        with open(f, "wb") as o:
            o.write(b"\0" * (4 << 20))
    subprocess.run(["dd", f"if={f}", "of=/dev/null", "bs=4k", "iflag=direct"],
                   capture_output=True)


def start(*args):
    e = open(os.path.join(work, "exporter.err"), "w+")
    pr = subprocess.Popen([hvn, "exporter", "--listen", "127.0.0.1:0", "-I", "0.2", *args],
                          stderr=e, env=env)
    for _ in range(100):
        e.seek(0)
        m = re.search(r"(hvnoise-exporter-\d+), serving http://127\.0\.0\.1:(\d+)/metrics",
                      e.read())
        if m:
            return pr, e, m.group(1), int(m.group(2))
        if pr.poll() is not None:
            break
        time.sleep(0.05)
    return pr, e, None, None


# The kernel's IRQ events: what this host has whatever the source.
pr, errf, inst, port = start("-e", "irq:irq_handler_entry")
if not check(port is not None and os.path.isdir(f"{T}/instances/{inst}"),
             f"exporter --listen 127.0.0.1:0 serves on a free port ({port}) from its own "
             f"tracefs instance ({inst})", open(errf.name).read()[-300:]):
    pr.kill()
    sys.exit(1)
try:
    t0 = time.monotonic()
    m1 = scrape(port)
    disk_irqs()
    time.sleep(0.3)
    m2 = scrape(port)
    dt = time.monotonic() - t0
    err = None
except (ValueError, OSError, KeyError) as e:
    m1 = m2 = {}
    err = e
check(not err and m1 and m2, f"two scrapes over loopback parse as the text format "
      f"({len(m2)} samples, {dt if not err else 0:.2f} s)", err)
shrunk = [(k, m1[k], m2.get(k)) for k in m1
          if k[0].endswith("_total") and (m2.get(k) is None or m2[k] < m1[k])]
check(m1 and not shrunk, f"every counter of the first scrape is there in the second, "
      f"never smaller ({sum(1 for k in m1 if k[0].endswith('_total'))} counters)", shrunk[:3])
irq1 = sum(v for k, v in m1.items() if k[0] == "hvnoise_irqs_total")
irq2 = sum(v for k, v in m2.items() if k[0] == "hvnoise_irqs_total")
check(irq2 > irq1 and m2.get(("hvnoise_events_total", 'event="irq_handler_entry"')) == irq2,
      f"the IRQ counters grew with the disk interrupts between the scrapes "
      f"({irq1:.0f} -> {irq2:.0f}) and equal the irq_handler_entry count")
check(m2.get(("hvnoise_exporter_scrapes_total", "")) == 2 and
      m2.get(("hvnoise_module_loaded", "")) == int(os.path.isdir("/sys/module/hvnoise")),
      "scrapes_total counts the scrapes (2); module_loaded says whether hvnoise.ko is loaded")

for req, want, name in ((b"GET /other HTTP/1.1\r\n\r\n", "404", "another path"),
                        (b"GET /metricsx HTTP/1.1\r\n\r\n", "404", "a longer path"),
                        (b"POST /metrics HTTP/1.1\r\n\r\n", "405", "POST"),
                        (b"hello\r\n\r\n", "400", "not HTTP"),
                        (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 5000, "431",
                         "a request over 4 KiB")):
    try:
        st, h, body = http(port, req)
    except OSError as e:
        st = str(e)
    check(st.startswith("HTTP/1.1 " + want), f"{name}: {st}")
try:
    st, h, body = http(port, b"HEAD /metrics HTTP/1.0\r\n\r\n")
    ok = st.startswith("HTTP/1.1 200") and body == "" and int(h["Content-Length"]) > 0
except (OSError, KeyError) as e:
    ok, st = False, str(e)
check(ok, f"HEAD /metrics: headers only ({st})")
try:
    st, h, body = http(port, b"GET / HTTP/1.1\r\n\r\n")
    ok = st.startswith("HTTP/1.1 200") and h["Content-Type"].startswith("text/html") and \
        'href="/metrics"' in body
except (OSError, KeyError) as e:
    ok, st = False, str(e)
check(ok, f"GET /: a page that links to /metrics ({st})")
m4 = scrape(port)
check(m4.get(("hvnoise_build_info", f'version="{subprocess.run([hvn, "version"], capture_output=True, text=True).stdout.split()[1]}"')) == 1
      and 1e9 < m4.get(("process_start_time_seconds", ""), 0) <= time.time(),
      "hvnoise_build_info{version} and process_start_time_seconds, as Prometheus names them")
stalled = socket.create_connection(("127.0.0.1", port))
stalled.sendall(b"GET /metr")
try:
    t = time.monotonic()
    scrape(port)
    ok, why = time.monotonic() - t < 2, ""
except (ValueError, OSError) as e:
    ok, why = False, e
check(ok, "a client that never finishes its request does not hold up a scrape", why)
stalled.close()

rc, err = hvntest.stop(pr, signal.SIGINT, errf)
check(rc == 0 and "stopped by signal" in err and "Sanitizer" not in err
      and "runtime error" not in err and not os.path.exists(f"{T}/instances/{inst}"),
      f"SIGINT: exit {rc}, instance removed, no sanitizer report", err[-400:])

# The default source (the module, else BPF where it works, else none),
# as hvnoise status names it; the detectors' watched set must be counted.
st = subprocess.run([hvn, "status"], capture_output=True, text=True, env=env).stdout
m = re.search(r"^source +(\w+)", st, re.M)
want = m.group(1) if m else "kernel"
pr, errf, inst, port = start()
ok = port is not None
try:
    time.sleep(0.5)
    m3 = scrape(port)
    got = [k[1] for k in m3 if k[0] == "hvnoise_source_info"]
    watch = m3.get(("hvnoise_events_total", 'event="watch"'), 0)
    ok = ok and check(got == [f'source="{want}"'] and (want == "kernel" or watch > 0),
                      f"with the default source the exporter reports it as status does "
                      f"({got}, status: {want}) and counts the detectors' watched set "
                      f"({watch:.0f} watch records)")
except (ValueError, OSError) as e:
    ok = check(False, "a scrape with the default source", e)
rc, err = hvntest.stop(pr, signal.SIGTERM, errf)
check(ok and rc == 0 and inst and not os.path.exists(f"{T}/instances/{inst}")
      and "Sanitizer" not in err, f"SIGTERM: exit {rc}, instance removed", err[-400:])

# --textfile: node_exporter's textfile collector, rewritten whole each time.
tf = os.path.join(work, "hvnoise.prom")
for f in (tf, tf + ".hvnoise-tmp"):
    if os.path.exists(f):
        os.unlink(f)
e = open(os.path.join(work, "textfile.err"), "w+")
pr = subprocess.Popen([hvn, "exporter", "--textfile", tf, "-I", "200ms", "-e", "irq:irq_handler_entry"],
                      stderr=e, env=env)


def read_tf(pred, seconds=10):
    """The file once it parses and pred(metrics) holds (or the last try)."""
    end, m = time.time() + seconds, None
    while time.time() < end and pr.poll() is None:
        try:
            m = parse(open(tf).read())[0]
            if pred(m):
                return m
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    return m


m1 = read_tf(lambda m: True)
irq1 = sum(v for k, v in (m1 or {}).items() if k[0] == "hvnoise_irqs_total")
disk_irqs()
m2 = read_tf(lambda m: sum(v for k, v in m.items() if k[0] == "hvnoise_irqs_total") > irq1)
irq2 = sum(v for k, v in (m2 or {}).items() if k[0] == "hvnoise_irqs_total")
mode = oct(os.stat(tf).st_mode & 0o777) if os.path.exists(tf) else None
check(m1 is not None and irq2 > irq1 and mode == "0o644",
      f"exporter --textfile: the file parses, is rewritten as IRQs come ({irq1:.0f} -> {irq2:.0f}) "
      f"and is 0644 for node_exporter ({mode})")
rc, err = hvntest.stop(pr, signal.SIGTERM, e)
check(rc == 0 and os.path.exists(tf) and not os.path.exists(tf + ".hvnoise-tmp")
      and "Sanitizer" not in err,
      f"SIGTERM: exit {rc}, the last file kept whole, no temporary file left", err[-300:])
p = subprocess.run([hvn, "exporter", "--listen", "127.0.0.1:0", "--textfile", tf],
                   capture_output=True, text=True, env=env)
check(p.returncode == 2 and "choose one" in p.stderr, f"--listen with --textfile: exit {p.returncode}")
sys.exit(hvntest.exit_status())
