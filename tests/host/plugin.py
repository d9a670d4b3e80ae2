#!/usr/bin/env python3
"""The libtraceevent plugin (plugin_hvnoise.so) in trace-cmd report, against
the events written and against hvnoise report --json.

usage: plugin.py HVNOISE PLUGIN_DIR WORKDIR [--asan ASAN_PLUGIN_DIR] [TRACE.dat...]

A synthesized file (synth_events.py: every hvnoise event, NCCL records, a
foreign and a cut raw_data record) is decoded by trace-cmd report with the
plugin; each printed field must be the value written, and the per-CPU
sums of the printed values must equal hvnoise report --json's.  Each
further TRACE.dat (a recording from the VM) gets the per-CPU comparison
and the NCCL record counts.  With --asan, trace-cmd also runs the
ASan/UBSan build of the plugin.  Prints KTAP (tests/host/hvntest.py).
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hvntest  # noqa: E402
import synth_events  # noqa: E402

hvn, pdir, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
extra = sys.argv[4:]
asan_dir = None
if extra[:1] == ["--asan"]:
    asan_dir, extra = extra[1], extra[2:]
os.makedirs(work, exist_ok=True)
LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\w+):\s+(.*)$")
FIELD = re.compile(r"(\w+)=(\S*)")


check = hvntest.checker("plugin/")


def report(path, env_extra=None, args=("-t",)):
    env = dict(os.environ, TRACEEVENT_PLUGIN_DIR=pdir)
    env.update(env_extra or {})
    p = subprocess.run(["trace-cmd", "report", *args, "-i", path], env=env,
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def parse(out):
    """(event, cpu, ts ns, text, {key: value}) per event line."""
    evs = []
    for ln in out.splitlines():
        m = LINE.match(ln)
        if m:
            frac = m.group(5).ljust(9, "0")
            evs.append((m.group(6), int(m.group(3)), int(m.group(4)) * 10**9 + int(frac),
                        m.group(7), dict(FIELD.findall(m.group(7)))))
    return evs


def ns_ms(v):
    """"12.345678ms" (what the plugin prints) to exact ns."""
    assert v.endswith("ms"), v
    a, b = v[:-2].split(".")
    assert len(b) == 6, v
    return int(a) * 10**6 + int(b)


def ns_s(v):
    a, b = v.split(".")
    assert len(b) == 9, v
    return int(a) * 10**9 + int(b)


def sums(evs):
    """Per-CPU totals from the plugin's output, as hvnoise report names them."""
    cpus = {}

    def c(n):
        return cpus.setdefault(n, dict(steal_ns=0, steal_events=0, lost_ns=0,
                                       lost_unexplained_ns=0, lost_steal_ns=0,
                                       lost_irq_ns=0, lost_events=0, storms=0,
                                       storm_irqs=0, migrations_in=0, migrations_out=0))
    nccl = 0
    for ev, _, _, text, f in evs:
        if ev == "steal":
            x = c(int(f["cpu"]))
            x["steal_ns"] += ns_ms(f["steal"])
            x["steal_events"] += 1
        elif ev == "lost":
            x = c(int(f["cpu"]))
            x["lost_ns"] += ns_ms(f["lost"])
            x["lost_unexplained_ns"] += ns_ms(f["unexplained"])
            x["lost_steal_ns"] += ns_ms(f["steal"])
            x["lost_irq_ns"] += ns_ms(f["irq"])
            x["lost_events"] += 1
        elif ev == "irq_storm":
            x = c(int(f["cpu"]))
            x["storms"] += 1
            x["storm_irqs"] += int(f["irqs"])
        elif ev == "irq_migrate":
            c(int(f["to_cpu"]))["migrations_in"] += 1
            if int(f["from_cpu"]) >= 0:
                c(int(f["from_cpu"]))["migrations_out"] += 1
        elif ev == "raw_data" and text.startswith("nccl ") and "shorter" not in text:
            nccl += 1
    return cpus, nccl


def against_report(path, evs, label):
    """The plugin's per-CPU sums against hvnoise report --json."""
    p = subprocess.run([hvn, "report", "--json", path], capture_output=True, text=True)
    try:
        rep = json.loads(p.stdout)["reports"][0]
    except (ValueError, KeyError, IndexError) as e:
        check(False, f"{label}: hvnoise report --json", f"{e}: {p.stderr}")
        return None
    mine, nccl = sums(evs)
    bad = []
    for cpu, tot in mine.items():
        r = next((x for x in rep["cpus"] if x["cpu"] == cpu), None)
        for k, v in tot.items():
            if r is None or r[k] != v:
                bad.append(f"cpu {cpu} {k}: plugin {v}, report {r and r[k]}")
    for r in rep["cpus"]:
        if r["cpu"] not in mine and any(r[k] for k in ("steal_ns", "lost_ns", "storms",
                                                        "migrations_in", "migrations_out")):
            bad.append(f"cpu {r['cpu']}: report has noise the plugin did not print")
    n = {k: sum(1 for e in evs if e[0] == k) for k in
         ("watch", "steal", "lost", "irq_storm_begin", "irq_storm", "irq_migrate", "raw_data")}
    for k, v in n.items():
        if rep["events"][k] != v:
            bad.append(f"{k}: plugin printed {v}, report counted {rep['events'][k]}")
    total = sum(sum(t[k] for k in ("steal_ns", "lost_ns", "storms", "migrations_in"))
                for t in mine.values())
    check(not bad and total > 0,
          f"{label}: per-CPU steal, lost (unexplained, steal, irq), storms, storm IRQs, "
          f"migrations in/out and event counts from the plugin's output equal hvnoise report "
          f"--json's ({len(mine)} CPUs, {sum(n.values())} events)", "; ".join(bad[:5]))
    return nccl


