#!/bin/sh
# VM integration test of hvnoise.ko, run inside the guest (busybox sh) on
# Debian's stock kernel.  The virtio NIC (0000:00:04.0) and disk
# (0000:00:05.0) stand for a GPU host's NIC and GPU.  Every assertion prints
# one KTAP result (tests/vm/guest-lib.sh); the host counts them (tests/check.sh).
STAGE=vm
. /lib/hvnoise/lib.sh
HOSTBRIDGE=0000:00:00.0
NOSUCH=0000:00:1f.7
PEER=0000:00:06.0	# the NIC's peer on the QEMU-internal hub

is_watched() {
	expand_cpulist "$(cat $P/watched)" | grep -qx "$1"
}

# Expect insmod with "$@" to fail with EINVAL and one dmesg line naming
# the bad value ($want_val) and why ($want_why).
expect_load_rejected() {
	name=$1 want_val=$2 want_why=$3
	shift 3
	dmesg -c >>/tmp/dmesg.all
	out=$(insmod $KO "$@" 2>&1)
	rc=$?
	[ $rc -ne 0 ] && [ ! -d /sys/module/hvnoise ]
	check $? "insmod rejects $name"
	echo "$out" | grep -qi "invalid"
	check $? "insmod $name fails with EINVAL ($out)"
	# busybox insmod tries finit_module, then init_module: one line per
	# attempt, so count distinct lines.
	lines=$(dmesg | grep "hvnoise: " | grep -v "invalid for parameter" |
		sed 's/^\[[^]]*\] //' | sort -u | grep -F -e "$want_val" | grep -c -F -e "$want_why")
	[ "$lines" = 1 ]
	check $? "dmesg names $name and why ($want_why)"
	[ "$lines" = 1 ] || dmesg | grep hvnoise
}

# Expect writing $2 to parameter $1 to fail, leave it unchanged and log why.
expect_write_rejected() {
	param=$1 val=$2 why=$3
	before=$(cat "$P/$param")
	watched=$(cat "$P/watched")
	dmesg -c >>/tmp/dmesg.all
	echo "$val" >"$P/$param" 2>/dev/null
	rc=$?
	[ $rc -ne 0 ]
	check $? "write $param=$val fails"
	[ "$(cat "$P/$param")" = "$before" ] && [ "$(cat "$P/watched")" = "$watched" ]
	check $? "write $param=$val leaves configuration in force"
	dmesg | grep "hvnoise: $param=" | grep -F -e "$val" | grep -q -F -e "$why"
	check $? "dmesg names $param=$val and why ($why)"
}

echo "guest: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
[ -e "/sys/bus/pci/devices/$NIC/driver" ] && [ -e "/sys/bus/pci/devices/$BLK/driver" ]
check $? "virtio NIC and disk present with drivers bound"
cat /proc/interrupts | grep -i virtio

# --- Bad parameters at load ---------------------------------------------
expect_load_rejected "malformed PCI address" "0000:zz:00.0" "not a PCI address" devices=0000:zz:00.0
expect_load_rejected "unknown PCI device" "$NOSUCH" "no such PCI device" devices=$NOSUCH
expect_load_rejected "device without IRQs" "$HOSTBRIDGE" "has no IRQs" devices=$HOSTBRIDGE
expect_load_rejected "empty device list" "devices=" "empty device list" devices=
expect_load_rejected "empty cpulist" "cpus=" "empty cpulist" cpus=
expect_load_rejected "out-of-range cpulist" "0-4096" "out of range" cpus=0-4096
expect_load_rejected "reversed cpulist" "3-1" "reversed" cpus=3-1
expect_load_rejected "non-boolean local_cpus" "local_cpus=maybe" "not a boolean" local_cpus=maybe
expect_load_rejected "too small resolve_ms" "resolve_ms=5" "rejected" resolve_ms=5

