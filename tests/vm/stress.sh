#!/bin/bash
# The stress run on the 7.2 debug kernel: tests/vm/guest-stress.sh, with
# the host pausing the VM (SIGSTOP/SIGCONT, 20 ms) every second.
# usage: stress.sh CYCLES OUTDIR KERNEL_TREE MODULE DREAD
# Prints the guest's results and stress/completed as KTAP
# (tests/host/hvntest.sh).
set -uo pipefail
n=$1 out=$2 tree=$3 ko=$4 dread=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../host/hvntest.sh"
mkdir -p "$out"
echo "$n" >"$out/cycles"
"$here/mkinitramfs.sh" "$out/stress-initrd.gz" \
	--guest "$here/guest-stress.sh" \
	--file "$out/cycles=/lib/hvnoise/cycles" \
	--file "$dread=/lib/hvnoise/dread" \
	--file "$ko=/lib/hvnoise/hvnoise.ko"
log=$out/stress-console.log
rm -f "$out/stress.pid"
# One TCG thread emulating a KASAN+lockdep kernel is slow enough to starve
# RCU's kthread past the default stall warning: not the module's doing.
# pci=noacpi: so slow that ACPI's _PRT loops hit their 30 s timeout, three
# times a boot (the devices use MSI-X; no routing table is needed).
HVN_VM_APPEND="rcupdate.rcu_cpu_stall_timeout=120 pci=noacpi" \
"$here/qemu.sh" "$tree/arch/x86/boot/bzImage" "$out/stress-initrd.gz" "$log" \
	/lib/hvnoise/guest.sh $((300 + n * 6)) "$out/stress.pid" 2>"$out/stress-qemu.err" &
vm=$!
pauses=0
while kill -0 $vm 2>/dev/null; do
	sleep 1
	if grep -q HVN-STRESS-START "$log" 2>/dev/null && ! grep -q HVN-STRESS-END "$log" &&
		[ -s "$out/stress.pid" ]; then
		pid=$(cat "$out/stress.pid")
		kill -STOP "$pid" 2>/dev/null && sleep 0.02 && kill -CONT "$pid" 2>/dev/null &&
			pauses=$((pauses + 1))
	fi
done
wait $vm
python3 "$here/../host/hvntest.py" relay "$log" "^guest:"
echo "  host: paused the VM $pauses times for 20 ms during the cycles"
grep -q "HVNOISE-VM-DONE" "$log" && ktap_check 0 "stress/completed" ||
	{ tail -30 "$log" | sed "s/^/    /"; ktap_check 1 "stress/completed"; }