# --- the synthesized file: every field, exactly ---------------------------------
syn = os.path.join(work, "synth.dat")
truth = synth_events.write(syn)
rc, out, err = report(syn)
evs = parse(out)
check(rc == 0 and len(evs) == len(truth) and "FAILED TO PARSE" not in out + err,
      f"trace-cmd report with the plugin reads the synthesized file ({len(evs)} of "
      f"{len(truth)} events, exit {rc})", err[-300:])

rc0, out0, _ = report(syn, args=("-t", "-N"))
plain = parse(out0)
check(rc0 == 0 and any(t.startswith("id:4e43") for e, _, _, t, _ in plain if e == "raw_data")
      and not any(t.startswith("nccl ") for _, _, _, t, _ in plain),
      "without plugins (-N), the NCCL records print as the kernel's hex: the plugin decodes them")

SRC = ["irq", "all", "local_timer", "reschedule", "call_function", "call_function_single"]
HOW = ["vector_update", "handled", "poll"]
FN = ["Unknown", "AllGather", "AllReduce", "AlltoAll", "Broadcast", "Gather", "Recv",
      "Reduce", "ReduceScatter", "Scatter", "SendRecv", "Send"]


def bdf(dev):
    return f"{dev >> 16:04x}:{(dev >> 8) & 0xff:02x}:{(dev >> 3) & 0x1f:02x}.{dev & 7:x}"


def want(t):
    """What the plugin must print for event @t of synth_events, as a dict."""
    f, ev = t["fields"], t["event"]
    ms = lambda ns: f"{ns // 10**6}.{ns % 10**6:06d}ms"   # noqa: E731
    s = lambda ns: f"{ns // 10**9}.{ns % 10**9:09d}"      # noqa: E731
    if ev == "watch":
        w = {"gen": str(f["gen"])}
        if f["kind"] == 0:
            w.update(cpu=str(f["cpu"]), why={3: "listed|irq", 2: "irq"}[f["why"]])
        elif f["kind"] == 1:
            w.update(device=bdf(f["dev"]), node=str(f["node"]), irqs=str(f["nirqs"]))
        else:
            w.update(irq=str(f["irq"]), name=f["name"], device=bdf(f["dev"]), cpu=str(f["cpu"]))
        return w
    if ev == "steal":
        return dict(cpu=str(f["cpu"]), steal=ms(f["duration"]), window=ms(f["window"]),
                    source=["kvm", "kcpustat", "pvtime"][f["source"]], start=s(f["start"]))
    if ev == "lost":
        return dict(cpu=str(f["cpu"]), lost=ms(f["duration"]), unexplained=ms(f["unexplained_ns"]),
                    steal=ms(f["steal_ns"]), irq=ms(f["irq_ns"]), start=s(f["start"]))
    if ev in ("irq_storm_begin", "irq_storm"):
        w = dict(cpu=str(f["cpu"]), source=SRC[f["source"]], irq=str(f["irq"]), name=f["name"],
                 start=s(f["start"]))
        if ev == "irq_storm":
            w.update(storm=ms(f["duration"]), irqs=str(f["count"]), peak=f"{f['peak_rate']}/s")
        else:
            w["threshold"] = str(f["threshold"])
        return w
    if ev == "irq_migrate":
        return dict(irq=str(f["irq"]), name=f["name"], device=bdf(f["dev"]),
                    from_cpu=str(f["from_cpu"]), to_cpu=str(f["to_cpu"]), how=HOW[f["how"]])
    buf = bytes.fromhex(f["buf"])
    typ = f["id"] & 0xFFFF
    if f["id"] >> 16 != 0x4E43:
        return dict(id=f"0x{f['id']:08x}", buf=buf.hex() + "00" * (-len(buf) % 4))
    import struct
    if len(buf) < {1: 104, 2: 88, 3: 120, 4: 72}[typ]:
        return {"_text": f"nccl record type {typ}: {len(buf)} bytes, shorter than its"}
    if typ == 1:
        comm, rank, nranks, nnodes, pid, mono, real, name, host = \
            synth_events.NCCL_COMM.unpack(buf)
        return {"_text": "nccl comm", "comm": f"{comm:016x}", "rank": str(rank),
                "nranks": str(nranks), "nodes": str(nnodes), "pid": str(pid),
                "host": host.rstrip(b"\0").decode(), "name": name.rstrip(b"\0").decode(),
                "mono": s(mono), "real": s(real)}
    if typ == 2:
        (comm, op, seq, start, enq, count, rank, tid, cpu, peer, func, dtb, nch, _,
         algo, proto) = synth_events.NCCL_COLL.unpack(buf)
        return {"_text": f"nccl coll {FN[func]}", "comm": f"{comm:016x}", "rank": str(rank),
                "seq": str(seq), "op": str(op), "count": str(count), "bytes": str(count * dtb),
                "start": s(start), "enqueue": ms(enq - start), "tid": str(tid),
                "cpu": str(cpu), "peer": str(peer), "channels": str(nch),
                "algo": algo.rstrip(b"\0").decode(), "proto": proto.rstrip(b"\0").decode()}
    if typ == 3:
        v = synth_events.NCCL_PROXY.unpack(buf)
        comm, op, seq, start, end = v[:5]
        waits = v[5:11]
        rank, tid, cpu, cpu_end, peer, nsteps, chunk, ch, is_send, func = v[11:21]
        w = {"_text": f"nccl proxyop {'send' if is_send else 'recv'} {FN[func]}",
             "comm": f"{comm:016x}", "rank": str(rank), "seq": str(seq), "op": str(op),
             "channel": str(ch), "peer": str(peer), "steps": str(nsteps), "chunk": str(chunk),
             "start": s(start), "dur": ms(end - start), "tid": str(tid), "cpu": str(cpu),
             "cpu_end": str(cpu_end)}
        for k, x in zip(("send_gpu", "send_peer", "send", "recv", "recv_flush", "recv_gpu"), waits):
            if x:
                w[k] = ms(x)
        return w
    comm, op, seq, start, end, gs, ge, rank, tid, cpu, ch, func, _, _ = struct.unpack(
        "<QQQQQQQiIiBBBB", buf)
    return {"_text": f"nccl kernch {FN[func]}", "comm": f"{comm:016x}", "rank": str(rank),
            "seq": str(seq), "op": str(op), "channel": str(ch), "start": s(start),
            "dur": ms(end - start), "gpu": ms(ge - gs), "tid": str(tid), "cpu": str(cpu)}


