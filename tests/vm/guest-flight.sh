#!/bin/sh
# The flight recorder inside the guest (busybox sh, Debian's stock kernel,
# hvnoise.ko): an incident file for each trigger, a whole-VM pause injected
# by the host (tests/vm/flight.py, on HVN-INJECT-PAUSE) for lost time, an
# interrupt storm from disk reads, an operator's touch and SIGUSR1; each
# file read by hvnoise report and by trace-cmd report with the plugin.
STAGE=vm-flight
. /lib/hvnoise/lib.sh
HVN=/usr/bin/hvnoise
D=/tmp/fr

ncpu=$(grep -c ^processor /proc/cpuinfo)
# sample_us: a due timer on every CPU, so that each sees the pause; a storm
# rate above that timer's 1000/s and TCG's tick, below the disk's reads.
echo "guest: kernel $(uname -r), $ncpu CPUs"
insmod $KO devices=$NIC,$BLK cpus=0-$((ncpu - 1)) lost_threshold_us=15000 sample_us=1000 \
	storm_rate=2000 storm_window_ms=100
check $? "insmod hvnoise.ko"
mkdir -p $D
$HVN record --flight-recorder --keep 20 -b 2048 -o $D/inc --trigger-file $D/trigger \
	--lost-ms 40 --storm-irqs 1000 2>$D/fr.log &
frpid=$!
sleep 2
cat $D/fr.log
inst=$(ls $T/instances | grep '^hvnoise-fr-[0-9]' | head -n 1)
[ -n "$inst" ] && [ "$(cat $T/instances/$inst/options/overwrite)" = 1 ] &&
	ls $T/instances | grep -q '^hvnoise-fr-monitor-'
check $? "the ring ($inst, overwrite) and the threshold instance are there"
[ -z "$(ls $D/*.dat 2>/dev/null)" ]
check $? "no incident while all is quiet"

