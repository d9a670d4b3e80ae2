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
