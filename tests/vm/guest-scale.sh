#!/bin/sh
# hvnoise.ko on a big guest, inside it (busybox sh, Debian's stock kernel):
# 64 vCPUs, and a virtio disk with a queue per vCPU (QEMU's default), so 65
# MSI-X vectors, each queue's managed to its own CPU, as a GPU host's NICs
# and NVMe drives are.  The watched set, an IRQ move, a storm on the highest
# queue, by the module and by the BPF source beside it; the cost of
# resolving the set and of an IRQ move against the IRQ count (SCALE lines;
# the table in Documentation/testing.rst).
STAGE=vm-scale
. /lib/hvnoise/lib.sh

# stamp PATTERN: the time (CLOCK_MONOTONIC, the trace clock, in us) of the
# first trace record matching PATTERN.  mark NAME: a trace_marker record
# now; us NAME: its time, read back before the trace is cleared.
stamp() {
	grep -m 1 "$1" $T/trace | sed 's/.* \([0-9]*\)\.\([0-9]*\): .*/\1\2/'
}
mark() { echo "hvn-mark-$1" >$T/trace_marker; }
us() { stamp "hvn-mark-$1\$"; }
# since A B: us from mark A to mark B, or "?" when one is missing.
since() {
	a=$(us "$1") b=$(us "$2")
	if [ -n "$a" ] && [ -n "$b" ]; then echo $((b - a)); else echo "?"; fi
}

# The big guest boots a few CPUs (maxcpus=): single-threaded TCG brings
# each up slower the more are online while the kernel boots; the others
# come online here, as a hotplugged host's would.
if [ "$(cat /sys/devices/system/cpu/online)" != "$(cat /sys/devices/system/cpu/present)" ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	n=0
	for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat $c)" = 1 ] && continue
		echo 1 >$c
		n=$((n + 1))
		[ $((n % 32)) = 0 ] && echo "guest: $n more CPUs online at $(cut -d' ' -f1 /proc/uptime) s"
	done
	echo "SCALE online cpus=$(grep -c ^processor /proc/cpuinfo) from=$t0 to=$(cut -d' ' -f1 /proc/uptime) (s of uptime: the CPUs maxcpus= left offline, brought up)"
fi
ncpu=$(grep -c ^processor /proc/cpuinfo)
nq=$(ls /sys/bus/pci/devices/$BLK/msi_irqs | wc -l)
possible=$(cat /sys/devices/system/cpu/possible)
echo "guest: kernel $(uname -r), $ncpu CPUs of $possible possible, the disk with $nq MSI-X vectors; up $(cut -d' ' -f1 /proc/uptime) s"
echo "SCALE boot cpus=$ncpu s=$(cut -d' ' -f1 /proc/uptime) (guest uptime when the test began)"
[ "$ncpu" -ge 64 ] && [ "$nq" -gt "$ncpu" ]
check $? "$ncpu vCPUs and a disk with a queue each ($nq vectors)"
# possible_cpus=320 (tests/check.sh): nr_cpu_ids past 256, where the BPF
# source once stopped; the module's per-CPU data and masks, the BPF
# source's maps are sized by it.  The big guest (make big-guest) has all
# of its 384 present.
want=$(sed -n 's/.*possible_cpus=\([0-9]*\).*/\1/p' /proc/cmdline)
[ "$possible" = "0-$((${want:-$ncpu} - 1))" ] && [ "${want:-$ncpu}" -gt 256 ]
check $? "${want:-$ncpu} possible CPUs, more than 256 ($possible)"
# The big guest's virtio-serial devices: a thousand vectors each.
SER=""
for d in 0000:00:07.0 0000:00:08.0; do
	[ -d /sys/bus/pci/devices/$d/msi_irqs ] && SER="$SER,$d"
done

echo mono >$T/trace_clock
echo 256 >$T/buffer_size_kb	# per CPU: 16 MiB for 64 of them
dmesg -c >/dev/null

