#!/bin/sh
# Inside the 6.1 guest: from a recording to the fix, and back.  An
# NCCL-like job runs on CPU 1 (its proxy and enqueuing threads); the NIC's
# receive IRQ is moved onto CPU 1 and driven into a storm there.  hvnoise
# advise must name that IRQ and a CPU serving nothing; --apply lists the
# move, --apply --yes makes it (the restore file first), --verify records
# again under the same traffic and shows the storms gone from CPU 1 and
# present where the IRQ went; --restore puts it back.  A disk queue (a
# managed IRQ, as the module's watch records say) stormed on CPU 1 is not
# moved, with the reason.
STAGE=vm-advise
. /lib/hvnoise/lib.sh
PEER=0000:00:06.0
PLUGIN=/usr/lib/libnccl-profiler-hvnoise.so
RF=/tmp/advise-restore

ncpu=$(grep -c ^processor /proc/cpuinfo)
nic=$(ls /sys/bus/pci/devices/$NIC/virtio*/net/)
peer=$(ls /sys/bus/pci/devices/$PEER/virtio*/net/)
ip link set "$nic" up && ip link set "$peer" up
check $? "guest ($ncpu CPUs): $nic and its peer $peer up"
nicirq=$(irq_of virtio0-input.0)
# A storm: 400 interrupts/s of one IRQ on a CPU, above the 250 Hz tick.
insmod $KO devices=$NIC,$BLK cpus=1 storm_rate=400 storm_window_ms=100 sample_us=1000 \
	lost_threshold_us=15000
check $? "insmod hvnoise.ko devices=$NIC,$BLK cpus=1 storm_rate=400"
# Storms and lost time in the top-level buffer too: a recording is stopped
# once what it must hold has been emitted (a storm ends two windows after
# its last interrupt; a vCPU's lost time is told when it runs again).
echo 1 >$T/events/hvnoise/irq_storm/enable && echo 1 >$T/events/hvnoise/lost/enable
stormed() {	# stormed IRQ CPU: a storm of IRQ on CPU was emitted
	grep -q " irq_storm: cpu=$2 source=[a-z]* irq=$1 " $T/trace
}

# The job on CPU 1 (its proxy and enqueuing threads), its records in the
# recording; then the NIC's IRQ moved onto CPU 1 and driven to a storm
# there (without the job spinning on CPU 1, which TCG would let starve the
# drive).
hvnoise record -o /tmp/before.dat >/tmp/before.log 2>&1 &
recpid=$!
wait_until 30 "grep -q '^hvnoise record: recording ' /tmp/before.log"
HVNOISE_NCCL_TRACEFS=$T/instances/hvnoise-record-$recpid \
	taskset -c 1 nccl_fake work $PLUGIN 3 1 2000 >/tmp/job1.log 2>&1
check $? "the job ran on CPU 1 under the recording ($(grep -o '[0-9][0-9]* collectives in [0-9.]* s' /tmp/job1.log))"
echo 1 >/proc/irq/$nicirq/smp_affinity_list
check $? "IRQ $nicirq (virtio0-input.0) moved onto CPU 1, the job's"
drive=$(taskset -c 2 /lib/hvnoise/rawsend "$peer" --irq $nicirq 1 3000 100)
echo "$drive"
wait_until 10 "stormed $nicirq 1"
kill -INT $recpid
wait $recpid
check $? "hvnoise record through the job, the move and the storm"

hvnoise advise /tmp/before.dat >/tmp/advice.txt 2>&1
rc=$?
cat /tmp/advice.txt
hvnoise advise --json /tmp/before.dat >/tmp/advice.json
# The NIC IRQ's advice: its number, CPU 1, a target.
a=$(sed 's/},{/}\n{/g' /tmp/advice.json | grep "\"kind\":\"irq-affinity\"" | grep "\"irq\":$nicirq,")
target=$(echo "$a" | sed -n 's/.*"target":\(-\{0,1\}[0-9]*\),.*/\1/p')
storms=$(echo "$a" | sed -n 's/.*"storms":\([0-9]*\),.*/\1/p')
moves=$(echo "$a" | sed -n 's/.*"moves":\([0-9]*\),.*/\1/p')
[ $rc = 0 ] && echo "$a" | grep -q '"cpu":1,' && echo "$a" | grep -q '"affinity":"settable"' &&
	[ "${storms:-0}" -ge 1 ] &&
	[ "${moves:-0}" -ge 1 ] && [ -n "$target" ] && [ "$target" -ge 0 ] && [ "$target" != 1 ] &&
	grep -q "echo $target > /proc/irq/$nicirq/smp_affinity_list" /tmp/advice.txt
