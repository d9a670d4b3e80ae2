#!/bin/bash
# Benchmark: what hvnoise costs per interrupt, in instructions, which QEMU
# counts exactly where TCG's timing cannot be trusted.
#
# usage: bench/instructions.sh       (BENCH_READS=N reads per segment, 5000)
# Boots Debian's kernel in QEMU (single-threaded TCG, 3 vCPUs) with
# bench/insn-plugin.c loaded, built
# against the plugin API header of the installed QEMU
# (scripts/fetch-qemu-plugin-header.sh).  The guest (bench/guest-instructions.sh)
# runs the same O_DIRECT disk reads under each configuration between the
# plugin's markers, twice; bench/insn-table.py attributes the instructions
# to hvnoise.ko's text, the BPF programs and the kernel, per interrupt, and
# names the kernel functions that grew (the guest's /proc/kallsyms, passed
# back through the VM's disk).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=$top/build/bench/insn
mkdir -p "$out"
kdir=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$kdir" | sed 's/^linux-headers-//')
inc=$(scripts/fetch-qemu-plugin-header.sh)
gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$inc" \
	-o "$out/insn-plugin.so" bench/insn-plugin.c
gcc -O2 -Wall -Wextra -Werror -static -o "$out/insn-mark" bench/insn-mark.c
gcc -O2 -Wall -Wextra -Werror -static -o "$out/dread" tests/vm/tools/dread.c
scripts/kbuild.sh "$out/kbuild" "$kdir"
make -s build/tools/hvnoise
tests/vm/mkinitramfs.sh "$out/initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
	--bin build/tools/hvnoise=/usr/bin/hvnoise --bin /usr/sbin/bpftool \
	--bin /usr/bin/trace-cmd \
	--file bench/guest-instructions.sh=/lib/hvnoise/guest.sh \
	--file "$out/dread=/lib/hvnoise/dread" \
	--file "$out/insn-mark=/lib/hvnoise/insn-mark" \
	--file "$out/kbuild/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko"
rm -f "$out/counts.txt"
# Single-threaded TCG: the plugin's counters are shared, not atomic.
HVN_VM_ACCEL=tcg,thread=single HVN_VM_CPUS=3 \
	HVN_VM_APPEND="nokaslr BENCH_READS=${BENCH_READS:-5000}" \
	HVN_VM_ARGS="-plugin $out/insn-plugin.so,out=$out/counts.txt" \
	tests/vm/qemu.sh "/boot/vmlinuz-$kver" "$out/initrd.gz" "$out/console.log" \
	/lib/hvnoise/guest.sh 3000 2>"$out/qemu.err"
grep "^bench:" "$out/console.log"
python3 - "$out/vm-disk.img" "$out/kallsyms" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head = d[:512].split(b"\n")[0].split()
assert head[0] == b"HVNKSYMS", "no kallsyms on the VM's disk"
open(sys.argv[2], "wb").write(d[512:512 + int(head[1])])
PY
bench/insn-table.py "$out/console.log" "$out/counts.txt" "$out/kallsyms" \
	"$out/kbuild/kmod/hvnoise.ko" | tee "$out/table.txt"
