# Shared by the guest scripts of the VM tests (busybox sh); sourced from
# /lib/hvnoise/lib.sh (mkinitramfs.sh --guest puts it there beside the
# guest's script).  Set STAGE (the prefix
# of the check names: vm, vm-detect, ...) before sourcing it.

# The module, its parameters, tracefs, and the devices tests/vm/qemu.sh gives
# every VM at fixed PCI addresses: the NIC and the disk.
# shellcheck disable=SC2034
KO=/lib/hvnoise/hvnoise.ko
P=/sys/module/hvnoise/parameters
T=/sys/kernel/tracing
NIC=0000:00:04.0
BLK=0000:00:05.0

# --- KTAP ----------------------------------------------------------------------
# check STATUS NAME: "ok N STAGE/NAME" if STATUS is 0, else "not ok N STAGE/NAME";
# skip NAME REASON: "ok N STAGE/NAME # SKIP REASON" (cannot run here);
# xfail NAME REASON: "ok N STAGE/NAME # XFAIL REASON" (a failure let through).
# The number is kept in a file, so a check in a subshell counts too;
# "KTAP version 1" comes before the first result, the plan at the end.  The
# host (tests/check.sh) takes the result lines from the console and numbers
# them again in its own report.
HVN_KTAP=/tmp/.hvn-ktap
rm -f $HVN_KTAP
hvn_ktap() {	# hvn_ktap ok|"not ok" NAME [DIRECTIVE]
	if [ -f $HVN_KTAP ]; then
		hvn_ktap_n=$(($(cat $HVN_KTAP) + 1))
	else
		hvn_ktap_n=1
		echo "KTAP version 1"
	fi
	echo $hvn_ktap_n >$HVN_KTAP
	echo "$1 $hvn_ktap_n ${STAGE:-guest}/$2${3:+ # $3}"
}
check() {
	if [ "$1" = 0 ]; then hvn_ktap ok "$2"; else hvn_ktap "not ok" "$2"; fi
}
skip() { hvn_ktap ok "$1" "SKIP $2"; }
xfail() { hvn_ktap ok "$1" "XFAIL $2"; }
ktap_done() {
	[ -f $HVN_KTAP ] && echo "1..$(cat $HVN_KTAP)"
	rm -f $HVN_KTAP
}
trap ktap_done EXIT

# --- the system ------------------------------------------------------------------
irq_of() {	# the IRQ whose /proc/interrupts name is $1
	awk -v name="$1" '$NF == name { sub(":", "", $1); print $1 }' /proc/interrupts
}

# wait_until SECONDS CONDITION: poll (0.2 s steps, up to SECONDS) until the
# shell condition holds; its status is the condition's, checked once more
# at the end.
wait_until() {	# its counter is its own: CONDITION may set any other name
	hvn_wu_n=$(($1 * 5))
	while [ $hvn_wu_n -gt 0 ]; do
		eval "$2" && return 0
		usleep 200000
		hvn_wu_n=$((hvn_wu_n - 1))
	done
	eval "$2"
}

# wait_file SECONDS GLOB: until a file matches GLOB, polling every 0.2 s, up
# to SECONDS (no status: the caller looks for the file).
wait_file() {
	n=$(($1 * 5))
	while [ $n -gt 0 ] && [ -z "$(ls $2 2>/dev/null)" ]; do
		sleep 0.2
		n=$((n - 1))
	done
}

# The CPUs' busy and total jiffies so far.
busy() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i
		print t - $5 - $6, t }' /proc/stat
}