bad = []
kinds = {}
for t, e in zip(truth, evs):
    w = want(t)
    ev, cpu, ts, text, f = e
    if (ev, cpu, ts) != (t["event"], t["buffer"], t["ts"]):
        bad.append(f"event {t['event']}@{t['ts']} printed as {ev}@{ts} on CPU {cpu}")
        continue
    prefix = w.pop("_text", None)
    if prefix and not text.startswith(prefix):
        bad.append(f"{ev} at {ts}: {text!r} does not start with {prefix!r}")
    got = {k: f.get(k) for k in w}
    if got != w:
        bad.append(f"{ev} at {ts}: printed {text!r}, want {w}")
    if not prefix or not prefix.startswith("nccl record"):
        missing = set(f) - set(w)
        if missing and ev != "raw_data":
            bad.append(f"{ev} at {ts}: fields printed but not checked: {missing}")
    kinds[text.split(" ")[1] if text.startswith("nccl") else ev] = \
        kinds.get(text.split(" ")[1] if text.startswith("nccl") else ev, 0) + 1
check(not bad and len(evs) == len(truth),
      "every field of every event is printed with the value written: " +
      ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())), "; ".join(bad[:4]))

against_report(syn, evs, "synthesized")

# --- ASan/UBSan build of the plugin inside trace-cmd ------------------------------
if asan_dir:
    lib = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                         text=True).stdout.strip()
    rc, out2, err2 = report(syn, {"TRACEEVENT_PLUGIN_DIR": os.path.abspath(asan_dir),
                                  "LD_PRELOAD": lib,
                                  "ASAN_OPTIONS": "detect_leaks=0:exitcode=99",
                                  "UBSAN_OPTIONS": "halt_on_error=1:exitcode=99"})
    check(rc == 0 and out2 == out and "Sanitizer" not in err2 and "runtime error" not in err2,
          f"the ASan/UBSan build of the plugin prints the same, without a report (exit {rc})",
          err2[-400:])

# --- recordings -------------------------------------------------------------------
for path in extra:
    label = os.path.basename(path)
    rc, out, err = report(path)
    evs = parse(out)
    check(rc == 0 and evs and "FAILED TO PARSE" not in out + err,
          f"{label}: trace-cmd report with the plugin ({len(evs)} events, exit {rc})", err[-300:])
    nccl = against_report(path, evs, label)
    if nccl:
        p = subprocess.run([hvn, "correlate", "--json", path], capture_output=True, text=True)
        try:
            cj = json.loads(p.stdout)
            n = cj["nccl_records"]
        except (ValueError, KeyError) as e:
            n = f"unreadable ({e})"
        check(n == nccl, f"{label}: NCCL records decoded by the plugin ({nccl}) equal "
              f"hvnoise correlate's count ({n})")

sys.exit(hvntest.exit_status())
