# Shared by the guest scripts of the VM tests (busybox sh); sourced.
#
# inject WHAT MS [SETTLE_MS]: ask the host (tests/vm/inject.py) for a pause
# of the whole VM or a hog of vCPU 1's host core, SETTLE_MS after it reads
# the request, and wait until it is done.  The
# request goes out on the console, the answer comes back on ttyS1; the
# window waited in is printed for the host's judge.
hvn_seq=0
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3</dev/ttyS1

inject() {
	hvn_seq=$((hvn_seq + 1))
	hvn_t0=$(cut -d' ' -f1 /proc/uptime)
	echo "HVN-DO $hvn_seq $1 $2 ${3:-0}"
	read -r hvn_ack <&3
	echo "HVN-WIN $hvn_seq $hvn_t0 $(cut -d' ' -f1 /proc/uptime) $hvn_ack"
}

# The CPUs' busy and total jiffies so far.
busy() {
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i
		print t - $5 - $6, t }' /proc/stat
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
