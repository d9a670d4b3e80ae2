#!/bin/sh
# Build (once) the small test kernel that runs hvnoise's KUnit suites and
# stress cycles (KASAN, lockdep, kmemleak): tinyconfig and FRAGMENT, from
# an extracted kernel source (scripts/fetch-source-tree.sh's, which writes
# its version into SRC/.extracted), with the local gcc.
#
# usage: build-test-kernel.sh FRAGMENT SRC
# Prints the build directory on stdout.  The kernel lives in the cache
# ($HVNOISE_CACHE, default ~/.cache/hvnoise), keyed by a hash of the config
# fragment, the source's version and the compiler, so it is rebuilt only
# when one changes.  The build log goes to BUILD_DIR/build.log.
set -eu

frag=${1:?usage: build-test-kernel.sh FRAGMENT SRC}
src=${2:?usage: build-test-kernel.sh FRAGMENT SRC}
[ -r "$frag" ] || { echo "build-test-kernel: cannot read $frag" >&2; exit 1; }
[ -r "$src/.extracted" ] || { echo "build-test-kernel: $src is no extracted kernel source" >&2; exit 1; }
cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
series=$(make -s -C "$src" kernelversion | cut -d. -f1-2)
key=$( (cat "$frag" "$src/.extracted"; gcc --version | head -n 1) | sha256sum | cut -c1-16)
out=$cache/kernel-$series-$key
mkdir -p "$cache"

# One builder at a time; a second caller waits and then finds it done.
exec 9>"$cache/.lock"
flock 9

if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

# Drop builds that never finished (interrupted, or a broken fragment).
for d in "$cache/kernel-$series"-*; do
	[ -d "$d" ] && [ ! -f "$d/.done" ] && [ "$d" != "$out" ] && rm -rf "$d"
done

echo "build-test-kernel: building $out (log: $out/build.log)" >&2
rm -rf "$out"
mkdir -p "$out"
jobs=$(nproc)
{
	make -C "$src" O="$out" tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag"
	make -C "$src" O="$out" olddefconfig
} >"$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; exit 1; }

# Every option the fragment sets must have survived olddefconfig.
bad=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" | while IFS= read -r line; do
	grep -qxF "$line" "$out/.config" || echo "$line"
done)
if [ -n "$bad" ]; then
	echo "build-test-kernel: options lost in olddefconfig (missing dependencies):" >&2
	echo "$bad" >&2
	exit 1
fi

make -C "$src" O="$out" -j"$jobs" bzImage modules >>"$out/build.log" 2>&1 ||
	{ tail -40 "$out/build.log" >&2; exit 1; }
touch "$out/.done"
echo "$out"
