#!/bin/sh
# Lost-time recall inside the guest (Debian's stock kernel), driven by
# tests/vm/soak.py on the host.  Each injection is asked for on the console
# (HVN-DO SEQ pause|hog MS) and waited for on ttyS1, where the host answers
# once it is done; the guest prints the window it waited in (HVN-WIN), and
# every hvnoise:lost event, for the host to match against the windows.
#
#   hvn.soak=exp    the mechanism experiments (a stop inside the sampler's
#                   callback, on demand; an idle guest, then a pause)
#   hvn.soak=soak   hvn.rounds= rounds of pauses and hogs, module then BPF
#   hvn.soak=baseline  30 s of TCG's own lateness, nothing injected
#   hvn.lost_us=, hvn.pauses=MS,MS..., hvn.hogs=MS,...: other than 15000,
#                   20,30,50,100 and 30,50 (the smallest pause provable;
#                   hvn.hogs=none: no hogs)
#   hvn.perf_rate=N perf_event_max_sample_rate for the soak (forced low:
#                   the BPF source's sampler throttled, as on a busy host)
HVN=/usr/bin/hvnoise
LOST_US=15000		# above TCG's own lateness (the detector test's threshold)
mode=soak rounds=10
for arg in $(cat /proc/cmdline); do
	case $arg in
	hvn.soak=*) mode=${arg#hvn.soak=} ;;
	hvn.rounds=*) rounds=${arg#hvn.rounds=} ;;
	hvn.lost_us=*) LOST_US=${arg#hvn.lost_us=} ;;
	hvn.pauses=*) PAUSES_ARG=$(echo "${arg#hvn.pauses=}" | tr , ' ') ;;
	hvn.hogs=*) HOGS_ARG=$(echo "${arg#hvn.hogs=}" | tr , ' ') ;;
	hvn.perf_rate=*) PERF_RATE=${arg#hvn.perf_rate=} ;;
	esac
done
ncpu=$(grep -c ^processor /proc/cpuinfo)
echo "guest: kernel $(uname -r), $ncpu CPUs, mode $mode, $rounds rounds"
STAGE=soak
. /lib/hvnoise/lib.sh
inject_init
echo mono >$T/trace_clock
echo 8192 >$T/buffer_size_kb

now() { cut -d' ' -f1 /proc/uptime; }

mod_events() {	# mod_events TAG: the module's lost events so far
	echo "HVN-EVENTS $1"
	grep " lost: " $T/trace | sed 's/.* lost: */LOST /'
	echo "HVN-END-EVENTS"
}

bpf_start() {	# bpf_start FILE [--param NAME=VALUE...]
	f=$1
	shift
	start_recorder "$f.log" 120 $HVN record --source bpf \
		--cpus 0-$((ncpu - 1)) --devices none \
		--param lost_threshold_us=$LOST_US "$@" -o "$f"
	hvn_rc=$?
	bpfpid=$bgpid
	[ $hvn_rc = 0 ] && return 0
	cat "$f.log"
	return 1
}

bpf_events() {	# bpf_events FILE TAG: stop the recorder, print its lost events
	kill -INT $bpfpid
	wait $bpfpid
	tail -n 3 "$1.log"
	echo "HVN-EVENTS $2"
	trace-cmd report -i "$1" 2>/dev/null | grep " lost: " | sed 's/.* lost: */LOST /'
	echo "HVN-END-EVENTS"
	rm -f "$1"
}

spin() {	# spin N TAG: N stops of 30 ms inside the armed function on CPU 1
	for i in $(seq 1 "$1"); do
		sleep 0.5
		t0=$(now)
		echo 1 >/sys/module/hvn_spin/parameters/arm
		while [ "$(cat /sys/module/hvn_spin/parameters/arm)" = 1 ]; do
			sleep 0.05
		done
		sleep 0.2
		echo "HVN-SPIN $2 $i $t0 $(now) $(cat /sys/module/hvn_spin/parameters/spun)"
	done
}

# Expiries of the sampler's and the tick's hrtimers per CPU in one second.
timer_rate() {	# timer_rate SAMPLER_FUNCTION
	i=$T/instances/hvn-rate
	mkdir $i
	for f in $1 tick_sched_timer; do
		addr=$(awk -v f="$f" '$3 == f { print $1; exit }' /proc/kallsyms)
		echo "function == 0x$addr" >$i/events/timer/hrtimer_expire_entry/filter
		echo >$i/trace
		echo 1 >$i/events/timer/hrtimer_expire_entry/enable
		sleep 1
		echo 0 >$i/events/timer/hrtimer_expire_entry/enable
		for c in $(seq 0 $((ncpu - 1))); do
			printf " %s/cpu%s=%s" "$f" "$c" \
				"$(sed -n 's/^entries: //p' $i/per_cpu/cpu$c/stats)"
		done
	done
	echo
	rmdir $i
}

if [ "$mode" = exp ]; then
	# 1. A stop after the timer interrupt read the clock and before the
	# sampler re-armed: the module's own sampler, then BPF's perf one.
	insmod $KO cpus=0-$((ncpu - 1)) sample_us=1000 lost_threshold_us=$LOST_US
	echo 1 >$T/events/hvnoise/lost/enable
	echo >$T/trace
	insmod /lib/hvnoise/hvn_spin.ko symbol=sampler_fn cpu=1 spin_us=30000
	spin 10 module
	rmmod hvn_spin
	mod_events spin-module
	rmmod hvnoise
	bpf_start /tmp/spin.dat --param sample_us=1000
	insmod /lib/hvnoise/hvn_spin.ko symbol=perf_swevent_hrtimer cpu=1 spin_us=30000
	spin 10 bpf
	rmmod hvn_spin
	bpf_events /tmp/spin.dat spin-bpf

	# 2. BPF's sampler on an idle guest: held idle, then a host pause.
	for us in 1000 5000; do
		bpf_start /tmp/idle.dat --param sample_us=$us
		for k in 1 2 3; do
			sleep 10
			echo "HVN-RATE bpf-$us $k$(timer_rate perf_swevent_hrtimer)"
			inject pause 50
		done
		bpf_events /tmp/idle.dat idle-bpf-$us
	done
	insmod $KO cpus=0-$((ncpu - 1)) sample_us=1000 lost_threshold_us=$LOST_US
	echo 1 >$T/events/hvnoise/lost/enable
	echo >$T/trace
	for k in 1 2 3; do
		sleep 10
		echo "HVN-RATE module $k$(timer_rate sampler_fn)"
		inject pause 50
	done
	mod_events idle-module
	rmmod hvnoise

	# 3. perf throttling forced (2 samples a tick): the tool re-arms the
	# timers, and the stops are neither lost time nor hide a pause.
	rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	echo 500 >/proc/sys/kernel/perf_event_max_sample_rate
	bpf_start /tmp/thr.dat --param sample_us=1000
	(sleep 60; kill -9 $bpfpid) 2>/dev/null &
	watchdog=$!
	for k in 1 2 3; do
		sleep 2
		inject pause 50
	done
	bpf_events /tmp/thr.dat throttle-bpf
	kill $watchdog 2>/dev/null
	echo "HVN-THROTTLE $(grep -o 'throttled the BPF.*' /tmp/thr.dat.log)"
	echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate

	exit 0
fi

if [ "$mode" = baseline ]; then
	# TCG's own lateness, nothing injected: what the threshold must clear.
	insmod $KO cpus=0-$((ncpu - 1)) sample_us=1000 lost_threshold_us=200
	echo 1 >$T/events/hvnoise/lost/enable
	echo >$T/trace
	sleep 30
	for c in $(seq 0 $((ncpu - 1))); do
		grep " lost: *cpu=$c " $T/trace | sed 's/.* duration=\([0-9]*\).*/\1/' |
			awk -v c=$c '{ n++; if ($1 > m) m = $1
				if ($1 > 1e6) a++; if ($1 > 2e6) b++; if ($1 > 5e6) d++
				if ($1 > 1e7) e++ }
			END { printf "HVN-BASELINE cpu%d events=%d max_ms=%.2f over_1ms=%d over_2ms=%d over_5ms=%d over_10ms=%d\n",
				c, n, m / 1e6, a, b, d, e }'
	done
	rmmod hvnoise
	exit 0
