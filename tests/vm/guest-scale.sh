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

# The big guest boots a few CPUs (maxcpus=); the others come online here.
online_all
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
# The storm's threshold where this guest's disk reaches it: a quarter of
# the rate O_DIRECT reads on the highest queue's CPU reach, at most 500
# a second in 100 ms windows; under that, windows of a second.  At 384
# vCPUs under single-threaded TCG a read took 10.8 ms (92 a second), and
# 500 a second was out of reach: no storm, rightly.
sq=$((nq - 2))
sqcpu=$(cat /proc/irq/$(irq_of virtio1-req.$sq)/effective_affinity_list)
ns=$(taskset -c "$sqcpu" /lib/hvnoise/dread /dev/vda 200 | sed -n 's|.* \([0-9]*\) ns/read.*|\1|p')
rate=$((1000000000 / ${ns:-1000000000}))
srate=$((rate / 4)) swin=1000
[ "$srate" -ge 500 ] && srate=500 swin=100
# hvn.srate=N on the kernel's command line (BIG_GUEST_APPEND): the 384-vCPU
# threshold on a smaller guest, to reproduce what storms there.
o=$(sed -n 's/.*hvn\.srate=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$o" ] && srate=$o swin=1000
[ "$srate" -ge 5 ]
check $? "the disk's reads on CPU $sqcpu reach $rate a second: storms at $srate a second, in windows of $swin ms"
# Ten windows of reads at that rate (5,000 at most).
sreads=$((rate * swin / 100))
[ "$sreads" -gt 5000 ] && sreads=5000
insmod $KO devices=none storm_rate=$srate storm_window_ms=$swin
check $? "insmod on $ncpu CPUs"
mark load1
echo "SCALE insmod cpus=$ncpu us=$(since load0 load1)"
# The module's records in the trace but its lost time, in an instance of
# its own: under single-threaded TCG each vCPU waits while the others run,
# and at 384 vCPUs their hvnoise:lost records would fill every CPU's
# buffer, which each check reads whole (8,531 records in 5 s at 128).
mkdir $T/instances/pauses
echo 64 >$T/instances/pauses/buffer_size_kb
echo mono >$T/instances/pauses/trace_clock
echo 1 >$T/instances/pauses/events/hvnoise/lost/enable
echo 1 >$T/events/hvnoise/enable
echo 0 >$T/events/hvnoise/lost/enable
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
# What a read of the trace costs here: every check reads the whole of it.
t0=$(cut -d' ' -f1 /proc/uptime)
census=$(awk '/^#/ { next } { for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+:$/) { n[$i]++; break } }
	END { for (e in n) printf "%s%d ", e, n[e] }' $T/trace)
echo "SCALE trace-read cpus=$ncpu from=$t0 to=$(cut -d' ' -f1 /proc/uptime) records: $census"
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

# From here this shell, its commands and the BPF recorder run on three
# housekeeping CPUs (the recorder's once-a-second resolve reads each
# IRQ's affinity: 49.5 M instructions a second at 1,014 IRQs), as a GPU
# host keeps its tools off the job's: the
# others run only what a check drives there (the NIC's frames, the
# disk's reads), so a storm on one of them is the driven source's or a
# false alarm.  Where the storm threshold is low (28 a second at 384
# vCPUs) a busy CPU's tick and its remote wakeups storm, rightly.  And
# the scheduler's: a busy CPU's tick kicks the first idle CPU to balance
# the idle ones' load (the nohz idle balancer, kick_ilb(): an IPI, then
# that work there, its tick on): at 128 vCPUs, CPU 0 left out, its most
# counted senders sent it 1,216 such kicks and 29 perf counter reads (the
# BPF recorder's), and its tick stormed; with CPU 0 among the three, the
# kicks went to CPU 3 when all three were busy (903 of them).  The big
# guest boots with isolcpus=domain,3-N (tests/vm/big-guest.sh): the
# others are out of the scheduler's domains, so it balances and kicks only
# the CPUs left in, from which the housekeeping CPUs are taken, all three
# (a driven CPU among them would take the kicks: a failed check, then).
iso=$(expand_cpulist "$(cat /sys/devices/system/cpu/isolated)" | tr '\n' ' ')
hk="" n=0 hkmask=0
for c in 0 1 2 3 4 5; do
	case " $from $to $sqcpu $iso " in *" $c "*) continue ;; esac
	hk="$hk${hk:+,}$c" n=$((n + 1)) hkmask=$((hkmask | 1 << c))
	[ $n = 3 ] && break
done
taskset -p -c "$hk" $$ >/dev/null && [ $n = 3 ]
check $? "this shell and its commands on three housekeeping CPUs ($hk)"
# The kernel's unbound threads and work too, as isolcpus= hosts have it:
# at 384 vCPUs two CPUs with no task of the test on them had their local
# timer storm at 28 a second (its source not found: RCU's grace-period
# thread, which sleeps a few jiffies at a time, is one candidate).
# Per-CPU threads refuse, rightly.
for t in /proc/[0-9]*; do
	taskset -p -c "$hk" "${t#/proc/}" >/dev/null 2>&1
done
[ -w /sys/devices/virtual/workqueue/cpumask ] &&
	printf '%x\n' $hkmask >/sys/devices/virtual/workqueue/cpumask	# (hex)

# Who sends IPIs to the CPUs left quiet from here (said after the storm).
ipi_why_start "$hk"
check $? "the call-function-single IPIs sent to CPUs other than $hk are counted by sender"

# The BPF source records the same set, moves and storm beside the module,
# on all CPUs (its per-CPU maps sized from the possible CPUs at load).
echo >$T/trace
start_recorder /tmp/bpf.log 120 hvnoise record --source bpf \
	--devices "$NIC,$BLK$SER" --param storm_rate=$srate \
	--param storm_window_ms=$swin -o /tmp/bpf.dat
check $? "hvnoise record --source bpf starts on $ncpu CPUs"
bpfpid=$bgpid
cat /tmp/bpf.log
# The module's storms over the same time, in an instance of their own.
mkdir $T/instances/cmp
echo 64 >$T/instances/cmp/buffer_size_kb	# a few records a CPU, at most
echo 1 >$T/instances/cmp/events/hvnoise/irq_storm_begin/enable
bpf_from=$from bpf_to=$to nicirq=$irq
# Attaching patches every CPU's text: call-function IPIs on all of them,
# a storm where the threshold is low, begun in the module before the
# BPF source sees them all.  The two are compared by the storms whose
# windows start once it is recording: the CPUs off the housekeeping ones
# are quiet by then.  (Not by the ends of those storms: a storm's end is
# seen at its CPU's next interrupt, and an idle CPU may have none.)
mark cmp0
cmp0=$(us cmp0)
cmp0=$((${cmp0:-0} * 1000))

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
queue_storm $sq $sreads
# Under 250 a second (the tick of a busy CPU, Debian's HZ) the local
# timer of the CPU the reads keep busy storms too, and rightly: at 384
# vCPUs the reads reached 112 a second, the storm threshold 28, the tick
# 104.  That storm is counted apart, at that rate.
tick=x
[ "$srate" -lt 250 ] && tick="cpu=$cpu source=local_timer "
# And the scheduler's idle-balance kicks where nothing keeps them on the
# housekeeping CPUs (no isolcpus=: make check's guest, whose threshold
# they stay under; at 384 vCPUs, CPU 0 not among them: 45 in 0.96 s over
# a threshold of 35): a call-function-single storm is set apart only
# where such kicks are 90% or more of the IPIs its CPU was sent and the
# others, all of them, would not make a storm in one window.
storms_begun $T/trace 0 "$hk" | grep -v "^cpu=$cpu source=irq irq=$irq " >/tmp/other.txt
ticks=$(grep -c "^$tick" /tmp/other.txt)
grep -v "^$tick" /tmp/other.txt >/tmp/other2.txt
kicked=""
for c in $(sed -n 's/^cpu=\([0-9]*\) source=call_function_single .*/\1/p' /tmp/other2.txt); do
	set -- $(ipi_kicks $c)
	echo "  CPU $c: $2 call-function-single IPIs, $1 of them idle-balance kicks from a tick"
	[ $(($1 * 10)) -ge $(($2 * 9)) ] && [ "$1" -gt 0 ] &&
		[ $(($2 - $1)) -lt $((srate * swin / 1000)) ] &&
		kicked="$kicked $c" && sed -i "/^cpu=$c source=call_function_single /d" /tmp/other2.txt
done
other=$(wc -l </tmp/other2.txt)
[ "$other" = 0 ]
check $? "and no other storm begins off CPUs $hk ($other; at $srate a second the tick of CPU $cpu set apart under 250: $ticks; the idle-balance kicks of CPU${kicked:- -}, set apart)"
head -3 /tmp/other2.txt
echo "  call-function-single IPIs to CPUs off $hk from just before the BPF source started, by target, sender, stack:"
ipi_why | head -8 | sed 's/^/    /'
ipi_why_stop

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
storms_begun $T/instances/cmp/trace $cmp0 "$hk" >/tmp/ms.txt
storms_begun /tmp/bpf.txt $cmp0 "$hk" >/tmp/bs.txt
cat /tmp/bs.txt
grep -q "^cpu=$cpu source=irq irq=$irq name=virtio1-req.$sq$" /tmp/bs.txt &&
	cmp -s /tmp/ms.txt /tmp/bs.txt
check $? "BPF: the storm of queue $sq is named (IRQ $irq on CPU $cpu), and the storms begun off CPUs $hk are the module's ($(wc -l </tmp/bs.txt) and $(wc -l </tmp/ms.txt))"
diff /tmp/ms.txt /tmp/bs.txt
rmdir $T/instances/cmp

# The host's pauses: a vCPU here waits while the others run (single-
# threaded TCG), its hard timer fires late, and nobody reports the time
# as steal: lost records on most watched CPUs (not all: one kept busy,
# by this shell, need not wait: 63 of 64 in a run), the time unexplained.
echo 0 >$T/instances/pauses/tracing_on
awk '/ lost: / { for (i = 1; i <= NF; i++) {
		if ($i ~ /^cpu=/) c = substr($i, 5)
		if ($i ~ /^duration=/) d = substr($i, 10) + 0
		if ($i ~ /^unexplained_ns=/) u = substr($i, 16) + 0
	}
	n[c]++; r++; if (d > m) m = d; un += u; du += d }
	END { k = 0; for (c in n) k++
		printf "%d %d %d %d\n", k, r, m / 1000, du ? 100 * un / du : 0 }' \
	$T/instances/pauses/trace >/tmp/pauses.txt
