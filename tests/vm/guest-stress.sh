#!/bin/sh
# Inside the 7.2 debug kernel (KASAN, lockdep, DEBUG_ATOMIC_SLEEP,
# kmemleak): hvnoise.ko loaded and unloaded N times (N in
# /lib/hvnoise/cycles) while a disk IRQ storm runs, a tracefs reader reads,
# and each cycle writes the runtime parameters, moves the disk's IRQ and,
# every tenth, takes CPU 1 offline and back (and, five cycles later, offline
# while the module unloads); the host pauses the VM now and
# then.  Then: no report from any debug facility, no kmemleak entry.
STAGE=stress
. /lib/hvnoise/lib.sh
n=$(cat /lib/hvnoise/cycles)

mount -t debugfs none /sys/kernel/debug 2>/dev/null
ncpu=$(grep -c ^processor /proc/cpuinfo)
echo "guest: $(uname -r), $ncpu CPUs, $n cycles"
/lib/hvnoise/dread /dev/vda 1000000000 >/dev/null &
disk=$!
cat $T/trace_pipe >/dev/null &
reader=$!
irq=$(awk '/virtio1-req|virtio.*-req/ { sub(":", "", $1); print $1; exit }' /proc/interrupts)
echo "HVN-STRESS-START"
cycles=0
while [ $cycles -lt "$n" ]; do
	insmod $KO devices=$NIC,$BLK cpus=0-$((ncpu - 1)) sample_us=1000 \
		storm_rate=500 lost_threshold_us=5000 || break
	echo 1 >$T/events/hvnoise/enable
	echo 0 >$P/cpus
	echo 200 >$P/storm_rate
	echo $BLK >$P/devices
	[ -n "$irq" ] && echo $((cycles % ncpu)) >/proc/irq/$irq/smp_affinity_list 2>/dev/null
	echo 1 >$P/emit
	cat $P/watched $P/stats >/dev/null
	if [ $((cycles % 10)) = 0 ]; then
		echo 0 >/sys/devices/system/cpu/cpu1/online
		echo 1 >/sys/devices/system/cpu/cpu1/online
	fi
	echo 0-$((ncpu - 1)) >$P/cpus
	# Every tenth (from the fifth): unload while CPU 1 goes offline; the
	# CPU-dead callback and the unload must not both end its storms.
	off=
	if [ $((cycles % 10)) = 5 ]; then
		(echo 0 >/sys/devices/system/cpu/cpu1/online) &
		off=$!
	fi
	rmmod hvnoise || break
	if [ -n "$off" ]; then
		wait $off
		echo 1 >/sys/devices/system/cpu/cpu1/online
	fi
	cycles=$((cycles + 1))
done
echo "HVN-STRESS-END"
kill $disk $reader
[ "$cycles" = "$n" ]
check $? "$n load/write/IRQ-move/hotplug/unload cycles (unloads during hotplug among them) under a storm, a reader and host pauses ($cycles)"
echo scan >/sys/kernel/debug/kmemleak
sleep 6
echo scan >/sys/kernel/debug/kmemleak
leaks=$(grep -c "unreferenced object" /sys/kernel/debug/kmemleak)
[ "$leaks" = 0 ]
check $? "kmemleak: $leaks unreferenced objects"
[ "$leaks" = 0 ] || head -30 /sys/kernel/debug/kmemleak
reports=$(dmesg | grep -cE "BUG: KASAN|WARNING:|BUG:|Oops|general protection|possible recursive locking|circular locking|sleeping function called|soft lockup|RCU stall")
[ "$reports" = 0 ]
check $? "debug facilities (KASAN, lockdep, atomic sleep, lockups): $reports reports"
[ "$reports" = 0 ] || dmesg | grep -E -A12 "BUG: KASAN|WARNING:|BUG:|Oops|locking|sleeping function" | head -60
dmesg | grep -q "KernelAddressSanitizer initialized"
check $? "KASAN is on in this kernel"
