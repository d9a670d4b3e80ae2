#!/bin/sh
# One host of the two- or three-host job (tests/vm/fleet.py): hvnoise.ko
# watching the job's CPU and its NICs, hvnoise record around one rank of an
# NCCL-like job whose other ranks run on the other VMs, over QEMU socket
# networks between them; the recording goes to the host through the disk.
# The kernel command line says which: hvn.role=a (rank 0, 10.9.0.1,
# listens) or b (rank 1, 10.9.0.2, whose RTC the host set 2 s ahead);
# hvn.secs=S.  With hvn.three=1, the narrow case's three hosts: a also
# has 10.9.1.1 on a second NIC, to c (rank 2, 10.9.1.2); a and b run an
# all-reduce of their own each step, then one of all three.
STAGE=vm-fleet
. /lib/hvnoise/lib.sh
LINK=0000:00:07.0		# the NIC on the socket network to the other VM
LINK2=0000:00:08.0		# three: a's second NIC, to c
role=a secs=20 three=0
for arg in $(cat /proc/cmdline); do
	case $arg in
	hvn.role=*) role=${arg#hvn.role=} ;;
	hvn.secs=*) secs=${arg#hvn.secs=} ;;
	hvn.three=*) three=${arg#hvn.three=} ;;
	esac
done
case $role in
a) rank=0 me=10.9.0.1 ;;
b) rank=1 me=10.9.0.2 ;;
c) rank=2 me=10.9.1.2 ;;
esac
hostname "vm-$role"
dev=$(ls /sys/bus/pci/devices/$LINK/virtio*/net/)
ip addr add $me/24 dev "$dev" && ip link set "$dev" up
check $? "vm-$role: $dev ($LINK) up as $me"
devs=$LINK
if [ "$three" = 1 ] && [ "$role" = a ]; then
	dev2=$(ls /sys/bus/pci/devices/$LINK2/virtio*/net/)
	ip addr add 10.9.1.1/24 dev "$dev2" && ip link set "$dev2" up
	check $? "vm-$role: $dev2 ($LINK2) up as 10.9.1.1"
	devs=$LINK,$LINK2
fi
if [ "$three" = 1 ]; then
	job="tcp3 /usr/lib/libnccl-profiler-hvnoise.so $secs 1 1000 $rank 10.9.0.1 10.9.1.1 7000"
else
	job="tcp /usr/lib/libnccl-profiler-hvnoise.so $secs 1 1000 $rank 10.9.0.1 7000"
fi

# The job's rank runs on CPU 1: watched, as the NIC's IRQs' CPUs.  Under TCG
# a vCPU is late by up to ~20 ms unprovoked: lost time from 15 ms.
insmod $KO devices=$devs cpus=1 lost_threshold_us=15000
check $? "vm-$role: insmod hvnoise.ko devices=$devs cpus=1"
# shellcheck disable=SC2086 # $job is the words of the command
hvnoise record -o /tmp/job.dat -- nccl_fake $job >/tmp/job.out 2>&1 &
rec=$!
# The host waits for this line to inject its noise.
wait_until 120 "grep -q 'collectives running' /tmp/job.out"
echo "HVN-FLEET-RUNNING vm-$role"
wait $rec
rc=$?
cat /tmp/job.out
grep "peer clock offset" /tmp/job.out | sed 's/^nccl_fake: /HVN-FLEET-CLOCK /'
[ $rc = 0 ] && grep -q "ran [0-9]* collectives with its peer" /tmp/job.out
check $? "vm-$role: hvnoise record around rank $rank of the job (exit $rc)"
rmmod hvnoise
size=$(wc -c </tmp/job.dat)
printf 'HVNTRACE %s\n' "$size" | dd of=/dev/vda bs=512 count=1 conv=sync 2>/dev/null
dd if=/tmp/job.dat of=/dev/vda bs=512 seek=1 conv=fsync 2>/dev/null
check $? "vm-$role: recording ($size bytes) copied to the disk for the host"
