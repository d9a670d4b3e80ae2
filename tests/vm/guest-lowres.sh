#!/bin/sh
# hvnoise.ko and the BPF source with hrtimers in low-resolution mode
# (Debian's 6.1 booted highres=off): hard timers run from the tick, up to
# a tick late by design, which is no lost time; the host's pauses of the
# whole VM must still be seen, on every vCPU, as long as they were.
# Judged by the host (tests/vm/lowres.py, tests/vm/inject.py) as in the
# detector VM: the quiet guest holds nothing but this host's own stops.
STAGE=vm-lowres
. /lib/hvnoise/lib.sh
inject_init
TEST_LOST_US=15000	# the test threshold, above TCG's jitter, as elsewhere

ncpu=$(grep -c ^processor /proc/cpuinfo)
res=$(sed -n 's/^ *\.resolution: \([0-9]*\) nsecs/\1/p' /proc/timer_list | sort -u | tr '\n' ' ')
hres=$(sed -n 's/^ *\.hres_active *: *\([0-9]*\)/\1/p' /proc/timer_list | sort -u | tr '\n' ' ')
echo "guest: kernel $(uname -r), $ncpu CPUs, $(cat /proc/cmdline)"
[ "$hres" = "0 " ] && [ "$res" != "1 " ]
check $? "hrtimers run from the tick (highres=off): hres_active $hres, resolution $res ns"

echo mono >$T/trace_clock
echo 4096 >$T/buffer_size_kb
echo >$T/trace
insmod $KO cpus=0-$((ncpu - 1)) sample_us=1000 lost_threshold_us=$TEST_LOST_US
check $? "insmod, every CPU watched, a 1 ms sampler"
echo 1 >$T/events/hvnoise/enable
clock_anchor

# --- The quiet guest: its sampler and tick late by design, nothing lost ----
# The baseline (a low threshold: how late timers run beyond their tick)
# is printed for the record; the quiet phase at the test threshold is
# judged.
quiet_phases 6 $TEST_LOST_US

# --- The host's pauses: the module, then the BPF source ---------------------
pauses() {
	for ms in 20 50 100 30 200 100; do
		inject pause $ms
		sleep 1.5
	done
}
echo >$T/trace
t0=$(cut -d' ' -f1 /proc/uptime)
pauses
echo "HVN-SPAN module $t0 $(cut -d' ' -f1 /proc/uptime)"
events_of module
echo none >$P/cpus
bpf_rec_start /tmp/bpf.dat --cpus 0-$((ncpu - 1)) --param sample_us=1000 \
	--param lost_threshold_us=$TEST_LOST_US
t0=$(cut -d' ' -f1 /proc/uptime)
pauses
echo "HVN-SPAN bpf $t0 $(cut -d' ' -f1 /proc/uptime)"
bpf_rec_stop
events_of bpf /tmp/bpf.dat.txt
rmmod hvnoise
check $? "rmmod"
echo HVNOISE-VM-DONE
