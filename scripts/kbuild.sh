#!/bin/bash
# Build hvnoise.ko (and, with HVNOISE_KUNIT=m, hvnoise_kunit.ko) against one
# kernel tree in a private copy of the sources, so builds for different
# kernels never share objects.
#
# usage: kbuild.sh OUTDIR KDIR [extra make arguments...]
# Builds with W=1; the log is OUTDIR/build.log.  Exits non-zero on a failed
# build or on any compiler warning.
set -uo pipefail

out=$(realpath -m "$1") kdir=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)

[ -e "$kdir/Makefile" ] || { echo "kbuild: $kdir is not a kernel build tree" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
(cd "$top" && cp -r --parents Kbuild include kmod tests/kunit tests/lib "$out"/)
find "$out" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete

# A compile-only tree (scripts/fetch-source-tree.sh: modules_prepare, no
# vmlinux) has no Module.symvers, so modpost cannot know the kernel's
# exports: it is told to list the module's imports as unresolved instead
# of failing ("WARNING: modpost: ... undefined!", not counted below).
if [ ! -s "$kdir/Module.symvers" ]; then
	set -- "$@" KBUILD_MODPOST_WARN=1
fi
make -C "$kdir" M="$out" W=1 "$@" modules >"$out/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	tail -30 "$out/build.log" >&2
	exit $rc
fi
if grep -E "warning:|error:" "$out/build.log" >&2; then
	exit 1
fi
# modpost's own (section mismatches, missing exports) are upper case; on a
# compile-only tree only its expected "missing Module.symvers" and
# "undefined!" lines are let through.
if grep -E "WARNING:|ERROR:" "$out/build.log" |
	{ if [ -s "$kdir/Module.symvers" ]; then cat; else
		grep -v -e "Module.symvers is missing" -e "\] undefined!\$" \
			-e "unresolved symbol warnings because"; fi; } | grep . >&2; then
	exit 1
fi
exit 0