# --- the watched set -------------------------------------------------------------
# The CPUs a big guest's maxcpus= left offline, brought up (single-threaded
# TCG brings each up slower the more are online while the kernel boots),
# as a hotplugged host's would; says when, and a SCALE line.
online_all() {
	[ "$(cat /sys/devices/system/cpu/online)" = "$(cat /sys/devices/system/cpu/present)" ] && return
	_t0=$(cut -d' ' -f1 /proc/uptime)
	_n=0
	for _c in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat $_c)" = 1 ] && continue
		echo 1 >$_c
		_n=$((_n + 1))
		[ $((_n % 32)) = 0 ] && echo "guest: $_n more CPUs online at $(cut -d' ' -f1 /proc/uptime) s"
	done
	echo "SCALE online cpus=$(grep -c ^processor /proc/cpuinfo) from=$_t0 to=$(cut -d' ' -f1 /proc/uptime) (s of uptime: the CPUs maxcpus= left offline, brought up)"
}

expand_cpulist() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do
		[ -n "$a" ] || continue
		seq "$a" "${b:-$a}"
	done
}

# The watched set the hvnoise:watch records in $T/trace (or in the report of
# a recording named by $hvn_trace) describe last, one record per line: KIND
# CPU WHY DEV IRQ NIRQS NAME.  The newest whole set seen complete, then each
# delta after it in generation order (a delta's records: why has "delta"; "gone" for
# what is no more), each whole, as Documentation/events.rst says a reader
# applies them.
watch_recs() {
	awk '/ watch: / {
		kind = ""; delete f
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\/[0-9]+$/) { kind = $(i + 1); split($i, of, "/") }
			n = index($i, "=")
			if (n > 1) f[substr($i, 1, n - 1)] = substr($i, n + 1)
		}
		g = f["gen"] + 0
		delta = ("|" f["why"] "|") ~ /[|]delta[|]/
		gone = ("|" f["why"] "|") ~ /[|]gone[|]/
		why = ""; nw = split(f["why"], w, "|")
		for (i = 1; i <= nw; i++)
			if (w[i] != "delta" && w[i] != "gone" && w[i] != "")
				why = why (why == "" ? "" : "|") w[i]
		f["why"] = why
		for (k in f) if (f[k] == "") f[k] = "-"
		key = kind == "cpu" ? kind " " f["cpu"] : kind == "device" ? kind " " f["dev"] : \
		      kind " " f["dev"] " " f["irq"] " " f["cpu"]
		line = kind " " f["cpu"] " " f["why"] " " f["dev"] " " \
		       f["irq"] " " f["nirqs"] " " f["name"]
		if (delta) {
			d[g] = d[g] (gone ? "-" : "+") key SUBSEP line "\n"
			nd[g]++; cnt[g] = of[2] + 0
		} else {
			wh[g] = wh[g] key SUBSEP line "\n"
			if (!((g, of[1] + 0) in seen)) { seen[g, of[1] + 0] = 1; nwh[g]++ }
			cntw[g] = of[2] + 0
			if (nwh[g] == cntw[g] && g > base) base = g
		}
		if (g > maxg) maxg = g
	}
	END {
		n = split(wh[base], r, "\n")
		for (i = 1; i <= n; i++)
			if (split(r[i], kv, SUBSEP) == 2) set[kv[1]] = kv[2]
		for (g = base + 1; g <= maxg && nd[g] && nd[g] == cnt[g]; g++) {
			n = split(d[g], r, "\n")
			for (i = 1; i <= n; i++) {
				if (split(substr(r[i], 2), kv, SUBSEP) != 2) continue
				if (substr(r[i], 1, 1) == "-") delete set[kv[1]]
				else set[kv[1]] = kv[2]
			}
		}
		for (k in set) print set[k]
	}' "${hvn_trace:-$T/trace}" | sort -u
}

watch_gen() {
	awk '/ watch: / { for (i = 1; i <= NF; i++) if ($i ~ /^gen=/) {
		g = substr($i, 5) + 0; if (g > m) m = g } } END { print m + 0 }' "$T/trace"
}

