#!/bin/sh
# Build (once) the small 6.12 test kernel that runs hvnoise's KUnit suites.
#
# usage: build-test-kernel.sh FRAGMENT
# Prints the build directory on stdout.  The kernel lives in the cache
# ($HVNOISE_CACHE, default ~/.cache/hvnoise), keyed by a hash of the config
# fragment and of the linux-source-6.12 package version, so it is rebuilt
# only when either changes.  The build log goes to BUILD_DIR/build.log.
set -eu

frag=${1:?usage: build-test-kernel.sh FRAGMENT}
[ -r "$frag" ] || { echo "build-test-kernel: cannot read $frag" >&2; exit 1; }
cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
tarball=/usr/src/linux-source-6.12.tar.xz
[ -r "$tarball" ] || { echo "build-test-kernel: $tarball missing (apt-get install linux-source-6.12)" >&2; exit 1; }

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$( (cat "$frag"; echo "$srcver") | sha256sum | cut -c1-16)
src=$cache/linux-source-$srcver
out=$cache/kernel-6.12-$key
mkdir -p "$cache"

# One builder at a time; a second caller waits and then finds it done.
exec 9>"$cache/.lock"
flock 9

if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

# Drop builds that never finished (interrupted, or a broken fragment).
for d in "$cache"/kernel-6.12-*; do
	[ -d "$d" ] && [ ! -f "$d/.done" ] && [ "$d" != "$out" ] && rm -rf "$d"
done

if [ ! -f "$src/.extracted" ]; then
	echo "build-test-kernel: extracting $tarball" >&2
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.extracted"
	mv "$src.tmp" "$src"
fi

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