# --- Load with the two devices and a listed CPU -------------------------
dmesg -c >>/tmp/dmesg.all
insmod $KO devices=$NIC,$BLK cpus=1 resolve_ms=100
check $? "insmod devices=$NIC,$BLK cpus=1"
[ "$(cat $P/devices)" = "$NIC,$BLK" ] && [ "$(cat $P/cpus)" = 1 ]
check $? "parameters read back"
ls -l $P | grep -v -- "-rw------- \|-r-------- \|--w------- " | grep -q "^-"
[ $? -ne 0 ]
check $? "parameters are root-only"

echo 1 >$T/events/hvnoise/watch/enable
wait_until 5 'grep -q " watch: " $T/trace'
check $? "enabling hvnoise:watch re-emits the watched set"
grep " watch: " $T/trace | head -20

for d in $NIC $BLK; do
	p=$(proc_pairs $d)
	t=$(trace_pairs $d)
	[ -n "$p" ] && [ "$p" = "$t" ]
	check $? "watch names $d's IRQs and CPUs as /proc/irq says"
	[ -n "$p" ] && [ "$p" = "$t" ] || { echo "proc: $p"; echo "trace: $t"; }
	n=$(ls /sys/bus/pci/devices/$d/msi_irqs | wc -l)
	watch_recs | awk -v d=$d -v n=$n '$1 == "device" && $4 == d && $6 == n { ok = 1 } END { exit !ok }'
	check $? "watch device record for $d counts its $n IRQs"
done

names_ok=0
for irq in $(ls /sys/bus/pci/devices/$NIC/msi_irqs); do
	want=$(awk -v n="$irq:" '$1 == n { print $NF }' /proc/interrupts | cut -c1-15)
	got=$(watch_recs | awk -v i=$irq '$1 == "irq" && $5 == i { print $7; exit }')
	[ "$want" = "$got" ] || { names_ok=1; echo "irq $irq: proc '$want' trace '$got'"; }
done
check $names_ok "watch IRQ names match /proc/interrupts"
# Whether each IRQ's affinity may be set, as the drivers ask: virtio-blk's
# request queues are managed (spread by the kernel), its config vector and
# every virtio-net vector are not.
bad=$(watch_recs | awk -v n=$NIC -v b=$BLK '$1 == "irq" && ($4 == n || $4 == b) {
	want = ($4 == b && $7 ~ /-req\./) ? "checked|managed" : "checked"
	if ($3 != want) print $5 " " $7 " why=" $3 " (want " want ")" }')
[ -z "$bad" ] && [ -n "$(watch_recs | awk '$1 == "irq" && $3 == "checked|managed"')" ]
check $? "watch IRQ records say which are managed: $BLK's request queues, no other (${bad:-as the drivers ask})"

irqcpus=$( (proc_pairs $NIC; proc_pairs $BLK) | cut -d: -f2 | sort -nu)
[ "$(trace_cpus_why irq)" = "$irqcpus" ]
check $? "CPUs serving device IRQs are watched with why=irq ($irqcpus)"
[ "$(trace_cpus_why listed)" = 1 ]
check $? "listed CPU 1 is watched with why=listed"
want=$( (echo 1; echo "$irqcpus") | sort -nu | tr '\n' ' ')
got=$(expand_cpulist "$(cat $P/watched)" | tr '\n' ' ')
[ "$want" = "$got" ]
check $? "watched parameter is the union ($got)"

echo >$T/trace
echo 1 >$P/emit
check $? "write emit=1"
[ "$(grep -c ' watch: ' $T/trace)" = "$(grep ' watch: ' $T/trace | head -1 | sed 's:.* [0-9]*/\([0-9]*\) .*:\1:')" ]
check $? "emit=1 re-emits the whole set"

