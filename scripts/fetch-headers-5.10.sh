#!/bin/sh
# Fetch Debian 11's 5.10 kernel headers into the cache, without adding
# bullseye to the system's apt sources: apt runs on a private sources list
# and state directory, `apt-get download` fetches the .debs, dpkg -x unpacks.
#
# Prints the KDIR to build against (…/usr/src/linux-headers-5.10.*-amd64).
set -eu

cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
root=$cache/headers-5.10
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9

kdir=$(ls -d "$root"/tree/usr/src/linux-headers-5.10.*-amd64 2>/dev/null | tail -n 1 || true)
if [ -n "$kdir" ] && [ -f "$root/tree/.done" ]; then
	echo "$kdir"
	exit 0
fi

apt_dir=$root/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$root/debs"
echo "deb http://deb.debian.org/debian bullseye main" >"$apt_dir/sources.list"
opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir -o Dir::State::Status=/dev/null
 -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root"

# shellcheck disable=SC2086
apt-get -q $opts update >&2
# linux-headers-amd64 depends on the current linux-headers-5.10.0-N-amd64.
# shellcheck disable=SC2086
pkg=$(apt-cache $opts depends linux-headers-amd64 |
	sed -n 's/^ *Depends: \(linux-headers-5\.10\.[0-9.-]*-amd64\)$/\1/p' | head -n 1)
[ -n "$pkg" ] || { echo "fetch-headers-5.10: cannot find linux-headers-5.10.*-amd64 in bullseye" >&2; exit 1; }
abi=${pkg#linux-headers-}
abi=${abi%-amd64}
(
	cd "$root/debs"
	# shellcheck disable=SC2086
	apt-get -q $opts download "$pkg" "linux-headers-$abi-common" linux-kbuild-5.10 >&2
)
rm -rf "$root/tree"
mkdir -p "$root/tree"
for deb in "$root"/debs/*.deb; do
	dpkg -x "$deb" "$root/tree"
done
# The arch package's Makefile includes the -common one by absolute path.
for mk in "$root"/tree/usr/src/linux-headers-5.10.*-amd64/Makefile; do
	sed -i "s|^include /usr/src/|include $root/tree/usr/src/|" "$mk"
done
touch "$root/tree/.done"
ls -d "$root"/tree/usr/src/linux-headers-5.10.*-amd64 | tail -n 1
