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
tools/prometheus/hvnoise-dashboard.json must run.  Prints KTAP
(tests/host/hvntest.py).
"""
import json
import os
import re
import shutil
import signal
import socket
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
    pr = subprocess.Popen([hvn, "exporter", "--listen", "127.0.0.1:0", "-i", "0.2"],
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


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


exporters = [start_exporter(n) for n in range(2)]
procs = [pr for pr, _ in exporters]
ports = [port for _, port in exporters]
server = None
try:
    if not check(all(ports), f"two exporters serve on loopback ({ports})"):
        raise SystemExit
    lint("an exporter's /metrics", get(f"http://127.0.0.1:{ports[0]}/metrics"))

    web = free_port()
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
            if up == ["up", "up"] and rules and all(r.get("lastEvaluation", "0001")[:4] != "0001"
                                                    for r in rules):
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    check(up == ["up", "up"], f"Prometheus scrapes both exporters (health {up})")
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
    r = query("hvnoise_watched")
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
        r = query(q)
        if len(r["data"]["result"]) != 2:
            missing.append(q)
    check(not missing, f"hvnoise_build_info, hvnoise_module_loaded and process_start_time_seconds "
          f"from both exporters {missing}")
finally:
    if server:
        server.terminate()
        server.wait(timeout=30)
    for pr in procs:
        if pr.poll() is None:
            pr.send_signal(signal.SIGINT)
    rcs = [pr.wait(timeout=30) for pr in procs]
check(rcs == [0, 0], f"the exporters stop on SIGINT with exit 0 ({rcs})")
