#!/bin/bash
# make soak-detectors / soak-exp: the lost-time soak (or the mechanism
# experiments) in one booted VM on Debian's stock kernel.
# usage: soak.sh MODE ROUNDS OUTDIR
set -euo pipefail
mode=$1 rounds=$2 out=$3
. "$(dirname "$0")/host-lib.sh"
mkdir -p "$out"
scripts/kbuild.sh build/kbuild-6.1 "$k61"
# The test-only stop-on-demand module.
test_module spin "$out"
make -s tools vmtools
guest_initrd "$out/soak-initrd.gz" tests/vm/guest-soak.sh \
	--file "$out/spin/hvn_spin.ko=/lib/hvnoise/hvn_spin.ko" \
	--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
exec tests/vm/soak.py "/boot/vmlinuz-$kver" "$out/soak-initrd.gz" "$out" build/vmtools/hog build/vmtools/hoststops "$mode" "$rounds"