# Loading with nothing watched, then the set by device: what resolving it
# costs as the IRQs grow (the NIC: 3 vectors; the disk: 65).  Times from
# the trace clock; under TCG they say how the cost grows, not what it is.
echo >$T/trace
mark load0
insmod $KO devices=none storm_rate=500 storm_window_ms=100
check $? "insmod on $ncpu CPUs"
mark load1
echo "SCALE insmod cpus=$ncpu us=$(since load0 load1)"
echo 1 >$T/events/hvnoise/enable
for dev in $NIC $BLK "$NIC,$BLK" ${SER:+"$NIC,$BLK$SER"}; do
	n=0
	for d in $(echo $dev | tr ',' ' '); do
		n=$((n + $(ls /sys/bus/pci/devices/$d/msi_irqs | wc -l)))
	done
	best=""
	for _ in 1 2 3; do
		echo none >$P/devices
		echo >$T/trace
		mark set0
		echo $dev >$P/devices
		mark set1
		t=$(since set0 set1)
		[ "$t" = "?" ] && continue
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "SCALE resolve irqs=$n us=${best:-?} (best of 3: writing devices=$dev)"
done

# The newest generation names every vector of the disk on the CPU the
# kernel has it on.
echo >$T/trace
echo none >$P/devices
echo $BLK >$P/devices
wait_until 10 '[ "$(trace_pairs $BLK | wc -l)" -ge "$nq" ]'
pairs_as_proc $BLK "hvnoise:watch (the disk's $nq vectors)"
w=$(cat $P/watched)
[ "$w" = "0-$((ncpu - 1))" ]
check $? "every CPU with a disk queue is watched ($w)"
if [ -n "$SER" ]; then
	# Thousands of vectors: every one on its CPU, in the newest set.
	echo "$BLK$SER" >$P/devices
	for d in $(echo "${SER#,}" | tr ',' ' '); do
		n=$(ls /sys/bus/pci/devices/$d/msi_irqs | wc -l)
		wait_until 20 '[ "$(trace_pairs $d | wc -l)" -ge "$n" ]'
		pairs_as_proc $d "hvnoise:watch (the serial device $d's $n vectors)"
	done
fi

# An IRQ move: the disk queues' vectors are managed (fixed), and a moved
# vector changes CPU at its next interrupt: the NIC's receive vector, moved
# to the last CPU and back, with frames from its peer each time; each move
# seen once with its CPUs, the set watching both devices.
PEER=0000:00:06.0
nic=$(ls /sys/bus/pci/devices/$NIC/virtio*/net/)
peer=$(ls /sys/bus/pci/devices/$PEER/virtio*/net/)
ip link set "$nic" up && ip link set "$peer" up
echo "$NIC,$BLK$SER" >$P/devices
nirq=0
for d in $(echo "$NIC,$BLK$SER" | tr ',' ' '); do
	nirq=$((nirq + $(ls /sys/bus/pci/devices/$d/msi_irqs | wc -l)))
done
irq=$(irq_of virtio0-input.0)
from=$(cat /proc/irq/$irq/effective_affinity_list)
to=$((ncpu - 1))
[ "$from" = "$to" ] && to=0

# The BPF source records the same set, moves and storm beside the module,
# on all 64 CPUs (its per-CPU maps sized from the possible CPUs at load).
start_recorder /tmp/bpf.log 120 hvnoise record --source bpf \
	--devices "$NIC,$BLK$SER" --param storm_rate=500 \
	--param storm_window_ms=100 -o /tmp/bpf.dat
check $? "hvnoise record --source bpf starts on $ncpu CPUs"
bpfpid=$bgpid
cat /tmp/bpf.log
# The module's storms over the same time, in an instance of their own.
mkdir $T/instances/cmp
echo 1 >$T/instances/cmp/events/hvnoise/irq_storm_begin/enable
bpf_from=$from bpf_to=$to nicirq=$irq