fi

# --- the soak: the same schedule for the module, then for BPF ----------------
PAUSES=${PAUSES_ARG:-20 30 50 100}
HOGS=${HOGS_ARG:-30 50}
[ "$HOGS" = none ] && HOGS=""	# one TCG thread: no vCPU of its own to hog
if [ -n "${PERF_RATE:-}" ]; then
	echo "$PERF_RATE" >/proc/sys/kernel/perf_event_max_sample_rate
	echo "HVN-RATE perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
fi

insmod $KO cpus=0-$((ncpu - 1)) sample_us=1000 lost_threshold_us=$LOST_US
echo 1 >$T/events/hvnoise/lost/enable
echo >$T/trace
echo "HVN-SOURCE module"
t0=$(now)
schedule module
# The span judged: after it the guest prints its trace through the UART,
# which takes time from the vCPUs (one TCG thread: a 20 ms event on vCPU 1).
echo "HVN-SPAN module $t0 $(now)"
mod_events module
rmmod hvnoise

bpf_start /tmp/soak.dat --param sample_us=1000
echo "HVN-SOURCE bpf"
t0=$(now)
schedule bpf
echo "HVN-SPAN bpf $t0 $(now)"
bpf_events /tmp/soak.dat bpf
grep -h "throttled\|samples every" /tmp/soak.dat.log | sed 's/^/HVN-THROTTLE /'
echo "HVN-RATE perf_event_max_sample_rate at the end $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
