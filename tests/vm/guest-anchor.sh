#!/bin/sh
# The anchor for the lost-time soak: the kernel's own osnoise tracer, its
# hwnoise mode (OSNOISE_IRQ_DISABLE, as rtla hwnoise runs it) and the
# module, one after the other, through the soak's schedule of host pauses
# and vCPU hogs (tests/vm/anchor.sh).  Each osnoise sample over the
# threshold (osnoise:sample_threshold) is printed as a LOST line, as the
# module's lost events are, for the host's judge (tests/vm/inject.py).
rounds=10
for arg in $(cat /proc/cmdline); do
	case $arg in
	hvn.rounds=*) rounds=${arg#hvn.rounds=} ;;
	esac
done
ncpu=$(grep -c ^processor /proc/cpuinfo)
echo "guest: kernel $(uname -r), $ncpu CPUs, $rounds rounds"
STAGE=anchor
. /lib/hvnoise/lib.sh
inject_init
echo mono >$T/trace_clock
echo 8192 >$T/buffer_size_kb
grep -q osnoise $T/available_tracers || { echo "HVN-NO-OSNOISE"; exit 1; }


PAUSES="20 30 50 100"
HOGS="30 50"

for mode in osnoise hwnoise; do
	echo 0-$((ncpu - 1)) >$T/osnoise/cpus
	echo 1000000 >$T/osnoise/period_us
	echo 900000 >$T/osnoise/runtime_us
	echo 15000 >$T/tracing_thresh	# the soak's threshold, 15 ms
	if [ $mode = hwnoise ]; then
		echo OSNOISE_IRQ_DISABLE >$T/osnoise/options
	else
		echo NO_OSNOISE_IRQ_DISABLE >$T/osnoise/options
	fi
	echo >$T/trace
	echo 1 >$T/events/osnoise/sample_threshold/enable
	echo osnoise >$T/current_tracer
	sleep 2
	schedule $mode
	echo 0 >$T/events/osnoise/sample_threshold/enable
	# Read before the tracer changes: that clears the buffer.
	echo "HVN-EVENTS $mode"
	grep " sample_threshold: " $T/trace | sed -n \
		's/.*\[0*\([0-9][0-9]*\)\].* start \([0-9]*\)\.\([0-9]*\) duration \([0-9]*\) ns.*/LOST cpu=\1 start=\2\3 duration=\4/p'
	echo "HVN-END-EVENTS"
	echo nop >$T/current_tracer
done

insmod /lib/hvnoise/hvnoise.ko cpus=0-$((ncpu - 1)) sample_us=1000 lost_threshold_us=15000
echo 1 >$T/events/hvnoise/lost/enable
echo >$T/trace
schedule module
echo "HVN-EVENTS module"
grep " lost: " $T/trace | sed 's/.* lost: */LOST /'
echo "HVN-END-EVENTS"
rmmod hvnoise
