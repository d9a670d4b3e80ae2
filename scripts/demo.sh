#!/bin/bash
# make demo: build hvnoise.ko for Debian's stock kernel, boot it in QEMU with
# a virtio NIC and disk standing for a GPU host's NIC and GPU, load the
# module on them, change the host under it (IRQ moves, CPU hotplug, driver
# rebind), pause the VM from the host as a hypervisor would while an
# NCCL-like job runs, and print what the module watched and recorded, the
# hvnoise report, and hvnoise correlate's verdict on the job's stalls;
# then two VMs running one job between them, one paused, and correlate
# over both hosts' recordings naming it (tests/vm/fleet.py).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=$top/build/demo
mkdir -p "$out"

kdir=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$kdir" | sed 's/^linux-headers-//')
[ -r "/boot/vmlinuz-$kver" ] || { echo "demo: /boot/vmlinuz-$kver missing (apt-get install linux-image-amd64)" >&2; exit 1; }

echo "== building hvnoise.ko for $kver, and the hvnoise command"
scripts/kbuild.sh "$out/kbuild" "$kdir"
make -s tools
tests/vm/mkinitramfs.sh "$out/initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
	--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
	--bin build/tools/nccl_fake=/usr/bin/nccl_fake \
	--file build/tools/libnccl-profiler-hvnoise.so=/usr/lib/libnccl-profiler-hvnoise.so \
	--guest scripts/demo-guest.sh \
	--file "$out/kbuild/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko"

echo "== booting Debian's $kver in QEMU (TCG, 4 vCPUs); guest output follows"
: >"$out/console.log"
rm -f "$out/qemu.pid"
tests/vm/qemu.sh "/boot/vmlinuz-$kver" "$out/initrd.gz" "$out/console.log" \
	/lib/hvnoise/guest.sh 420 "$out/qemu.pid" 2>"$out/qemu.err" &
vm=$!

# The hypervisor noise: when the guest asks (MARKER), pause the whole VM
# for each of the given times.
pauses() {	# pauses MARKER MS...
	local marker=$1 pid ms t0 t1
	shift
	while kill -0 $vm 2>/dev/null && ! grep -q "$marker" "$out/console.log"; do
		sleep 0.2
	done
	kill -0 $vm 2>/dev/null || return 0
	pid=$(cat "$out/qemu.pid")
	for ms in "$@"; do
		sleep 2
		t0=$(date +%s%N)
		kill -STOP "$pid"
		sleep "0.$(printf '%03d' $ms)"
		kill -CONT "$pid"
		t1=$(date +%s%N)
		echo "  host: paused the VM for $(( (t1 - t0) / 1000000 )) ms (asked $ms ms)"
		echo "$marker $(( (t1 - t0) / 1000 ))" >>"$out/pauses.txt"
	done
}
rm -f "$out/pauses.txt"
# Under the NCCL-like job (the module), then without the module (BPF).
( pauses HVN-DEMO-PAUSE-JOB 50 120; pauses HVN-DEMO-PAUSE-BPF 80 ) &
tail -n +1 -f --pid=$vm "$out/console.log" 2>/dev/null |
	sed -u '/^\[ *[0-9.]*\] /d; /^HVN-DEMO-/d'
wait $vm
grep -q "HVNOISE-VM-DONE rc=0" "$out/console.log" || { echo "demo: the VM run failed; see $out/console.log" >&2; exit 1; }
# The BPF source must have seen its pause on every vCPU: a lost event
# within 20% of the pause (this host's own stops may add to it).
us=$(sed -n 's/^HVN-DEMO-PAUSE-BPF \([0-9]*\)$/\1/p' "$out/pauses.txt" 2>/dev/null)
[ -n "$us" ] || { echo "demo: the host did not pause the VM under the BPF source" >&2; exit 1; }
# (The disk's queues put an IRQ on each vCPU: every one is watched.)
for c in $(seq 0 $((${HVN_VM_CPUS:-4} - 1))); do
	awk -v c="$c" -v us="$us" '$1 == "HVN-DEMO-LOST" && $2 == c &&
		$3 / 1000 >= 0.8 * us && $3 / 1000 <= 1.2 * us { ok = 1 } END { exit !ok }' \
		"$out/console.log" ||
		{ echo "demo: the BPF source missed the $((us / 1000)) ms pause on vCPU $c (no lost event within 20%); see $out/console.log" >&2; exit 1; }
done
echo "  (every vCPU showed the $((us / 1000)) ms pause to the BPF source: checked)"

# Which host?  Two VMs, one job across them; the hypervisor (this host)
# pauses VM B; correlate over both hosts' recordings names it.
echo "== which host? two VMs, one NCCL-like job across them over a QEMU socket network;"
echo "   the host pauses VM B for 300 ms; hvnoise correlate over both VMs' recordings:"
tests/vm/mkinitramfs.sh "$out/fleet-initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
	--bin build/tools/hvnoise=/usr/bin/hvnoise \
	--bin build/tools/nccl_fake=/usr/bin/nccl_fake \
	--file build/tools/libnccl-profiler-hvnoise.so=/usr/lib/libnccl-profiler-hvnoise.so \
	--guest tests/vm/guest-fleet.sh \
	--file "$out/kbuild/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko"
rc=0
python3 tests/vm/fleet.py "/boot/vmlinuz-$kver" "$out/fleet-initrd.gz" "$out/fleet" \
	build/tools/hvnoise --demo >"$out/fleet.log" 2>&1 || rc=$?
sed -n 's/^  | /  /p; s/^  host: /  host: /p' "$out/fleet.log"
[ $rc = 0 ] || { echo "demo: the two-host verdict did not name VM B; see $out/fleet.log" >&2; exit 1; }
echo "== done; console logs: $out/console.log, $out/fleet/pause-b/{a,b}/console.log"