# "IRQ:CPU" pairs of device $1 as the kernel reports them.  One grep for
# all of its IRQs: a few processes each took minutes for 1,002 vectors on
# a guest of 384 vCPUs.
proc_pairs() {
	hvn_pp=$(ls "/sys/bus/pci/devices/$1/msi_irqs" 2>/dev/null | sed 's|$|/effective_affinity_list|')
	[ -n "$hvn_pp" ] || return 0
	# shellcheck disable=SC2086
	(cd /proc/irq && grep -H . $hvn_pp) | awk -F: '{
		split($1, p, "/"); n = split($2, r, ",")
		for (i = 1; i <= n; i++) {
			m = split(r[i], ab, "-"); b = m > 1 ? ab[2] : ab[1]
			for (c = ab[1] + 0; c <= b + 0; c++) print p[1] ":" c
		}
	}' | sort
}

trace_pairs() {
	watch_recs | awk -v d="$1" '$1 == "irq" && $4 == d { print $5 ":" $2 }' | sort
}

# pairs_as_proc DEV WHO: check that WHO's newest hvnoise:watch records (in
# $hvn_trace, as trace_pairs reads) name each vector of DEV on the CPU
# /proc has it on.
pairs_as_proc() {
	trace_pairs "$1" >/tmp/t.txt
	proc_pairs "$1" >/tmp/p.txt
	cmp -s /tmp/t.txt /tmp/p.txt
	check $? "$2 names each vector of $1 on its CPU, as /proc does ($(wc -l </tmp/t.txt) of $(wc -l </tmp/p.txt))"
	diff /tmp/p.txt /tmp/t.txt | head -5
}

# Watched CPUs with reason $1 (listed|irq|numa) in the newest generation.
trace_cpus_why() {
	watch_recs | awk -v w="$1" '$1 == "cpu" && ("|" $3 "|") ~ ("\\|" w "\\|") { print $2 }' | sort -n
}

# --- moves, storms, unload (the big and the arm64 guests) ----------------------------
# storms_begun FILE [FROM_NS [CPUS]]: (cpu, source, irq, name) of each storm
# begun in FILE (a tracefs trace or a trace-cmd report, which pads the event
# name), once each; only those whose windows start (start=) at FROM_NS or
# on, and not on the CPUs of the comma list CPUS.  (A name may hold spaces:
# "PCIe PME".)
storms_begun() {
	sed -n 's/.* irq_storm_begin: *\(cpu=\([0-9]*\) source=[a-z_0-9]* irq=-\{0,1\}[0-9]* name=.*\) start=\([0-9]*\) .*/\2 \3 \1/p' "$1" |
		awk -v from="${2:-0}" -v skip=",$3," 'index(skip, "," $1 ",") == 0 && $2 >= from { sub(/^[0-9]+ [0-9]+ /, ""); print }' | sort -u
}

# ipi_why_start CPUS: count, in the instance "why", every call-function-
# single IPI sent to a CPU not in CPUS (a list: 1,2,3) by target, sender
# and the sender's stack (a histogram: nothing overwritten).  Under a halt
# idle (TCG's qemu64) a task woken on another CPU costs that CPU such an
# IPI too, so they are how a quiet CPU storms.  ipi_why [CPU]: the counts
# (of CPU's), most first: "N cpu D from COMM: FRAMES" (the probe's own
# frames left out).  ipi_kicks CPU: of CPU's, "KICKS ALL", KICKS those
# a busy CPU's tick sent to kick the scheduler's idle load balancer
# (kick_ilb(): the tick's csd, which the stack shows as update_process_times
# under smp_call_function_single_async; the frames between are tail calls
# and inlined on Debian's 6.1, and may not be elsewhere).  ("dst": a
# filter's "cpu" is the CPU the probe runs on.)
ipi_why_start() {
	ipi_why_hist="hist:keys=dst,common_pid.execname,stacktrace:vals=hitcount:sort=hitcount.descending:size=8192 if $(echo "$1" |
		awk -F, '{ f = "dst != " $1; for (i = 2; i <= NF; i++) f = f " && dst != " $i; print f }')"
	ipi_why_e=$T/instances/why/events/kprobes/hvnwhy
	echo 'p:hvnwhy native_send_call_func_single_ipi dst=%di:s32' >>$T/kprobe_events &&
		mkdir $T/instances/why && echo 4 >$T/instances/why/buffer_size_kb &&
		echo "$ipi_why_hist" >$ipi_why_e/trigger &&
		echo 1 >$ipi_why_e/enable
}

