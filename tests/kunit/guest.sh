#!/bin/sh
# Runs inside the test kernel (7.2; scripts/build-test-kernel.sh) (lockdep, atomic-sleep checks, kmemleak):
# load the KUnit module and print each hvnoise suite's KTAP from debugfs
# between markers for tests/kunit/ktap.py; then put hvnoise.ko, as built for
# this kernel, through load/unload cycles with runtime writes and CPU
# hotplug, and require a clean kernel log and no kmemleak report.
STAGE=kunit-vm
. /lib/hvnoise/lib.sh
kv=$(uname -r | cut -d. -f1-2)

# Forget what boot left for kmemleak: only what the tests leak counts.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	echo clear >/sys/kernel/debug/kmemleak
fi

insmod /lib/hvnoise/hvnoise_kunit.ko
check $? "hvnoise_kunit.ko loads"
for d in /sys/kernel/debug/kunit/hvnoise_*; do
	[ -r "$d/results" ] || continue
	echo "KTAP-BEGIN ${d##*/}"
	cat "$d/results"
	echo "KTAP-END ${d##*/}"
done
rmmod hvnoise_kunit

insmod $KO devices=0000:00:04.0,0000:00:05.0 cpus=0
check $? "hvnoise.ko loads on $kv with devices=0000:00:04.0,0000:00:05.0"
w=$(cat $P/watched 2>/dev/null)
[ -n "$w" ] && [ "$w" != none ]
check $? "hvnoise.ko watches CPUs on $kv ($w)"
rmmod hvnoise
check $? "hvnoise.ko unloads on $kv"

# A few cycles here; make stress runs hundreds on this kernel.
N=20
cycles=0
i=0
while [ $i -lt $N ]; do
	insmod $KO devices=0000:00:04.0,0000:00:05.0 cpus=0 resolve_ms=10 || break
	echo 1 >$T/events/hvnoise/watch/enable
	echo 1-2 >$P/cpus && echo 1 >$P/local_cpus && echo 1 >$P/emit || break
	echo 0-99 >$P/cpus 2>/dev/null
	if [ $((i % 5)) = 0 ]; then
		echo 0 >/sys/devices/system/cpu/cpu2/online
		echo 1 >/sys/devices/system/cpu/cpu2/online
	fi
	rmmod hvnoise || break
	cycles=$((cycles + 1))
	i=$((i + 1))
done
[ $cycles = $N ]
check $? "$N load/write/hotplug/unload cycles under lockdep ($cycles)"

if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	leaks=$(grep -c "^unreferenced object" /sys/kernel/debug/kmemleak)
	[ "$leaks" = 0 ] || cat /sys/kernel/debug/kmemleak | head -40
	[ "$leaks" = 0 ]
	check $? "kmemleak reports no leaks ($leaks)"
else
	check 1 "kmemleak available"
fi

if dmesg | grep -E "WARNING:|BUG:|Oops|Call Trace|possible circular" >/dev/null; then
	dmesg | grep -E -A12 "WARNING:|BUG:|Oops|Call Trace|possible circular"
	check 1 "dmesg clean on $kv (lockdep, atomic sleep)"
else
	check 0 "dmesg clean on $kv (lockdep, atomic sleep)"
fi
