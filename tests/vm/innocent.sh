#!/bin/bash
# The busy-but-innocent VM (tests/vm/guest-innocent.sh, judged by
# tests/vm/innocent.py): make check runs it for 30 s a source, make
# soak-innocent for SECS (600: ten minutes a source).  Builds what it needs.
# usage: innocent.sh SECS OUTDIR
set -euo pipefail
secs=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
k61=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$k61" | sed 's/^linux-headers-//')
mkdir -p "$out"
[ -f build/kbuild-6.1/kmod/hvnoise.ko ] || scripts/kbuild.sh build/kbuild-6.1 "$k61" >&2
make -s tools vmtools >&2
# The test-only NMI burst module, built against the same headers.
rm -rf "$out/nmiburst" && cp -r tests/vm/nmiburst "$out/nmiburst"
make -C "$k61" M="$(realpath "$out/nmiburst")" modules >"$out/nmiburst/build.log" 2>&1 ||
	{ tail -20 "$out/nmiburst/build.log"; exit 1; }
tests/vm/mkinitramfs.sh "$out/innocent-initrd.gz" --kver "$kver" \
	--kmod virtio_pci --kmod virtio_net --kmod virtio_blk --kmod e1000e \
	--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
	--file tests/vm/guest-innocent.sh=/lib/hvnoise/guest.sh \
	--file tests/vm/guest-lib.sh=/lib/hvnoise/lib.sh \
	--file build/vmtools/pasttimers=/lib/hvnoise/pasttimers \
	--file "$out/nmiburst/hvn_nmi.ko=/lib/hvnoise/hvn_nmi.ko" \
	--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
exec tests/vm/innocent.py "/boot/vmlinuz-$kver" "$out/innocent-initrd.gz" "$out" build/vmtools/hoststops "$secs"