ipi_why() {
	awk -v c="$1" '
		/^\{ dst:/ { d = $3; sub(/,/, "", d); w = $0; sub(/.*common_pid: */, "", w); sub(/ *\[.*/, "", w); k = ""; n = 0; next }
		/^\} hitcount:/ { if (c == "" || d == c) cnt["cpu " d " from " w ":" k] += $3; next }
		/^ +[^ ]+$/ { f = $1; sub(/\+.*/, "", f)
			if (f ~ /^(0x|kprobe_|native_send)/ || n >= 8) next
			k = k " " f; n++ }
		END { for (x in cnt) printf "%d %s\n", cnt[x], x }' $ipi_why_e/hist | sort -rn
}

ipi_kicks() {
	ipi_why "$1" | awk '{ a += $1 } / smp_call_function_single_async( [a-z_.0-9]+)* update_process_times( |$)/ { k += $1 }
		END { printf "%d %d\n", k, a }'
}

ipi_why_stop() {
	echo 0 >$ipi_why_e/enable
	echo "!$ipi_why_hist" >$ipi_why_e/trigger
	rmdir $T/instances/why
	echo '-:hvnwhy' >>$T/kprobe_events
}

# nic_move IRQ FROM TO STEP [HOW]: move the NIC's receive vector IRQ to CPU
# TO, with frames from its peer ($peer: a moved vector changes CPU at its
# next interrupt), and check that one irq_migrate FROM -> TO (and HOW) is
# seen.  A hvn-mark-move0 trace_marker record precedes the write (timing).
nic_move() {
	mv_irq=$1 mv_from=$2 mv_to=$3
	echo >$T/trace
	echo hvn-mark-move0 >$T/trace_marker
	echo $mv_to >/proc/irq/$mv_irq/smp_affinity_list
	/lib/hvnoise/rawsend "$peer" 200 1000 >/dev/null
	wait_until 10 'grep -q " irq_migrate: irq=$mv_irq " $T/trace'
	grep " irq_migrate: " $T/trace
	[ "$(grep -c " irq_migrate: " $T/trace)" = 1 ] &&
		grep -q " irq_migrate: irq=$mv_irq .*from_cpu=$mv_from to_cpu=$mv_to${5:+ how=$5}" $T/trace
	check $? "the NIC's receive vector moved $4, CPU $mv_from to $mv_to, is seen once${5:+, how=$5} (IRQ $mv_irq)"
}

# queue_storm Q READS: O_DIRECT reads on the CPU of the disk's queue Q until
# its IRQ storms, and check that the storm is named; sets irq and cpu.
queue_storm() {
	irq=$(irq_of virtio1-req.$1)
	cpu=$(cat /proc/irq/$irq/effective_affinity_list)
	echo >$T/trace
	taskset -c "$cpu" /lib/hvnoise/dread /dev/vda $2
	wait_until 5 'grep -q " irq_storm_begin: .*cpu=$cpu source=irq irq=$irq " $T/trace'
	grep " irq_storm\(_begin\)\{0,1\}: " $T/trace | head -4
	grep -q " irq_storm_begin: .*cpu=$cpu source=irq irq=$irq name=virtio1-req.$1 " $T/trace
	check $? "a storm of the disk's queue $1 (virtio1-req.$1) is named: IRQ $irq on CPU $cpu"
}

# unload_clean: rmmod, and a kernel log without warnings or allocation failures.
unload_clean() {
	rmmod hvnoise
	check $? "rmmod"
	dmesg | grep -E "WARNING|BUG|Oops|hvnoise: .*(no memory|cannot)" >/tmp/bad.txt
	[ ! -s /tmp/bad.txt ]
	check $? "dmesg holds no WARNING/BUG/Oops and no allocation failure"
	cat /tmp/bad.txt
}

# --- injections by the host --------------------------------------------------------
# inject_init [TTY]: open the host's answer channel (TTY, default ttyS1; the
# arm64 guest's is a PCI UART, ttyS0) once, before the first inject; the VMs
# of tests/vm/inject.py's host (detectors, soak, anchor, arm64) only.
#
# inject WHAT MS [SETTLE_MS]: ask the host (tests/vm/inject.py) for a pause
# of the whole VM or a hog of vCPU 1's host core, SETTLE_MS after it reads
# the request, and wait until it is done.  The
# request goes out on the console, the answer comes back on its TTY; the
# window waited in is printed for the host's judge.
hvn_seq=0
inject_init() {
	stty -F "${1:-/dev/ttyS1}" raw -echo 2>/dev/null
	exec 3<"${1:-/dev/ttyS1}"
}

inject() {
	hvn_seq=$((hvn_seq + 1))
	hvn_t0=$(cut -d' ' -f1 /proc/uptime)
	echo "HVN-DO $hvn_seq $1 $2 ${3:-0}"
	read -r hvn_ack <&3
	echo "HVN-WIN $hvn_seq $hvn_t0 $(cut -d' ' -f1 /proc/uptime) $hvn_ack"
}

# clock_anchor: two pauses of the whole VM before the quiet phases, their
# lost events printed (HVN-EVENTS anchor) for the host's line between its
# clock and the guest's (tests/vm/inject.py guest_clock): without them the
# quiet phases lay a minute before the nearest pause, and the line,
# extrapolated there, was 4 to 6 ms off in two of three runs, more than
# an event's placement allows.  On x86 first the refined TSC, which the
# guest's clock keeps from then on (tsc-early before it may run at another
# rate); arm64's generic timer has one rate from boot.
clock_anchor() {
	if [ "$(uname -m)" = x86_64 ]; then
		wait_until 60 '[ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" = tsc ]'
		check $? "the guest's clocksource is the refined TSC ($(cat /sys/devices/system/clocksource/clocksource0/current_clocksource))"
	fi
	hvn_a0=$(awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime)
	inject pause 30
	sleep 0.5
	inject pause 30
	sleep 0.5
	# The lost events since (trace and uptime share CLOCK_MONOTONIC) from
	# 10 ms: the pauses' (a low threshold's lateness would be thousands).
	echo "HVN-EVENTS anchor"
	grep " lost: " $T/trace | sed 's/.* lost: */LOST /' | awk -v t0="$hvn_a0" '{
		d = $0; sub(/.*duration=/, "", d); sub(/ .*/, "", d)
		s = $0; sub(/.*start=/, "", s); sub(/ .*/, "", s)
		if (s + 0 >= t0 + 0 && d + 0 >= 10000000) print }'
	echo "HVN-END-EVENTS"
}