# A re-resolution waiting on a device's lock (a driver probing for
# seconds, as mlx5 does at boot) holds hvnoise's own lock; a recorder
# starting then must still get the set at once, and emit=1 too.
echo 0 >$T/events/hvnoise/watch/enable
insmod /lib/hvnoise/hvn_devhold.ko
check $? "insmod hvn_devhold (test: holds a PCI device's lock)"
echo "$BLK 15000" >/sys/module/hvn_devhold/parameters/hold
wait_until 5 '[ "$(cat /sys/module/hvn_devhold/parameters/held)" = 1 ]'
check $? "a thread holds $BLK's device lock"
(echo $NIC,$BLK >$P/devices) &
hvn_wpid=$!
# Synchronised on its state: the write sleeps uninterruptibly in the lock.
wait_until 5 '[ "$(cut -d" " -f3 /proc/$hvn_wpid/stat 2>/dev/null)" = D ]'
check $? "a re-resolution waits on that lock (the devices= write sleeps)"
echo >$T/trace
echo 1 >$T/events/hvnoise/watch/enable
wait_until 3 'grep -q " watch: " $T/trace'
rc=$?
[ $rc = 0 ] && [ "$(cat /sys/module/hvn_devhold/parameters/held)" = 1 ]
check $? "enabling hvnoise:watch re-emits the set while a re-resolution waits on a device"
wait $hvn_wpid
check $? "the devices= write completes once the lock is free"
# The periodic re-resolution (resolve_ms=100) waiting on the lock: emit=1
# answers at once.  (Not behind a parameter write: the kernel serialises
# a module's parameter reads and writes.)
echo "$BLK 15000" >/sys/module/hvn_devhold/parameters/hold &&
	wait_until 5 '[ "$(cat /sys/module/hvn_devhold/parameters/held)" = 1 ]'
check $? "the lock held again"
wait_until 5 'grep -l hvn_poll_fn /proc/[0-9]*/stack 2>/dev/null | grep -q .'
check $? "the periodic re-resolution sleeps, the lock held (its kworker's stack)"
echo >$T/trace
echo 1 >$P/emit
[ "$(grep -c ' watch: ' $T/trace)" -gt 0 ] && [ "$(cat /sys/module/hvn_devhold/parameters/held)" = 1 ]
check $? "... and emit=1 re-emits the set meanwhile, at once"
rmmod hvn_devhold

# --- Runtime writes --------------------------------------------------------
expect_write_rejected cpus 0-999 "out of range"
expect_write_rejected cpus "" "empty cpulist"
expect_write_rejected devices $NOSUCH "no such PCI device"
expect_write_rejected devices $HOSTBRIDGE "has no IRQs"
expect_write_rejected devices "0000:00:04" "not a PCI address"
expect_write_rejected local_cpus 2 "not a boolean"
expect_write_rejected resolve_ms 99999999 "rejected"
# Numbers are decimal: a leading zero is not octal, 0x is no number.
for p in resolve_ms storm_window_ms; do
	before=$(cat $P/$p)
	echo 0100 >$P/$p && [ "$(cat $P/$p)" = 100 ]
	check $? "$p=0100 is 100 (decimal, not octal 64)"
	echo "$before" >$P/$p
done
expect_write_rejected storm_window_ms 0x64 "want 1..10000"

# Each tunable (include/hvnoise/tunables.h, listed by scripts/tunables.py
# into /lib/hvnoise/tunables): the module's parameter and the BPF source's
# --param refuse the values just outside its range with the same range.
while read -r n lo hi def z; do
	bad="$((hi + 1))"
	[ "$lo" -gt 1 ] && bad="$bad $((lo - 1))"
	[ "$z" = 0 ] && bad="$bad 0"
	for v in $bad; do
		dmesg -c >>/tmp/dmesg.all
		echo "$v" >"$P/$n" 2>/dev/null && { check 1 "tunable $n=$v refused by the module"; continue; }
		mod=$(dmesg | sed -n "s/.*hvnoise: $n=$v rejected: \(want [^;]*\).*/\1/p" | head -n 1)
		bpf=$(hvnoise record --source bpf --param "$n=$v" -o /tmp/tun.dat 2>&1 |
			sed -n "s/.*--param $n=$v: \(want .*\)/\1/p" | head -n 1)
		[ -n "$mod" ] && [ "$mod" = "$bpf" ]
		check $? "tunable $n=$v: the module and BPF refuse it alike (module: $mod; BPF: $bpf)"
	done
done </lib/hvnoise/tunables
[ "$(grep -c . /lib/hvnoise/tunables)" -gt 0 ]
check $? "the tunables' list came with the image ($(grep -c . /lib/hvnoise/tunables))"

