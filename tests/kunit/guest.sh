#!/bin/sh
# Runs inside the 6.12 test kernel: load the KUnit module and print each
# hvnoise suite's KTAP from debugfs between markers for tests/kunit/ktap.py.
# Then load hvnoise.ko as built for this kernel, to prove it loads on 6.12.
check() {
	if [ "$1" = 0 ]; then echo "PASS: kunit-vm/$2"; else echo "FAIL: kunit-vm/$2"; fi
}

insmod /lib/hvnoise/hvnoise_kunit.ko
check $? "hvnoise_kunit.ko loads"
for d in /sys/kernel/debug/kunit/hvnoise_*; do
	[ -r "$d/results" ] || continue
	echo "KTAP-BEGIN ${d##*/}"
	cat "$d/results"
	echo "KTAP-END ${d##*/}"
done

insmod /lib/hvnoise/hvnoise.ko devices=0000:00:04.0 cpus=0
check $? "hvnoise.ko loads on 6.12 with devices=0000:00:04.0"
w=$(cat /sys/module/hvnoise/parameters/watched 2>/dev/null)
[ -n "$w" ] && [ "$w" != none ]
check $? "hvnoise.ko watches CPUs on 6.12 ($w)"
rmmod hvnoise
check $? "hvnoise.ko unloads on 6.12"
if dmesg | grep -E "WARNING:|BUG:|Oops|Call Trace" >/dev/null; then
	dmesg | grep -E -A5 "WARNING:|BUG:|Oops|Call Trace"
	check 1 "dmesg clean on 6.12"
else
	check 0 "dmesg clean on 6.12"
fi
