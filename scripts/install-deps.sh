#!/bin/sh
# Install what hvnoise's build, tests and demo need on Debian 12.
# Idempotent: installs only packages that are missing; run as root.
set -eu

PKGS="build-essential bc bison flex libelf-dev libssl-dev dwarves kmod cpio gzip zstd xz-utils
python3 perl rsync pkg-config
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
linux-source-6.12 linux-image-amd64 linux-headers-amd64
qemu-system-x86 busybox-static
trace-cmd libtracefs-dev libtraceevent-dev libtracecmd-dev libzstd-dev zlib1g-dev
tmux util-linux python3-docutils time
clang libclang-rt-14-dev
dkms bpftool libbpf-dev debhelper dh-dkms lintian
kernelshark libkshark-dev libjson-c-dev xvfb x11-utils x11-apps netpbm
libglib2.0-dev"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
