#!/bin/sh
# Inside the VM (bench/instructions.sh): the same interrupt-driven workload
# (synchronous 4 KiB O_DIRECT disk reads pinned to the CPU of the disk's
# IRQ, one interrupt each) under each configuration, between the markers of
# bench/insn-plugin.c, BENCH_ROUNDS times (2; make check's smoke run: 1);
# prints what the host needs to attribute the instructions: the segments'
# names and interrupt counts, hvnoise.ko's section addresses and the BPF
# programs' addresses and sizes.
KO=/lib/hvnoise/hvnoise.ko
T=/sys/kernel/tracing
N=${BENCH_READS:-5000}
# The timed segments: BENCH_SECS (make check's smoke run: 1) for all.
IDLE_S=${BENCH_SECS:-10} RATE_S=${BENCH_SECS:-5}
ROUNDS=${BENCH_ROUNDS:-2}
irq=$(awk '$NF == "virtio1-req.1" { sub(":", "", $1); print $1 }' /proc/interrupts)
# Three vCPUs: the disk's interrupts on 1, every reader (hvnoise record)
# on 0, and 2, idle, the CPU the "unwatched" configurations watch, so that
# their cost on the disk's CPU is that of a CPU not watched.
cpu=1 reader=0 idle=2
echo $cpu >/proc/irq/$irq/smp_affinity_list
seg=0
. /lib/hvnoise/bench-lib.sh

irqs() {	# interrupts of $irq on $cpu so far
	awk -v n="$irq:" -v c="$cpu" '$1 == n { print $(c + 2) }' /proc/interrupts
}

EVS="irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry irq:softirq_exit"

setup() {	# setup CONFIG: every configuration but none has the same reader
	stop_reader
	[ -d $T/instances/evs ] && rmdir $T/instances/evs
	rmmod hvnoise 2>/dev/null
	case $1 in
	none) ;;
	module-unwatched) insmod $KO cpus=$idle && record --source module ;;
	module-watched) insmod $KO cpus=$cpu && record --source module ;;
	module-storm)
		# A storm active on the CPU through the whole segment.
		insmod $KO cpus=$cpu storm_rate=10 storm_window_ms=100 &&
			record --source module ;;
	bpf-unwatched) record --source bpf --cpus $idle ;;
	bpf-watched) record --source bpf --cpus $cpu ;;
	bpf-storm)
		record --source bpf --cpus $cpu --param storm_rate=10 \
			--param storm_window_ms=100 ;;
	ftrace-irq)
		# The kernel's own events, read the same way.
		record --source kernel -e irq:irq_handler_entry -e irq:irq_handler_exit ;;
	# The readers themselves, at the event rate of the reads (four irq
	# events an interrupt, 1 MB a CPU): nobody reading, hvnoise record
	# (tracefs_cpu_read, a copy), trace-cmd record (splice).
	events-noreader)
		mkdir $T/instances/evs
		echo 1024 >$T/instances/evs/buffer_size_kb
		for e in $EVS; do
			echo 1 >$T/instances/evs/events/${e%%:*}/${e#*:}/enable
		done ;;
	events-hvnoise)
		# shellcheck disable=SC2046
		record --source kernel -b 1024 $(for e in $EVS; do echo "-e $e"; done) ;;
	events-tracecmd)
		# shellcheck disable=SC2046
		rm -f /tmp/t.dat.cpu*
		taskset -c $reader trace-cmd record -C mono -b 1024 -o /tmp/t.dat \
			$(for e in $EVS; do echo "-e $e"; done) >/tmp/t.log 2>&1 &
		readerpid=$!
		tracecmd_ready /tmp/t.dat ;;
	esac
	[ "${1#module}" != "$1" ] && module_sections
	[ "${1#bpf}" != "$1" ] && bpf_progs
}

echo 1 >/proc/sys/net/core/bpf_jit_kallsyms
echo "bench: $N O_DIRECT reads per segment on CPU $cpu (IRQ $irq), readers on CPU $reader"
taskset -c "$cpu" /lib/hvnoise/dread /dev/vda 1000 >/dev/null	# warm up
for round in $(seq 1 "$ROUNDS"); do
	for c in none module-unwatched module-watched module-storm bpf-unwatched \
		bpf-watched bpf-storm ftrace-irq events-noreader events-hvnoise \
		events-tracecmd; do
		setup $c
		taskset -c "$cpu" /lib/hvnoise/dread /dev/vda 200 >/dev/null
		seg=$((seg + 1))
		i0=$(irqs)
		u0=$(cut -d' ' -f1 /proc/uptime)
		/lib/hvnoise/insn-mark begin
		taskset -c "$cpu" /lib/hvnoise/dread /dev/vda "$N" >/dev/null
		/lib/hvnoise/insn-mark end
		u1=$(cut -d' ' -f1 /proc/uptime)
		rss=0
		[ -n "$readerpid" ] &&
			rss=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\).*/\1/p' /proc/$readerpid/status)
		echo "SEGMENT $seg $c round=$round reads=$N irqs=$(($(irqs) - i0)) wall=$u0-$u1 rss_kb=${rss:-0}"
	done
done
setup none

