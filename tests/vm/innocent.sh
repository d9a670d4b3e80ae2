#!/bin/bash
# The busy-but-innocent VM (tests/vm/guest-innocent.sh, judged by
# tests/vm/innocent.py): make check runs it for 30 s a source, make
# soak-innocent for SECS (600: ten minutes a source).  Builds what it needs.
# usage: innocent.sh SECS OUTDIR
set -euo pipefail
secs=$1 out=$2
. "$(dirname "$0")/host-lib.sh"
mkdir -p "$out"
[ -f build/kbuild-6.1/kmod/hvnoise.ko ] || scripts/kbuild.sh build/kbuild-6.1 "$k61" >&2
make -s tools vmtools >&2
# The test-only NMI burst module.
test_module nmiburst "$out"
guest_initrd "$out/innocent-initrd.gz" tests/vm/guest-innocent.sh --kmod e1000e \
	--file build/vmtools/pasttimers=/lib/hvnoise/pasttimers \
	--file "$out/nmiburst/hvn_nmi.ko=/lib/hvnoise/hvn_nmi.ko" \
	--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
exec tests/vm/innocent.py "/boot/vmlinuz-$kver" "$out/innocent-initrd.gz" "$out" build/vmtools/hoststops "$secs"
