#!/bin/bash
# hvnoise's test suite: what `make check` runs.
#
#   1. userspace unit tests of kmod/lib/ under ASan/UBSan
#   2. module builds (W=1, no warnings) against Debian 11's 5.10 headers,
#      Debian 12's 6.1 headers and the 6.12 test kernel; make install and
#      DKMS against the 6.1 headers; checkpatch on kmod/
#   3. KUnit suites in QEMU on the 6.12 test kernel (built once, cached)
#   4. VM integration on Debian's stock kernel in QEMU
#
# Each check prints one PASS:/FAIL: line; the last line counts them all.
# Logs: build/check/.  HVNOISE_CACHE moves the kernel cache (~/.cache/hvnoise).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=$top/build/check
rm -rf "$out"
mkdir -p "$out"
results=$out/results.txt
: >"$results"

pass() { echo "PASS: $1" | tee -a "$results"; }
fail() { echo "FAIL: $1" | tee -a "$results"; }
# Run a command whose output holds PASS:/FAIL: lines; keep them.
collect() {
	local log=$1
	shift
	"$@" >"$log" 2>&1
	local rc=$?
	grep -E "^(PASS|FAIL): " "$log" | tee -a "$results"
	return $rc
}
step() { printf '\n== %s\n' "$*"; }

# --- 1. unit tests ---------------------------------------------------------
step "userspace unit tests (ASan/UBSan)"
if make -s unit-build >"$out/unit-build.log" 2>&1; then
	collect "$out/unit.log" build/unit/hvnoise-unit ||
		grep -A3 "^FAIL" "$out/unit.log" | head -40
else
	cat "$out/unit-build.log"
	fail "unit/build"
fi

step "the hvnoise command on this host (live tracefs, ASan/UBSan)"
if make -s tools >"$out/tools-build.log" 2>&1; then
	pass "tools/build (-Wall -Wextra -Werror, and ASan/UBSan)"
	collect "$out/tools.log" tests/tools/host.sh build/tools-asan/hvnoise "$out/tools"
	grep -E "^  " "$out/tools.log" | grep -v "^  |" | head -20
else
	cat "$out/tools-build.log"
	fail "tools/build (-Wall -Wextra -Werror, and ASan/UBSan)"
fi

step "the BPF source on this host (live, ASan/UBSan)"
if [ -x build/tools-asan/hvnoise ]; then
	collect "$out/bpf.log" tests/tools/bpf.sh build/tools-asan/hvnoise "$out/bpf"
fi

step "metrics: hvnoise report --prom, and hvnoise exporter scraped over loopback (ASan/UBSan)"
if [ -x build/tools-asan/hvnoise ]; then
	collect "$out/prom.log" tests/tools/prom.py build/tools-asan/hvnoise "$out/prom"
	grep -E "^  " "$out/prom.log"
else
	fail "prom/completed (no ASan build of hvnoise)"
fi

step "flight recorder: hvnoise record --flight-recorder, SIGUSR1 and trigger-file incidents (ASan/UBSan)"
if [ -x build/tools-asan/hvnoise ]; then
	collect "$out/flight.log" tests/tools/flight.py build/tools-asan/hvnoise "$out/flight"
	grep -E "^  " "$out/flight.log"
else
	fail "flight/completed (no ASan build of hvnoise)"
fi

step "fuzzing every parser (libFuzzer, ASan/UBSan), 10 s each; make fuzz runs longer"
collect "$out/fuzz.log" tests/fuzz/run.sh 10 "$out/fuzz" "$out/tools"

# --- 2. builds and style ---------------------------------------------------
step "test kernel (6.12, KUnit) — cached, built on first use"
kernel612=$(scripts/build-test-kernel.sh tests/kunit/kernel.config) && pass "build/test kernel 6.12" ||
	{ fail "build/test kernel 6.12"; kernel612=""; }

