#!/usr/bin/env python3
"""One command's manual page, hvnoise-COMMAND(8), from hvnoise.8.rst: its
synopsis line and its section, as rtla, trace-cmd and perf have a page per
command.  What the commands share (exit status, files, the session
options described under record) stays in hvnoise(8), named at the end.

usage: man-cmd-page.py hvnoise.8.rst COMMAND >hvnoise-COMMAND.8.rst
"""
import re
import sys

src, cmd = sys.argv[1:3]
text = open(src).read()
syn = [ln for ln in text.splitlines() if ln.startswith(f"| **hvnoise {cmd}**")]
m = re.search(rf"^{re.escape(cmd)}\n-+\n(.*?)(?=^\S[^\n]*\n[-=]+\n)", text, re.M | re.S)
if not syn or not m:
    sys.exit(f"man-cmd-page: {src}: no synopsis line or no section for {cmd}")
name = f"hvnoise-{cmd}"
descr = {"record": "record hvnoise and kernel events into a trace.dat",
         "flight-recorder": "always on: the last seconds, written on a trigger",
         "report": "per-CPU steal, lost time, storms and migrations from trace.dat",
         "top": "a live per-CPU view",
         "status": "what hvnoise has and lacks on this host, and the fixes",
         "correlate": "NCCL collectives that stalled, and the host noise behind each",
         "exporter": "per-CPU counters for Prometheus, served over HTTP",
         "trigger": "ask the flight recorder for an incident, or a past window",
         "incidents": "the flight recorder's incidents, newest first",
         "advise": "what to change so that the noise found stops"}[cmd]
bar = "=" * (len(name) + 2)
sub = "-" * (len(descr) + 2)
out = f"""{bar}
 {name}
{bar}

{sub}
 {descr}
{sub}

:Manual section: 8
:Manual group: hvnoise

SYNOPSIS
========

{chr(10).join(syn)}

DESCRIPTION
===========

{m.group(1).rstrip()}

SEE ALSO
========

hvnoise(8): the other commands, the options the recording commands share
(**--cpus**, **--devices**, **--source**, **--param**, **-e**, **-b**,
**--housekeeping**, under record), the exit status and the files;
hvnoise-admin(7).
"""
sys.stdout.write(out)
