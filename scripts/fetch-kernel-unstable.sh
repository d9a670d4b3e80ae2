#!/bin/sh
# Fetch the kernel image of Debian unstable's linux-image-amd64 into the
# cache, without adding unstable to the system's apt sources (a private
# sources list and state directory, `apt-get download`, `dpkg -x`, as
# fetch-headers-5.10.sh does).  Its kernel has the osnoise tracer, which
# Debian 12's 6.1 lacks: the anchor run boots it (tests/vm/anchor.sh).
#
# Prints the unpacked package's root: boot/vmlinuz-* and boot/config-*.
set -eu

cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
root=$cache/kernel-unstable
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9

if [ -f "$root/tree/.done" ]; then
	echo "$root/tree"
	exit 0
fi
apt_dir=$root/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$root/debs"
echo "deb http://deb.debian.org/debian unstable main" >"$apt_dir/sources.list"
opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir -o Dir::State::Status=/dev/null
 -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get -q $opts update >&2
# linux-image-amd64 depends on the current linux-image-N-amd64; the
# unsigned build holds the same kernel.
# shellcheck disable=SC2086
pkg=$(apt-cache $opts depends linux-image-amd64 |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
[ -n "$pkg" ] || { echo "fetch-kernel-unstable: no linux-image-*-amd64 in unstable" >&2; exit 1; }
rm -f "$root"/debs/*.deb
(
	cd "$root/debs"
	# shellcheck disable=SC2086
	apt-get -q $opts download "$pkg-unsigned" >&2 ||
		apt-get -q $opts download "$pkg" >&2
)
rm -rf "$root/tree"
mkdir -p "$root/tree"
for deb in "$root"/debs/*.deb; do
	dpkg -x "$deb" "$root/tree"
done
# Only the kernel is needed: the anchor's guest loads no module.
rm -rf "$root/tree/lib" "$root/tree/usr/lib/modules"
touch "$root/tree/.done"
echo "$root/tree"
