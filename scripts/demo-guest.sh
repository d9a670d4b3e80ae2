#!/bin/sh
# The demo, inside the VM: load hvnoise.ko on the NIC and the disk, record
# its events with trace-cmd while the host changes under it, then report.
P=/sys/module/hvnoise/parameters
T=/sys/kernel/tracing
NIC=0000:00:04.0
DISK=0000:00:05.0
PEER=0000:00:06.0

say() { printf '\n### %s\n' "$*"; }
# Indent hvnoise record's output; once it says it is recording, ask the
# host (MARKER on the console) for its pauses: they must fall inside.
marked() {	# marked MARKER
	m=$1
	while IFS= read -r l; do
		echo "  $l"
		case $l in
		*"hvnoise record: recording "*) [ -n "$m" ] && echo "$m"; m= ;;
		esac
	done
}

say "The devices: a virtio NIC ($NIC) and disk ($DISK) stand for the NIC and the GPU"
grep -E "CPU|virtio" /proc/interrupts

say "insmod hvnoise.ko devices=$NIC,$DISK cpus=1"
insmod /lib/hvnoise/hvnoise.ko devices=$NIC,$DISK cpus=1 resolve_ms=200 || exit 1
dmesg | grep "hvnoise: loaded"
for p in devices cpus local_cpus resolve_ms watched; do
	printf '  %-10s = %s\n' $p "$(cat $P/$p)"
done

say "trace-cmd record -e hvnoise, while the host changes under the module"
trace-cmd record -q -e hvnoise -o /tmp/demo.dat sleep 12 >/dev/null 2>&1 &
rec=$!
n=0
while { [ "$(cat $T/tracing_on)" != 1 ] || [ "$(cat $T/events/hvnoise/watch/enable)" != 1 ]; } &&
	[ $n -lt 50 ]; do
	usleep 200000
	n=$((n + 1))
done
sleep 1

nic=$(ls /sys/bus/pci/devices/$NIC/virtio*/net/)
peer=$(ls /sys/bus/pci/devices/$PEER/virtio*/net/)
ip link set "$nic" up; ip link set "$peer" up; ip addr add 10.99.0.2/24 dev "$peer"
irq=$(awk '/virtio0-input/ { sub(":", "", $1); print $1 }' /proc/interrupts)
to=$(( ($(cat /proc/irq/$irq/effective_affinity_list) + 2) % 4 ))
echo "  - moving the NIC's receive IRQ $irq to CPU $to (as irqbalance would)"
echo $to >/proc/irq/$irq/smp_affinity_list
arping -c 2 -w 2 -I "$peer" 10.99.0.1 >/dev/null 2>&1
sleep 1
echo "  - taking CPU 3 offline, then back"
echo 0 >/sys/devices/system/cpu/cpu3/online; sleep 1
echo 1 >/sys/devices/system/cpu/cpu3/online; sleep 1
echo "  - unbinding and rebinding the NIC's driver"
echo $NIC >/sys/bus/pci/devices/$NIC/driver/unbind; sleep 1
echo $NIC >/sys/bus/pci/drivers/virtio-pci/bind; sleep 1
echo "  - an operator adds CPUs 2-3: echo 1-3 > $P/cpus"
echo 1-3 >$P/cpus
echo "  - a bad write is refused and changes nothing: echo 0-64 > $P/cpus"
echo 0-64 >$P/cpus 2>/dev/null || dmesg | grep "hvnoise: cpus=0-64" | tail -n 1
wait $rec

trace-cmd report -i /tmp/demo.dat 2>/dev/null | grep " watch: " >/tmp/demo.txt
first=$(head -n 1 /tmp/demo.txt | sed 's/.* gen=\([0-9]*\) .*/\1/')
say "trace-cmd report: the first set recorded (gen=$first), one record per watched CPU, device and IRQ"
grep " gen=$first " /tmp/demo.txt | sed 's/^ *[^ ]* *\[[0-9]*\] *//; s/ name=$//; s/ dev=0000:00:00.0 node=-1 irq=-1 nirqs=0//'

say "Every set recorded, one line each: watched CPUs (why), and IRQ->CPU per device"
awk '{
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^[0-9]+\/[0-9]+$/) kind = $(i + 1)
		n = index($i, "="); if (n > 1) f[substr($i, 1, n - 1)] = substr($i, n + 1)
	}
	g = f["gen"]
	if (g != last) { if (last != "") print line; line = sprintf("%s gen=%s:", $3, g); last = g }
	if (kind == "cpu") line = line " cpu" f["cpu"] "(" f["why"] ")"
	if (kind == "device") line = line " | " f["dev"] " nirqs=" f["nirqs"]
	if (kind == "irq") line = line " " f["irq"] "->" f["cpu"]
} END { print line }' /tmp/demo.txt

say "Hypervisor noise under an NCCL job: the host pauses this VM for 50 ms, then 120 ms"
# An NCCL-like job (the host side of one rank: its proxy thread on CPU 1)
# with the hvnoise profiler plugin, recorded by hvnoise record with the
# module's events.  TCG itself delays timers by up to ~10 ms: lost time and
# stalls are judged above 15 ms.
echo 1000 >$P/sample_us
echo 15000 >$P/lost_threshold_us
echo "  hvnoise record -o /tmp/job.dat -- nccl_fake work (NCCL_PROFILER_PLUGIN=hvnoise), 9 s"
hvnoise record -o /tmp/job.dat -- \
	nccl_fake work /usr/lib/libnccl-profiler-hvnoise.so 9 1 2000 2>&1 |
	marked HVN-DEMO-PAUSE-JOB
echo "  hvnoise:lost as trace-cmd reports hvnoise record's file:"
trace-cmd report -i /tmp/job.dat 2>/dev/null | grep " lost: " | sed 's/^ *[^ ]* *\[[0-9]*\] */    /'

say "hvnoise report /tmp/job.dat"
hvnoise report --top 4 /tmp/job.dat

say "hvnoise correlate --min-ms 15 /tmp/job.dat: which collectives stalled, and why"
hvnoise correlate --min-ms 15 --top 4 /tmp/job.dat

say "Watched now: $(cat $P/watched)"
rmmod hvnoise && echo "rmmod hvnoise: clean"

say "Without the module (Secure Boot, a managed cloud): the same detectors as BPF"
hvnoise status 2>&1 | grep -E "^(module|source) " | sed 's/^/  /'
echo "  hvnoise record --source bpf --devices $NIC,$DISK --cpus 1 --param lost_threshold_us=15000 --param sample_us=1000 -d 6"
hvnoise record --source bpf --devices $NIC,$DISK --cpus 1 \
	--param lost_threshold_us=15000 --param sample_us=1000 \
	-o /tmp/bpf.dat -d 6 2>&1 | marked HVN-DEMO-PAUSE-BPF
hvnoise report --top 3 /tmp/bpf.dat | sed -n '/detector events/p; /^ CPU/,/^$/p; /^Top episodes/,$p'
# For the host's check that every vCPU showed the pause (hidden from view).
trace-cmd report -i /tmp/bpf.dat 2>/dev/null | grep " lost: " |
	sed -n 's/.* cpu=\([0-9]*\) .* duration=\([0-9]*\) .*/HVN-DEMO-LOST \1 \2/p'
dmesg | grep -E "WARNING|BUG|Oops" || echo "dmesg: no warnings"