check $? "advise names IRQ $nicirq on CPU 1 ($storms storms, $moves moves), settable as the module saw it, and CPU $target to move it to"

# irqbalance's settings as Debian installs them, an admin's ban of CPU 0 in.
IB=/etc/default/irqbalance
mkdir -p /etc/default
printf '# irqbalance\nIRQBALANCE_ARGS=""\nIRQBALANCE_BANNED_CPULIST="0"\nOTHER=1\n' >$IB
cp $IB /tmp/irqbalance.orig
hvnoise advise --apply --restore-file $RF /tmp/before.dat >/tmp/dry.txt 2>&1
rc=$?
tail -5 /tmp/dry.txt
[ $rc = 0 ] && grep -q "IRQ $nicirq (virtio0-input.0): smp_affinity_list 1 -> $target" /tmp/dry.txt &&
	grep -q 'irqbalance: IRQBALANCE_BANNED_CPULIST="0-1" in /etc/default/irqbalance (was IRQBALANCE_BANNED_CPULIST="0")' /tmp/dry.txt &&
	[ "$(cat /proc/irq/$nicirq/smp_affinity_list)" = 1 ] && [ ! -e $RF ] && cmp -s $IB /tmp/irqbalance.orig
check $? "--apply alone is a dry run: the move and irqbalance's ban list (0 and the serving CPU 1) listed, nothing changed, no restore file"

# The recording says which CPUs were online (a VM's hotplug slots are
# among a trace's CPUs): advice names no other.
grep -q "^CPUs there: 0-$((ncpu - 1)) (online when recorded)" /tmp/advice.txt
check $? "the recording says CPUs 0-$((ncpu - 1)) were online, and advise names only those"

# The same traffic again while --verify records.
# The same drive as before, once the IRQ has moved: through the recording
# --verify makes, which starts then.  The sender runs on a CPU that is
# neither the job's nor the target.
for s in 0 2 3; do [ $s != "$target" ] && break; done
(wait_until 60 "[ \"\$(cat /proc/irq/$nicirq/smp_affinity_list)\" = $target ]" &&
	taskset -c $s /lib/hvnoise/rawsend "$peer" --irq $nicirq "$target" 2000 100) &
traffic=$!
hvnoise advise --apply --yes --verify -d 8 --restore-file $RF /tmp/before.dat >/tmp/apply.txt 2>&1
rc=$?
wait $traffic
sed -n '/^Applying/,$p' /tmp/apply.txt
[ $rc = 0 ] && [ "$(cat /proc/irq/$nicirq/smp_affinity_list)" = "$target" ] &&
	grep -q "^irq $nicirq 1 virtio0-input.0$" $RF
check $? "--apply --yes: IRQ $nicirq is on CPU $target now, the restore file holds CPU 1 (exit $rc)"
grep -qx 'IRQBALANCE_BANNED_CPULIST="0-1"' $IB && grep -qx 'IRQBALANCE_ARGS=""' $IB &&
	grep -qx 'OTHER=1' $IB && [ "$(grep -c BANNED $IB)" = 1 ] &&
	grep -qx 'irqbalance /etc/default/irqbalance IRQBALANCE_BANNED_CPULIST="0"' $RF &&
	grep -q "it does not run now" /tmp/apply.txt
check $? "--apply --yes: irqbalance's ban list is 0-1, its other settings kept, the old line in the restore file"
after=$(grep "^IRQ $nicirq (virtio0-input.0) after:" /tmp/apply.txt)
from=$(echo "$after" | sed -n 's/.* after: \([0-9]*\) storms on CPU 1 .*/\1/p')
to=$(echo "$after" | sed -n 's/.*, \([0-9]*\) on CPU [0-9]* (its target).*/\1/p')
[ "$from" = 0 ] && [ "${to:-0}" -ge 1 ]
check $? "--verify: under the same traffic, no storm of IRQ $nicirq on CPU 1, $to on CPU $target ($after)"

hvnoise advise --restore --restore-file $RF >/tmp/restore.txt 2>&1
rc=$?
cat /tmp/restore.txt
[ $rc = 0 ] && [ "$(cat /proc/irq/$nicirq/smp_affinity_list)" = 1 ] && [ ! -e $RF ] &&
	cmp -s $IB /tmp/irqbalance.orig
check $? "--restore: IRQ $nicirq back on CPU 1, irqbalance's settings as they were, the restore file gone (exit $rc)"
hvnoise advise --restore --restore-file $RF >/tmp/restore2.txt 2>&1
rc=$?
[ $rc = 3 ] && grep -q "no --apply --yes to undo" /tmp/restore2.txt
check $? "--restore again: nothing to undo, said (exit $rc)"