# events_of TAG [FILE]: FILE's lost events (default the trace), for the
# host's judge (tests/vm/inject.py events()).
events_of() {
	echo "HVN-EVENTS $1"
	grep " lost: " "${2:-$T/trace}" | sed 's/.* lost: */LOST /'
	echo "HVN-END-EVENTS"
}

# nmis_of TAG: the NMI handlers of hvn_nmi.ko in the trace (nmi:nmi_handler,
# filtered on handled), as "NMI CPU END_US DELTA_NS", for the host's judge
# (tests/vm/inject.py nmis()).
nmis_of() {
	echo "HVN-NMI $1"
	sed -n 's/.*\[0*\([0-9][0-9]*\)\] [^ ]* *\([0-9]*\)\.\([0-9]*\): nmi_handler: hvn_nmi.* delta_ns: \([0-9]*\).*/NMI \1 \2\3 \4/p' $T/trace
	echo "HVN-END-NMI"
}

# start_recorder LOG SECONDS CMD ARGS...: CMD in the background (its pid in
# $bgpid), its output in LOG, waited up to SECONDS for its "recording"
# line; its status is the wait's.  An old LOG goes first: its line would
# let a SIGINT go before CMD can take it (a background job starts with
# SIGINT ignored).
start_recorder() {
	hvn_sr_log=$1 hvn_sr_secs=$2
	shift 2
	rm -f "$hvn_sr_log"
	"$@" >"$hvn_sr_log" 2>&1 &
	bgpid=$!
	wait_until "$hvn_sr_secs" "grep -q recording $hvn_sr_log"
}

