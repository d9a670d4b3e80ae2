#!/bin/bash
# make soak-hangs: the livelock hunt (tests/vm/hangs.py) on Debian's 6.1.
# usage: hangs.sh LOOPS TLOOPS OUTDIR
set -euo pipefail
loops=$1 tloops=$2 out=$3
. "$(dirname "$0")/host-lib.sh"
mkdir -p "$out"
make -s tools vmtools
guest_initrd "$out/hangs-initrd.gz" tests/vm/guest-hangs.sh
HVN_HANG_S=${HVN_HANG_S:-60} exec tests/vm/hangs.py "/boot/vmlinuz-$kver" \
	"$out/hangs-initrd.gz" "$out" build/vmtools/hoststops "$loops" "$tloops"
