#!/bin/bash
# The BPF source on this host, live (a KVM guest with BTF and no module
# support): hvnoise record --source bpf under a real disk IRQ load and a CPU
# hog, checked against /proc/interrupts and /proc/stat, read back by both
# hvnoise report and trace-cmd; then the errors a host without BTF, without
# permission or with bad tunables gets.
#
# usage: bpf.sh HVNOISE OUTDIR
# Prints KTAP (tests/host/hvntest.sh), one result per check.
set -uo pipefail

hvn=$1
d=$2
mkdir -p "$d"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/hvntest.sh"
export LSAN_OPTIONS=$HVN_LSAN_OPTIONS

pass() { ktap_check 0 "bpf/$1"; }
fail() { ktap_check 1 "bpf/$1"; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

if ! "$hvn" status >"$d/status" 2>&1 || ! grep -q "^source     bpf" "$d/status"; then
	cat "$d/status"
	fail "this host can run the BPF source (see status above)"
	exit 0
fi
pass "status names the BPF source and why: $(sed -n 's/^source     //p' "$d/status")"

# The disk IRQ and the CPU it goes to: the device under test.
irq=$(awk '/virtio[0-9]*-req/ { sub(":", "", $1); print $1; exit }' /proc/interrupts)
dev=""
for p in /sys/bus/pci/devices/*; do
	[ -e "$p/msi_irqs/$irq" ] && dev=$(basename "$p")
done
cpu=$(cut -d, -f1 /proc/irq/"$irq"/effective_affinity_list | cut -d- -f1)
echo "  disk IRQ $irq of $dev on CPU $cpu"

dd if=/dev/zero of="$d/direct.bin" bs=1M count=8 2>/dev/null
irqs_on() { awk -v i="$irq:" -v c=$((cpu + 2)) '$1 == i { print $c }' /proc/interrupts; }
steal_of() { awk -v c="cpu$cpu" '$1 == c { print $9 }' /proc/stat; }

# --- a recording under load ------------------------------------------------
i0=$(irqs_on)
s0=$(steal_of)
"$hvn" record --source bpf --devices "$dev" --param storm_rate=1000 \
	--param storm_all_rate=4000 --param lost_threshold_us=10 \
	--param steal_threshold_us=1 -o "$d/bpf.dat" -d 4 2>"$d/record.err" &
rec=$!
sleep 0.8
taskset -c "$cpu" timeout 2.5 sh -c 'while :; do :; done' &
for _ in 1 2 3 4 5; do
	dd if="$d/direct.bin" of=/dev/null bs=4k count=2048 iflag=direct 2>/dev/null
done
wait $rec
rc=$?
i1=$(irqs_on)
s1=$(steal_of)
check "record --source bpf --devices $dev under disk load and a CPU hog (exit $rc)" \
	test $rc -eq 0 -a -s "$d/bpf.dat"
cat "$d/record.err" | grep -v "^hvnoise record: \(recording\|wrote\)" | head -5

"$hvn" report --json "$d/bpf.dat" >"$d/bpf.json" 2>"$d/report.err"
trace-cmd report "$d/bpf.dat" >"$d/tc.txt" 2>"$d/tc.err"
check "trace-cmd report decodes the BPF source's file" \
	sh -c "! grep -q 'FAILED TO PARSE\|failed to read' '$d/tc.txt' '$d/tc.err' && grep -q 'irq_storm:' '$d/tc.txt'"

PYTHONPATH=$here python3 - "$d/bpf.json" "$d/tc.txt" "$irq" "$cpu" "$dev" "$((i1 - i0))" \
	"$(( (s1 - s0) * 1000000000 / $(getconf CLK_TCK) ))" <<'EOF'
import json, re, sys
import hvntest
rep = json.load(open(sys.argv[1]))["reports"][0]
tc = open(sys.argv[2]).read().splitlines()
irq, cpu, dev = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
delta_irqs, delta_steal = int(sys.argv[6]), int(sys.argv[7])

def ok(name, cond, detail=""):
    hvntest.result(bool(cond), "bpf/" + name + (f" ({detail})" if detail else ""))

def events(name):
    out = []
    for l in tc:
        m = re.search(r"\s%s:\s+(.*)" % name, l)
        if m:
            out.append(dict(kv.split("=", 1) for kv in m.group(1).split() if "=" in kv))
    return out

ok("the file says source bpf", rep["source"] == "bpf", rep["source"])
w = rep["watched"]
ok("the watched set is the device's IRQ CPU, as the module resolves it",
   any(x["kind"] == "cpu" and x["cpu"] == cpu and x["why"] & 2 for x in w)
   and any(x["kind"] == "device" and x["dev"] == dev for x in w)
   and any(x["kind"] == "irq" and x["irq"] == irq for x in w),
   f"{len(w)} watch records")
counts = rep["events"]
for ev in ("watch", "steal", "lost", "irq_storm_begin", "irq_storm", "irq_migrate"):
    n = len(events(ev))
    ok(f"{ev}: hvnoise report and trace-cmd count the same", counts[ev] == n, f"{counts[ev]} = {n}")
storms = [e for e in events("irq_storm") if int(e["irq"]) == irq and e["source"] == "irq"]
got = sum(int(e["count"]) for e in storms)
# Every storm IRQ is a real interrupt; the few outside the hot windows
# (the load's first and last) are not in a storm.
ok("storm IRQs of the disk within /proc/interrupts' count on its CPU",
   storms and 0.9 * delta_irqs <= got <= delta_irqs,
   f"{got} in {len(storms)} storm(s), /proc/interrupts +{delta_irqs}")
ok("each storm that began ended", counts["irq_storm_begin"] == counts["irq_storm"],
   f"{counts['irq_storm_begin']} begun, {counts['irq_storm']} ended")
lost = events("lost")
bad = [e for e in lost if int(e["duration"]) != int(e["irq_ns"]) + int(e["steal_ns"]) + int(e["unexplained_ns"])
       or int(e["cpu"]) != cpu]
ok("lost time is measured live (10 us threshold) and every record adds up",
   lost and not bad, f"{len(lost)} records, {len(bad)} inconsistent")
se = events("steal")
over = [e for e in se if int(e["duration"]) > int(e["window"]) + 10**9 // 100]
ok("no steal event reports more than its window (within a tick)", not over,
   f"{len(se)} events, {len(over)} over")
steal = sum(int(e["duration"]) for e in se)
# Tick-granular on both sides: allow two ticks.
tick = 2 * 10**9 // 100
ok("steal events add up to /proc/stat's steal of the CPU",
   abs(steal - delta_steal) <= tick, f"{steal / 1e6:.1f} ms vs {delta_steal / 1e6:.1f} ms")
EOF

# --- auto choice, top, recovery -----------------------------------------------
"$hvn" record --cpus "$cpu" -o "$d/auto.dat" -d 1 2>/dev/null
check "without --source and without the module, record picks BPF" \
	sh -c "'$hvn' report --json '$d/auto.dat' | grep -q '\"source\":\"bpf\"'"
# A host of 384 possible CPUs ran out of the default 1,024 open files (the
# pieces, buffers and timers of each CPU): record raises the soft limit,
# here from 16 (the collector alone takes more).
(ulimit -Sn 16 && "$hvn" record --source bpf --cpus "$cpu" -o "$d/nofile.dat" -d 1) \
	>"$d/nofile.err" 2>&1
check "record raises a soft limit of 16 open files to what its CPUs take" \
	sh -c "'$hvn' report '$d/nofile.dat' >/dev/null && ! grep -q 'open files' '$d/nofile.err'"
# Off the watched CPUs (as rtla): record runs on the others, its command
# where it would have run.  The command reads both from /proc.
if [ "$(nproc)" -gt 1 ]; then
	all=$(sed -n 's/^Cpus_allowed_list:\t*//p' /proc/self/status)
	others=$(python3 -c "import os; print(','.join(str(c) for c in sorted(os.sched_getaffinity(0)) if c != $cpu))")
	"$hvn" record --source bpf --cpus "$cpu" -o "$d/pin.dat" -- sh -c \
		"sed -n 's/^Cpus_allowed_list:\t*//p' /proc/\$PPID/status /proc/self/status >'$d/pin.txt'" \
		2>"$d/pin.err"
	want=$(python3 -c "import os; c = sorted(os.sched_getaffinity(0)); c.remove($cpu); print(c)")
	got=$(python3 -c "import sys; s = open('$d/pin.txt').read().split(); from itertools import chain
def cpus(l): return sorted(chain.from_iterable(range(int(a.split('-')[0]), int(a.split('-')[-1]) + 1) for a in l.split(',')))
print(cpus(s[0]), cpus(s[1]) == cpus('$all'))")
	check "record keeps off the watched CPU $cpu: it runs on $want, its command where it would have ($got)" \
		sh -c "[ '$got' = '$want True' ] && grep -q 'runs on CPUs' '$d/pin.err'"
	"$hvn" record --source bpf --cpus "$cpu" --housekeeping all -o "$d/pin.dat" -- sh -c \
		"sed -n 's/^Cpus_allowed_list:\t*//p' /proc/\$PPID/status >'$d/pin-all.txt'" 2>/dev/null
	check "--housekeeping all leaves record unpinned ($(cat "$d/pin-all.txt"))" \
		sh -c "[ '$(cat "$d/pin-all.txt" 2>/dev/null)' = '$all' ]"
else
	ktap_skip "bpf/record keeps off the watched CPU" "one CPU: nowhere else to run"
	ktap_skip "bpf/--housekeeping all leaves record unpinned" "one CPU"
fi
"$hvn" top --source bpf --cpus "$cpu" -n 2 -I 0.5 </dev/null >"$d/top.txt" 2>&1
check "top --source bpf says so and draws the watched CPU" sh -c "grep -q 'BPF source' '$d/top.txt' && grep -q '^ *$cpu\\*' '$d/top.txt'"

"$hvn" record --source bpf --cpus "$cpu" --param storm_rate=1000 -o "$d/killed.dat" &
rec=$!
sleep 1
for _ in 1 2; do
	dd if="$d/direct.bin" of=/dev/null bs=4k count=2048 iflag=direct 2>/dev/null
done
sleep 1.5
kill -KILL $rec
wait $rec 2>/dev/null
for i in /sys/kernel/tracing/instances/hvnoise-record-$rec; do
	[ -d "$i" ] && rmdir "$i"
done
"$hvn" record --recover -o "$d/killed.dat" 2>"$d/recover.err"
check "a killed BPF recording is recovered with its hvnoise formats" \
	sh -c "'$hvn' report --json '$d/killed.dat' | python3 -c 'import json,sys; e=json.load(sys.stdin)[\"reports\"][0][\"events\"]; sys.exit(not e[\"watch\"])'"

# --- a big host's collector: the verifier walks the steal sampler's loop once
# per possible CPU, so it is loaded here as for the most the tool handles.
t0=$(date +%s%N)
HVNOISE_BPF_LOAD_CPUS=1024 "$hvn" record --source bpf -o "$d/big.dat" -d 1 >"$d/big.out" 2>&1
rc=$?
t1=$(date +%s%N)
if [ $rc -eq 0 ] && "$hvn" report "$d/big.dat" >/dev/null 2>&1; then
	pass "the collector loads and records as for a 1024-CPU host, the most it takes ($(( (t1 - t0) / 1000000 )) ms with verification)"
else
	fail "the collector loads and records as for a 1024-CPU host, the most it takes (exit $rc)"
	cat "$d/big.out"
fi

# --- what a host that cannot run it gets ---------------------------------------
check_err() {
	local name=$1 want_rc=$2 want=$3
	shift 3
	"$@" >"$d/err.out" 2>&1
	local rc=$?
	if [ $rc -eq "$want_rc" ] && grep -q -- "$want" "$d/err.out" &&
	   [ "$(grep -c . "$d/err.out")" -le 2 ]; then
		pass "$name (exit $rc: $(head -1 "$d/err.out"))"
	else
		fail "$name (exit $rc)"
		cat "$d/err.out"
	fi
}
check_err "no BTF: the error names the missing file" 1 "HVNOISE_BTF=/nonexistent" \
	env HVNOISE_BTF=/nonexistent "$hvn" record --source bpf -o "$d/x.dat" -d 1
check_err "no permission: the error says root is needed" 1 "root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$hvn" record --source bpf -o /tmp/hvnoise-nobody.dat -d 1
check_err "a tunable out of range is named" 2 "storm_rate=0" \
	"$hvn" record --source bpf --param storm_rate=0 -o "$d/x.dat" -d 1
check_err "an unknown tunable is named" 2 "bogus=1" \
	"$hvn" record --source bpf --param bogus=1 -o "$d/x.dat" -d 1
check_err "an unknown source is named" 2 "source nope" \
	"$hvn" record --source nope -o "$d/x.dat" -d 1
check_err "--source module without the module" 4 "not loaded" \
	"$hvn" record --source module -o "$d/x.dat" -d 1
left=$( (ls /sys/kernel/tracing/instances | grep 'hvnoise-record-'; ls "$d" | grep hvnoise-tmp) | tr '\n' ' ')
check "no instance or temporary file is left behind${left:+ (left: $left)}" test -z "$left"
exit 0
