#!/bin/sh
# Fetch Debian 12's arm64 6.1 kernel headers into the cache for a cross
# build (make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-), without touching
# the system's apt sources or architectures: apt runs on a private sources
# list and state directory, `apt-get download` fetches the .debs, dpkg -x
# unpacks.
#
# The arm64 headers' scripts/ link to linux-kbuild-6.1's, whose programs
# (fixdep, modpost, ...) are arm64 binaries in the arm64 package.  As for
# Debian's own cross builds, the amd64 linux-kbuild-6.1 of the same version
# is unpacked in their place.
#
# Prints the KDIR to build against (…/usr/src/linux-headers-6.1.*-arm64).
#
# --vm: also the arm64 guest of the same version (the vm-arm64 stage): the
# kernel package (its Image and modules, depmod run) and busybox-static,
# unpacked into one root; prints that root instead (ROOT/boot/vmlinuz-*,
# ROOT/lib/modules/*, ROOT/bin/busybox).
#
# --libs: the arm64 libraries the hvnoise tool links statically (libbpf,
# libtracefs, libtraceevent, libelf, zlib, zstd: their -dev packages) and
# trace-cmd with its shared libraries, unpacked into one root; prints that
# root (ROOT/usr/include, ROOT/usr/lib/aarch64-linux-gnu, ROOT/usr/bin).
set -eu
vm=""
libs=""
[ "${1:-}" = --vm ] && vm=1
[ "${1:-}" = --libs ] && libs=1

cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
root=$cache/headers-6.1-arm64
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9

# vm_root: the guest's root, fetched for the headers' exact version.
vm_root() {
	local kdir=$1 abi ver
	if [ -f "$root/vm/.done" ]; then
		echo "$root/vm"
		return 0
	fi
	abi=$(basename "$kdir")
	abi=${abi#linux-headers-}
	ver=$(dpkg-deb -f "$root"/debs/linux-headers-"$abi"_*.deb Version) || return 1
	rm -rf "$root/vm" "$root/vm-debs"
	mkdir -p "$root/vm-debs"
	# Exit 2: not to be had (a SKIP), as for the headers.
	# shellcheck disable=SC2086
	(cd "$root/vm-debs" && apt-get -q $opts download \
		"linux-image-$abi-unsigned:arm64=$ver" busybox-static:arm64 >&2) || return 2
	for deb in "$root"/vm-debs/*.deb; do
		dpkg -x "$deb" "$root/vm" || return 1
	done
	depmod -b "$root/vm" "$abi" || return 1
	rm -rf "$root/vm-debs"
	touch "$root/vm/.done"
	echo "$root/vm"
}

# libs_root: the tool's arm64 libraries, and trace-cmd with what it needs
# at run time (its shared libraries; the C library is the cross
# compiler's), from bookworm as it is now.  .done names the packages: a
# root unpacked for another list is unpacked again.
libs_root() {
	local pkgs="libbpf-dev:arm64 libtracefs-dev:arm64 libtraceevent-dev:arm64
		libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64
		trace-cmd:arm64 libtracefs1:arm64 libtraceevent1:arm64 libzstd1:arm64"
	if [ "$(cat "$root/libs/.done" 2>/dev/null)" = "$(echo $pkgs)" ]; then
		echo "$root/libs"
		return 0
	fi
	rm -rf "$root/libs" "$root/libs-debs"
	mkdir -p "$root/libs-debs" "$apt_dir/lists/partial" "$apt_dir/archives/partial"
	# The lists may be missing (no header fetch yet) or stale.
	# shellcheck disable=SC2086
	(cd "$root/libs-debs" && apt-get -q $opts download $pkgs >&2) ||
		{ apt-get -q $opts update >&2 &&
		  (cd "$root/libs-debs" && apt-get -q $opts download $pkgs >&2); } || return 2
	for deb in "$root"/libs-debs/*.deb; do
		dpkg -x "$deb" "$root/libs" || return 1
	done
	rm -rf "$root/libs-debs"
	echo $pkgs >"$root/libs/.done"
	echo "$root/libs"
}

apt_dir=$root/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$root/debs"
cat >"$apt_dir/sources.list" <<EOF
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir -o Dir::State::Status=/dev/null
 -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root
 -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64"

if [ -n "$libs" ]; then
	libs_root
	exit
fi

kdir=$(ls -d "$root"/tree/usr/src/linux-headers-6.1.*-arm64 2>/dev/null | tail -n 1 || true)
if [ -n "$kdir" ] && [ -f "$root/tree/.done" ]; then
	if [ -z "$vm" ]; then
		echo "$kdir"
		exit 0
	fi
	rc=0
	vm_root "$kdir" || rc=$?
	# Exit 2: the headers' kernel is gone from the archive (a newer one
	# replaced it): both are fetched again, of the newest version.
	[ $rc -eq 2 ] || exit $rc
	rm -f "$root/tree/.done"
fi
rm -rf "$root/vm"

# Exit 2: the packages cannot be had here (check.sh SKIPs); 1: a failure.
# shellcheck disable=SC2086
apt-get -q $opts update >&2 || exit 2
# linux-headers-arm64 depends on the current linux-headers-6.1.0-N-arm64.
# shellcheck disable=SC2086
pkg=$(apt-cache $opts depends linux-headers-arm64:arm64 |
	sed -n 's/^ *Depends: \(linux-headers-6\.1\.[0-9.-]*-arm64\)\(:arm64\)\{0,1\}$/\1/p' | head -n 1)
[ -n "$pkg" ] || { echo "fetch-headers-6.1-arm64: cannot find linux-headers-6.1.*-arm64 in bookworm" >&2; exit 2; }
abi=${pkg#linux-headers-}
abi=${abi%-arm64}
# The amd64 kbuild of exactly the headers' version.
# shellcheck disable=SC2086
ver=$(apt-cache $opts show "$pkg:arm64" | sed -n 's/^Version: //p' | sort -V | tail -n 1)
[ -n "$ver" ] || { echo "fetch-headers-6.1-arm64: no version for $pkg" >&2; exit 1; }
(
	cd "$root/debs"
	rm -f ./*.deb
	# shellcheck disable=SC2086
	apt-get -q $opts download "$pkg:arm64=$ver" "linux-headers-$abi-common=$ver" \
		"linux-kbuild-6.1:amd64=$ver" >&2
) || exit 2
rm -rf "$root/tree"
mkdir -p "$root/tree"
for deb in "$root"/debs/*.deb; do
	dpkg -x "$deb" "$root/tree" || exit 1
done
# The arch package's Makefile includes the -common one by absolute path.
for mk in "$root"/tree/usr/src/linux-headers-6.1.*-arm64/Makefile; do
	sed -i "s|^include /usr/src/|include $root/tree/usr/src/|" "$mk"
done
# scripts -> ../../lib/linux-kbuild-6.1/scripts: the amd64 one unpacked above.
# ELF e_machine 62 is x86-64.
fixdep=$root/tree/usr/lib/linux-kbuild-6.1/scripts/basic/fixdep
[ "$(od -An -tu2 -j18 -N2 "$fixdep" 2>/dev/null | tr -d ' ')" = 62 ] ||
	{ echo "fetch-headers-6.1-arm64: linux-kbuild-6.1 is not the amd64 one" >&2; exit 1; }
touch "$root/tree/.done"
kdir=$(ls -d "$root"/tree/usr/src/linux-headers-6.1.*-arm64 | tail -n 1)
if [ -n "$vm" ]; then
	vm_root "$kdir"
	exit
fi
echo "$kdir"
