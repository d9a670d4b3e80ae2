#!/bin/sh
# Build (once) a configured kernel tree from Debian's linux-source-SERIES
# to compile hvnoise.ko against, with the local gcc: this system's package
# where it is installed (linux-source-6.12 on Debian 12), else unstable's
# (Debian's own headers for 7.2 are configured for a newer gcc than
# Debian 12 has).  The extracted source is also the test kernel's
# (scripts/build-test-kernel.sh).  Not a kernel: defconfig, the options the module
# needs (scripts/source-tree-ARCH.config), then `make modules_prepare`.
#
# usage: fetch-source-tree.sh SERIES [ARCH]
#   SERIES: e.g. 7.2 (the package linux-source-7.2 in sid) or 6.12
#           (Debian 12's, installed)
#   ARCH:   x86_64 (default) or arm64, cross-compiled with
#           aarch64-linux-gnu-gcc (build the module with the same
#           make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
#
# apt runs on a private sources list and state directory (the system's
# sources are never touched); `apt-get download` and dpkg -x unpack the
# tarball.  The tree is cached in $HVNOISE_CACHE (~/.cache/hvnoise) keyed
# by a hash of the config fragment, the series, the architecture and the
# compiler: once built it is reused without a network (a newer upload of
# linux-source-SERIES is picked up only when the key changes or the cache
# is removed).  Prints the KDIR; the log is KDIR/build.log.
#
# Exit status 2: the tree cannot be had here (no network to sid, no such
# package, no cross compiler); 1: it was fetched but did not configure or
# build.
set -eu

series=${1:?usage: fetch-source-tree.sh SERIES [ARCH]}
arch=${2:-x86_64}
top=$(cd "$(dirname "$0")/.." && pwd)
frag=$top/scripts/source-tree-$arch.config
[ -r "$frag" ] || { echo "fetch-source-tree: no config fragment for $arch ($frag)" >&2; exit 1; }
case $arch in
x86_64)	karch=x86_64 cross="" ;;
arm64)	karch=arm64 cross=aarch64-linux-gnu- ;;
*)	echo "fetch-source-tree: unknown ARCH $arch" >&2; exit 1 ;;
esac
command -v "${cross}gcc" >/dev/null ||
	{ echo "fetch-source-tree: ${cross}gcc not found (scripts/install-deps.sh)" >&2; exit 2; }

cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
srcroot=$cache/source-$series
key=$( (cat "$frag"; echo "$series $arch"; "${cross}gcc" --version | head -n 1) |
	sha256sum | cut -c1-16)
out=$cache/tree-$series-$arch-$key
mkdir -p "$srcroot"

# One builder per series at a time; a second caller waits, then finds it done.
exec 9>"$srcroot/.lock"
flock 9

# A tree builds with its source beside it (O=): both must be there.
if [ -f "$out/.done" ] && [ -e "$out/source/Makefile" ]; then
	echo "$out"
	exit 0
fi
# Drop trees of this series and arch that never finished.
for d in "$cache/tree-$series-$arch"-*; do
	[ -d "$d" ] && [ ! -f "$d/.done" ] && [ "$d" != "$out" ] && rm -rf "$d"
done

# extract TARBALL VERSION: the source into $srcroot/linux-VERSION.
extract() {
	echo "fetch-source-tree: extracting linux-source-$series $2" >&2
	src=$srcroot/linux-$2
	rm -rf "$srcroot"/linux-*/
	mkdir -p "$src"
	# Exit 1, not tar's status: 2 means "cannot be had here" (a SKIP).
	tar -xf "$1" -C "$src" --strip-components=1 || exit 1
	echo "$2" >"$src/.extracted"
}

src=$(ls -d "$srcroot"/linux-*/ 2>/dev/null | sed 's:/$::' | sort -V | tail -n 1)
pkg=/usr/src/linux-source-$series.tar.xz
if { [ -z "$src" ] || [ ! -f "$src/.extracted" ]; } && [ -r "$pkg" ]; then
	extract "$pkg" "$(dpkg-query -W -f='${Version}' "linux-source-$series")"
elif [ -z "$src" ] || [ ! -f "$src/.extracted" ]; then
	apt_dir=$srcroot/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$srcroot/debs"
	echo "deb http://deb.debian.org/debian sid main" >"$apt_dir/sources.list"
	opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir -o Dir::State::Status=/dev/null
 -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	apt-get -q $opts update >&2 ||
		{ echo "fetch-source-tree: apt-get update of sid failed" >&2; exit 2; }
	# shellcheck disable=SC2086
	ver=$(apt-cache $opts show "linux-source-$series" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[ -n "$ver" ] || { echo "fetch-source-tree: no linux-source-$series in sid" >&2; exit 2; }
	(
		cd "$srcroot/debs"
		rm -f ./*.deb
		# shellcheck disable=SC2086
		apt-get -q $opts download "linux-source-$series=$ver" >&2
	) || { echo "fetch-source-tree: cannot download linux-source-$series $ver" >&2; exit 2; }
	rm -rf "$srcroot/deb.tmp"
	mkdir -p "$srcroot/deb.tmp"
	dpkg -x "$srcroot"/debs/linux-source-"$series"_*.deb "$srcroot/deb.tmp" || exit 1
	extract "$srcroot/deb.tmp/usr/src/linux-source-$series.tar.xz" "$ver"
	rm -rf "$srcroot/deb.tmp" "$srcroot"/debs/*.deb
fi

echo "fetch-source-tree: configuring $out (log: $out/build.log)" >&2
rm -rf "$out"
mkdir -p "$out"
set -- -C "$src" O="$out" ARCH="$karch" ${cross:+CROSS_COMPILE=$cross}
{
	make "$@" defconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag"
	make "$@" olddefconfig
} >"$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; exit 1; }

# Every option the fragment sets must have survived olddefconfig.
bad=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" | while IFS= read -r line; do
	grep -qxF "$line" "$out/.config" || echo "$line"
done)
if [ -n "$bad" ]; then
	echo "fetch-source-tree: options lost in olddefconfig (missing dependencies):" >&2
	echo "$bad" >&2
	exit 1
fi

make "$@" -j"$(nproc)" modules_prepare >>"$out/build.log" 2>&1 ||
	{ tail -40 "$out/build.log" >&2; exit 1; }
cp "$src/.extracted" "$out/.source-version"
touch "$out/.done"
echo "$out"
