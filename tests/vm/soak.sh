#!/bin/bash
# make soak-detectors / soak-exp: the lost-time soak (or the mechanism
# experiments) in one booted VM on Debian's stock kernel.
# usage: soak.sh MODE ROUNDS OUTDIR
set -euo pipefail
mode=$1 rounds=$2 out=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
k61=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$k61" | sed 's/^linux-headers-//')
mkdir -p "$out"
scripts/kbuild.sh build/kbuild-6.1 "$k61"
# The test-only stop-on-demand module, built against the same headers.
rm -rf "$out/spin" && cp -r tests/vm/spin "$out/spin"
make -C "$k61" M="$(realpath "$out/spin")" modules >"$out/spin/build.log" 2>&1 ||
	{ tail -20 "$out/spin/build.log"; exit 1; }
make -s tools vmtools
tests/vm/mkinitramfs.sh "$out/soak-initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
	--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
	--file tests/vm/guest-soak.sh=/lib/hvnoise/guest.sh \
	--file tests/vm/guest-lib.sh=/lib/hvnoise/lib.sh \
	--file "$out/spin/hvn_spin.ko=/lib/hvnoise/hvn_spin.ko" \
	--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
exec tests/vm/soak.py "/boot/vmlinuz-$kver" "$out/soak-initrd.gz" "$out" build/vmtools/hog build/vmtools/hoststops "$mode" "$rounds"
