#!/bin/bash
# make big-guest: tests/vm/guest-scale.sh on a guest of GPU-host size, 384
# vCPUs (q35, x2APIC with interrupt remapping, single-threaded TCG), a
# virtio disk with a queue per vCPU and two virtio-serial devices of a
# thousand vectors each: about 2,400 MSI-X vectors.  The watched set, its
# every vector on its CPU, an IRQ move (and its records), a storm on the
# highest queue, by the module and the BPF source; SCALE lines with the
# boot, resolve and move figures.  Outside make check: it takes minutes.
# Needs a QEMU whose TCG emulates x2APIC (scripts/fetch-qemu.sh).
# usage: big-guest.sh [CPUS [OUTDIR]]   (384, build/big-guest); BIG_GUEST_APPEND:
# more of the guest kernel's command line (hvn.srate=35: guest-scale.sh)
set -euo pipefail
cpus=${1:-384} out=${2:-build/big-guest}
. "$(dirname "$0")/host-lib.sh"
. tests/report.sh
mkdir -p "$out"
report_init "$out/results.txt"
stage big-guest "$cpus vCPUs (q35, x2APIC, interrupt remapping), a disk with a queue each and two virtio-serial devices (~2,400 vectors): the watched set, an IRQ move, a storm, by the module and the BPF source"
rc=0
qemu=$(scripts/fetch-qemu.sh) || rc=$?
if [ $rc = 2 ]; then
	skip big-guest/completed "no QEMU that emulates x2APIC under TCG can be had here (scripts/fetch-qemu.sh)"
	report_finish
	exit
elif [ $rc != 0 ]; then
	fail big-guest/completed
	report_finish
	exit 1
fi
[ -f build/kbuild-6.1/kmod/hvnoise.ko ] || scripts/kbuild.sh build/kbuild-6.1 "$k61" >&2
make -s tools vmtools >&2
guest_initrd "$out/initrd.gz" tests/vm/guest-scale.sh --kmod virtio_console \
	--file build/vmtools/dread=/lib/hvnoise/dread \
	--file build/vmtools/rawsend=/lib/hvnoise/rawsend \
	--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
log=$out/console.log
t0=$(date +%s)
# The IOMMU before the devices; guest memory for 384 CPUs' per-CPU data and
# trace buffers; lpj= (the boot CPU's, from the timer's frequency): each
# CPU brought up skips calibrating its delay loop, half a second under
# TCG.  maxcpus=64: the rest come online once booted (guest-scale.sh):
# brought up during boot, 128 CPUs took 32 s and 384 more than 12 min.
# No MTRRs: 6.1 copies them to each CPU brought up after boot under a
# stop_machine() of every online CPU (the 320 came up in 20 min without).
# isolcpus=domain: the scheduler balances and kicks (an IPI) only CPUs 0-2,
# where the guest script keeps its tools, as isolated hosts have it
# (tests/vm/guest-scale.sh says what the others took from it).
QEMU_MODULE_DIR=$(dirname "${qemu%% *}")/../lib/x86_64-linux-gnu/qemu \
	HVN_VM_QEMU=${qemu%% *} HVN_VM_PRE_ARGS="${qemu#* } -M q35 -cpu qemu64,+x2apic,-mtrr -device intel-iommu,intremap=on,eim=on" \
	HVN_VM_CPUS=$cpus HVN_VM_MEM=6144 HVN_VM_APPEND="possible_cpus=$cpus maxcpus=64 lpj=10384520 isolcpus=domain,3-$((cpus - 1)) ${BIG_GUEST_APPEND:-}" \
	HVN_VM_ARGS="-device virtio-serial-pci,max_ports=500,vectors=1003,addr=07 -device virtio-serial-pci,max_ports=500,vectors=1003,addr=08" \
	tests/vm/qemu.sh "/boot/vmlinuz-$kver" "$out/initrd.gz" "$log" /lib/hvnoise/guest.sh ${BIG_GUEST_TIMEOUT:-7200} \
	2>"$out/qemu.err" || true
echo "the run took $(( $(date +%s) - t0 )) s" | diag
results_from "$log"
if grep -q "HVNOISE-VM-DONE" "$log"; then
	pass "big-guest/completed"
else
	tail -30 "$log" | diag
	cat "$out/qemu.err" | diag
	fail "big-guest/completed"
fi
grep "^SCALE " "$log" | diag
report_finish
