#!/bin/bash
# Benchmark: the cost of hvnoise.ko on an IRQ-heavy workload, in one VM run.
#
# usage: bench/overhead.sh            (after make check has built the module)
# Boots Debian's kernel in QEMU (TCG, 2 vCPUs) and times synchronous O_DIRECT
# disk reads, one interrupt each, pinned to the CPU that takes their IRQ:
#   none              no module, no tracing
#   module-unwatched  hvnoise.ko loaded, that CPU not watched
#   module-watched    hvnoise.ko watching that CPU, its events enabled
#   ftrace-irq        no module; the kernel's irq:irq_handler_entry event on
# Rounds alternate the configurations; the table gives the median time per
# read and its ratio to "none".  TCG makes every figure slow and noisy:
# compare ratios, not absolute times.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=$top/build/bench
mkdir -p "$out"
kdir=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$kdir" | sed 's/^linux-headers-//')
scripts/kbuild.sh "$out/kbuild" "$kdir"
gcc -O2 -Wall -Wextra -Werror -static -o "$out/dread" tests/vm/tools/dread.c
tests/vm/mkinitramfs.sh "$out/initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
	--file bench/guest-overhead.sh=/lib/hvnoise/guest.sh \
	--file "$out/dread=/lib/hvnoise/dread" \
	--file "$out/kbuild/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko"
HVN_VM_CPUS=2 tests/vm/qemu.sh "/boot/vmlinuz-$kver" "$out/initrd.gz" \
	"$out/console.log" /lib/hvnoise/guest.sh 900 2>"$out/qemu.err"
grep "^bench:" "$out/console.log"
grep "^BENCH " "$out/console.log" | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    _, name, ns = line.split()
    runs.setdefault(name, []).append(int(ns))
base = statistics.median(runs["none"])
print(f"{\"configuration\":<18} {\"runs\":>4} {\"ns/read (median)\":>17} {\"vs none\":>8}")
for name in ("none", "module-unwatched", "module-watched", "ftrace-irq"):
    m = statistics.median(runs.get(name, [0]))
    print(f"{name:<18} {len(runs.get(name, [])):>4} {m:>17.0f} {m / base - 1:>+8.1%}")
w, f = statistics.median(runs["module-watched"]), statistics.median(runs["ftrace-irq"])
print(f"module-watched extra per read / ftrace-irq extra per read: "
      f"{(w - base) / (f - base) if f != base else float(\"nan\"):.2f}")
'
