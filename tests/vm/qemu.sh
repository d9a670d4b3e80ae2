#!/bin/bash
# Boot a kernel and initramfs under QEMU TCG with a virtio NIC and disk (the
# stand-ins for a GPU host's NIC and GPU) and capture its serial console.
#
# usage: qemu.sh KERNEL INITRD LOG RUN [TIMEOUT_S] [PIDFILE]
#   RUN is the guest script for init's hvn.run=.
# Fixed PCI addresses: the NIC is 0000:00:04.0, the disk 0000:00:05.0, and
# a second NIC, 0000:00:06.0, is the NIC's only peer: both sit on a
# QEMU-internal hub, so the tests can make receive interrupts and no packet
# leaves the VM.
#
# Single-threaded TCG by default: under multi-threaded TCG, the kernel's
# text patching (static keys flipped by tracepoint (un)registration, as at
# insmod and rmmod) left a vCPU looping in the int3 handler while another
# waited in smp_call_function_many_cond, five times in many runs; never with
# one TCG thread.  HVN_VM_ACCEL=tcg gives a thread per vCPU, which the
# detector test needs to take one vCPU's host core away.
#
# HVN_VM_QEMU: the QEMU binary (default qemu-system-ARCH on the PATH);
# HVN_VM_MEM: the guest's memory (default 1024, MiB); HVN_VM_PRE_ARGS:
# arguments before the devices (a q35 machine and its IOMMU, which must
# come first).  tests/vm/big-guest.sh sets them for its 384 vCPUs.
#
# HVN_VM_ARCH=aarch64: QEMU's virt machine with a GICv3 and its ITS (MSI-X
# for the PCIe devices, at the same addresses), a Cortex-A72 (ARMv8.0: no
# pointer authentication for TCG to emulate slowly), the console on the
# PL011.
set -euo pipefail

kernel=$1 initrd=$2 log=$3 run=$4 timeout_s=${5:-600} pidfile=${6:-}
disk=$(dirname "$log")/vm-disk.img
truncate -s 256M "$disk"	# sparse; the detector test copies its recordings out through it

case ${HVN_VM_ARCH:-x86_64} in
# nokaslr: a hung vCPU's address names the function it is in (tests/vm/init)
# (tests/vm/inject.py hang_report()).
x86_64) qemu=qemu-system-x86_64 machine=() console="console=ttyS0 tsc=reliable nokaslr" ;;
aarch64) qemu=qemu-system-aarch64 machine=(-M virt,gic-version=3,its=on -cpu cortex-a72)
	console="console=ttyAMA0 nokaslr" ;;
*) echo "qemu.sh: HVN_VM_ARCH=$HVN_VM_ARCH: x86_64 or aarch64" >&2; exit 2 ;;
esac
qemu=${HVN_VM_QEMU:-$qemu}
# shellcheck disable=SC2206
[ -n "${HVN_VM_PRE_ARGS:-}" ] && machine+=($HVN_VM_PRE_ARGS)
args=("${machine[@]}" -accel "${HVN_VM_ACCEL:-tcg,thread=single}" -smp "${HVN_VM_CPUS:-4}" -m "${HVN_VM_MEM:-1024}" -no-reboot
      -name hvnoise-vm,debug-threads=on
      -display none -monitor none -serial "file:$log"
      -kernel "$kernel" -initrd "$initrd"
      -append "$console loglevel=${HVN_VM_LOGLEVEL:-4} panic=-1 hvn.run=$run ${HVN_VM_APPEND:-}"
      -netdev hubport,id=n0,hubid=0
      -device virtio-net-pci,netdev=n0,addr=04
      -netdev hubport,id=n1,hubid=0
      -device virtio-net-pci,netdev=n1,addr=06
      -drive "file=$disk,if=none,format=raw,id=d0"
      -device virtio-blk-pci,drive=d0,addr=05)
[ -n "$pidfile" ] && args+=(-pidfile "$pidfile")
# More QEMU arguments, split on spaces (a host-to-guest channel, say).
# shellcheck disable=SC2206
[ -n "${HVN_VM_ARGS:-}" ] && args+=($HVN_VM_ARGS)
: >"$log"
timeout "$timeout_s" "$qemu" "${args[@]}" || {
	rc=$?
	[ $rc -eq 124 ] && echo "qemu.sh: VM timed out after ${timeout_s}s" >&2
	exit $rc
}
