#!/bin/sh
# Busy but innocent (issue 29): what a real host does that is no hypervisor
# noise, run for hvn.secs= seconds per source, the module then BPF.  Each
# cycle: timers armed with deadlines already gone (pasttimers), NMI bursts
# (tests/vm/nmiburst: 12 NMIs of 1.5 ms back to back on every other CPU,
# 18 ms a CPU, above the threshold, three times), CPU hotplug
# of an unwatched and of a watched CPU (stop_machine with interrupts off everywhere; the
# disk's managed queue vector of that CPU shut down and started again;
# other vectors forced off it), then of both together (a second disk's
# managed vector, spread on CPUs 2-3, moved within its mask and then shut
# down with all its CPUs offline), the e1000e NIC down and up (its MSI-X
# vectors freed and requested again), then one pause of the whole VM by the
# host, which must still be seen on every watched CPU.
# Judged by the host (tests/vm/innocent.py, tests/vm/inject.py): no lost
# event but the pauses and this host's own witnessed stops (strict), and
# every irq_migrate a move /proc showed (printed here, HVN-PLACE).
STAGE=vm-innocent
. /lib/hvnoise/lib.sh
inject_init
TEST_LOST_US=15000	# the test threshold, above TCG's jitter, as elsewhere
E1K=0000:00:08.0
BLK2=0000:00:09.0	# 2 queues on 4 CPUs: managed vectors on CPUs 0-1 and 2-3
SECS=30
for arg in $(cat /proc/cmdline); do
	case $arg in
	hvn.secs=*) SECS=${arg#hvn.secs=} ;;
	hvn.lost_us=*) TEST_LOST_US=${arg#hvn.lost_us=} ;;	# to study the judge
	esac
done
SYS=/sys/devices/system/cpu

ncpu=$(grep -c ^processor /proc/cpuinfo)
res=$(sed -n 's/^ *\.resolution: \([0-9]*\) nsecs/\1/p' /proc/timer_list | sort -n | tail -n 1)
echo "guest: kernel $(uname -r), $ncpu CPUs, $SECS s a source, hrtimer resolution $res ns ($(cat /proc/cmdline))"
insmod /lib/hvnoise/hvn_nmi.ko nmi_us=1500
check $? "insmod hvn_nmi (NMI bursts of 1.5 ms handlers)"
e1k=$(ls /sys/bus/pci/devices/$E1K/net/)
ip link set "$e1k" up
wait_until 30 '[ -n "$(ls /proc/irq/$(ls /sys/bus/pci/devices/$E1K/msi_irqs | head -n 1)/ 2>/dev/null | grep -v "^[a-z_]*affinity\|^node\|^spurious")" ]'
check $? "the e1000e NIC ($e1k) is up with its MSI-X vectors requested"
m2=""
for irq in $(ls /sys/bus/pci/devices/$BLK2/msi_irqs); do
	m2="$m2 $irq:$(cat /proc/irq/$irq/smp_affinity_list)"
done
echo "guest: the second disk's vectors (IRQ:affinity):$m2"
echo "$m2" | grep -q ":2-3"
check $? "the second disk has a managed vector spread on CPUs 2-3"
[ -d $SYS/cpu3 ] && [ -f $SYS/cpu3/online ]
check $? "CPUs can go offline (CPU 3's online file)"

# Where the kernel has each vector of the watched devices now: IRQ:CPU for
# those with a handler whose affinity holds an online CPU (a freed vector,
# or a managed one whose CPUs are all offline, is on none).  Printed as
# HVN-PLACE lines for the host's migration check.
place() {
	for dev in $E1K $BLK $BLK2; do
		for irq in $(ls /sys/bus/pci/devices/$dev/msi_irqs); do
			ls -d /proc/irq/$irq/*/ >/dev/null 2>&1 || continue
			on=""
			for c in $(expand_cpulist "$(cat /proc/irq/$irq/smp_affinity_list)"); do
				[ "$(cat $SYS/cpu$c/online 2>/dev/null || echo 1)" = 1 ] && on=1
			done
			[ -n "$on" ] || continue
			echo "$irq:$(cat /proc/irq/$irq/effective_affinity_list)"
		done
	done | tr '\n' ' '
}
step() {	# step NAME: the placement after it
	echo "HVN-PLACE $1 t=$(cut -d' ' -f1 /proc/uptime) $(place)"
}

# HVN-OFF CPU DOWN DOWN_DONE UP UP_DONE: when the CPU's take-down began
# and ended, and its bring-up (the guest stops every CPU in each), on
# CLOCK_MONOTONIC to the microsecond (/proc/uptime has 10 ms).
now() { awk '/^now at/ { printf "%.6f", $3 / 1e9; exit }' /proc/timer_list; }
hotplug() {	# hotplug CPU: offline and online again (HVN-OFF: when)
	hvn_off=$(now)
	echo 0 >$SYS/cpu$1/online || return 1
	hvn_down=$(now)
	step "cpu$1-offline"
	hvn_on=$(now)
	echo 1 >$SYS/cpu$1/online || return 1
	echo "HVN-OFF $1 $hvn_off $hvn_down $hvn_on $(now)"
	step "cpu$1-online"
}
hotplug_both() {	# CPUs 3 and 2 offline together, then online again
	hvn_off3=$(now)
	echo 0 >$SYS/cpu3/online || return 1
	hvn_down3=$(now)
	step cpu3-offline
	hvn_off2=$(now)
	echo 0 >$SYS/cpu2/online || return 1
	hvn_down2=$(now)
	step cpu2-offline
	hvn_on=$(now)
	echo 1 >$SYS/cpu2/online || return 1
	echo "HVN-OFF 2 $hvn_off2 $hvn_down2 $hvn_on $(now)"
	step cpu2-online
	hvn_on=$(now)
	echo 1 >$SYS/cpu3/online || return 1
	echo "HVN-OFF 3 $hvn_off3 $hvn_down3 $hvn_on $(now)"
	step cpu3-online
}

nfail=0
cycle() {
	/lib/hvnoise/pasttimers 1 30 >/dev/null || nfail=$((nfail + 1))
	for _ in 1 2 3; do
		echo 12 >/sys/module/hvn_nmi/parameters/burst || nfail=$((nfail + 1))
		sleep 0.1
	done
	# CPU 3 is watched only where a vector of the devices sits on it;
	# CPU 2 always is.
	hotplug 3 || nfail=$((nfail + 1))
	hotplug 2 || nfail=$((nfail + 1))
	hotplug_both || nfail=$((nfail + 1))
	ip link set "$e1k" down && step nic-down && ip link set "$e1k" up && step nic-up ||
		nfail=$((nfail + 1))
	dd if=/dev/vda of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null
	dd if=/dev/vdb of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null
	inject pause 30
	sleep 0.3
}

# phase SOURCE: cycles for $SECS s inside the span the source watched.
phase() {
	step "$1-start"
	t0=$(cut -d' ' -f1 /proc/uptime)
	end=$(($(cut -d. -f1 /proc/uptime) + SECS))
	n=0
	nmi0=$(cat /sys/module/hvn_nmi/parameters/handled)
	while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
		cycle
		n=$((n + 1))
	done
	nmi1=$(cat /sys/module/hvn_nmi/parameters/handled)
	echo "HVN-SPAN $1 $t0 $(cut -d' ' -f1 /proc/uptime)"
	[ $nfail = 0 ] && [ $n -ge 2 ] && [ $((nmi1 - nmi0)) -gt 0 ]
	check $? "$1: $n cycles of past deadlines, NMI bursts, hotplug of CPUs 3, 2 and both, the NIC down and up ($nfail steps failed; $((nmi1 - nmi0)) NMIs of 1.5 ms handled)"
	nfail=0
}

echo mono >$T/trace_clock
echo 8192 >$T/buffer_size_kb
echo >$T/trace
insmod $KO devices=$E1K,$BLK,$BLK2 cpus=0-2 sample_us=1000 lost_threshold_us=200
check $? "insmod: CPUs 0-2 watched, and the e1000e's and the disk's vectors"
echo 1 >$T/events/hvnoise/enable
echo 1 >$T/events/cpuhp/cpuhp_enter/enable
echo 1 >$T/events/cpuhp/cpuhp_exit/enable
# The NMI handlers' times, for the host's judge: single-threaded TCG runs
# one vCPU at a time, so a vCPU loses the time others spin in theirs.
echo 'handled > 0' >$T/events/nmi/nmi_handler/filter
echo 1 >$T/events/nmi/nmi_handler/enable
clock_anchor
quiet_phases 4 $TEST_LOST_US
echo >$T/trace

phase module
events_of module
nmis_of module
echo "HVN-CPUHP module"
grep " cpuhp_e" $T/trace | head -150
echo "HVN-MIGRATE module"
grep " irq_migrate: " $T/trace | sed 's/.* irq_migrate: */MIGRATE /'
echo "HVN-END-MIGRATE"
echo none >$P/devices
echo none >$P/cpus
echo >$T/trace

bpf_rec_start /tmp/bpf.dat --cpus 0-2 --devices $E1K,$BLK,$BLK2 --param sample_us=1000 \
	--param lost_threshold_us=$TEST_LOST_US
phase bpf
bpf_rec_stop
events_of bpf /tmp/bpf.dat.txt
nmis_of bpf
echo "HVN-MIGRATE bpf"
grep " irq_migrate: " /tmp/bpf.dat.txt | sed 's/.* irq_migrate: */MIGRATE /'
echo "HVN-END-MIGRATE"
# When the tool last re-resolved the set (each change writes a new
# generation of hvnoise:watch records): for the record.
echo "BPF watch generations, the last 3: $(sed -n 's/.* \([0-9.]*\): watch: *gen=\([0-9]*\) .*/\2@\1/p' /tmp/bpf.dat.txt | uniq | tail -n 3 | tr '\n' ' ')"
rmmod hvnoise
check $? "rmmod"
echo HVNOISE-VM-DONE
