#!/bin/sh
# Fetch the TCG plugin API header (include/qemu/qemu-plugin.h) of the QEMU
# installed here, from Debian's source package of exactly that version,
# with a private apt state (as fetch-headers-5.10.sh): the plugin must be
# built against the API its QEMU loads.
#
# usage: fetch-qemu-plugin-header.sh [QEMU]
#   QEMU: a Debian build's binary (scripts/fetch-qemu.sh's), whose
#   --version names its package version; default: the installed one.
# Prints the directory holding qemu-plugin.h.
set -eu

cache=${HVNOISE_CACHE:-${HOME:-/root}/.cache/hvnoise}
if [ $# -gt 0 ]; then
	bin=$("$1" --version | sed -n 's/.*(Debian \([^)]*\)).*/\1/p' | head -n 1)
	[ -n "$bin" ] || {
		echo "fetch-qemu-plugin-header: $1 --version names no Debian version" >&2
		exit 1
	}
else
	bin=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) || {
		echo "fetch-qemu-plugin-header: qemu-system-x86 is not installed" >&2
		exit 1
	}
fi
root=$cache/qemu-plugin-$(echo "$bin" | tr -c "A-Za-z0-9.\n" _)
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9
if [ -f "$root/include/qemu-plugin.h" ]; then
	echo "$root/include"
	exit 0
fi

apt_dir=$root/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$root/src"
cat >"$apt_dir/sources.list" <<LIST
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm-updates main
deb-src http://deb.debian.org/debian-security bookworm-security main
deb-src http://deb.debian.org/debian bookworm-backports main
LIST
opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir -o Dir::State::Status=/dev/null
 -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get -q $opts update >&2
(
	cd "$root/src"
	# shellcheck disable=SC2086
	apt-get -q $opts source --download-only "qemu=$bin" >&2
) || true	# only the upstream tarball is needed (backports' .dsc may be gone)
orig=$(ls "$root"/src/qemu_*.orig.tar.* 2>/dev/null | head -n 1)
[ -n "$orig" ] || { echo "fetch-qemu-plugin-header: no qemu $bin source in Debian's archive" >&2; exit 1; }
mkdir -p "$root/include"
tar -xf "$orig" --wildcards -O '*/include/qemu/qemu-plugin.h' >"$root/include/qemu-plugin.h.tmp"
[ -s "$root/include/qemu-plugin.h.tmp" ] || { echo "fetch-qemu-plugin-header: no include/qemu/qemu-plugin.h in $orig" >&2; exit 1; }
mv "$root/include/qemu-plugin.h.tmp" "$root/include/qemu-plugin.h"
rm -rf "$root/src"
echo "$root/include"
