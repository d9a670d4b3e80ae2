#!/bin/sh
# Inside the VM: the same IRQ-heavy workload (synchronous 4 KiB O_DIRECT
# disk reads pinned to CPU 1, one interrupt each) under each configuration,
# alternated over several rounds; prints one line per run for overhead.sh.
# The BPF source runs as hvnoise record, its reader pinned to the other CPU
# (the module's events go to the top-level buffer, read by nobody).
KO=/lib/hvnoise/hvnoise.ko
T=/sys/kernel/tracing
N=${BENCH_READS:-20000}
ROUNDS=${BENCH_ROUNDS:-9}
irq=$(awk '$NF == "virtio1-req.1" { sub(":", "", $1); print $1 }' /proc/interrupts)
cpu=$(cat /proc/irq/$irq/effective_affinity_list)

run() {	# run NAME: N reads on the IRQ's CPU; dread times them
	ns=$(taskset -c "$cpu" /lib/hvnoise/dread /dev/vda $N |
		sed -n 's/.*, \([0-9]*\) ns\/read/\1/p')
	echo "BENCH $1 $ns"
}

other=$(( (cpu + 1) % 2 ))
bpfpid=""

bpf() {	# bpf CPUS: the BPF source recording CPUS, its reader on the other CPU
	rm -f /tmp/b.log	# the last one's "recording" would come first
	taskset -c $other hvnoise record --source bpf --cpus $1 -o /tmp/b.dat \
		>/tmp/b.log 2>&1 &
	bpfpid=$!
	for _ in $(seq 1 240); do
		grep -q recording /tmp/b.log && return
		sleep 0.5
	done
	echo "bench: the BPF source did not start"; cat /tmp/b.log
}

setup() {	# setup CONFIG
	rmmod hvnoise 2>/dev/null
	if [ -n "$bpfpid" ]; then
		kill -INT $bpfpid
		wait $bpfpid
		bpfpid=""
	fi
	echo 0 >$T/events/irq/irq_handler_entry/enable
	case $1 in
	none) ;;
	module-unwatched) insmod $KO cpus=$other ;;
	module-watched) insmod $KO cpus=$cpu && echo 1 >$T/events/hvnoise/enable ;;
	bpf-unwatched) bpf $other ;;
	bpf-watched) bpf $cpu ;;
	ftrace-irq) echo 1 >$T/events/irq/irq_handler_entry/enable ;;
	esac
}

echo "bench: $N O_DIRECT reads per run on CPU $cpu (IRQ $irq), $ROUNDS rounds"
taskset -c "$cpu" /lib/hvnoise/dread /dev/vda 2000 >/dev/null	# warm up
r=0
while [ $r -lt $ROUNDS ]; do
	for c in none module-unwatched module-watched bpf-unwatched bpf-watched ftrace-irq; do
		setup $c
		run $c
	done
	r=$((r + 1))
done
setup none
