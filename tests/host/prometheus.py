#!/usr/bin/env python3
"""The rules, the dashboard and the exporters under Debian 12's own
Prometheus (scripts/fetch-prometheus.sh unpacks it; nothing is installed).

usage: prometheus.py HVNOISE TRACE.dat WORKDIR     (root: the exporters)

promtool checks and unit-tests tools/prometheus/hvnoise.rules.yml (series
that fire each alert and series that must not), and lints every
exposition hvnoise writes (report --prom, an exporter scrape).  Then a real
server on loopback scrapes two exporters of this host: both targets must
be up, a query must give each host's per-CPU values as the exporter itself
serves them, every rule must evaluate without error, and every query of
tools/prometheus/hvnoise-dashboard.json must run.  The textfile path of
the hvnoise-exporter unit too: hvnoise exporter --textfile into a
directory Debian's node_exporter serves (job "node"), every panel with
data for that host, and with the writer stopped, the frozen file's age
growing as the stale alert needs.  Prints KTAP (tests/host/hvntest.py).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hvntest  # noqa: E402

hvn, trace, work = sys.argv[1:4]
top = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
rules_dir = os.path.join(top, "tools", "prometheus")
check = hvntest.checker("prometheus/")
env = hvntest.sanitizer_env()
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

p = subprocess.run([os.path.join(top, "scripts", "fetch-prometheus.sh")], capture_output=True, text=True)
if p.returncode:
    print("  " + p.stderr.strip().replace("\n", "\n  "))
    check(False, "Debian's prometheus package unpacked (scripts/fetch-prometheus.sh)")
    sys.exit(0)
bindir = p.stdout.strip()
promtool = os.path.join(bindir, "promtool")


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


p = run(promtool, "check", "rules", os.path.join(rules_dir, "hvnoise.rules.yml"))
check(p.returncode == 0 and "SUCCESS" in p.stdout, "promtool check rules hvnoise.rules.yml",
      p.stdout + p.stderr)
p = run(promtool, "test", "rules", "hvnoise.rules.test.yml", cwd=rules_dir)
check(p.returncode == 0 and "SUCCESS" in p.stdout,
      "promtool test rules: each alert fires on its series, and not on the others", p.stdout + p.stderr)


def lint(name, text):
    p = run(promtool, "check", "metrics", input=text)
    check(p.returncode == 0 and text.count("\n") > 10, f"promtool check metrics: {name}",
          p.stdout + p.stderr)


p = run(hvn, "report", "--prom", trace, env=env)
lint("report --prom", p.stdout)


def start_exporter(n):
    e = open(os.path.join(work, f"exporter{n}.err"), "w+")
    pr = subprocess.Popen([hvn, "exporter", "--listen", "127.0.0.1:0", "-I", "0.2"],
                          stderr=e, env=env)
    for _ in range(200):
        e.seek(0)
        m = re.search(r"serving http://127\.0\.0\.1:(\d+)/metrics", e.read())
        if m:
            return pr, int(m.group(1))
        if pr.poll() is not None:
            break
        time.sleep(0.05)
    return pr, None


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def start_textfile():
    """The hvnoise-exporter unit's path: hvnoise exporter --textfile into
    node_exporter's textfile directory, which node_exporter serves.
    (processes, node_exporter's port, the file)."""
    d = os.path.join(work, "textfile")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "hvnoise.prom")
    e = open(os.path.join(work, "textfile.err"), "w")
    pr = subprocess.Popen([hvn, "exporter", "--textfile", path, "-I", "0.2"], stderr=e, env=env)
    for _ in range(200):
        if os.path.exists(path) or pr.poll() is not None:
            break
        time.sleep(0.05)
    port = hvntest.free_port()
    ne = subprocess.Popen([os.path.join(bindir, "prometheus-node-exporter"),
                           "--collector.disable-defaults", "--collector.textfile",
                           f"--collector.textfile.directory={d}",
                           f"--web.listen-address=127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "node.err"), "w"))
    for _ in range(200):
        try:
            if "hvnoise_watched" in get(f"http://127.0.0.1:{port}/metrics"):
                return [pr, ne], port, path
        except OSError:
            pass
        if ne.poll() is not None or pr.poll() is not None:
            break
        time.sleep(0.05)
    return [pr, ne], None, path


exporters = [start_exporter(n) for n in range(2)]
procs = [pr for pr, _ in exporters]
ports = [port for _, port in exporters]
tprocs, server = [], None
try:
    tprocs, nport, tfile = start_textfile()
    if not check(all(ports), f"two exporters serve on loopback ({ports})"):
        raise SystemExit
    if not check(nport, "node_exporter serves hvnoise exporter --textfile's file (the unit's path)",
                 open(os.path.join(work, "textfile.err")).read()[-500:] +
                 open(os.path.join(work, "node.err")).read()[-500:]):
        raise SystemExit
    lint("an exporter's /metrics", get(f"http://127.0.0.1:{ports[0]}/metrics"))
    lint("exporter --textfile's file", open(tfile).read())

    web = hvntest.free_port()
    cfg = os.path.join(work, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {os.path.join(rules_dir, "hvnoise.rules.yml")}
scrape_configs:
  - job_name: hvnoise
    static_configs:
      - targets: ['127.0.0.1:{ports[0]}', '127.0.0.1:{ports[1]}']
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:{nport}']
""")
    log = open(os.path.join(work, "prometheus.log"), "w")
    server = subprocess.Popen([os.path.join(bindir, "prometheus"), f"--config.file={cfg}",
                               f"--storage.tsdb.path={os.path.join(work, 'tsdb')}",
                               f"--web.listen-address=127.0.0.1:{web}"],
                              stdout=log, stderr=subprocess.STDOUT)
    api = f"http://127.0.0.1:{web}/api/v1"

    def query(q):
        return json.loads(get(f"{api}/query?" + urllib.parse.urlencode({"query": q})))

    # Until both targets were scraped and every rule was evaluated once.
    up, rules, deadline = [], [], time.time() + 60
    while time.time() < deadline and server.poll() is None:
        try:
            t = json.loads(get(f"{api}/targets"))["data"]["activeTargets"]
            up = [x["health"] for x in t]
            rules = [r for g in json.loads(get(f"{api}/rules"))["data"]["groups"]
                     for r in g["rules"]]
            if up == ["up"] * 3 and rules and all(r.get("lastEvaluation", "0001")[:4] != "0001"
                                                  for r in rules):
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    check(up == ["up"] * 3, f"Prometheus scrapes both exporters and node_exporter (health {up})")
    bad = [(r["name"], r.get("lastError")) for r in rules if r.get("health") != "ok"]
    # As many as the file holds: none dropped by Prometheus.
    nfile = len(re.findall(r"^\s*- (?:alert|record): ",
                           open(os.path.join(rules_dir, "hvnoise.rules.yml")).read(), re.M))
    check(len(rules) == nfile and not bad,
          f"Prometheus loads the rules and evaluates all {len(rules)} of {nfile} without error {bad}")

    # The per-CPU values, through Prometheus, are the exporters' own.
    direct = {}
    for port in ports:
        for ln in get(f"http://127.0.0.1:{port}/metrics").splitlines():
            m = re.match(r'hvnoise_watched\{cpu="(\d+)"\} (\S+)$', ln)
            if m:
                direct[(f"127.0.0.1:{port}", m.group(1))] = float(m.group(2))
    r = query('hvnoise_watched{job="hvnoise"}')
    got = {(s["metric"]["instance"], s["metric"]["cpu"]): float(s["value"][1])
           for s in r["data"]["result"]}
    ncpu = os.cpu_count()
    check(r["status"] == "success" and got == direct and len(got) == 2 * ncpu,
          f"query hvnoise_watched: {len(got)} series, 2 hosts x {ncpu} CPUs, "
          "each the value its exporter serves", f"{got} vs {direct}")

    # Every panel's query runs (with the host variable at "all").
    dash = json.load(open(os.path.join(rules_dir, "hvnoise-dashboard.json")))
    exprs = [t["expr"].replace("$instance", ".*") for pnl in dash["panels"] for t in pnl["targets"]]
    failed = []
    for e in exprs:
        try:
            if query(e)["status"] != "success":
                failed.append(e)
        except (OSError, ValueError) as ex:
            failed.append(f"{e}: {ex}")
    check(exprs and not failed, f"the dashboard's {len(exprs)} queries run on Prometheus {failed[:2]}")

    # A query of a name no exporter writes runs too, empty: every metric the
    # rules and the dashboard name must be in a scrape (the rules once
    # matched source="hvnoise.ko", which none writes).
    scraped = set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*?)(?:_bucket|_sum|_count)?[{ ]",
                             get(f"http://127.0.0.1:{ports[0]}/metrics"), re.M))
    text = open(os.path.join(rules_dir, "hvnoise.rules.yml")).read() + "\n".join(exprs)
    # (not the recording rules' own names, level:metric:operation)
    named = set(re.findall(r"(?<![:\w])((?:hvnoise|process)_[a-z_]+?)(?:_bucket)?(?![:\w])", text))
    labels = set(re.findall(r'source="([a-z]+)"', text))
    missing = sorted(named - scraped)
    r = query("hvnoise_source_info")
    sources = {x["metric"]["source"] for x in r["data"]["result"]}
    check(named and not missing and labels <= {"module", "bpf", "kernel"} and sources,
          f"the {len(named)} metrics the rules and dashboard name are all exported "
          f"(missing {missing}); source labels {sorted(labels)} are the exporter's "
          f"(this host: {sorted(sources)})")
    missing = []
    for q in ("hvnoise_build_info", "hvnoise_module_loaded", "process_start_time_seconds"):
        r = query(q + '{job="hvnoise"}')
        if len(r["data"]["result"]) != 2:
            missing.append(q)
    check(not missing, f"hvnoise_build_info, hvnoise_module_loaded and process_start_time_seconds "
          f"from both exporters {missing}")

    # The textfile path, as the hvnoise-exporter unit and node_exporter
    # serve it (job "node", not "hvnoise"): the file's values, and every
    # panel with data for that host once two scrapes make a rate.
    node = f"127.0.0.1:{nport}"
    want = {m.group(1): float(m.group(2)) for m in
            re.finditer(r'^hvnoise_watched\{cpu="(\d+)"\} (\S+)$', open(tfile).read(), re.M)}
    r = query(f'hvnoise_watched{{job="node",instance="{node}"}}')
    got = {x["metric"]["cpu"]: float(x["value"][1]) for x in r["data"]["result"]}
    info = [q for q in ("hvnoise_build_info", "hvnoise_module_loaded", "hvnoise_source_info")
            if not query(f'{q}{{instance="{node}"}}')["data"]["result"]]
    check(got == want and len(got) == ncpu and not info,
          f"through node_exporter: hvnoise_watched, {len(got)} series, the file's values; "
          f"build, module and source info there (missing {info})", f"{got} vs {want}")
    # A panel that filters "> 0" may rightly be empty.
    exprs = [t["expr"] for pnl in dash["panels"] for t in pnl["targets"]
             if not re.search(r">\s*0\s*$", t["expr"])]
    empty, deadline = exprs, time.time() + 60
    while empty and time.time() < deadline:
        # A regex in a PromQL string: "\\." is a dot.
        empty = [e for e in exprs
                 if not query(e.replace("$instance", node.replace(".", "\\\\.")))["data"]["result"]]
        if empty:
            time.sleep(0.5)
    check(exprs and not empty, f"the dashboard's {len(exprs)} panels without a '> 0' filter have data "
          f"for the textfile host {empty[:2]}")
    r = query(f'time() - hvnoise_exporter_updated_timestamp_seconds{{instance="{node}"}}')
    age = [float(x["value"][1]) for x in r["data"]["result"]]
    check(len(age) == 1 and 0 <= age[0] < 30,
          f"HvnoiseMetricsStale's age, for the textfile host: {age} s (fires past 120 s)")
    # Frozen: the exporter stopped (SIGSTOP, as a hung one: a kill would
    # leave its tracefs instance behind), node_exporter still serves its
    # last file.
    tprocs[0].send_signal(signal.SIGSTOP)
    age2, deadline = [], time.time() + 30
    while time.time() < deadline:
        r = query(f'time() - hvnoise_exporter_updated_timestamp_seconds{{instance="{node}"}}')
        age2 = [float(x["value"][1]) for x in r["data"]["result"]]
        if len(age2) != 1 or age2[0] >= 3:
            break
        time.sleep(0.2)
    up = [x["value"][1] for x in query(f'up{{instance="{node}"}}')["data"]["result"]]
    check(len(age2) == 1 and age2[0] >= 3 and up == ["1"],
          f"with the textfile's writer stopped, node_exporter still up ({up}) serves the frozen file "
          f"and its age grows ({age2} s): what the stale alert watches")
    tprocs[0].send_signal(signal.SIGCONT)
finally:
    if server:
        server.terminate()
        server.wait(timeout=30)
    for pr in procs:
        if pr.poll() is None:
            pr.send_signal(signal.SIGINT)
    rcs = [pr.wait(timeout=30) for pr in procs]
    for pr in tprocs:
        if pr.poll() is None:
            pr.send_signal(signal.SIGCONT)
            pr.terminate()
    trcs = [pr.wait(timeout=30) for pr in tprocs]
check(rcs == [0, 0], f"the exporters stop on SIGINT with exit 0 ({rcs})")
check(trcs[:1] == [0] and not [i for i in os.listdir("/sys/kernel/tracing/instances")
                            if i.startswith("hvnoise-")],
      f"the textfile exporter stops on SIGTERM with exit {trcs[:1]}, no tracefs instance left")
