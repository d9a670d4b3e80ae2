#!/bin/bash
# Benchmark: what hvnoise costs, in instructions, which QEMU counts exactly
# where TCG's timing cannot be trusted.
#
# usage: bench/instructions.sh [scale]    (BENCH_READS=N reads per segment;
#        BENCH_SECS=S for each timed segment, make check's smoke run: 1;
#        BENCH_QEMU=fetched: make big-guest's QEMU, not Debian 12's;
#        BENCH_PARTS="irq bpfpoll ops" (the default) for scale and big:
#        the interrupts, BPF's poll, the operations (resolve, re-resolution,
#        move), or some of them;
#        BENCH_WAIT=on: count only from the guest's "insn-mark arm", which
#        bench/guest-irq-scale.sh runs (scale, big; QEMU 9 and later))
# Boots Debian's kernel in QEMU (single-threaded TCG) with
# bench/insn-plugin.c loaded, built against the plugin API header of the
# installed QEMU (scripts/fetch-qemu-plugin-header.sh), and attributes the
# instructions to hvnoise.ko's text, the BPF programs and the kernel (the
# guest's /proc/kallsyms, passed back through the VM's disk).
#   (no argument)  bench/guest-instructions.sh, 3 vCPUs: per disk interrupt
#                  on a watched and an unwatched CPU, under a storm, BPF, the
#                  kernel's own IRQ events, the readers, BENCH_ROUNDS
#                  times (2); the idle flight recorder; the readers at BENCH_RATE events a
#                  second (100000); the table by bench/insn-table.py.
#   scale          bench/guest-irq-scale.sh, 8 vCPUs and two virtio-serial
#                  devices (102 and 1,002 MSI-X vectors): per disk interrupt
#                  with 12 and 1,116 watched IRQs, and resolving the set, its
#                  re-resolution and an IRQ move as the IRQs grow; the table
#                  by bench/insn-scale.py.  384 possible CPUs, as a big
#                  GPU host (possible_cpus=; 8 online: x86 gives a CPU
#                  about 200 vectors, and the x2APIC QEMU of make
#                  big-guest has another plugin API), and irqaffinity=
#                  keeps the vectors but the disk's (managed) off CPU 1:
#                  per disk interrupt there unwatched too, with 3 and
#                  1,107 IRQs watched elsewhere.
#   big            the same on 384 vCPUs, all online (make big-guest's
#                  QEMU and machine: q35, x2APIC, interrupt remapping; the
#                  disk has a queue each), 1,000 reads a segment; the
#                  plugin counts from when all are online (wait=on).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mode=${1:-irq}
# Each mode sets what it needs; nothing comes from the environment.
pre="" mem="" timeout="" append="" wait=""
case $mode in
irq) guest=bench/guest-instructions.sh table=bench/insn-table.py cpus=3 reads=5000 devs="" ;;
scale) guest=bench/guest-irq-scale.sh table=bench/insn-scale.py cpus=8 reads=3000
	append="possible_cpus=384 irqaffinity=0,2-7"
	devs="-device virtio-serial-pci,max_ports=50,vectors=103,addr=07"
	devs+=" -device virtio-serial-pci,max_ports=500,vectors=1003,addr=08" ;;
big) guest=bench/guest-irq-scale.sh table=bench/insn-scale.py cpus=384 reads=1000
	BENCH_QEMU=fetched timeout=7200 mem=6144 BENCH_WAIT=on
	# make big-guest's machine (tests/vm/big-guest.sh says why each).
	pre="-M q35 -cpu qemu64,+x2apic,-mtrr -device intel-iommu,intremap=on,eim=on"
	append="possible_cpus=384 maxcpus=64 lpj=10384520 irqaffinity=0,2-383"
	devs="-device virtio-serial-pci,max_ports=50,vectors=103,addr=07"
	devs+=" -device virtio-serial-pci,max_ports=500,vectors=1003,addr=08" ;;