# A disk queue stormed on the job's CPU: a managed IRQ, not moved.
dirq=$(awk '$NF ~ /^virtio1-req/ { sub(":", "", $1); print $1 }' /proc/interrupts |
	while read -r i; do
		[ "$(cat /proc/irq/$i/effective_affinity_list)" = 1 ] && echo "$i"
	done | head -1)
if [ -z "$dirq" ]; then
	skip "a managed disk queue is refused" "no disk queue of this guest is on CPU 1"
else
	hvnoise record -o /tmp/disk.dat >/tmp/disk.log 2>&1 &
	recpid=$!
	wait_until 30 "grep -q '^hvnoise record: recording ' /tmp/disk.log"
	HVNOISE_NCCL_TRACEFS=$T/instances/hvnoise-record-$recpid \
		taskset -c 1 nccl_fake work $PLUGIN 2 1 2000 >/dev/null 2>&1
	taskset -c 1 /lib/hvnoise/dread /dev/vda 20000 --irq $dirq 1 100
	wait_until 10 "stormed $dirq 1"
	kill -INT $recpid
	wait $recpid
	hvnoise advise --apply --yes --restore-file $RF /tmp/disk.dat >/tmp/disk.txt 2>&1
	rc=$?
	cat /tmp/disk.txt
	name=$(awk -v n="$dirq:" '$1 == n { print $NF }' /proc/interrupts)
	# The module saw it managed: no write planned, the rank moved instead.
	grep -q "^[0-9]*\. IRQ $dirq ($name) on CPU 1, which serves the job" /tmp/disk.txt &&
		grep -q "It cannot be moved: the kernel places it (a managed IRQ" /tmp/disk.txt &&
		grep -q "IRQ $dirq ($name): not moved: the kernel places it" /tmp/disk.txt &&
		! grep -q "IRQ $dirq ($name): smp_affinity_list" /tmp/disk.txt &&
		[ "$(cat /proc/irq/$dirq/effective_affinity_list)" = 1 ]
	check $? "IRQ $dirq ($name), a disk queue stormed on CPU 1: known managed from the recording, no move planned, the reason said, left on CPU 1 (exit $rc)"
	# The kernel agrees: a write of its affinity is refused (EIO).
	echo 0 >/proc/irq/$dirq/smp_affinity_list 2>/tmp/eio.txt
	rc=$?
	[ $rc != 0 ] && grep -q "Input/output error" /tmp/eio.txt
	check $? "... as the kernel has it: a write of IRQ $dirq's affinity fails with EIO ($(cat /tmp/eio.txt))"
	hvnoise advise --restore --restore-file $RF >/dev/null 2>&1
fi
# The hypervisor: two pauses of the whole VM by the host (tests/vm/advise.py
# answers), under a recording of every vCPU; the provider's bundle goes to
# the host, which judges its vCPUs, lengths and times against its own.
inject_init
echo 0-$((ncpu - 1)) >$P/cpus
hvnoise record -o /tmp/pause.dat >/tmp/pause.log 2>&1 &
recpid=$!
wait_until 30 "grep -q '^hvnoise record: recording ' /tmp/pause.log"
echo >$T/trace
inject pause 60 300
inject pause 90 300
lost_told() {	# every vCPU told both pauses (40 ms or more each)
	c=0
	while [ $c -lt "$ncpu" ]; do
		n=$(grep " lost: cpu=$c " $T/trace | sed 's/.* duration=\([0-9]*\) .*/\1/' |
			awk '$1 >= 40000000 { n++ } END { print n + 0 }')
		[ "$n" -ge 2 ] || return 1
		c=$((c + 1))
	done
}
wait_until 10 lost_told
kill -INT $recpid
wait $recpid
hvnoise advise --bundle /tmp/evidence /tmp/pause.dat >/tmp/pause-advice.txt 2>&1
rc=$?
cat /tmp/pause-advice.txt
[ $rc = 0 ] && [ -s /tmp/evidence.json ] && grep -q "The hypervisor took time from vCPUs 0-$((ncpu - 1))" /tmp/pause-advice.txt
check $? "two pauses of the VM: provider advice for vCPUs 0-$((ncpu - 1)), and its bundle (exit $rc)"
echo "HVN-BUNDLE $(cat /tmp/evidence.json)"
cat /tmp/evidence.txt
rmmod hvnoise
check $? "rmmod hvnoise"
