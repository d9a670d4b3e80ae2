#!/bin/sh
# Inside the VM (bench/instructions.sh scale): what hvnoise costs as the
# watched IRQs grow from 12 to 1,116, counted by bench/insn-plugin.c
# between markers.  Four devices give the IRQs: the NIC (3 vectors), the
# disk (a queue per vCPU: 9), two virtio-serial devices (102 and 1,002: two
# queues a port).  Per disk interrupt on a watched CPU (the module, the
# module under a storm, the BPF source; each with 12 and with 1,116 IRQs,
# BPF 1,014, as measured when its table held 1,024; it holds 8,192 now)
# and, per operation, resolving
# the set, the module's once-a-second re-resolution (per second of an idle
# guest; the BPF source's too) and an IRQ move, with the hvnoise:watch
# records each wrote.  Per disk interrupt on CPU 1 unwatched as well, the
# other devices' vectors kept off it by irqaffinity=; 384 possible CPUs.
STAGE=bench	# shellcheck disable=SC2034
. /lib/hvnoise/lib.sh
. /lib/hvnoise/bench-lib.sh
SMALL=0000:00:07.0 BIG=0000:00:08.0 PEER=0000:00:06.0
N=${BENCH_READS:-3000}
POLL_S=${BENCH_SECS:-5}	# make check's smoke run: 1
ROUNDS=${BENCH_ROUNDS:-3}	# of each operation (the reads: 2 at most); smoke: 1
PARTS=" ${BENCH_PARTS:-irq bpfpoll ops} "	# what to count
cpu=1 reader=0
online_all	# bench/instructions.sh big: maxcpus=64 at boot
/lib/hvnoise/insn-mark arm	# its plugin counts from here (wait=on)
irq=$(irq_of virtio1-req.1)	# the disk's queue of CPU 1 (managed there)
seg=0

nirqs() {	# the MSI-X vectors of the devices in list $1
	n=0
	for d in $(echo "$1" | tr ',' ' '); do
		n=$((n + $(ls /sys/bus/pci/devices/$d/msi_irqs | wc -l)))
	done
	echo $n
}
irqs() { awk -v n="$irq:" -v c="$cpu" '$1 == n { print $(c + 2) }' /proc/interrupts; }
recs() { grep -c " watch: " $T/trace; }
whole_sets() {	# hvnoise:watch generations written whole (their last record)
	awk '/ watch: / { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) {
		split($i, a, "/"); if (a[1] == a[2]) n++ } } END { print n + 0 }' $T/trace
}

# begin and end mark the counted region; segment NAME KEY=VALUE... then
# prints what the host attributes it by, read after the end marker.
begin() { /lib/hvnoise/insn-mark begin; }
end() { /lib/hvnoise/insn-mark end; }
segment() {
	[ -d /sys/module/hvnoise ] && module_sections
	[ -n "$readerpid" ] && bpf_progs
	seg=$((seg + 1))
	echo "SEGMENT $seg $*"
}

# module_up PARAM...: the module loaded and hvnoise record reading it,
# with the whole set written twice before the count begins (once when
# hvnoise:watch is enabled here, once more when the reader asks): with a
# thousand IRQs, one falling in a segment added 150 instructions an
# interrupt.
module_up() {
	insmod $KO "$@" resolve_ms=60000 &&
		echo 1 >$T/events/hvnoise/watch/enable &&
		wait_until 30 '[ "$(whole_sets)" -ge 1 ]' &&
		record --source module &&
		wait_until 30 '[ "$(whole_sets)" -ge 2 ]'
}

A=$NIC,$BLK B=$NIC,$BLK,$SMALL C=$NIC,$BLK,$BIG D=$NIC,$BLK,$SMALL,$BIG
echo "bench: $(grep -c ^processor /proc/cpuinfo) CPUs; IRQs: $NIC $(nirqs $NIC)," \
	"$BLK $(nirqs $BLK), $SMALL $(nirqs $SMALL), $BIG $(nirqs $BIG);" \
	"$N reads a segment on CPU $cpu (IRQ $irq), the reader on CPU $reader"
echo 1 >/proc/sys/net/core/bpf_jit_kallsyms
echo mono >$T/trace_clock
echo 8192 >$T/buffer_size_kb
nic=$(ls /sys/bus/pci/devices/$NIC/virtio*/net/)
peer=$(ls /sys/bus/pci/devices/$PEER/virtio*/net/)
ip link set "$nic" up && ip link set "$peer" up
rxirq=$(irq_of virtio0-input.0)

# Per disk interrupt on CPU 1 unwatched too, the set all the IRQs but the
# disk's: irqaffinity= (bench/instructions.sh) keeps their vectors off it.
U=$NIC,$SMALL,$BIG unw=""
if ! { proc_pairs $NIC; proc_pairs $SMALL; proc_pairs $BIG; } | grep -q ":$cpu\$"; then
	unw="unwmod-$NIC unwmod-$U unwbpf-$NIC unwbpf-$U"
else
	echo "bench: CPU $cpu has vectors of $U (no irqaffinity=): no unwatched segments"
