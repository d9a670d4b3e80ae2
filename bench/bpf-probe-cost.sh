#!/bin/bash
# Benchmark: what each BPF program of the BPF source costs per run, on this
# host (not emulated: a KVM guest here), from the kernel's own BPF run-time
# statistics (kernel.bpf_stats_enabled), under a disk IRQ load on the
# watched CPU.  Complements overhead.sh, whose TCG figures are too noisy to
# tell the module from BPF.
#
# usage: bench/bpf-probe-cost.sh [SECONDS]     (root, after make tools)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
hvn=$top/build/tools/hvnoise
secs=${1:-6}
out=$(mktemp -d)
trap 'echo 0 >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$out"' EXIT

irq=$(awk '/virtio[0-9]*-req|nvme/ { sub(":", "", $1); print $1; exit }' /proc/interrupts)
dev=""
for p in /sys/bus/pci/devices/*; do
	[ -e "$p/msi_irqs/$irq" ] && dev=$(basename "$p")
done
[ -n "$dev" ] || { echo "no disk IRQ with a PCI device found" >&2; exit 1; }
dd if=/dev/zero of="$out/direct.bin" bs=1M count=8 2>/dev/null

echo 1 >/proc/sys/kernel/bpf_stats_enabled
"$hvn" record --source bpf --devices "$dev" -o "$out/b.dat" -d "$secs" 2>/dev/null &
rec=$!
sleep 1.5
end=$((SECONDS + secs - 3))
while [ $SECONDS -lt $end ]; do
	dd if="$out/direct.bin" of=/dev/null bs=4k count=2048 iflag=direct 2>/dev/null
done
bpftool prog show -j >"$out/progs.json"
wait $rec
echo "bench: BPF source watching $dev (IRQ $irq), O_DIRECT reads for $((secs - 3)) s"
python3 - "$out/progs.json" <<'PY'
import json, sys
rows = [p for p in json.load(open(sys.argv[1])) if p.get("run_cnt")]
print(f"{'program':<18} {'runs':>9} {'ns/run':>8}")
for p in rows:
    print(f"{p['name']:<18} {p['run_cnt']:>9} {p['run_time_ns'] / p['run_cnt']:>8.0f}")
by = {p["name"]: p for p in rows}
if "irq_entry" in by and "irq_exit" in by:
    c = sum(by[n]["run_time_ns"] / by[n]["run_cnt"] for n in ("irq_entry", "irq_exit"))
    print(f"per device interrupt on a watched CPU (entry + exit): {c:.0f} ns")
PY
