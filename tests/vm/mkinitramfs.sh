#!/bin/bash
# Build a busybox initramfs for hvnoise's test and demo VMs.
#
# usage: mkinitramfs.sh OUT.cpio.gz [--kver KVER --kmod NAME]... [--bin PATH]...
#                       [--file SRC=DST]... [--guest SCRIPT]
#   --kmod NAME   a module of kernel KVER, loaded at boot with its dependencies
#   --bin PATH[=DST]  a host program (at DST in the guest, default the same
#                 path), copied with the shared libraries it needs
#   --file S=D    a file or directory S placed at D in the guest
#   --guest S     the guest's script S at /lib/hvnoise/guest.sh, with the
#                 guest library (guest-lib.sh) at /lib/hvnoise/lib.sh
#   --root DIR    the modules from DIR/lib/modules (an unpacked kernel
#                 package, depmod run), not this host's
#   --busybox B   the guest's busybox (default /bin/busybox: another
#                 architecture's, statically linked, for its guests)
# The guest runs tests/vm/init, which runs the script named by hvn.run= on
# the kernel command line.
set -euo pipefail

out=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
kver=""
root=/
busybox=/bin/busybox
kmods=()
bins=()
files=()
while [ $# -gt 0 ]; do
	case $1 in
	--kver) kver=$2; shift 2 ;;
	--kmod) kmods+=("$2"); shift 2 ;;
	--bin) bins+=("$2"); shift 2 ;;
	--file) files+=("$2"); shift 2 ;;
	--guest) files+=("$2=/lib/hvnoise/guest.sh" "$here/guest-lib.sh=/lib/hvnoise/lib.sh"); shift 2 ;;
	--root) root=$2; shift 2 ;;
	--busybox) busybox=$2; shift 2 ;;
	*) echo "mkinitramfs: unknown argument $1" >&2; exit 2 ;;
	esac
done

mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,run,etc,lib/hvnoise/kmods,usr/bin,usr/sbin}
cp "$busybox" "$stage/bin/busybox"
cp "$here/init" "$stage/init"
chmod 755 "$stage/init"

# Kernel modules, dependencies first, in the order init loads them.
declare -A seen=()
add_kmod() {
	local name=$1 dep file
	[ -n "${seen[$name]:-}" ] && return
	seen[$name]=1
	for dep in $(modinfo -b "$root" -k "$kver" -F depends "$name" | tr ',' ' '); do
		add_kmod "$dep"
	done
	file=$(modinfo -b "$root" -k "$kver" -F filename "$name")
	cp "$file" "$stage/lib/hvnoise/kmods/"
	basename "$file" >>"$stage/lib/hvnoise/kmods/order"
}
for m in "${kmods[@]}"; do
	add_kmod "$m"
done

# Programs and their shared libraries, at the same paths as on the host.
copy_with_libs() {
	local f=${1%%=*} dst=${1#*=} lib
	mkdir -p "$stage$(dirname "$dst")"
	cp -L "$f" "$stage$dst"
	for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true); do
		if [ ! -e "$stage$lib" ]; then
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		fi
	done
}
for b in "${bins[@]}"; do
	copy_with_libs "$b"
done

for spec in "${files[@]}"; do
	src=${spec%%=*}
	dst=${spec#*=}
	mkdir -p "$stage$(dirname "$dst")"
	cp -rL "$src" "$stage$dst"
done

(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