step "module builds, W=1"
k61=$(scripts/kernel-dir.sh 6.1) || k61=""
k510=$(scripts/fetch-headers-5.10.sh 2>"$out/fetch-5.10.log") || { cat "$out/fetch-5.10.log"; k510=""; }
build() {
	local name=$1 kdir=$2
	shift 2
	if [ -z "$kdir" ]; then
		fail "build/$name (no kernel tree)"
	elif scripts/kbuild.sh "build/kbuild-$name" "$kdir" "$@" 2>"$out/kbuild-$name.err"; then
		pass "build/$name W=1 without warnings"
	else
		cat "$out/kbuild-$name.err"
		fail "build/$name W=1 without warnings"
	fi
}
build 5.10 "$k510" CC=gcc
build 6.1 "$k61"
build 6.12 "$kernel612" HVNOISE_KUNIT=m

step "make install, make uninstall and DKMS (private trees) against the 6.1 headers"
if [ -n "$k61" ]; then
	collect "$out/install.log" tests/install/install.sh "$out/install" "$k61"
else
	fail "install/completed (no 6.1 kernel headers)"
fi

step "checkpatch"
src612=$(ls -d "${HVNOISE_CACHE:-$HOME/.cache/hvnoise}"/linux-source-* 2>/dev/null | tail -n 1)
if [ -x "$src612/scripts/checkpatch.pl" ]; then
	files=$(find kmod tests/kunit tests/lib include -name '*.[ch]' ! -name '*.mod.c' | sort)
	# shellcheck disable=SC2086
	"$src612/scripts/checkpatch.pl" --no-tree --quiet --show-types -f $files >"$out/checkpatch.log" 2>&1
	if grep -q "^ERROR" "$out/checkpatch.log"; then
		grep -A3 "^ERROR" "$out/checkpatch.log"
		fail "style/checkpatch kmod/ (errors)"
	else
		pass "style/checkpatch kmod/ (no errors; $(grep -c '^WARNING' "$out/checkpatch.log") warnings)"
	fi
else
	fail "style/checkpatch (no kernel source)"
fi