for step in there back; do
	nic_move $irq $from $to $step
	t1=$(stamp " irq_migrate: irq=$irq ")
	t0=$(us move0)
	[ -n "$t1" ] && [ -n "$t0" ] &&
		echo "SCALE move irqs=$nirq us=$((t1 - t0)) (the affinity write, then frames, to the irq_migrate event)"
	# The poll's next set says the move as a delta: the records that
	# changed, not the whole set (whole each 16th generation, a base for
	# a ring that overwrites); asked for whole, it has what /proc has.
	sel="irq cpu=$to why=[^ ]* .* irq=$irq "
	wait_until 5 'grep " watch: " $T/trace | grep -q "$sel"'
	g=$(grep " watch: " $T/trace | grep "$sel" | sed -n 's/.* gen=\([0-9]*\) .*/\1/p' | head -n 1)
	recs() { grep " watch: " $T/trace | grep " gen=${g:-x} "; }
	nd=$(recs | grep -c "why=[^ ]*delta")
	whole_n() { recs | grep -v "why=[^ ]*delta" | sed -n 's|.* gen=[0-9]* [0-9]*/\([0-9]*\) .*|\1|p' | head -n 1; }
	whole_have() { recs | grep -v "why=[^ ]*delta" | sed -n 's|.* gen=[0-9]* \([0-9]*\)/.*|\1|p' | sort -u | wc -l; }
	echo 1 >$P/emit
	wait_until 5 '[ -n "$(whole_n)" ] && [ "$(whole_have)" = "$(whole_n)" ]'
	nw=$(whole_n)
	if [ -n "$g" ] && [ $((g % 16)) = 0 ]; then
		[ "$nd" = 0 ]
		check $? "the move $step went out whole, as generation $g (a multiple of 16) must"
	else
		[ -n "$g" ] && [ "$nd" -ge 2 ] && [ "$nd" -le 4 ]
		check $? "the move $step went out as a delta of $nd records (generation ${g:-?}; the whole set: ${nw:-?})"
		echo "SCALE move-records irqs=$nirq delta=$nd whole=${nw:-?} (records of a move; 64 bytes each in the ring)"
	fi
	pairs_as_proc $NIC "the set after the move $step"
	t=$from from=$to to=$t
done

# A storm on the highest queue, from O_DIRECT reads on its CPU.
queue_storm $((nq - 2)) 5000
other=$(grep " irq_storm_begin: " $T/trace | grep -vc "cpu=$cpu source=irq irq=$irq ")
[ "$other" = 0 ]
check $? "and no other storm begins ($other)"

# What the BPF source saw: the set as /proc has it, each move once, the
# storms the module saw (those of the frames that move the NIC's vector
# too), and nothing of its own stopping.
echo 0 >$T/instances/cmp/tracing_on
kill -INT $bpfpid
wait $bpfpid
check $? "hvnoise record --source bpf wrote its recording"
trace-cmd report -i /tmp/bpf.dat >/tmp/bpf.txt 2>&1
hvn_trace=/tmp/bpf.txt
pairs_as_proc $BLK "BPF: its hvnoise:watch (the disk's $nq vectors)"
w=$(trace_cpus_why irq | wc -l)
hvn_trace=""
[ "$w" = "$ncpu" ]
check $? "BPF: all $ncpu CPUs watched for the disk's vectors ($w)"
# (trace-cmd report pads the event name with spaces)
grep " irq_migrate: " /tmp/bpf.txt
[ "$(grep -c " irq_migrate: *irq=$nicirq .*from_cpu=$bpf_from to_cpu=$bpf_to " /tmp/bpf.txt)" = 1 ] &&
	[ "$(grep -c " irq_migrate: *irq=$nicirq .*from_cpu=$bpf_to to_cpu=$bpf_from " /tmp/bpf.txt)" = 1 ] &&
	[ "$(grep -c " irq_migrate: " /tmp/bpf.txt)" = 2 ]
check $? "BPF: the NIC's receive vector moved there and back is seen once each way (IRQ $nicirq, CPU $bpf_from and $bpf_to)"
storms_begun $T/instances/cmp/trace >/tmp/ms.txt
storms_begun /tmp/bpf.txt >/tmp/bs.txt
cat /tmp/bs.txt
grep -q "^cpu=$cpu source=irq irq=$irq name=virtio1-req.$((nq - 2))$" /tmp/bs.txt &&
	cmp -s /tmp/ms.txt /tmp/bs.txt
check $? "BPF: the storm of queue $((nq - 2)) is named (IRQ $irq on CPU $cpu), and the storms begun are the module's ($(wc -l </tmp/bs.txt) and $(wc -l </tmp/ms.txt))"
diff /tmp/ms.txt /tmp/bs.txt
rmdir $T/instances/cmp

unload_clean
echo "HVNOISE-VM-DONE"
