#!/usr/bin/env python3
"""usage: compare_tc.py REPORT.json TRACE-CMD-REPORT.txt
Exit 0 when hvnoise report's irq_handler_entry counts (total, per CPU and per
IRQ) equal those of the events trace-cmd report printed from the same file."""
import json
import re
import sys
from collections import Counter

rep = json.load(open(sys.argv[1]))["reports"][0]
per_cpu, per_irq = Counter(), Counter()
for line in open(sys.argv[2], errors="replace"):
    m = re.search(r"\[(\d+)\]\s+[\d.]+: irq_handler_entry:\s+irq=(\d+)", line)
    if m:
        per_cpu[int(m.group(1))] += 1
        per_irq[m.group(2)] += 1
got_cpu = Counter({c["cpu"]: c["irqs"] for c in rep["cpus"] if c["irqs"]})
got_irq = Counter(rep["irqs"])
total = sum(per_cpu.values())
print(f"  irq_handler_entry: trace-cmd report {total}, hvnoise report "
      f"{rep['events']['irq_handler_entry']}; per CPU {dict(per_cpu)} vs {dict(got_cpu)}")
ok = (total > 0 and total == rep["events"]["irq_handler_entry"] and per_cpu == got_cpu
      and per_irq == got_irq)
sys.exit(0 if ok else 1)