read pc pr pmax ppct </tmp/pauses.txt
echo "SCALE pauses cpus=$pc of $ncpu records=$pr longest_us=$pmax unexplained=$ppct% (hvnoise:lost, the newest 64 KB of each CPU's)"
[ "$pc" -ge $((ncpu / 2)) ] && [ "$ppct" -ge 90 ]
check $? "the host's pauses: lost time on $pc of the $ncpu watched CPUs, $ppct% of it unexplained"
rmdir $T/instances/pauses

# The flight recorder's kernel memory on this many CPUs, the module
# watching the NIC's few: -b (8192 KB) on the watched CPUs and the
# housekeeping one, --unwatched-kb (1024) on each of the others.
echo $NIC >$P/devices
nw=$(expand_cpulist "$(cat $P/watched)" | wc -l)
want=$(((nw + 1) * 8192 + (ncpu - nw - 1) * 1024))
hvnoise flight-recorder -v -o /tmp/fr >/tmp/fr.log 2>&1 &
frpid=$!
# The rings of the online CPUs: buffer_total_size_kb counts a possible
# CPU never online at its nominal size too (256 of them in vm-scale),
# though the kernel gives it a ring only as it comes online.
online=$(expand_cpulist "$(cat /sys/devices/system/cpu/online)")
wait_until 60 '[ -n "$(ls $T/instances | grep "^hvnoise-fr-[0-9]")" ]'
fri=$T/instances/$(ls $T/instances | grep '^hvnoise-fr-[0-9]' | head -n 1)
frsizes() {
	# shellcheck disable=SC2046
	cat $(echo "$online" | sed "s|.*|$fri/per_cpu/cpu&/buffer_size_kb|") 2>/dev/null
}
frkb() {
	frsizes | awk -v n="$(echo "$online" | wc -l)" '{ t += $1 } END { if (NR == n) print t }'
}
# The kernel rounds each CPU's ring up to whole pages (8192 reads 8195).
wait_until 120 '[ "$(frkb)" -ge $want ] 2>/dev/null && [ "$(frkb)" -lt $((want + ncpu * 16)) ]'
check $? "the flight recorder's rings: $(frkb) KB on $ncpu CPUs, $nw watched and the housekeeping one at 8192 KB, the rest at 1024 ($want KB before the kernel's rounding)"
echo "SCALE flight-recorder cpus=$ncpu watched=$nw kb=$(frkb) (-b 8192 everywhere: $((ncpu * 8192)))"
echo "guest: the recorder's rings, KB by CPU: $(frsizes | sort -n | uniq -c | tr '\n' ' ')"
grep "watched CPUs\|ring" /tmp/fr.log | head -5
kill -TERM $frpid
wait $frpid
check $? "that flight recorder stops (exit 0)"

unload_clean
echo "HVNOISE-VM-DONE"