# bpf_rec_start FILE ARGS...: hvnoise record --source bpf ARGS into FILE
# (its messages in FILE.log), checked to record (the verifier is slow
# under TCG); bpf_rec_stop: stopped, checked to have written FILE, which
# trace-cmd must read into FILE.txt.
bpf_rec_start() {
	bpf_file=$1
	shift
	start_recorder $bpf_file.log 120 hvnoise record --source bpf "$@" -o $bpf_file
	hvn_rc=$?
	bpfpid=$bgpid
	[ $hvn_rc = 0 ] || cat $bpf_file.log
	check $hvn_rc "hvnoise record --source bpf starts ($bpf_file)"
}
bpf_rec_stop() {
	kill -INT $bpfpid
	wait $bpfpid
	check $? "hvnoise record --source bpf wrote $bpf_file"
	cat $bpf_file.log
	trace-cmd report -i $bpf_file >$bpf_file.txt 2>&1
	check $? "trace-cmd reads $bpf_file"
}

# quiet_phases SECS TEST_US: the guest's TCG baseline (lateness from 2 ms at
# a 200 us threshold) and the quiet guest at TEST_US, SECS seconds each,
# printed for the host's judge (tests/vm/inject.py quiet()); the module
# loaded and its events on.  Leaves the threshold at TEST_US.
quiet_phases() {
	echo 200 >$P/lost_threshold_us
	echo >$T/trace
	hvn_q0=$(cut -d' ' -f1 /proc/uptime)
	sleep "$1"
	echo "HVN-SPAN baseline $hvn_q0 $(cut -d' ' -f1 /proc/uptime)"
	echo "BASELINE events from 200 us: $(grep -c ' lost: ' $T/trace) in $1 s"
	echo "HVN-EVENTS baseline"
	grep " lost: " $T/trace | sed 's/.* lost: */LOST /' |
		awk '{ d = $0; sub(/.*duration=/, "", d); sub(/ .*/, "", d); if (d + 0 >= 2000000) print }'
	echo "HVN-END-EVENTS"
	echo "$2" >$P/lost_threshold_us
	echo >$T/trace
	hvn_q0=$(cut -d' ' -f1 /proc/uptime)
	sleep "$1"
	echo "HVN-SPAN quiet $hvn_q0 $(cut -d' ' -f1 /proc/uptime)"
	echo "QUIET lost_events=$(grep -c ' lost: ' $T/trace) (threshold $2 us, $1 s)"
	events_of quiet
}

# schedule NAME: $rounds rounds of pauses ($PAUSES ms) and hogs ($HOGS ms),
# then the CPU share NAME's phase kept busy (HVN-CPU).
schedule() {
	set -- "$1" $(busy)
	for _ in $(seq 1 "$rounds"); do
		for ms in $PAUSES; do
			inject pause "$ms"
			sleep 0.3
		done
		for ms in $HOGS; do
			inject hog "$ms"
			sleep 0.3
		done
	done
	set -- "$@" $(busy)
	echo "HVN-CPU $1 busy $(( (($4 - $2) * 1000) / ($5 - $3) )) permille of $(grep -c ^processor /proc/cpuinfo) CPUs"
}