g=$(watch_gen)
echo 2-3 >$P/cpus
check $? "write cpus=2-3 accepted"
wait_until 3 '[ "$(watch_gen)" -gt "$g" ]'
check $? "cpus write emits a new watch generation"
[ "$(trace_cpus_why listed | tr '\n' ' ')" = "2 3 " ]
check $? "new generation lists CPUs 2-3"

echo none >$P/cpus && echo $NIC >$P/devices
check $? "write cpus=none devices=$NIC accepted"
want=$(proc_pairs $NIC | cut -d: -f2 | sort -nu | tr '\n' ' ')
got=$(expand_cpulist "$(cat $P/watched)" | tr '\n' ' ')
[ "$want" = "$got" ]
check $? "watched is the NIC's IRQ CPUs only ($got)"

echo 1 >$P/local_cpus
online=$(expand_cpulist "$(cat /sys/devices/system/cpu/online)" | tr '\n' ' ')
got=$(expand_cpulist "$(cat $P/watched)" | tr '\n' ' ')
[ "$got" = "$online" ] && trace_cpus_why numa | grep -q .
check $? "local_cpus=1 adds the NIC's NUMA-local CPUs, why=numa ($got)"
echo 0 >$P/local_cpus

# IRQ affinity change (what irqbalance does): x86 moves an MSI at its next
# interrupt, so make the NIC receive (broadcasts from its peer on the hub);
# the slow poll then sees the new effective CPU.
netdev() { ls /sys/bus/pci/devices/$1/virtio*/net/; }
nic=$(netdev $NIC)
peer=$(netdev $PEER)
ip link set "$nic" up && ip link set "$peer" up && ip addr add 10.99.0.2/24 dev "$peer"
check $? "NIC $nic and peer $peer up on the QEMU-internal hub"
irq=$(awk '/virtio0-input/ { sub(":", "", $1); print $1 }' /proc/interrupts)
[ -n "$irq" ] || irq=$(ls /sys/bus/pci/devices/$NIC/msi_irqs | sed -n 2p)
cur=$(cat /proc/irq/$irq/effective_affinity_list)
to=$(( (cur + 1) % $(grep -c ^processor /proc/cpuinfo) ))
# A set this small goes out whole on a change at the default 50 %: with
# 100, the move's few records go out as a delta.
echo 100 >$P/watch_delta_pct
echo $to >/proc/irq/$irq/smp_affinity_list
check $? "set IRQ $irq affinity from CPU $cur to $to"
arping -c 3 -w 3 -I "$peer" 10.99.0.1 >/dev/null 2>&1
wait_until 5 '[ "$(cat /proc/irq/$irq/effective_affinity_list)" = "$to" ]'
check $? "IRQ $irq now effective on CPU $to (after receive traffic)"
wait_until 5 'trace_pairs $NIC | grep -qx "$irq:$to"'
check $? "watch follows IRQ $irq to CPU $to without reload"
trace_pairs $NIC | grep -qx "$irq:$cur"
[ $? -ne 0 ]
check $? "watch no longer has IRQ $irq on CPU $cur"
is_watched $to
check $? "CPU $to is watched after the move"
g=$(grep " watch: " $T/trace | grep "irq cpu=$to why=[^ ]* .* irq=$irq " |
	sed -n 's/.* gen=\([0-9]*\) .*/\1/p' | tail -n 1)
grep " watch: " $T/trace | grep " gen=${g:-x} " >/tmp/delta.txt
cat /tmp/delta.txt
nd=$(grep -c "why=[^ ]*delta" /tmp/delta.txt)
if [ -n "$g" ] && [ $((g % 16)) = 0 ]; then
	[ "$nd" = 0 ]
	check $? "the move went out whole, as generation $g (a multiple of 16) must"
else
	[ -n "$g" ] && [ "$(grep -c . /tmp/delta.txt)" = "$nd" ] &&
		grep -q "irq cpu=$cur why=[^ ]*delta|gone .* irq=$irq " /tmp/delta.txt
	check $? "the move went out as a delta: IRQ $irq gone from CPU $cur, on CPU $to ($nd records, generation ${g:-?})"