# The always-on cost: 10 s of an idle guest, then 10 s of the same with the
# flight recorder (the module watching CPUs 1-2) running on CPU 0.
idle_segment() {	# idle_segment NAME PID
	v0=$(sed -n 's/^voluntary_ctxt_switches:\t*//p' /proc/$2/status 2>/dev/null)
	seg=$((seg + 1))
	/lib/hvnoise/insn-mark begin
	sleep $IDLE_S
	/lib/hvnoise/insn-mark end
	v1=$(sed -n 's/^voluntary_ctxt_switches:\t*//p' /proc/$2/status 2>/dev/null)
	echo "SEGMENT $seg $1 round=1 reads=0 irqs=0 seconds=$IDLE_S wakeups=$((${v1:-0} - ${v0:-0}))"
}
idle_segment idle $$
insmod $KO cpus=1-2
taskset -c $reader hvnoise flight-recorder -o /tmp/fr/inc >/tmp/fr.log 2>&1 &
frpid=$!
wait_log /tmp/fr.log recording
module_sections
idle_segment flight-idle $frpid
kill -TERM $frpid
wait $frpid
rmmod hvnoise

# The readers at a high event rate: syscalls:sys_enter_getppid at RATE a
# second from bench/evgen on CPU 1 for 5 s (the module watching CPUs 1-2
# throughout), with nobody reading (the event enabled in an instance), the
# flight recorder, hvnoise record and trace-cmd record, each with 1 MB of
# ring a CPU, on CPU 0.  Per reader: its CPU time and wakeups (its threads
# and child processes included: trace-cmd reads each CPU in a process of
# its own), peak RSS, and the events the kernel overwrote unread.
RATE=${BENCH_RATE:-100000}
EV=syscalls:sys_enter_getppid
tree_stat() {	# tree_stat PID: "TICKS WAKEUPS PEAK_RSS_KB" of PID, its threads
	t=0 w=0 r=0	# and children (the sum of their peaks: at most that)
	for d in /proc/[0-9]*; do
		pp=$(awk '{ print $4 }' "$d/stat" 2>/dev/null)
		[ "${d#/proc/}" = "$1" ] || [ "$pp" = "$1" ] || continue
		x=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\).*/\1/p' "$d/status" 2>/dev/null)
		r=$((r + ${x:-0}))	# none for a zombie
		for k in "$d"/task/*; do
			x=$(awk '{ print $14 + $15 }' "$k/stat" 2>/dev/null)
			t=$((t + ${x:-0}))
			x=$(sed -n 's/^voluntary_ctxt_switches:\t*//p' "$k/status" 2>/dev/null)
			w=$((w + ${x:-0}))
		done
	done
	echo "$t $w $r"
}
overruns() {	# events overwritten unread, all buffers, CPU 1
	cat $T/per_cpu/cpu1/stats $T/instances/*/per_cpu/cpu1/stats 2>/dev/null |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}
insmod $KO cpus=1-2
for c in none flight record tracecmd; do
	pid=""
	case $c in
	none)
		mkdir $T/instances/evs
		echo 1024 >$T/instances/evs/buffer_size_kb
		echo 1 >$T/instances/evs/events/syscalls/sys_enter_getppid/enable ;;
	flight)
		rm -f /tmp/fr.log	# the first recorder's "recording" is in it
		taskset -c $reader hvnoise flight-recorder -b 1024 -e $EV -o /tmp/fr/rate \
			>/tmp/fr.log 2>&1 &
		pid=$!
		wait_log /tmp/fr.log recording ;;
	record) record --source kernel -b 1024 -e $EV; pid=$readerpid ;;
	tracecmd)
		rm -f /tmp/t.dat.cpu*
		taskset -c $reader trace-cmd record -C mono -b 1024 -e $EV -o /tmp/t.dat \
			>/tmp/t.log 2>&1 &
		pid=$!
		tracecmd_ready /tmp/t.dat ;;
	esac
	sleep 1
	o0=$(overruns)
	set -- $( [ -n "$pid" ] && tree_stat $pid)
	s0=${1:-0} w0=${2:-0}
	seg=$((seg + 1))
	/lib/hvnoise/insn-mark begin
	# evgen makes RATE x 5 calls however long they take: its own
	# measure of the time is what the rates are of.
	taskset -c 1 /lib/hvnoise/evgen $RATE $RATE_S >/tmp/evgen.txt
	/lib/hvnoise/insn-mark end
	set -- $( [ -n "$pid" ] && tree_stat $pid)
	read -r _ made _ _ took _ </tmp/evgen.txt
	echo "SEGMENT $seg rate-$c round=1 reads=0 irqs=0 seconds=$RATE_S elapsed=${took:-0} events=${made:-0}" \
		"ticks=$((${1:-0} - s0)) wakeups=$((${2:-0} - w0)) rss_kb=${3:-0} overrun=$(($(overruns) - o0))"
	case $c in
	none) rmdir $T/instances/evs ;;
	flight) kill -TERM $pid; wait $pid ;;
	record) stop_reader ;;
	tracecmd) kill -INT $pid; wait $pid ;;
	esac
done
rmmod hvnoise

dump_kallsyms
echo "bench: done"
