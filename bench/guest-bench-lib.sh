# Shared by the benchmarks' guest scripts (busybox sh): what the host needs
# to attribute bench/insn-plugin.c's counts (bench/insn-table.py), and the
# reader started the same way for every configuration.  Set KO and reader
# (the CPU the reader runs on) before using them.

module_sections() {	# "SECTION NAME ADDRESS" of hvnoise.ko's text
	for s in /sys/module/hvnoise/sections/.text* /sys/module/hvnoise/sections/.noinstr.text; do
		[ -f "$s" ] && echo "SECTION $(basename "$s") $(cat "$s")"
	done
}

bpf_progs() {	# "BPFPROG ADDRESS SIZE NAME" of each loaded program
	# bpftool can fail while an earlier reader's programs are freed: then
	# no size is known and the host would count nothing as BPF's.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		bpftool prog show -j >/tmp/progs.json 2>/dev/null &&
			grep -q bytes_jited /tmp/progs.json && break
		sleep 0.2
	done
	grep " bpf_prog_" /proc/kallsyms | while read -r addr _ sym _; do
		tag=$(echo "$sym" | sed -n 's/^bpf_prog_\([0-9a-f]*\)_.*/\1/p')
		size=$(tr '{' '\n' </tmp/progs.json | grep "\"tag\":\"$tag\"" |
			sed -n 's/.*"bytes_jited":\([0-9]*\).*/\1/p' | head -n 1)
		echo "BPFPROG $addr ${size:-0} $sym"
	done
}

# record ARGS...: hvnoise record on the reader's CPU, returning once it
# records; stop_reader: Ctrl-C it (or trace-cmd) and wait.
readerpid=""
record() {
	# No old log: its "recording" would start the measurement, and the
	# SIGINT of stop_reader, before this recorder can take it.
	rm -f /tmp/r.log
	taskset -c "$reader" hvnoise record -o /tmp/r.dat "$@" >/tmp/r.log 2>&1 &
	readerpid=$!
	wait_log /tmp/r.log recording && return
	echo "bench: hvnoise record did not start: $*"
	cat /tmp/r.log
}
# tracecmd_ready DAT: trace-cmd record, writing DAT, records (it makes
# DAT.cpu0 then; it says nothing when its output is not a terminal).
tracecmd_ready() {
	for _ in $(seq 1 600); do
		[ -e "$1.cpu0" ] && return 0
		sleep 0.2
	done
	return 1
}
# wait_log FILE PATTERN: until a reader's log says it reads (2 min at most)
wait_log() {
	for _ in $(seq 1 600); do
		grep -q "$2" "$1" && return 0
		sleep 0.2
	done
	return 1
}
stop_reader() {
	if [ -n "$readerpid" ]; then
		kill -INT "$readerpid"
		wait "$readerpid"
		readerpid=""
	fi
}

# The symbols, for the host to name addresses (Debian's System.map is a
# stub): "HVNKSYMS SIZE" in the disk's first block, then /proc/kallsyms.
dump_kallsyms() {
	grep " [tTwW] " /proc/kallsyms >/tmp/ksyms
	printf 'HVNKSYMS %s\n' "$(wc -c </tmp/ksyms)" | dd of=/dev/vda bs=512 count=1 conv=sync 2>/dev/null
	dd if=/tmp/ksyms of=/dev/vda bs=512 seek=1 conv=fsync 2>/dev/null
}