fi
# What the deltas make is the set the module emits whole when asked (the
# poll off meanwhile: no newer generation between the two).
rms=$(cat $P/resolve_ms)
echo 0 >$P/resolve_ms
watch_recs >/tmp/applied.txt
echo 1 >$P/emit
whole=$(watch_recs)
echo "$rms" >$P/resolve_ms
[ -s /tmp/applied.txt ] && [ "$(cat /tmp/applied.txt)" = "$whole" ]
check $? "the set the records make equals generation ${g:-?} emitted whole ($(grep -c . /tmp/applied.txt) records)"
echo 50 >$P/watch_delta_pct

# CPU hotplug of a listed CPU.
echo 3 >$P/cpus
echo 0 >/sys/devices/system/cpu/cpu3/online
check $? "CPU 3 offline"
wait_until 5 '! is_watched 3'
check $? "offline CPU 3 leaves the watched set"
echo 1 >/sys/devices/system/cpu/cpu3/online
check $? "CPU 3 online"
wait_until 5 'is_watched 3'
check $? "CPU 3 back online is watched again"

# Driver unbind and rebind: IRQs go and come back, module stays loaded.
echo $NIC >/sys/bus/pci/devices/$NIC/driver/unbind
check $? "unbind the NIC's driver"
wait_until 5 '[ -z "$(trace_pairs $NIC)" ]' && watch_recs | awk -v d=$NIC '$1 == "device" && $4 == d && $6 == 0 { ok = 1 } END { exit !ok }'
check $? "watch shows the unbound NIC with no IRQs"
echo $NIC >/sys/bus/pci/drivers/virtio-pci/bind
check $? "rebind the NIC's driver"
wait_until 5 '[ "$(trace_pairs $NIC)" = "$(proc_pairs $NIC)" ]'
p=$(proc_pairs $NIC)
[ -n "$p" ] && [ "$(trace_pairs $NIC)" = "$p" ]
check $? "watch names the rebound NIC's new IRQs"

# --- trace-cmd inside the guest ---------------------------------------
echo 0 >$T/events/hvnoise/watch/enable
echo >$T/trace
echo $NIC,$BLK >$P/devices && echo 1 >$P/cpus
trace-cmd record -q -e hvnoise -o /tmp/hvnoise.dat sleep 8 >/tmp/tc-record.log 2>&1 &
tc=$!
# trace-cmd starts slowly under TCG: change the set once it is recording.
wait_until 6 '[ "$(cat $T/tracing_on)" = 1 ] && [ "$(cat $T/events/hvnoise/watch/enable)" = 1 ]'
sleep 1
echo 0-1 >$P/cpus
wait $tc
check $? "trace-cmd record -e hvnoise"
trace-cmd report -i /tmp/hvnoise.dat >/tmp/tc-report.txt 2>&1
check $? "trace-cmd report reads the recording"
! grep -q "FAILED TO PARSE" /tmp/tc-report.txt
check $? "trace-cmd report parses every hvnoise event"
grep -q "watch: .* cpu cpu=1 why=listed" /tmp/tc-report.txt && grep -q "watch: .* irq cpu=[0-9].* dev=$NIC node=-1 irq=[0-9]" /tmp/tc-report.txt
check $? "trace-cmd report decodes kind, why and dev fields"
grep -q "watch: .* cpu cpu=0 why=listed" /tmp/tc-report.txt
check $? "trace-cmd recording holds the runtime change (cpus=0-1)"
# The first records are the whole set, re-emitted when recording began.
first=$(grep -m1 " watch: " /tmp/tc-report.txt | sed -n 's/.* gen=\([0-9]*\) 1\/\([0-9]*\) .*/\1 \2/p')
[ -n "$first" ] && [ "$(grep -c " watch: .* gen=${first% *} " /tmp/tc-report.txt)" = "${first#* }" ]
check $? "trace-cmd recording begins with the whole set, re-emitted (gen, count: $first)"
grep watch: /tmp/tc-report.txt | head -5

