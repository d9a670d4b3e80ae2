#!/bin/sh
# A QEMU whose TCG emulates x2APIC (8.1 and later) for guests of more than
# 255 vCPUs (make big-guest): Debian 12's is 7.2, so bookworm-backports'
# qemu-system-x86, built for Debian 12, unpacked with its data and
# firmware (apt on a private sources list and state, as
# scripts/fetch-source-tree.sh; the system's packages are not touched).
# Cached in $HVNOISE_CACHE (~/.cache/hvnoise)/qemu-VERSION.
#
# usage: fetch-qemu.sh
# Prints the binary, then its data directories for -L, on one line:
#   BINARY -L DIR -L DIR
# Exit status 2: it cannot be had here (no network to the archive).
set -eu

cache=${HVNOISE_CACHE:-$HOME/.cache/hvnoise}
have=$(ls -d "$cache"/qemu-[0-9]*/ 2>/dev/null | sed 's:/$::' | sort -V | tail -n 1)
if [ -z "$have" ] || [ ! -f "$have/.unpacked" ]; then
	apt_dir=$cache/qemu-apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs"
	echo "deb http://deb.debian.org/debian bookworm-backports main" >"$apt_dir/sources.list"
	opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir -o Dir::State::Status=/dev/null
 -o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	apt-get -q $opts update >&2 ||
		{ echo "fetch-qemu: apt-get update of bookworm-backports failed" >&2; exit 2; }
	# shellcheck disable=SC2086
	ver=$(apt-cache $opts show qemu-system-x86 2>/dev/null |
		sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[ -n "$ver" ] || { echo "fetch-qemu: no qemu-system-x86 in bookworm-backports" >&2; exit 2; }
	(
		cd "$apt_dir/debs"
		rm -f ./*.deb
		# shellcheck disable=SC2086
		apt-get -q $opts download "qemu-system-x86=$ver" "qemu-system-common=$ver" \
			"qemu-system-data=$ver" seabios >&2
	) || { echo "fetch-qemu: cannot download qemu-system-x86 $ver" >&2; exit 2; }
	have=$cache/qemu-$(echo "$ver" | sed 's/^[0-9]*://; s/[^A-Za-z0-9.+~-]/_/g')
	rm -rf "$have"
	mkdir -p "$have"
	for d in "$apt_dir"/debs/*.deb; do
		dpkg -x "$d" "$have"
	done
	rm -f "$apt_dir"/debs/*.deb
	"$have/usr/bin/qemu-system-x86_64" --version >&2 ||
		{ echo "fetch-qemu: $have/usr/bin/qemu-system-x86_64 does not run here" >&2; exit 1; }
	touch "$have/.unpacked"
fi
echo "$have/usr/bin/qemu-system-x86_64 -L $have/usr/share/qemu -L $have/usr/share/seabios"
