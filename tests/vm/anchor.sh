#!/bin/bash
# make anchor: the soak's schedule of host pauses and vCPU hogs through the
# kernel's own osnoise tracer, its hwnoise mode and the module, one after
# the other in one boot of the same 2-vCPU TCG VM as the soak, on a 6.12
# kernel with osnoise (Debian's 6.1 and unstable's 7.2 have none; this is
# the KUnit test kernel's config without its debug options), judged as
# the soak is.
# usage: anchor.sh ROUNDS OUTDIR
set -euo pipefail
rounds=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
t=$(scripts/fetch-source-tree.sh 6.12)
k=$(scripts/build-test-kernel.sh tests/vm/anchor-kernel.config "$(readlink -f "$t/source")")
scripts/kbuild.sh build/kbuild-anchor "$k"
mkdir -p "$out"
make -s vmtools
tests/vm/mkinitramfs.sh "$out/anchor-initrd.gz" \
	--guest tests/vm/guest-anchor.sh \
	--file build/kbuild-anchor/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
exec tests/vm/soak.py "$k/arch/x86/boot/bzImage" "$out/anchor-initrd.gz" "$out" build/vmtools/hog build/vmtools/hoststops \
	anchor "$rounds"