# --- hvnoise report and status on trace-cmd's file and the live module -----
echo "trace-cmd's file: version $(dd if=/tmp/hvnoise.dat bs=1 skip=10 count=1 2>/dev/null), $(wc -c </tmp/hvnoise.dat) bytes"
hvnoise report /tmp/hvnoise.dat >/tmp/hr.txt 2>&1
check $? "hvnoise report reads trace-cmd record's file"
head -12 /tmp/hr.txt
hvnoise report --json /tmp/hvnoise.dat >/tmp/hr.json 2>/dev/null
n_tc=$(grep -c " watch: " /tmp/tc-report.txt)
n_hv=$(sed -n 's/.*"events":{"watch":\([0-9]*\),.*/\1/p' /tmp/hr.json)
[ "$n_tc" -gt 0 ] && [ "$n_tc" = "$n_hv" ]
check $? "hvnoise report counts the watch records trace-cmd report shows ($n_hv of $n_tc)"
grep -Eq '"kind":"cpu","cpu":1,"why":(1|3|5|7),' /tmp/hr.json &&
	grep -Eq '"kind":"cpu","cpu":0,"why":(1|3|5|7),' /tmp/hr.json
check $? "hvnoise report holds the newest watched set (CPUs 0-1 listed)"
hvnoise status >/tmp/hs.txt 2>&1
check $? "hvnoise status exits 0 with the module loaded"
cat /tmp/hs.txt
grep -q "^watched    CPUs $(cat $P/watched)\$" /tmp/hs.txt && grep -q "hvnoise:irq_migrate" /tmp/hs.txt &&
	grep -q "storm_rate=" /tmp/hs.txt && grep -q "^runs on    CPUs " /tmp/hs.txt
check $? "hvnoise status shows the watched CPUs, the events, the parameters and where the tool runs"
# TCG offers no KVM steal-time MSR: every watched CPU reads kcpustat.
ss=$(cat $P/steal_source)
[ "$ss" = "kcpustat:$(cat $P/watched)" ] && grep -q "^source     module: .*(steal read through $ss)\$" /tmp/hs.txt
check $? "steal_source names kcpustat for every watched CPU, no steal-time MSR under TCG, and hvnoise status says so ($ss)"
hvnoise status --json >/tmp/hs.json 2>&1
rc=$?
cat /tmp/hs.json
w=$(cat $P/watched)
v=$(hvnoise version | cut -d' ' -f2)
[ $rc = 0 ] && grep -q "\"module\":{\"loaded\":true,\"version\":\"$v\"" /tmp/hs.json &&
	grep -q "\"watched\":\"$w\"" /tmp/hs.json && grep -q '"irq_migrate":true' /tmp/hs.json &&
	grep -q '"storm_rate":"' /tmp/hs.json && grep -q "\"steal_probe\":\"$ss\"" /tmp/hs.json
check $? "hvnoise status --json: the module (version $v, the tool's), the watched CPUs ($w), its events and parameters (exit $rc)"

# The module's parameters are global (the flight-recorder service depends on
# them): what record changes with --cpus, --devices and --param it puts back.
before="$(cat $P/cpus) $(cat $P/devices) $(cat $P/storm_rate)"
hvnoise record --cpus 1 --devices none --param storm_rate=777 -d 1 \
	-o /tmp/params.dat >/tmp/params.err 2>&1
after="$(cat $P/cpus) $(cat $P/devices) $(cat $P/storm_rate)"
[ "$after" = "$before" ] && hvnoise report --json /tmp/params.dat | grep -q '"kind":"cpu","cpu":1,'
check $? "record --cpus/--devices/--param puts the module's parameters back ($before, after: $after)"
# As rtla: the tool itself stays off the CPUs it watches.
n=$(nproc)
case $n in 2) want=0 ;; 3) want=0,2 ;; *) want=0,2-$((n - 1)) ;; esac
grep -q "runs on CPUs $want\$" /tmp/params.err
check $? "record --cpus 1 keeps itself off CPU 1 (want $want; $(grep -o 'runs on CPUs.*' /tmp/params.err))"
hvnoise top --cpus 1 --param storm_rate=778 -n 1 -I 0.2 </dev/null >/dev/null 2>&1
after="$(cat $P/cpus) $(cat $P/devices) $(cat $P/storm_rate)"
[ "$after" = "$before" ]
check $? "... and so does top ($after)"
hvnoise record --cpus 1 --devices $NOSUCH -d 1 -o /tmp/params2.dat >/dev/null 2>&1
rc=$?
after="$(cat $P/cpus) $(cat $P/devices) $(cat $P/storm_rate)"
[ $rc = 2 ] && [ "$after" = "$before" ]
check $? "... and a record whose --devices the module refused puts its --cpus back (exit $rc, $after)"

