#!/bin/bash
# Benchmark: the cost of hvnoise.ko on an IRQ-heavy workload, in one VM run.
#
# usage: bench/overhead.sh            (after make check has built the module)
# Boots Debian's kernel in QEMU (single-threaded TCG, 2 vCPUs) and times synchronous O_DIRECT
# disk reads, one interrupt each, pinned to the CPU that takes their IRQ:
#   none              no module, no tracing
#   module-unwatched  hvnoise.ko loaded, that CPU not watched
#   module-watched    hvnoise.ko watching that CPU, its events enabled
#   bpf-unwatched     the BPF source (hvnoise record --source bpf), that CPU
#                     not watched
#   bpf-watched       the BPF source watching that CPU
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
make -s build/tools/hvnoise build/vmtools/dread
tests/vm/mkinitramfs.sh "$out/initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
	--bin build/tools/hvnoise=/usr/bin/hvnoise \
	--guest bench/guest-overhead.sh \
	--file build/vmtools/dread=/lib/hvnoise/dread \
	--file "$out/kbuild/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko"
# One vCPU thread at a time: multi-threaded TCG was seen to livelock in the
# int3 handler while the kernel patched code for a static key (module load).
HVN_VM_ACCEL=tcg,thread=single HVN_VM_CPUS=2 tests/vm/qemu.sh "/boot/vmlinuz-$kver" "$out/initrd.gz" \
	"$out/console.log" /lib/hvnoise/guest.sh 1500 2>"$out/qemu.err"
grep "^bench:" "$out/console.log"
bench/table.py "$out/console.log"
