#!/bin/bash
# make soak-hangs: the livelock hunt (tests/vm/hangs.py) on Debian's 6.1.
# usage: hangs.sh LOOPS TLOOPS OUTDIR
set -euo pipefail
loops=$1 tloops=$2 out=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
k61=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$k61" | sed 's/^linux-headers-//')
mkdir -p "$out"
make -s tools vmtools
tests/vm/mkinitramfs.sh "$out/hangs-initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
	--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
	--file tests/vm/guest-hangs.sh=/lib/hvnoise/guest.sh \
	--file tests/vm/guest-lib.sh=/lib/hvnoise/lib.sh
HVN_HANG_S=${HVN_HANG_S:-60} exec tests/vm/hangs.py "/boot/vmlinuz-$kver" \
	"$out/hangs-initrd.gz" "$out" build/vmtools/hoststops "$loops" "$tloops"