# --- hvnoise.ko unloaded and loaded again under a recording --------------------
# The kernel brings a module's events back disabled in every instance:
# record must enable them again, and the file must say when none could come.
hvnoise record -o /tmp/reload.dat 2>/tmp/reload.err &
rec=$!
wait_until 10 "grep -q 'hvnoise record: recording' /tmp/reload.err"
rmmod hvnoise
wait_until 5 "grep -q 'hvnoise.ko was unloaded' /tmp/reload.err"
insmod $KO devices=$NIC,$BLK cpus=1 resolve_ms=100
wait_until 5 "grep -q 'hvnoise.ko is loaded again' /tmp/reload.err"
kill -INT $rec
wait $rec
rc=$?
cat /tmp/reload.err
end=$(hvnoise report --json /tmp/reload.dat | sed -n 's/.*"module_gaps":{"count":1,"gaps":\[{"start_ns":[0-9]*,"end_ns":\([0-9]*\)}.*/\1/p')
# The watched set the module emits when record enables it again.
n=$(trace-cmd report --nodate -i /tmp/reload.dat 2>/dev/null | awk -v end="${end:-0}" '/ watch: / {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/) {
			if (substr($i, 1, length($i) - 1) * 1e9 > end) n++
			break
		}
} END { print n + 0 }')
[ $rc = 0 ] && [ -n "$end" ] && [ "$n" -gt 0 ] && hvnoise report /tmp/reload.dat | grep -q "GAP: hvnoise.ko was not loaded"
check $? "record under rmmod and insmod: its events enabled again ($n watch records after the gap), the gap in the file (report: GAP)"

# --- Nothing for non-root, no kernel pointers ---------------------------------
bad=$(for f in $P/*; do
	m=$(stat -c %a "$f")
	case $m in 400|600|200) ;; *) echo "$(basename "$f")=$m" ;; esac
done)
[ -z "$bad" ]
check $? "module parameters are root-only (${bad:-each 0400, 0600 or 0200})"
! grep -h "print fmt" $T/events/hvnoise/*/format | grep -q "%p"
check $? "no hvnoise event prints a pointer"
! dmesg | grep -i hvnoise | grep -Eq "ffff[0-9a-f]{12}"
check $? "no kernel address in hvnoise's kernel log lines"

# --- Unload while tracing, and load/unload cycles -------------------------
echo 1 >$T/events/hvnoise/enable
cat $T/trace_pipe >/dev/null &
reader=$!
rmmod hvnoise
check $? "rmmod while the events are enabled and read"
[ ! -d /sys/module/hvnoise ] && [ ! -d $T/events/hvnoise ]
check $? "rmmod leaves no module or event directories"
kill $reader 2>/dev/null
cycles=0
i=0
while [ $i -lt 10 ]; do
	insmod $KO devices=$NIC,$BLK cpus=0-1 resolve_ms=10 || break
	echo 1 >$T/events/hvnoise/watch/enable
	echo 2 >$P/cpus
	rmmod hvnoise || break
	cycles=$((cycles + 1))
	i=$((i + 1))
done
[ $cycles = 10 ]
check $? "10 load/enable/write/unload cycles ($cycles)"

dmesg >>/tmp/dmesg.all
if grep -E "WARNING:|BUG:|Oops|Call Trace|general protection" /tmp/dmesg.all >/dev/null; then
	grep -E -A8 "WARNING:|BUG:|Oops|Call Trace|general protection" /tmp/dmesg.all
	check 1 "dmesg holds no WARNING/BUG/Oops"
else
	check 0 "dmesg holds no WARNING/BUG/Oops"
fi
