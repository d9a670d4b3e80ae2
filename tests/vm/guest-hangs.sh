#!/bin/sh
# The livelock hunt (issue 29; tests/vm/hangs.py): hvn.loops= start/stop
# cycles of `hvnoise record --source bpf`, then hvn.tloops= cycles of
# tracepoints switched on and off through tracefs, with no hvnoise at all.
# Both patch the kernel's text on every CPU: each tracepoint's first probe
# and its last flip a static key (int3, then an IPI to every CPU).  The
# kernel's symbols go to the second disk first, so that the host can name
# where each vCPU of a hung guest is (tests/vm/inject.py hang_report()).
STAGE=vm-hangs
. /lib/hvnoise/lib.sh
LOOPS=20 TLOOPS=200
for arg in $(cat /proc/cmdline); do
	case $arg in
	hvn.loops=*) LOOPS=${arg#hvn.loops=} ;;
	hvn.tloops=*) TLOOPS=${arg#hvn.tloops=} ;;
	esac
done
ncpu=$(grep -c ^processor /proc/cpuinfo)
cat /proc/kallsyms >/dev/vdb && sync
check $? "the kernel's symbols ($(grep -c . /proc/kallsyms)) written for the host"
echo "guest: kernel $(uname -r), $ncpu CPUs, $LOOPS BPF cycles, $TLOOPS tracefs cycles"

# stuck PID WHAT: where each thread of PID is (its state, wait channel and
# kernel stack), said before the host would take the guest for hung.
stuck() {
	echo "HVN-STUCK $2: pid $1 after $(cut -d' ' -f1 /proc/uptime) s; its log:"
	cat /tmp/h.log
	for t in /proc/$1/task/*; do
		echo "HVN-STUCK task ${t##*/} $(cut -d' ' -f2,3 $t/stat) wchan=$(cat $t/wchan 2>/dev/null)"
		sed 's/^/HVN-STUCK   /' $t/stack 2>/dev/null
	done
	ps -o pid,stat,comm,args 2>/dev/null | sed 's/^/HVN-STUCK ps /'
}
i=0
while [ $i -lt "$LOOPS" ]; do
	start_recorder /tmp/h.log 30 hvnoise record --source bpf \
		--cpus 0-$((ncpu - 1)) --devices $NIC,$BLK \
		--param sample_us=1000 -o /tmp/h.dat
	hvn_rc=$?
	pid=$bgpid
	[ $hvn_rc = 0 ] || { stuck $pid "start"; break; }
	kill -INT $pid
	wait_until 30 '! kill -0 $pid 2>/dev/null' || { stuck $pid "stop"; break; }
	wait $pid || { cat /tmp/h.log; break; }
	i=$((i + 1))
	echo "HVN-LOOP bpf $i $(cut -d' ' -f1 /proc/uptime)"
done
[ $i = "$LOOPS" ]
check $? "$i of $LOOPS start/stop cycles of hvnoise record --source bpf"

EVS="irq/irq_handler_entry irq/irq_handler_exit timer/hrtimer_start
timer/hrtimer_expire_entry timer/hrtimer_expire_exit irq_vectors/local_timer_entry
irq_vectors/local_timer_exit nmi/nmi_handler cpuhp/cpuhp_enter"
i=0
while [ $i -lt "$TLOOPS" ]; do
	for e in $EVS; do echo 1 >$T/events/$e/enable || break 2; done
	for e in $EVS; do echo 0 >$T/events/$e/enable || break 2; done
	i=$((i + 1))
	[ $((i % 20)) = 0 ] && echo "HVN-LOOP tracefs $i $(cut -d' ' -f1 /proc/uptime)"
done
[ $i = "$TLOOPS" ]
check $? "$i of $TLOOPS cycles of $(echo $EVS | wc -w) tracepoints on and off through tracefs"