fi

# Per disk interrupt.
taskset -c $cpu /lib/hvnoise/dread /dev/vda 1000 >/dev/null	# warm up
case $PARTS in *" irq "*) irq_rounds=$((ROUNDS < 2 ? ROUNDS : 2)) ;; *) irq_rounds=0 ;; esac
for round in $(seq 1 $irq_rounds); do
	for c in none module-$A module-$D storm-$A storm-$D bpf-$A bpf-$C $unw; do
		stop_reader
		rmmod hvnoise 2>/dev/null
		echo >$T/trace
		set=${c#*-}
		case $c in
		none) ;;
		# The once-a-second re-resolution grows with the IRQs, and
		# with time, not interrupts: left out here (resolve_ms of a
		# minute), counted below (poll, bpfpoll).
		module-* | unwmod-*) module_up devices=$set ;;
		storm-*)
			# A storm active on the CPU through the whole segment.
			module_up devices=$set storm_rate=10 storm_window_ms=100 ;;
		bpf-* | unwbpf-*) record --source bpf --devices $set --param resolve_ms=60000 ;;
		esac
		case $c in
		unwmod-*)
			w=$(cat $P/watched)
			echo "bench: $c watches CPUs $w"
			expand_cpulist "$w" | grep -qx "$cpu" &&
				{ echo "bench: CPU $cpu is watched in $c"; exit 1; } ;;
		esac
		taskset -c $cpu /lib/hvnoise/dread /dev/vda 200 >/dev/null
		name=${c%%-*}-$([ "$c" = none ] && echo 0 || nirqs "$set")
		i0=$(irqs)
		begin
		taskset -c $cpu /lib/hvnoise/dread /dev/vda "$N" >/dev/null
		end
		segment "$name" round=$round reads=$N irqs=$(($(irqs) - i0))
	done
done
stop_reader
rmmod hvnoise 2>/dev/null

# The BPF source's once-a-second re-resolution (in the tool), per second of
# an idle guest: on x86 it reads /proc/irq at its first poll, then only
# after an IRQ changes and 30 s after its last read (tools/bpf/loader.c
# resolve_due()), so a window from 2 s to 37 s holds one read.
BPF_POLL_S=$((POLL_S * 7))
case $PARTS in *" bpfpoll "*) bpfpoll_sets="$A $C" ;; *) bpfpoll_sets="" ;; esac
for set in $bpfpoll_sets; do
	record --source bpf --devices $set
	sleep 2
	begin
	sleep $BPF_POLL_S
	end
	segment bpfpoll-$(nirqs $set) round=1 irqs=0 seconds=$BPF_POLL_S recs=0
	stop_reader
done

# Per operation, the module alone (the events these segments read enabled,
# nobody reading); first the markers' own cost, taken from the kernel's
# and all columns.  Not hvnoise:lost: under TCG every watched vCPU loses
# time, and on 384 of them its records filled the buffers recs() reads
# (3 GB: one grep ran for more than 11 minutes).
insmod $KO devices=none resolve_ms=60000	# no re-resolution in a resolve
echo 1 >$T/events/hvnoise/watch/enable
echo 1 >$T/events/hvnoise/irq_migrate/enable
case $PARTS in *" ops "*) ops_sets="$NIC $A $B $C $D" ;; *) ops_sets="" ;; esac
for r in $(seq 1 $([ -n "$ops_sets" ] && echo $ROUNDS || echo 0)); do
	begin
	end
	segment empty-0 round=$r irqs=0 ops=1 recs=0
done
for set in $ops_sets; do
	n=$(nirqs $set)
	# Resolving the set: three writes of it after "none".
	for r in $(seq 1 $ROUNDS); do
		echo none >$P/devices
		echo >$T/trace
		begin
		echo $set >$P/devices
		end
		segment resolve-$n round=$r irqs=0 ops=1 recs=$(recs)
	done
	# The once-a-second re-resolution of an unchanged set (and the set
	# that follows a move).
	echo 1000 >$P/resolve_ms
	echo >$T/trace
	begin
	sleep $POLL_S
	end
	segment poll-$n round=1 irqs=0 seconds=$POLL_S recs=$(recs)
	# An IRQ move: the NIC's receive vector to another CPU (frames make
	# it change, at its next interrupt), until the set that follows it.
	from=$(cat /proc/irq/$rxirq/effective_affinity_list)
	to=$(((from + 1) % 8))
	echo >$T/trace
	begin
	echo $to >/proc/irq/$rxirq/smp_affinity_list
	/lib/hvnoise/rawsend "$peer" 200 1000 >/dev/null
	wait_until 10 '[ "$(whole_sets)" -ge 1 ]'	# the next set, all of it
	end
	echo 60000 >$P/resolve_ms
	segment move-$n round=1 irqs=0 ops=1 recs=$(recs) \
		migrate=$(grep -c " irq_migrate: irq=$rxirq .*from_cpu=$from to_cpu=$to" $T/trace)
done
rmmod hvnoise
dump_kallsyms
echo "bench: done"
