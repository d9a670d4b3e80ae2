# The host side of a one-guest VM run (innocent.sh, soak.sh, hangs.sh),
# sourced: in the tree's top, with Debian's 6.1 ($k61, its headers; $kver)
# and the helpers below.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
k61=$(scripts/kernel-dir.sh 6.1)
kver=$(basename "$k61" | sed 's/^linux-headers-//')

# test_module NAME OUT: the test-only module tests/vm/NAME built against
# the same headers, in OUT/NAME.
test_module() {
	rm -rf "$2/$1" && cp -r "tests/vm/$1" "$2/$1"
	make -C "$k61" M="$(realpath "$2/$1")" modules >"$2/$1/build.log" 2>&1 ||
		{ tail -20 "$2/$1/build.log"; exit 1; }
}

# guest_initrd OUT GUEST [MKINITRAMFS_ARGS...]: the guest script GUEST on
# 6.1 with virtio, trace-cmd and the hvnoise command.
guest_initrd() {
	local initrd=$1 guest=$2
	shift 2
	tests/vm/mkinitramfs.sh "$initrd" --kver "$kver" \
		--kmod virtio_pci --kmod virtio_net --kmod virtio_blk "$@" \
		--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
		--guest "$guest"
}