# --- lost time: the host stops the whole VM for 100 ms ---------------------------
echo "HVN-INJECT-PAUSE"
wait_file 8 "$D/*-lost.dat"
sleep 1		# and no second incident for the same pause
lostf=$(ls $D/*-lost.dat 2>/dev/null | head -n 1)
n=$(ls $D/*-lost.dat 2>/dev/null | wc -l)
[ -n "$lostf" ] && [ "$n" = 1 ]
check $? "a 100 ms pause of the VM writes one lost incident ($n: $lostf)"

# --- an interrupt storm: O_DIRECT reads of the disk -------------------------------
irq=$(irq_of virtio1-req.1)
cpu=$(cat /proc/irq/$irq/effective_affinity_list)
taskset -c "$cpu" /lib/hvnoise/dread /dev/vda 20000
wait_file 5 "$D/*-storm.dat"
stormf=$(ls $D/*-storm.dat 2>/dev/null | head -n 1)
[ -n "$stormf" ]
check $? "a disk storm on CPU $cpu (IRQ $irq) writes a storm incident ($stormf)"

# --- an operator: a touch, then SIGUSR1 -------------------------------------------
touch $D/trigger
wait_file 3 "$D/*-file.dat"
kill -USR1 $frpid
wait_file 3 "$D/*-signal.dat"
[ -n "$(ls $D/*-file.dat 2>/dev/null)" ] && [ -n "$(ls $D/*-signal.dat 2>/dev/null)" ]
check $? "touching the trigger file and SIGUSR1 each write an incident"

# --- faults: the module unloaded and loaded again under it, the clock stepped ---
# The kernel takes a module's events out of every instance and brings them
# back disabled: without the recorder enabling them again, no event would
# mean no detector, not no lost time.
rmmod hvnoise
check $? "rmmod hvnoise.ko under the running recorder"
wait_until 5 "grep -q 'hvnoise.ko was unloaded' $D/fr.log"
insmod $KO devices=$NIC,$BLK cpus=0-$((ncpu - 1)) lost_threshold_us=15000 sample_us=1000 \
	storm_rate=2000 storm_window_ms=100
check $? "insmod hvnoise.ko again"
wait_until 5 "grep -q 'hvnoise.ko is loaded again: its events are enabled again' $D/fr.log"
check $? "the recorder says the module went and came back ($(grep -c 'hvnoise.ko' $D/fr.log) lines)"
mon=$(ls $T/instances | grep '^hvnoise-fr-monitor-' | head -n 1)
[ "$(cat $T/instances/$inst/events/hvnoise/enable)" = 1 ] &&
	[ "$(cat $T/instances/$mon/events/hvnoise/lost/enable)" = 1 ] &&
	grep -q "duration >= 40000000" $T/instances/$mon/events/hvnoise/lost/filter &&
	grep -q "count >= 1000" $T/instances/$mon/events/hvnoise/irq_storm/filter
check $? "... its events enabled again in both instances, the thresholds' filters set again"
n0=$(ls $D/*-storm.dat 2>/dev/null | wc -l)
taskset -c "$cpu" /lib/hvnoise/dread /dev/vda 20000
wait_until 5 "[ \$(ls $D/*-storm.dat 2>/dev/null | wc -l) -gt $n0 ]"
rc=$?
stormf2=$(ls -t $D/*-storm.dat 2>/dev/null | head -n 1)
check $rc "a disk storm after the reload writes a storm incident ($stormf2)"
$HVN report "$stormf2" >$D/storm2.txt 2>&1
grep "GAP:" $D/storm2.txt
grep -q "GAP: hvnoise.ko was not loaded for [0-9.]* s from" $D/storm2.txt &&
	$HVN report --json "$stormf2" | grep -q '"module_gaps":{"count":1,'
check $? "... and says when the module was not loaded (report: GAP)"

# A clock step of an hour (NTP, a VM restored): names and pairs follow it.
now=$(date +%s)
date -s "@$((now + 3600))" >/dev/null
n0=$(ls $D/*-signal.dat | wc -l)
kill -USR1 $frpid
wait_until 5 "[ \$(ls $D/*-signal.dat 2>/dev/null | wc -l) -gt $n0 ]"
sigf=$(ls -t $D/*-signal.dat | head -n 1)
want=$(date +%Y%m%d-%H)
date -s "@$(($(date +%s) - 3600))" >/dev/null
$HVN report --json "$sigf" >$D/step.json 2>&1 && grep -q '"complete":true' $D/step.json &&
	case "$sigf" in *-$want*) true ;; *) false ;; esac && kill -0 $frpid
check $? "a clock stepped 1 h: the recorder goes on, the incident named by the new time ($want), complete"

kill -TERM $frpid
wait $frpid
check $? "SIGTERM stops the recorder (exit 0)"
cat $D/fr.log
[ -z "$(ls $T/instances | grep '^hvnoise-fr')" ]
check $? "both of its instances are removed"

# --- the ring per CPU: -b where the module watches, --unwatched-kb elsewhere --------
# -b also on the housekeeping CPU (the first online one not watched: the
# module's steal and watch events come from there).  Grown when a CPU joins
# the set (checked each second), never shrunk: a CPU that leaves keeps its
# history.  2 vCPUs: nothing watched (CPU 0 housekeeping), then CPU 1.
echo none >$P/devices && echo none >$P/cpus
$HVN record --flight-recorder -v -b 2048 --unwatched-kb 256 -o $D/size 2>$D/size.log &
szpid=$!
kb() {
	cat $T/instances/$(ls $T/instances | grep '^hvnoise-fr-[0-9]' | head -n 1)/per_cpu/cpu$1/buffer_size_kb 2>/dev/null
}
# is CPU SIZE: CPU's ring is SIZE KB, as the kernel rounds it (to whole
# pages: 2048 reads back as 2051, 256 as 258).
is() {
	sz=$(kb $1)
	[ -n "$sz" ] && [ "$sz" -ge "$2" ] && [ "$sz" -lt $(($2 + 16)) ]
}
wait_until 5 'is 0 2048 && is 1 256'
check $? "the ring: 256 KB (--unwatched-kb) on CPU 1, 2048 KB (-b) on CPU 0, nothing watched and CPU 0 housekeeping ($(kb 0), $(kb 1))"
echo 1 >$P/cpus
wait_until 5 'is 1 2048'
check $? "CPU 1 watched: its ring grows to 2048 KB at the recorder's next check ($(kb 1))"
echo none >$P/cpus
wait_until 5 "[ \$(grep -c 'the watched CPUs are' $D/size.log) -ge 3 ]" && is 1 2048
check $? "CPU 1 no longer watched: its ring keeps 2048 KB once the recorder saw the change ($(kb 1); $(grep -c 'the watched CPUs are' $D/size.log) sets seen)"
kill -TERM $szpid
wait $szpid
check $? "that recorder stops (exit 0)"
grep "watched CPUs\|ring of" $D/size.log
echo "$NIC,$BLK" >$P/devices && echo 0-$((ncpu - 1)) >$P/cpus

# --- what the files hold -------------------------------------------------------------
if [ -n "$lostf" ]; then
	$HVN report --json "$lostf" >$D/lost.json 2>&1
	check $? "hvnoise report reads the lost incident"
	$HVN report "$lostf" | head -n 20
	worst=$(grep -o '"kind":"lost","cpu":[0-9]*,"start_ns":[0-9]*,"start_realtime_ns":[0-9]*,"duration_ns":[0-9]*' \
		$D/lost.json | sed 's/.*://' | sort -n | tail -n 1)
	[ "${worst:-0}" -ge 40000000 ]
	check $? "the lost incident holds the paused lost episode (${worst:-none} ns >= 40 ms)"
	TRACEEVENT_PLUGIN_DIR=/lib/hvnoise trace-cmd report -i "$lostf" >$D/lost.txt 2>&1
	grep " lost: " $D/lost.txt | head -n 4
	grep -q " lost: *cpu=[0-9]* lost=[0-9]*\.[0-9]\{6\}ms unexplained=" $D/lost.txt &&
		! grep -q "FAILED TO PARSE" $D/lost.txt
	check $? "trace-cmd report with plugin_hvnoise.so decodes the incident's lost events"
	# The watched set is recorded when it changes or a reader asks (the
	# flight recorder as it takes an incident); a recorder that asked
	# every poll filled its ring with it.
	sets=$(grep " watch: *gen=[0-9]* 1/" $D/lost.txt | grep -vc "why=[^ ]*delta")
	[ "$sets" -ge 1 ] && [ "$sets" -le 3 ]
	check $? "the lost incident's $(grep -c " watch: " $D/lost.txt) watch records are the watched set at the start (its enable, the recorder asking) and as the incident was taken, not each poll ($sets copies, 1 to 3)"
fi
sigf=$(ls $D/*-signal.dat 2>/dev/null | head -n 1)
if [ -n "$sigf" ]; then
	# After others took the ring's copies, an incident holds a whole set.
	$HVN report --json "$sigf" >$D/signal.json 2>&1
	grep -q '"watched":\[{"kind":"cpu"' $D/signal.json
	check $? "the SIGUSR1 incident, the fourth, holds the watched set (emitted whole as each incident is taken)"
fi
if [ -n "$stormf" ]; then
	$HVN report --json "$stormf" >$D/storm.json 2>&1
	n=$(sed -n 's/.*"irq_storm":\([0-9]*\).*/\1/p' $D/storm.json)
	[ "${n:-0}" -ge 1 ] && grep -q "flight-recorder storm: CPU $cpu" "$stormf"
	check $? "the storm incident holds the storm (${n:-0} irq_storm) and says what triggered it"
fi
