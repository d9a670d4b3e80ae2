#!/bin/sh
# Inside the VM (bench/instructions.sh): the same interrupt-driven workload
# (synchronous 4 KiB O_DIRECT disk reads pinned to the CPU of the disk's
# IRQ, one interrupt each) under each configuration, between the markers of
# bench/insn-plugin.c, twice; prints what the host needs to attribute the
# instructions: the segments' names and interrupt counts, hvnoise.ko's
# section addresses and the BPF programs' addresses and sizes.
KO=/lib/hvnoise/hvnoise.ko
T=/sys/kernel/tracing
N=${BENCH_READS:-5000}
irq=$(awk '$NF == "virtio1-req.1" { sub(":", "", $1); print $1 }' /proc/interrupts)
# Three vCPUs: the disk's interrupts on 1, every reader (hvnoise record)
# on 0, and 2, idle, the CPU the "unwatched" configurations watch, so that
# their cost on the disk's CPU is that of a CPU not watched.
cpu=1 reader=0 idle=2
echo $cpu >/proc/irq/$irq/smp_affinity_list
bpfpid="" readerpid=""
seg=0

irqs() {	# interrupts of $irq on $cpu so far
	awk -v n="$irq:" -v c="$cpu" '$1 == n { print $(c + 2) }' /proc/interrupts
}

module_sections() {
	for s in /sys/module/hvnoise/sections/.text* /sys/module/hvnoise/sections/.noinstr.text; do
		[ -f "$s" ] && echo "SECTION $(basename "$s") $(cat "$s")"
	done
}

bpf_progs() {	# address, size and name of each loaded program
	bpftool prog show -j >/tmp/progs.json 2>/dev/null
	grep " bpf_prog_" /proc/kallsyms | while read -r addr _ sym _; do
		tag=$(echo "$sym" | sed -n 's/^bpf_prog_\([0-9a-f]*\)_.*/\1/p')
		size=$(tr '{' '\n' </tmp/progs.json | grep "\"tag\":\"$tag\"" |
			sed -n 's/.*"bytes_jited":\([0-9]*\).*/\1/p' | head -n 1)
		echo "BPFPROG $addr ${size:-0} $sym"
	done
}

record() {	# record ARGS...: hvnoise record on the reader's CPU, until setup
	taskset -c $reader hvnoise record -o /tmp/r.dat "$@" >/tmp/r.log 2>&1 &
	readerpid=$!
	for _ in $(seq 1 600); do
		grep -q recording /tmp/r.log && return
		sleep 0.2
	done
	echo "bench: hvnoise record did not start: $*"
	cat /tmp/r.log
}

EVS="irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry irq:softirq_exit"

setup() {	# setup CONFIG: every configuration but none has the same reader
	if [ -n "$readerpid" ]; then
		kill -INT $readerpid
		wait $readerpid
		readerpid=""
	fi
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
		taskset -c $reader trace-cmd record -C mono -b 1024 -o /tmp/t.dat \
			$(for e in $EVS; do echo "-e $e"; done) >/tmp/t.log 2>&1 &
		readerpid=$!
		for _ in $(seq 1 600); do
			grep -q "Ctrl" /tmp/t.log && break
			sleep 0.2
		done ;;
	esac
	[ "${1#module}" != "$1" ] && module_sections
	[ "${1#bpf}" != "$1" ] && bpf_progs
}

echo 1 >/proc/sys/net/core/bpf_jit_kallsyms
echo "bench: $N O_DIRECT reads per segment on CPU $cpu (IRQ $irq), readers on CPU $reader"
taskset -c "$cpu" /lib/hvnoise/dread /dev/vda 1000 >/dev/null	# warm up
for round in 1 2; do
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
	sleep 10
	/lib/hvnoise/insn-mark end
	v1=$(sed -n 's/^voluntary_ctxt_switches:\t*//p' /proc/$2/status 2>/dev/null)
	echo "SEGMENT $seg $1 round=1 reads=0 irqs=0 seconds=10 wakeups=$((${v1:-0} - ${v0:-0}))"
}
idle_segment idle $$
insmod $KO cpus=1-2
taskset -c $reader hvnoise flight-recorder -o /tmp/fr/inc >/tmp/fr.log 2>&1 &
frpid=$!
for _ in $(seq 1 600); do
	grep -q recording /tmp/fr.log && break
	sleep 0.2
done
module_sections
idle_segment flight-idle $frpid
kill -TERM $frpid
wait $frpid
rmmod hvnoise

# The symbols, for the host to name addresses (Debian's System.map is a
# stub): "HVNKSYMS SIZE" in the disk's first block, then /proc/kallsyms.
grep " [tTwW] " /proc/kallsyms >/tmp/ksyms
printf 'HVNKSYMS %s\n' "$(wc -c </tmp/ksyms)" | dd of=/dev/vda bs=512 count=1 conv=sync 2>/dev/null
dd if=/tmp/ksyms of=/dev/vda bs=512 seek=1 conv=fsync 2>/dev/null
echo "bench: done"