*) echo "usage: bench/instructions.sh [scale|big]" >&2; exit 2 ;;
esac
# BENCH_WAIT=on: counted from the guest's "insn-mark arm" (QEMU 9 and later).
[ "${BENCH_WAIT:-}" = on ] && wait=,wait=on
out=$top/build/bench/insn${1:+-$1}${BENCH_QEMU:+-$BENCH_QEMU}
mkdir -p "$out"
kdir=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$kdir" | sed 's/^linux-headers-//')
# BENCH_QEMU=fetched: make big-guest's QEMU (scripts/fetch-qemu.sh), whose
# plugin API (version 2 and later: a counter a vCPU) includes glib.h.
qemu_env=()
if [ "${BENCH_QEMU:-}" = fetched ]; then
	q=$(scripts/fetch-qemu.sh)
	inc=$(scripts/fetch-qemu-plugin-header.sh "${q%% *}")
	qemu_env=(QEMU_MODULE_DIR="$(dirname "${q%% *}")/../lib/x86_64-linux-gnu/qemu"
		HVN_VM_QEMU="${q%% *}" HVN_VM_PRE_ARGS="${q#* } ${pre:-}"
		HVN_VM_MEM="${mem:-1024}")
	# shellcheck disable=SC2207
	glib=($(pkg-config --cflags glib-2.0))
else
	inc=$(scripts/fetch-qemu-plugin-header.sh)
	glib=()
fi
gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$inc" "${glib[@]}" \
	-o "$out/insn-plugin.so" bench/insn-plugin.c
for t in bench/insn-mark.c bench/evgen.c; do
	gcc -O2 -Wall -Wextra -Werror -static -o "$out/$(basename "$t" .c)" "$t"
done
scripts/kbuild.sh "$out/kbuild" "$kdir"
make -s build/tools/hvnoise build/vmtools/dread build/vmtools/rawsend
tests/vm/mkinitramfs.sh "$out/initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk --kmod virtio_console \
	--bin build/tools/hvnoise=/usr/bin/hvnoise --bin /usr/sbin/bpftool \
	--bin /usr/bin/trace-cmd \
	--guest "$guest" \
	--file bench/guest-bench-lib.sh=/lib/hvnoise/bench-lib.sh \
	--file build/vmtools/dread=/lib/hvnoise/dread \
	--file build/vmtools/rawsend=/lib/hvnoise/rawsend \
	--file "$out/insn-mark=/lib/hvnoise/insn-mark" \
	--file "$out/evgen=/lib/hvnoise/evgen" \
	--file "$out/kbuild/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko"
rm -f "$out/counts.txt"
# Single-threaded TCG: the plugin's tables are not locked (insn-plugin.c).
env "${qemu_env[@]}" HVN_VM_ACCEL=tcg,thread=single HVN_VM_CPUS=$cpus \
	HVN_VM_APPEND="nokaslr ${append:-} BENCH_READS=${BENCH_READS:-$reads} BENCH_RATE=${BENCH_RATE:-100000} ${BENCH_SECS:+BENCH_SECS=$BENCH_SECS} ${BENCH_ROUNDS:+BENCH_ROUNDS=$BENCH_ROUNDS} ${BENCH_PARTS:+BENCH_PARTS=$BENCH_PARTS}" \
	HVN_VM_ARGS="-plugin $out/insn-plugin.so,out=$out/counts.txt${wait:-} $devs" \
	tests/vm/qemu.sh "/boot/vmlinuz-$kver" "$out/initrd.gz" "$out/console.log" \
	/lib/hvnoise/guest.sh "${timeout:-3000}" 2>"$out/qemu.err"
grep "^bench:" "$out/console.log"
python3 - "$out/vm-disk.img" "$out/kallsyms" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head = d[:512].split(b"\n")[0].split()
assert head[0] == b"HVNKSYMS", "no kallsyms on the VM's disk"
open(sys.argv[2], "wb").write(d[512:512 + int(head[1])])
PY
"$table" "$out/console.log" "$out/counts.txt" "$out/kallsyms" \
	"$out/kbuild/kmod/hvnoise.ko" | tee "$out/table.txt"
