#!/bin/bash
# make anchor: the soak's schedule through the kernel's own osnoise and
# hwnoise, on Debian unstable's kernel (Debian 12's has no osnoise), in
# the same 2-vCPU TCG VM, judged as the soak is.
# usage: anchor.sh ROUNDS OUTDIR
set -euo pipefail
rounds=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
tree=$(scripts/fetch-kernel-unstable.sh)
kernel=$(ls "$tree"/boot/vmlinuz-* | tail -n 1)
grep -q "^CONFIG_OSNOISE_TRACER=y" "$tree"/boot/config-* ||
	{ echo "anchor: $kernel has no osnoise tracer" >&2; exit 1; }
mkdir -p "$out"
gcc -O2 -Wall -Wextra -Werror -o "$out/hog" tests/vm/tools/hog.c
tests/vm/mkinitramfs.sh "$out/anchor-initrd.gz" \
	--file tests/vm/guest-anchor.sh=/lib/hvnoise/guest.sh \
	--file tests/vm/guest-lib.sh=/lib/hvnoise/lib.sh
exec tests/vm/soak.py "$kernel" "$out/anchor-initrd.gz" "$out" "$out/hog" anchor "$rounds"
