#!/bin/sh
# Print the build tree to build hvnoise.ko against.
#
# usage: kernel-dir.sh [SERIES]
#   no SERIES: the running kernel's build dir, else the newest installed
#              linux-headers (what `make` uses when KDIR= is not given)
#   SERIES:    the newest installed linux-headers-SERIES.*, e.g. 6.1
set -eu

series=${1:-}
if [ -z "$series" ] && [ -e "/lib/modules/$(uname -r)/build/Makefile" ]; then
	echo "/lib/modules/$(uname -r)/build"
	exit 0
fi
dir=$(ls -d /usr/src/linux-headers-${series}*/ 2>/dev/null | grep -v -- '-common/$' |
	sed 's:/$::' | sort -V | tail -n 1)
if [ -z "$dir" ] || [ ! -e "$dir/Makefile" ]; then
	echo "kernel-dir: no kernel build tree found${series:+ for $series} (install linux-headers-\$(uname -r) or pass KDIR=)" >&2
	exit 1
fi
echo "$dir"
