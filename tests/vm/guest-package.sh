#!/bin/sh
# Inside the 6.1 guest: the module DKMS built when hvnoise-dkms was
# installed (tests/install/package.sh), with the hvnoise command of the
# hvnoise package, as a host that installed both packages runs them.
STAGE=package-vm
. /lib/hvnoise/lib.sh

want=$(cat /lib/hvnoise/version)
insmod $KO devices=$NIC,$BLK cpus=0-1
check $? "insmod the DKMS-built hvnoise.ko (devices=$NIC,$BLK cpus=0-1)"
[ "$(cat /sys/module/hvnoise/version 2>/dev/null)" = "$want" ] &&
	[ "$(cat $P/watched)" = 0-1 ] && [ -d $T/events/hvnoise/irq_migrate ]
check $? "it is hvnoise $want ($(cat /sys/module/hvnoise/version 2>/dev/null)), watches CPUs $(cat $P/watched), its events are in tracefs"
v=$(hvnoise version)
hvnoise status --json >/tmp/st.json 2>&1
rc=$?
[ "$v" = "hvnoise $want" ] && [ $rc = 0 ] &&
	grep -q "\"module\":{\"loaded\":true,\"version\":\"$want\"" /tmp/st.json
check $? "the packaged hvnoise ($v) finds the module loaded, version $want (exit $rc)"
hvnoise record -d 1 -o /tmp/p.dat >/tmp/rec.err 2>&1
rc=$?
hvnoise report --json /tmp/p.dat >/tmp/p.json 2>/tmp/rep.err
[ $rc = 0 ] && grep -Eq '"kind":"cpu","cpu":1,' /tmp/p.json
check $? "hvnoise record and report through the DKMS-built module (exit $rc)" ||
	cat /tmp/rec.err /tmp/rep.err
rmmod hvnoise
check $? "rmmod hvnoise"
if dmesg | grep -E "WARNING:|BUG:|Oops|Call Trace" >/dev/null; then
	dmesg | grep -E -A8 "WARNING:|BUG:|Oops|Call Trace"
	check 1 "dmesg holds no WARNING/BUG/Oops"
else
	check 0 "dmesg holds no WARNING/BUG/Oops"
fi