# --- 3. KUnit --------------------------------------------------------------
step "KUnit on the 6.12 test kernel"
if [ -n "$kernel612" ] && [ -f build/kbuild-6.12/tests/kunit/hvnoise_kunit.ko ]; then
	tests/vm/mkinitramfs.sh "$out/kunit-initrd.gz" \
		--file tests/kunit/guest.sh=/lib/hvnoise/guest.sh \
		--file build/kbuild-6.12/tests/kunit/hvnoise_kunit.ko=/lib/hvnoise/hvnoise_kunit.ko \
		--file build/kbuild-6.12/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
	# One TCG thread emulating 4 vCPUs of a KASAN+lockdep kernel can leave
	# RCU's kthread unscheduled past the default 21 s stall warning.
	HVN_VM_APPEND="rcupdate.rcu_cpu_stall_timeout=120 pci=noacpi" \
	tests/vm/qemu.sh "$kernel612/arch/x86/boot/bzImage" "$out/kunit-initrd.gz" \
		"$out/kunit-console.log" /lib/hvnoise/guest.sh 300 2>"$out/kunit-qemu.err"
	grep -E "^(PASS|FAIL): " "$out/kunit-console.log" | tee -a "$results"
	grep -q "HVNOISE-VM-DONE" "$out/kunit-console.log" && pass "kunit-vm/completed" ||
		{ tail -30 "$out/kunit-console.log"; fail "kunit-vm/completed"; }
	collect "$out/ktap.log" tests/kunit/ktap.py "$out/kunit-console.log" \
		tests/lib/*_test.c tests/kunit/*_kunit.c ||
		grep -B2 -A12 "not ok" "$out/kunit-console.log" | head -60
else
	fail "kunit-vm/completed (no test kernel or KUnit module)"
fi

# --- 4. VM integration -----------------------------------------------------
step "VM integration on Debian's stock kernel"
if [ -n "$k61" ] && [ -f build/kbuild-6.1/kmod/hvnoise.ko ]; then
	kver=$(basename "$k61" | sed 's/^linux-headers-//')
	tests/vm/mkinitramfs.sh "$out/vm-initrd.gz" --kver "$kver" \
		--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
		--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
		--file tests/vm/guest-integration.sh=/lib/hvnoise/guest.sh \
		--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
	tests/vm/qemu.sh "/boot/vmlinuz-$kver" "$out/vm-initrd.gz" \
		"$out/vm-console.log" /lib/hvnoise/guest.sh 600 2>"$out/vm-qemu.err"
	grep -E "^(PASS|FAIL): " "$out/vm-console.log" | tee -a "$results"
	grep -q "HVNOISE-VM-DONE" "$out/vm-console.log" && pass "vm/completed" ||
		{ tail -30 "$out/vm-console.log"; fail "vm/completed"; }
else
	fail "vm/completed (no 6.1 kernel or module build)"
fi

# --- 5. detectors against real noise -------------------------------------------
step "VM detectors: storms, migrations, injected hypervisor noise"
if [ -n "$k61" ] && [ -f build/kbuild-6.1/kmod/hvnoise.ko ] &&
	gcc -O2 -Wall -Wextra -Werror -static -o "$out/rawsend" tests/vm/tools/rawsend.c &&
	gcc -O2 -Wall -Wextra -Werror -static -o "$out/dread" tests/vm/tools/dread.c &&
	gcc -O2 -Wall -Wextra -Werror -o "$out/hog" tests/vm/tools/hog.c; then
	kver=$(basename "$k61" | sed 's/^linux-headers-//')
	tests/vm/mkinitramfs.sh "$out/detect-initrd.gz" --kver "$kver" \
		--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
		--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
		--bin build/tools/nccl_fake=/usr/bin/nccl_fake \
		--file build/tools/libnccl-profiler-hvnoise.so=/usr/lib/libnccl-profiler-hvnoise.so \
		--file tests/vm/guest-detectors.sh=/lib/hvnoise/guest.sh \
		--file tests/vm/guest-lib.sh=/lib/hvnoise/lib.sh \
		--file "$out/rawsend=/lib/hvnoise/rawsend" \
		--file "$out/dread=/lib/hvnoise/dread" \
		--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
	tests/vm/detectors.py "/boot/vmlinuz-$kver" "$out/detect-initrd.gz" "$out" "$out/hog" \
		>"$out/detectors.log" 2>&1
	grep -E "^(PASS|FAIL): " "$out/detectors.log" | tee -a "$results"
	grep -E "^(BASELINE|QUIET|STORM|MIGRATE|BPF-VS|  |PAUSE|HOG|JOB)" "$out/detectors.log"

	step "hvnoise record's file from the detector VM, against trace-cmd report"
	collect "$out/vmfile.log" tests/tools/vmfile.py "$out/vm-disk.img" \
		"$out/detect-console.log" "$out/vm-record.dat" build/tools-asan/hvnoise
	grep -E "^  " "$out/vmfile.log"
	if [ -s "$out/vm-record.dat" ] &&
		trace-cmd convert -i "$out/vm-record.dat" -o "$out/vm-record-zstd.dat" \
			--file-version 7 --compression zstd >/dev/null 2>&1; then
		HVN_CHECK_PREFIX=vm-tools/corrupt/ collect "$out/vmfile-corrupt.log" \
			tests/tools/corrupt.py build/tools-asan/hvnoise "$out/tools" \
			"$out/vm-record.dat" "$out/vm-record-zstd.dat"
	else
		fail "vm-tools/corrupt (no recording from the VM to convert)"
	fi

	step "NCCL-like job in the detector VM: hvnoise correlate against the injected noise"
	collect "$out/nccl-e2e.log" tests/tools/nccl_e2e.py "$out/detect-console.log" \
		"$out/vm-record.dat" build/tools-asan/hvnoise
	grep -E "^  " "$out/nccl-e2e.log"

	step "VM: 100 load/unload cycles under an IRQ storm, with CPU hotplug"
	tests/vm/mkinitramfs.sh "$out/cycles-initrd.gz" --kver "$kver" \
		--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
		--file tests/vm/guest-cycles.sh=/lib/hvnoise/guest.sh \
		--file "$out/dread=/lib/hvnoise/dread" \
		--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
	HVN_VM_ACCEL=tcg,thread=single HVN_VM_CPUS=2 tests/vm/qemu.sh "/boot/vmlinuz-$kver" \
		"$out/cycles-initrd.gz" "$out/cycles-console.log" /lib/hvnoise/guest.sh 600 \
		2>"$out/cycles-qemu.err"
	grep -E "^(PASS|FAIL): " "$out/cycles-console.log" | tee -a "$results"
	grep -q "HVNOISE-VM-DONE" "$out/cycles-console.log" && pass "vm-cycles/completed" ||
		{ tail -30 "$out/cycles-console.log"; fail "vm-cycles/completed"; }
else
	fail "vm-detect/completed (no 6.1 kernel, module or test tools)"
fi

step "libtraceevent plugin: trace-cmd report decodes hvnoise events and NCCL records as hvnoise report counts them"
vmdat=()
[ -s "$out/vm-record.dat" ] && vmdat=("$out/vm-record.dat")
if make -s build/tools/plugin_hvnoise.so build/tools-asan/plugin_hvnoise.so >"$out/plugin-build.log" 2>&1; then
	collect "$out/plugin.log" tests/tools/plugin.py build/tools-asan/hvnoise build/tools \
		"$out/plugin" --asan build/tools-asan "${vmdat[@]}"
	grep -E "^  " "$out/plugin.log"
else
	cat "$out/plugin-build.log"
	fail "plugin/build"
fi

step "VM: the flight recorder's triggers (a host pause, a disk storm, a touch, SIGUSR1) on Debian's kernel"
if [ -n "$k61" ] && [ -f build/kbuild-6.1/kmod/hvnoise.ko ] && mkdir -p "$out/vm-flight" &&
	gcc -O2 -Wall -Wextra -Werror -static -o "$out/vm-flight/dread" tests/vm/tools/dread.c &&
	make -s build/tools/plugin_hvnoise.so; then
	kver=$(basename "$k61" | sed 's/^linux-headers-//')
	tests/vm/mkinitramfs.sh "$out/vm-flight/initrd.gz" --kver "$kver" \
		--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
		--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
		--file tests/vm/guest-flight.sh=/lib/hvnoise/guest.sh \
		--file "$out/vm-flight/dread=/lib/hvnoise/dread" \
		--file build/tools/plugin_hvnoise.so=/lib/hvnoise/plugin_hvnoise.so \
		--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
	collect "$out/vm-flight.log" tests/vm/flight.py "/boot/vmlinuz-$kver" \
		"$out/vm-flight/initrd.gz" "$out/vm-flight"
	grep -E "^  " "$out/vm-flight.log"
else
	fail "vm-flight/completed (no 6.1 kernel or module build)"
fi

step "stress on the 6.12 debug kernel (KASAN, lockdep, kmemleak), short form; make stress runs 500 cycles"
if [ -n "$kernel612" ] && [ -f build/kbuild-6.12/kmod/hvnoise.ko ] && [ -x "$out/dread" ]; then
	collect "$out/stress.log" tests/vm/stress.sh 10 "$out" "$kernel612" \
		build/kbuild-6.12/kmod/hvnoise.ko "$out/dread"
	grep "^  host" "$out/stress.log"
else
	fail "stress/completed (no test kernel, 6.12 module or dread)"
fi

npass=$(grep -c "^PASS: " "$results")
nfail=$(grep -c "^FAIL: " "$results")
echo
if [ "$nfail" -gt 0 ]; then
	echo "Failed checks:"
	grep "^FAIL: " "$results"
fi
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
