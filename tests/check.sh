#!/bin/bash
# hvnoise's test suite: what `make check` runs.
#
#   1. userspace unit tests of kmod/lib/ and tools/lib/ (ASan/UBSan); the hvnoise
#      command, its BPF source, metrics and flight recorder on this host;
#      fuzzing
#   2. module builds (W=1, no warnings) against Debian 11's 5.10 headers,
#      Debian 12's 6.1 headers, 6.12 and 7.2 trees, the 7.2 test kernel, and
#      for arm64 Debian 12's 6.1 headers and a 7.2 tree; make install and
#      DKMS against the 6.1 headers; checkpatch on kmod/ and tools/
#   3. KUnit suites in QEMU on the 7.2 test kernel (built once, cached)
#   4. VM integration on Debian's stock kernel in QEMU; on Debian's arm64
#      kernel in QEMU's aarch64 virt machine (the module, and the tool
#      cross-built for arm64 with its BPF source)
#
# The report is KTAP, a subtest per stage (tests/report.sh); a kernel tree
# that is missing (5.10 headers that cannot be fetched, no 6.1 headers, no
# linux-source-6.12, so no checkpatch, no 7.2 source, so no test kernel)
# makes its checks
# SKIPs with the reason.  The last line counts the checks: "N passed,
# N failed[, N skipped][, N xfail]"; the exit status is non-zero if one
# failed.  Logs and results.txt (the KTAP): build/check/.  HVNOISE_CACHE
# moves the kernel cache (~/.cache/hvnoise).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/build/check
. tests/report.sh

# make check STAGES="unit vm-detect" (HVN_STAGES): those stages alone, after
# the builds they need; a stage that reads another's output brings that
# stage too (prometheus the tools stage's live recording, kernelshark the
# plugin stage's files, bench-smoke the detector VM's recording; the
# detector VM's stages, vm-detect, vm-tools, nccl-e2e and vm-cycles, are
# one run, with the tools stage).
HVN_STAGES=$(echo ${HVN_STAGES:-})
all_stages=$(sed -n 's/^[[:space:]]*\(if \)\{0,1\}stage \([a-z0-9-]*\) .*/\2/p' \
	"$top/tests/check.sh" | xargs)
for s in $HVN_STAGES; do
	case " $all_stages " in
	*" $s "*) ;;
	*) echo "make check: STAGES: no stage \"$s\"; the stages: $all_stages" >&2
		exit 2 ;;
	esac
done
if [ -n "$HVN_STAGES" ]; then
	report_want prometheus && HVN_STAGES="$HVN_STAGES tools"
	report_want kernelshark && HVN_STAGES="$HVN_STAGES plugin"
	report_want bench-smoke && HVN_STAGES="$HVN_STAGES vm-detect"
	# The detector VM's stages are one run: each brings the others, and
	# vm-tools writes its cases beside the tools stage's.
	for s in vm-detect vm-tools nccl-e2e vm-cycles; do
		report_want $s && HVN_STAGES="$HVN_STAGES vm-detect vm-tools nccl-e2e vm-cycles tools"
	done
fi
rm -rf "$out"
mkdir -p "$out"
report_init "$out/results.txt"

# mkinitrd OUT ARGS...: a VM test's initramfs (--guest brings the guest
# library).
mkinitrd() {
	tests/vm/mkinitramfs.sh "$@"
}
# run_vm NAME PREFIX KERNEL TIMEOUT [VAR=VALUE...] -- MKINITRAMFS_ARGS...:
# build NAME-initrd.gz, boot it with /lib/hvnoise/guest.sh (tests/vm/qemu.sh,
# VAR=VALUE in its environment), take the guest's results from
# NAME-console.log and check that the guest finished (PREFIX/completed).
run_vm() {
	local name=$1 prefix=$2 kernel=$3 timeout=$4 envs=() log=$out/$1-console.log
	shift 4
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	mkinitrd "$out/$name-initrd.gz" "$@"
	env "${envs[@]}" tests/vm/qemu.sh "$kernel" "$out/$name-initrd.gz" "$log" \
		/lib/hvnoise/guest.sh "$timeout" 2>"$out/$name-qemu.err"
	results_from "$log"
	if grep -q "HVNOISE-VM-DONE" "$log"; then
		pass "$prefix/completed"
	else
		tail -30 "$log" | diag
		fail "$prefix/completed"
	fi
}

# --- 1. unit tests, and the hvnoise command on this host --------------------
if stage unit "userspace unit tests (ASan/UBSan)"; then
	if make -s unit-build >"$out/unit-build.log" 2>&1; then
		collect "$out/unit.log" build/unit/hvnoise-unit ||
			grep -B3 "^not ok" "$out/unit.log" | head -40 | diag
		collect "$out/tool-unit.log" build/unit/hvnoise-tool-unit ||
			grep -B3 "^not ok" "$out/tool-unit.log" | head -40 | diag
	else
		diag <"$out/unit-build.log"
		fail "unit/build"
	fi
fi

# The tools are built whatever stages run: every other stage uses them.
stage tools "the hvnoise command on this host (live tracefs, ASan/UBSan)"
if make -s tools >"$out/tools-build.log" 2>&1; then
	pass "tools/build (-Wall -Wextra -Werror, and ASan/UBSan)"
	if report_want tools; then
		collect "$out/tools.log" tests/host/host.sh build/tools-asan/hvnoise "$out/tools"
		grep -E "^  " "$out/tools.log" | grep -v "^  |" | head -20 | diag
	fi
else
	diag <"$out/tools-build.log"
	fail "tools/build (-Wall -Wextra -Werror, and ASan/UBSan)"
fi

if stage bpf "the BPF source on this host (live, ASan/UBSan)"; then
	if [ -x build/tools-asan/hvnoise ]; then
		collect "$out/bpf.log" tests/host/bpf.sh build/tools-asan/hvnoise "$out/bpf"
	fi
fi

if stage prom "metrics: hvnoise report --prom, and hvnoise exporter scraped over loopback (ASan/UBSan)"; then
	if [ -x build/tools-asan/hvnoise ]; then
		collect "$out/prom.log" tests/host/prom.py build/tools-asan/hvnoise "$out/prom"
		grep -E "^  " "$out/prom.log" | diag
	else
		fail "prom/completed (no ASan build of hvnoise)"
	fi
fi

if stage prometheus "Prometheus: the rules (promtool check and test), expositions linted, a real server scraping two exporters and node_exporter's textfile collector, the dashboard's queries (ASan/UBSan)"; then
	if [ -x build/tools-asan/hvnoise ] && [ -f "$out/tools/live.dat" ]; then
		collect "$out/prometheus.log" tests/host/prometheus.py build/tools-asan/hvnoise \
			"$out/tools/live.dat" "$out/prometheus"
		grep -E "^  " "$out/prometheus.log" | diag
	else
		fail "prometheus/completed (no ASan build of hvnoise, or no live.dat from the tools stage)"
	fi
fi

if stage readme "the README's command lines, run as written where this host can (the rest skipped with what covers them); every example of Documentation/ and the man pages as typed"; then
	collect "$out/readme.log" tests/host/readme.py "$out/readme"
	grep -E "^  " "$out/readme.log" | head -20 | diag
	collect "$out/docs.log" tests/host/docs.py build/tools/hvnoise "$out/docs"
fi

if stage flight "flight recorder: hvnoise record --flight-recorder, SIGUSR1 and trigger-file incidents, and faults: a full disk, SIGKILL, its instance removed (ASan/UBSan); each systemd unit's command under its sandbox and system call filter"; then
	if [ -x build/tools-asan/hvnoise ]; then
		collect "$out/flight.log" tests/host/flight.py build/tools-asan/hvnoise "$out/flight"
		grep -E "^  " "$out/flight.log" | diag
		collect "$out/flight-faults.log" tests/host/flight_faults.py build/tools-asan/hvnoise \
			"$out/flight-faults"
		grep -E "^  " "$out/flight-faults.log" | diag
		# The units' commands under their sandboxes (the release build:
		# the filter is for it, not for ASan's runtime).
		collect "$out/units.log" tests/host/units.py build/tools/hvnoise \
			build/tools/seccomp_run "$out/units"
	else
		fail "flight/completed (no ASan build of hvnoise)"
	fi
fi

if stage fuzz "fuzzing every parser (libFuzzer, ASan/UBSan), 10 s each; make fuzz runs longer"; then
	collect "$out/fuzz.log" tests/fuzz/run.sh 10 "$out/fuzz" "$out/tools"
fi

# --- 2. builds and style ---------------------------------------------------
# A kernel tree that is missing is a SKIP of what needs it, with the reason
# (*_why); one that fails to build is a FAIL.  The builds run where a chosen
# stage needs a module or a kernel, reported only where build is chosen.
needs_kernels=""
for s in build install package kunit vm vm-advise vm-detect plugin kernelshark vm-flight vm-fleet vm-scale \
	vm-arm64 vm-lowres vm-innocent stress bench-smoke; do
	report_want $s && needs_kernels=1
done
k61="" kver="" k61_why="not built: no chosen stage needs it" ktest="" ktest_why=$k61_why
k61arm="" k61arm_why=$k61_why
stage build "module builds, W=1: 5.10, 6.1, 6.12, 7.2 (x86-64), 6.1 and 7.2 (arm64); the 7.2 test kernel (KUnit, KASAN, lockdep, kmemleak), cached, built on first use"
if [ -n "$needs_kernels" ]; then
	k61_why=""
	k61=$(scripts/kernel-dir.sh 6.1 2>"$out/kdir-6.1.log") ||
		{ k61=""; k61_why="no 6.1 kernel headers: $(tail -n 1 "$out/kdir-6.1.log")"; }
	kver=""
	[ -n "$k61" ] && kver=$(basename "$k61" | sed 's/^linux-headers-//')
	k510_why=""
	k510=$(scripts/fetch-headers-5.10.sh 2>"$out/fetch-5.10.log") || {
		diag <"$out/fetch-5.10.log"
		k510=""
		k510_why="Debian 11's 5.10 headers could not be fetched: $(tail -n 1 "$out/fetch-5.10.log")"
	}
	# Linux 7.2 (x86-64 and arm64) and 6.12: compile-only trees configured
	# from linux-source-SERIES (sid's 7.2, Debian 12's 6.12) with the local gcc
	# (scripts/fetch-source-tree.sh, cached).  Exit 2 there means the tree
	# cannot be had here: a SKIP, as for 5.10.  Sets tree_kdir and tree_why
	# (empty both: it failed to configure, a FAIL).
	tree() {
		local log="$out/fetch-$1-$2.log" rc
		tree_kdir=$(scripts/fetch-source-tree.sh "$1" "$2" 2>"$log")
		rc=$?
		tree_why=""
		if [ $rc -eq 2 ]; then
			tree_why="no Linux $1 tree for $2 here: $(tail -n 1 "$log")"
		elif [ $rc -ne 0 ]; then
			diag <"$log"
		fi
		[ $rc -eq 0 ] || tree_kdir=""
	}
	tree 7.2 x86_64
	k72=$tree_kdir k72_why=$tree_why
	tree 7.2 arm64
	k72arm=$tree_kdir k72arm_why=$tree_why
	tree 6.12 x86_64
	k612=$tree_kdir k612_why=$tree_why
	# The test kernel: tinyconfig and tests/kunit/kernel.config, from the 7.2
	# tree's source; where sid's 7.2 cannot be had, from Debian 12's 6.12, so
	# that the KASAN, lockdep and kmemleak runs are not lost offline.
	ktest="" ktest_why="" ktest_src="" ktest_ver=""
	if [ -n "$k72" ]; then
		ktest_src=$(readlink -f "$k72/source") ktest_ver=7.2
	elif [ -n "$k612" ]; then
		ktest_src=$(readlink -f "$k612/source") ktest_ver=6.12
	fi
	if [ -n "$ktest_src" ]; then
		if ktest=$(scripts/build-test-kernel.sh tests/kunit/kernel.config "$ktest_src" \
			2>"$out/test-kernel.log"); then
			pass "build/test kernel $ktest_ver (KASAN, lockdep, kmemleak, KUnit)"
		else
			diag <"$out/test-kernel.log"
			fail "build/test kernel $ktest_ver (KASAN, lockdep, kmemleak, KUnit)"
			ktest=""
		fi
	else
		ktest_why="no kernel source for the test kernel: ${k72_why:-the 7.2 tree failed}; ${k612_why:-the 6.12 tree failed}"
		skip "build/test kernel (KASAN, lockdep, kmemleak, KUnit)" "$ktest_why"
	fi
	# fetch_arm64 MODE LOG WHAT: scripts/fetch-headers-6.1-arm64.sh MODE (none,
	# --vm or --libs), as tree() does: sets fetched (its root; empty on a
	# failure) and fetch_why (on exit 2, cannot be had here: a SKIP; empty on
	# any other failure, the script's: a FAIL).
	fetch_arm64() {
		local log="$out/$2" rc
		fetched=$(scripts/fetch-headers-6.1-arm64.sh ${1:+"$1"} 2>"$log")
		rc=$?
		fetch_why=""
		if [ $rc -ne 0 ]; then
			diag <"$log"
			fetched=""
			[ $rc -eq 2 ] && fetch_why="$3 could not be fetched: $(tail -n 1 "$log")"
		fi
	}
	# Debian 12's arm64 6.1 headers, cross-built against (aarch64-linux-gnu-gcc).
	k61arm_why=""
	if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
		k61arm=""
		k61arm_why="no aarch64-linux-gnu-gcc (scripts/install-deps.sh installs gcc-aarch64-linux-gnu)"
	else
		fetch_arm64 "" fetch-6.1-arm64.log "Debian 12's arm64 6.1 headers"
		k61arm=$fetched k61arm_why=$fetch_why
	fi
	arm64="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
	build() {
		local name=$1 kdir=$2 why=$3
		shift 3
		if [ -z "$kdir" ] && [ -n "$why" ]; then
			skip "build/$name W=1 without warnings" "$why"
		elif [ -z "$kdir" ]; then
			fail "build/$name (no kernel tree)"
		elif scripts/kbuild.sh "build/kbuild-$name" "$kdir" "$@" 2>"$out/kbuild-$name.err"; then
			pass "build/$name W=1 without warnings"
		else
			diag <"$out/kbuild-$name.err"
			fail "build/$name W=1 without warnings"
		fi
	}
	build 5.10 "$k510" "$k510_why" CC=gcc
	build 6.1 "$k61" "$k61_why"
	build 6.12 "$k612" "$k612_why"
	build 7.2 "$k72" "$k72_why"
	# The modules the test kernel loads: built against it, with the KUnit suites.
	build test "$ktest" "$ktest_why" HVNOISE_KUNIT=m
	# shellcheck disable=SC2086
	build 6.1-arm64 "$k61arm" "$k61arm_why" $arm64
	# shellcheck disable=SC2086
	build 7.2-arm64 "$k72arm" "$k72arm_why" $arm64
	# The 7.2 trees have no Module.symvers (modules_prepare only): modpost
	# cannot refuse an import the kernel does not export, and such a module
	# builds, then fails to load.  scripts/check-exports.py reads the source's
	# exports instead; first, that it refuses an import no kernel exports.
	kos=""
	for n in 7.2 7.2-arm64; do
		[ -f "build/kbuild-$n/kmod/hvnoise.ko" ] && kos="$kos build/kbuild-$n/kmod/hvnoise.ko"
	done
	if [ -z "$kos" ] || [ -z "${k72:-$k72arm}" ]; then
		skip "build/7.2: every import of hvnoise.ko is exported to it by the 7.2 source" \
			"no 7.2 tree or module: ${k72_why:-${k72arm_why:-the builds failed}}"
	else
		# Two that must be refused: a symbol no kernel has, and a tracepoint
		# the kernel does not export (its macro body's "__tracepoint_##name"
		# is not an export).
		printf 'extern void hvn_no_such_export(void);\nvoid f(void) { hvn_no_such_export(); }\n' |
			gcc -c -x c -o "$out/noexport.o" -
		printf 'extern int __tracepoint_irq_handler_entry;\nint f(void) { return __tracepoint_irq_handler_entry; }\n' |
			gcc -c -x c -o "$out/notexported.o" -
		# shellcheck disable=SC2086
		scripts/check-exports.py "${k72:-$k72arm}" $kos "$out/noexport.o" "$out/notexported.o" \
			>"$out/exports.log" 2>&1
		diag <"$out/exports.log"
		if grep -q "noexport.o imports hvn_no_such_export," "$out/exports.log" &&
			grep -q "notexported.o imports __tracepoint_irq_handler_entry," "$out/exports.log"; then
			pass "build/check-exports.py refuses imports the 7.2 source does not export"
		else
			fail "build/check-exports.py refuses imports the 7.2 source does not export"
		fi
		for n in 7.2 7.2-arm64; do
			ko=build/kbuild-$n/kmod/hvnoise.ko
			case " $kos " in *" $ko "*) ;; *) continue ;; esac
			if grep -q "^check-exports: $ko (" "$out/exports.log" &&
				! grep -q "^check-exports: $ko imports" "$out/exports.log"; then
				pass "build/$n: every import of hvnoise.ko is exported to it by the 7.2 source"
			else
				fail "build/$n: every import of hvnoise.ko is exported to it by the 7.2 source"
			fi
		done
	fi
fi

if stage install "make install, make uninstall and DKMS (private trees) against the 6.1 headers"; then
	if [ -n "$k61" ]; then
		collect "$out/install.log" tests/install/install.sh "$out/install" "$k61"
	else
		skip "install/completed" "$k61_why"
	fi
fi

if stage package "Debian packages: dpkg-buildpackage, lintian, install, upgrade and purge (in an overlay of this system), the DKMS-built module loaded in the 6.1 guest"; then
	if [ -n "$k61" ]; then
		collect "$out/package.log" tests/install/package.sh "$out/package" "$k61"
		if [ -f "$out/package/dkms-hvnoise.ko" ]; then
			echo "$(sed -n 's/^#define HVN_VERSION[^"]*"\(.*\)"/\1/p' include/hvnoise/version.h)" \
				>"$out/package/version"
			run_vm package-vm package-vm "/boot/vmlinuz-$kver" 300 HVN_VM_CPUS=2 -- --kver "$kver" \
				--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
				--bin "$out/package/root/usr/sbin/hvnoise=/usr/bin/hvnoise" \
				--guest tests/vm/guest-package.sh \
				--file "$out/package/version=/lib/hvnoise/version" \
				--file "$out/package/dkms-hvnoise.ko=/lib/hvnoise/hvnoise.ko"
		elif grep -q "# SKIP" "$out/package.log"; then
			skip "package-vm/completed" "$(sed -n 's/.*# SKIP //p' "$out/package.log" | head -1)"
		else
			fail "package-vm/completed (DKMS built no module in the package test)"
		fi
	else
		skip "package/completed" "$k61_why"
	fi
fi

if stage vm-advise "VM: hvnoise advise from a NIC storm on the job's CPU to the fix: --apply, --verify, --restore; a managed disk queue refused"; then
	if [ -z "$k61" ]; then
		skip "vm-advise/completed" "$k61_why"
	elif [ -f build/kbuild-6.1/kmod/hvnoise.ko ] && make -s vmtools && mkdir -p "$out/vm-advise"; then
		mkinitrd "$out/vm-advise/initrd.gz" --kver "$kver" \
			--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--bin build/tools/hvnoise=/usr/bin/hvnoise \
			--bin build/tools/nccl_fake=/usr/bin/nccl_fake \
			--file build/tools/libnccl-profiler-hvnoise.so=/usr/lib/libnccl-profiler-hvnoise.so \
			--guest tests/vm/guest-advise.sh \
			--file build/vmtools/rawsend=/lib/hvnoise/rawsend \
			--file build/vmtools/dread=/lib/hvnoise/dread \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		collect "$out/vm-advise.log" tests/vm/advise.py "/boot/vmlinuz-$kver" \
			"$out/vm-advise/initrd.gz" "$out/vm-advise" build/vmtools/hoststops
	else
		fail "vm-advise/completed (no 6.1 module build, or make vmtools failed)"
	fi
fi

if stage bench "benchmarks' smoke run: bench/instructions.sh's QEMU plugin builds against the installed QEMU's plugin API and loads into it"; then
	if inc=$(scripts/fetch-qemu-plugin-header.sh 2>"$out/qemu-plugin-header.log"); then
		mkdir -p "$out/bench"
		if gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$inc" \
			-o "$out/bench/insn-plugin.so" bench/insn-plugin.c 2>"$out/bench/build.err"; then
			pass "bench/insn-plugin.c builds (-Wall -Wextra -Werror) against $inc"
		else
			diag <"$out/bench/build.err"
			fail "bench/insn-plugin.c builds (-Wall -Wextra -Werror) against $inc"
		fi
		# QEMU loads it, and it says what it counted when QEMU quits.
		echo quit | timeout 60 qemu-system-x86_64 -machine none -nodefaults -display none \
			-monitor stdio -plugin "$out/bench/insn-plugin.so,out=$out/bench/counts.txt" \
			>"$out/bench/qemu.log" 2>&1
		rc=$?
		if [ $rc = 0 ] && grep -q "^# 0 segments, " "$out/bench/counts.txt" 2>/dev/null; then
			pass "QEMU loads the plugin and it writes its counts at exit"
		else
			diag <"$out/bench/qemu.log"
			fail "QEMU loads the plugin and it writes its counts at exit (exit $rc)"
		fi
	else
		skip "bench/insn-plugin.c builds against the installed QEMU's plugin API" \
			"Debian's QEMU source cannot be fetched: $(tail -n 1 "$out/qemu-plugin-header.log")"
	fi
fi

if stage style "checkpatch"; then
	# 6.12's checkpatch, from the source scripts/fetch-source-tree.sh extracted.
	src612=$(ls -d "${HVNOISE_CACHE:-$HOME/.cache/hvnoise}"/source-6.12/linux-*/ 2>/dev/null | tail -n 1)
	# The module's code, and the tools' and tests' userspace C (kernel style).
	for set in "kmod/:kmod tests/kunit tests/lib include" \
		"tools/:tools tests/unit tests/fuzz tests/host tests/vm bench"; do
		name=${set%%:*}
		if [ -x "$src612/scripts/checkpatch.pl" ]; then
			# shellcheck disable=SC2086
			files=$(find ${set#*:} -name '*.[ch]' ! -name '*.mod.c' | sort)
			log="$out/checkpatch-${name%/}.log"
			# shellcheck disable=SC2086
			"$src612/scripts/checkpatch.pl" --no-tree --quiet --show-types -f $files >"$log" 2>&1
			if grep -q "^ERROR" "$log"; then
				grep -A3 "^ERROR" "$log" | diag
				fail "style/checkpatch $name (errors)"
			else
				pass "style/checkpatch $name (no errors; $(grep -c '^WARNING' "$log") warnings)"
			fi
		else
			skip "style/checkpatch $name" "no kernel source with scripts/checkpatch.pl (Debian 12's linux-source-6.12, extracted into the cache by scripts/fetch-source-tree.sh)${k612_why:+: $k612_why}"
		fi
	done

	# Documentation/layout.rst names every file of the product and its
	# scripts (a header where its .c is named).
	unnamed=""
	for f in $(git ls-files kmod include tools scripts 2>/dev/null); do
		grep -qF "$(basename "$f")" Documentation/layout.rst && continue
		c=${f%.h}.c
		[ "$c" != "$f" ] && grep -qF "$(basename "$c")" Documentation/layout.rst && continue
		unnamed="$unnamed $f"
	done
	if [ -z "$unnamed" ]; then
		pass "style/layout: Documentation/layout.rst names every file of kmod/, include/, tools/ and scripts/"
	else
		fail "style/layout: Documentation/layout.rst names every file of kmod/, include/, tools/ and scripts/ (not:$unnamed)"
	fi
	# The tunables' table in Documentation/detectors.rst is tunable-list.h's.
	if msg=$(scripts/tunables.py --check 2>&1); then
		pass "style/tunables: Documentation/detectors.rst's table is include/hvnoise/tunable-list.h's"
	else
		echo "$msg" | diag
		fail "style/tunables: Documentation/detectors.rst's table is include/hvnoise/tunable-list.h's"
	fi
	# The tool's includes point down Documentation/layout.rst's layers.
	if msg=$(scripts/layers.py --check 2>&1); then
		pass "style/layers: no include of tools/ points up layout.rst's layers or loops ($(echo "$msg" | tail -1))"
	else
		echo "$msg" | diag
		fail "style/layers: no include of tools/ points up layout.rst's layers or loops"
	fi
fi

# --- 3. KUnit --------------------------------------------------------------
if stage kunit "KUnit on the test kernel (7.2; 6.12 where 7.2 cannot be had)"; then
	if [ -n "$ktest" ] && [ -f build/kbuild-test/tests/kunit/hvnoise_kunit.ko ]; then
		# One TCG thread emulating 4 vCPUs of a KASAN+lockdep kernel can leave
		# RCU's kthread unscheduled past the default 21 s stall warning.
		run_vm kunit kunit-vm "$ktest/arch/x86/boot/bzImage" 300 \
			HVN_VM_APPEND="rcupdate.rcu_cpu_stall_timeout=120 pci=noacpi" -- \
			--guest tests/kunit/guest.sh \
			--file build/kbuild-test/tests/kunit/hvnoise_kunit.ko=/lib/hvnoise/hvnoise_kunit.ko \
			--file build/kbuild-test/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		collect "$out/ktap.log" tests/kunit/ktap.py "$out/kunit-console.log" \
			tests/lib/*_test.c tests/kunit/*_kunit.c ||
			grep -B2 -A12 "not ok" "$out/kunit-console.log" | head -60 | diag
	elif [ -z "$ktest" ] && [ -n "$ktest_why" ]; then
		skip "kunit-vm/completed" "$ktest_why"
	else
		fail "kunit-vm/completed (no test kernel or KUnit module)"
	fi
fi

# --- 4. VM integration -----------------------------------------------------
if stage vm "VM integration on Debian's stock kernel"; then
	if [ -n "$k61" ] && [ -f build/kbuild-6.1/kmod/hvnoise.ko ]; then
		scripts/tunables.py --list >"$out/tunables.txt"
		# The test module (tests/vm/devhold); without it the guest's
		# insmod of it fails, said as a check.
		devhold=()
		rm -rf "$out/devhold" && cp -r tests/vm/devhold "$out/devhold" &&
			make -C "$k61" M="$(realpath "$out/devhold")" modules >"$out/devhold.log" 2>&1 &&
			devhold=(--file "$out/devhold/hvn_devhold.ko=/lib/hvnoise/hvn_devhold.ko") ||
			tail -20 "$out/devhold.log" | diag
		run_vm vm vm "/boot/vmlinuz-$kver" 600 -- --kver "$kver" \
			--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
			--guest tests/vm/guest-integration.sh \
			--file "$out/tunables.txt=/lib/hvnoise/tunables" \
			"${devhold[@]}" \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
	elif [ -z "$k61" ]; then
		skip "vm/completed" "$k61_why"
	else
		fail "vm/completed (no 6.1 kernel or module build)"
	fi
fi

# --- 5. detectors against real noise -------------------------------------------
if stage vm-detect "VM detectors: storms, migrations, injected hypervisor noise"; then
	if [ -z "$k61" ]; then
		skip "vm-detect/completed" "$k61_why"
	elif [ -f build/kbuild-6.1/kmod/hvnoise.ko ] && make -s vmtools; then
		mkinitrd "$out/detect-initrd.gz" --kver "$kver" \
			--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
			--bin build/tools/nccl_fake=/usr/bin/nccl_fake \
			--file build/tools/libnccl-profiler-hvnoise.so=/usr/lib/libnccl-profiler-hvnoise.so \
			--guest tests/vm/guest-detectors.sh \
			--file build/vmtools/rawsend=/lib/hvnoise/rawsend \
			--file build/vmtools/dread=/lib/hvnoise/dread \
			--file build/vmtools/pasttimers=/lib/hvnoise/pasttimers \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		collect "$out/detectors.log" tests/vm/detectors.py "/boot/vmlinuz-$kver" \
			"$out/detect-initrd.gz" "$out" build/vmtools/hog build/vmtools/hoststops
		grep -E "^(BASELINE|QUIET|STORM|MIGRATE|BPF-VS|  |PAUSE|HOG|JOB)" "$out/detectors.log" | diag

		stage vm-tools "hvnoise record's file from the detector VM, against trace-cmd report"
		collect "$out/vmfile.log" tests/host/vmfile.py "$out/vm-disk.img" \
			"$out/detect-console.log" "$out/vm-record.dat" build/tools-asan/hvnoise
		grep -E "^  " "$out/vmfile.log" | diag
		if [ -s "$out/vm-record.dat" ] &&
			trace-cmd convert -i "$out/vm-record.dat" -o "$out/vm-record-zstd.dat" \
				--file-version 7 --compression zstd >/dev/null 2>&1; then
			HVN_CHECK_PREFIX=vm-tools/corrupt/ collect "$out/vmfile-corrupt.log" \
				tests/host/corrupt.py build/tools-asan/hvnoise "$out/tools" \
				"$out/vm-record.dat" "$out/vm-record-zstd.dat"
		else
			fail "vm-tools/corrupt (no recording from the VM to convert)"
		fi

		stage nccl-e2e "NCCL-like job in the detector VM: hvnoise correlate against the injected noise"
		collect "$out/nccl-e2e.log" tests/host/nccl_e2e.py "$out/detect-console.log" \
			"$out/vm-record.dat" build/tools-asan/hvnoise
		grep -E "^  " "$out/nccl-e2e.log" | diag

		stage vm-cycles "VM: 100 load/unload cycles under an IRQ storm, with CPU hotplug"
		run_vm cycles vm-cycles "/boot/vmlinuz-$kver" 600 HVN_VM_ACCEL=tcg,thread=single HVN_VM_CPUS=2 -- \
			--kver "$kver" --kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--guest tests/vm/guest-cycles.sh \
			--file build/vmtools/dread=/lib/hvnoise/dread \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
	else
		fail "vm-detect/completed (no 6.1 kernel, module or test tools)"
	fi
fi

if stage plugin "libtraceevent plugin: trace-cmd report decodes hvnoise events and NCCL records as hvnoise report counts them"; then
	vmdat=()
	[ -s "$out/vm-record.dat" ] && vmdat=("$out/vm-record.dat")
	if make -s build/tools/plugin_hvnoise.so build/tools-asan/plugin_hvnoise.so >"$out/plugin-build.log" 2>&1; then
		collect "$out/plugin.log" tests/host/plugin.py build/tools-asan/hvnoise build/tools \
			"$out/plugin" --asan build/tools-asan "${vmdat[@]}"
		grep -E "^  " "$out/plugin.log" | diag
	else
		diag <"$out/plugin-build.log"
		fail "plugin/build"
	fi
fi

if stage kernelshark "KernelShark: its data library decodes the synthesized file and the VM's recording as trace-cmd report does; the GUI opens it under Xvfb (a screenshot)"; then
	if [ -s "$out/plugin/synth.dat" ]; then
		collect "$out/kernelshark.log" tests/host/kernelshark.sh "$out/kernelshark" build/tools \
			"$out/plugin/synth.dat" "${vmdat[@]}"
		grep -E "^  " "$out/kernelshark.log" | diag
	else
		fail "kernelshark/completed (no synthesized file from the plugin stage)"
	fi
fi

if stage vm-flight "VM: the flight recorder's triggers (a host pause, a disk storm, a touch, SIGUSR1), hvnoise.ko reloaded and the clock stepped under it, on Debian's kernel"; then
	if [ -z "$k61" ]; then
		skip "vm-flight/completed" "$k61_why"
	elif [ -f build/kbuild-6.1/kmod/hvnoise.ko ] && mkdir -p "$out/vm-flight" &&
		make -s vmtools build/tools/plugin_hvnoise.so; then
		mkinitrd "$out/vm-flight/initrd.gz" --kver "$kver" \
			--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
			--guest tests/vm/guest-flight.sh \
			--file build/vmtools/dread=/lib/hvnoise/dread \
			--file build/tools/plugin_hvnoise.so=/lib/hvnoise/plugin_hvnoise.so \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		collect "$out/vm-flight.log" tests/vm/flight.py "/boot/vmlinuz-$kver" \
			"$out/vm-flight/initrd.gz" "$out/vm-flight"
		grep -E "^  " "$out/vm-flight.log" | diag
	else
		fail "vm-flight/completed (no 6.1 kernel or module build)"
	fi
fi

if stage vm-fleet "two VMs, one job: hvnoise correlate over both hosts' recordings names the host the hypervisor paused, and the clocks' offset; three VMs, a communicator of two of them (the narrow case)"; then
	if [ -z "$k61" ]; then
		skip "vm-fleet/completed" "$k61_why"
	elif [ -f build/kbuild-6.1/kmod/hvnoise.ko ] && mkdir -p "$out/vm-fleet" &&
		make -s build/tools/nccl_fake build/tools/libnccl-profiler-hvnoise.so; then
		mkinitrd "$out/vm-fleet/initrd.gz" --kver "$kver" \
			--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--bin build/tools/hvnoise=/usr/bin/hvnoise \
			--bin build/tools/nccl_fake=/usr/bin/nccl_fake \
			--file build/tools/libnccl-profiler-hvnoise.so=/usr/lib/libnccl-profiler-hvnoise.so \
			--guest tests/vm/guest-fleet.sh \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		collect "$out/vm-fleet.log" tests/vm/fleet.py "/boot/vmlinuz-$kver" \
			"$out/vm-fleet/initrd.gz" "$out/vm-fleet" build/tools-asan/hvnoise
		grep -E "^  " "$out/vm-fleet.log" | diag
	else
		fail "vm-fleet/completed (no 6.1 kernel or module build)"
	fi
fi

if stage vm-scale "a big guest: 64 vCPUs of 320 possible, a disk with a queue each (65 vectors): the watched set, IRQ moves, a storm on the highest queue, by the module and the BPF source, on Debian's kernel"; then
	if [ -z "$k61" ]; then
		skip "vm-scale/completed" "$k61_why"
	elif [ -f build/kbuild-6.1/kmod/hvnoise.ko ] && mkdir -p "$out/vm-scale" &&
		make -s vmtools; then
		# 320 possible CPUs (64 present): past the 256 the BPF source once
		# stopped at, its maps and the module's per-CPU data sized for them.
		run_vm scale vm-scale "/boot/vmlinuz-$kver" 900 HVN_VM_CPUS=64 \
			HVN_VM_APPEND=possible_cpus=320 -- --kver "$kver" \
			--kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
			--guest tests/vm/guest-scale.sh \
			--file build/vmtools/dread=/lib/hvnoise/dread \
			--file build/vmtools/rawsend=/lib/hvnoise/rawsend \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		grep "^SCALE " "$out/scale-console.log" | diag
	else
		fail "vm-scale/completed (no 6.1 kernel or module build)"
	fi
fi

if stage vm-arm64 "arm64: Debian 12's arm64 kernel on QEMU's virt machine (GICv3, ITS): the watched set, an IRQ move, a storm, the host's pauses as lost time, by the module and the BPF source"; then
	a64_why=$k61arm_why
	[ -z "$a64_why" ] && ! command -v qemu-system-aarch64 >/dev/null &&
		a64_why="no qemu-system-aarch64 (scripts/install-deps.sh installs qemu-system-arm)"
	a64root=""
	if [ -z "$a64_why" ] && [ -n "$k61arm" ]; then
		fetch_arm64 --vm fetch-arm64-vm.log "Debian 12's arm64 kernel"
		a64root=$fetched a64_why=$fetch_why
	fi
	# The tool's arm64 libraries and trace-cmd, for the BPF source in the guest.
	a64libs=""
	if [ -z "$a64_why" ] && [ -n "$a64root" ]; then
		fetch_arm64 --libs fetch-arm64-libs.log \
			"Debian 12's arm64 libbpf, libtracefs, libtraceevent or trace-cmd"
		a64libs=$fetched a64_why=$fetch_why
	fi
	a64kver=""
	[ -n "$a64root" ] && a64kver=$(ls "$a64root/lib/modules" 2>/dev/null | head -n 1)
	a64lib=/usr/aarch64-linux-gnu/lib
	a64so=$a64libs/usr/lib/aarch64-linux-gnu
	if [ -n "$a64_why" ]; then
		skip "vm-arm64/completed" "$a64_why"
	elif [ -n "$a64kver" ] && [ -f build/kbuild-6.1-arm64/kmod/hvnoise.ko ] &&
		mkdir -p "$out/vm-arm64" &&
		make -s vmtools build/vmtools-arm64/dread build/vmtools-arm64/rawsend &&
		{ make -s -j"$(nproc)" build/tools-arm64/hvnoise ARM64_LIBS="$a64libs" \
			ARM64_BTF="$a64root/boot/vmlinuz-$a64kver" >"$out/vm-arm64/tool-build.log" 2>&1 ||
			{ diag <"$out/vm-arm64/tool-build.log"; false; }; }; then
		# trace-cmd is Debian's arm64 one: its libraries, and the cross
		# compiler's C library, where its loader looks.
		mkinitrd "$out/vm-arm64/initrd.gz" --root "$a64root" --busybox "$a64root/bin/busybox" \
			--kver "$a64kver" --kmod virtio_pci --kmod virtio_net --kmod virtio_blk \
			--guest tests/vm/guest-arm64.sh \
			--file build/tools-arm64/hvnoise=/usr/bin/hvnoise \
			--file "$a64libs/usr/bin/trace-cmd=/usr/bin/trace-cmd" \
			--file "$a64lib/ld-linux-aarch64.so.1=/lib/ld-linux-aarch64.so.1" \
			--file "$a64lib/libc.so.6=/lib/aarch64-linux-gnu/libc.so.6" \
			--file "$a64so/libtracefs.so.1=/lib/aarch64-linux-gnu/libtracefs.so.1" \
			--file "$a64so/libtraceevent.so.1=/lib/aarch64-linux-gnu/libtraceevent.so.1" \
			--file "$a64so/libzstd.so.1=/lib/aarch64-linux-gnu/libzstd.so.1" \
			--file build/vmtools-arm64/dread=/lib/hvnoise/dread \
			--file build/vmtools-arm64/rawsend=/lib/hvnoise/rawsend \
			--file build/kbuild-6.1-arm64/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		collect "$out/vm-arm64.log" tests/vm/arm64.py "$a64root/boot/vmlinuz-$a64kver" \
			"$out/vm-arm64/initrd.gz" "$out/vm-arm64" build/vmtools/hoststops
		grep -E "^  " "$out/vm-arm64.log" | diag
	else
		fail "vm-arm64/completed (no arm64 kernel, module build, tool build or witness)"
	fi
fi

if stage vm-lowres "VM: hrtimers in low-resolution mode (highres=off), the module and BPF through the host's pauses"; then
	if [ -z "$k61" ]; then
		skip "vm-lowres/completed" "$k61_why"
	elif [ -f build/kbuild-6.1/kmod/hvnoise.ko ] && mkdir -p "$out/vm-lowres" &&
		make -s vmtools; then
		mkinitrd "$out/vm-lowres/initrd.gz" --kver "$kver" \
			--bin /usr/bin/trace-cmd --bin build/tools/hvnoise=/usr/bin/hvnoise \
			--guest tests/vm/guest-lowres.sh \
			--file build/kbuild-6.1/kmod/hvnoise.ko=/lib/hvnoise/hvnoise.ko
		collect "$out/vm-lowres.log" tests/vm/lowres.py "/boot/vmlinuz-$kver" \
			"$out/vm-lowres/initrd.gz" "$out/vm-lowres" build/vmtools/hoststops
		grep -E "^  " "$out/vm-lowres.log" | diag
	else
		fail "vm-lowres/completed (no 6.1 kernel, module build or witness)"
	fi
fi

if stage vm-innocent "VM: busy but innocent (past deadlines, NMIs, hotplug, vectors freed), the module and BPF"; then
	if [ -z "$k61" ]; then
		skip "vm-innocent/completed" "$k61_why"
	elif [ -f build/kbuild-6.1/kmod/hvnoise.ko ]; then
		collect "$out/vm-innocent.log" tests/vm/innocent.sh "${INNOCENT_SECS:-30}" "$out/vm-innocent"
		grep -E "^  " "$out/vm-innocent.log" | diag
	else
		fail "vm-innocent/completed (no 6.1 kernel or module build)"
	fi
fi

if stage stress "stress on the test kernel (KASAN, lockdep, kmemleak), short form; make stress runs 500 cycles"; then
	if [ -n "$ktest" ] && [ -f build/kbuild-test/kmod/hvnoise.ko ] && make -s vmtools; then
		collect "$out/stress.log" tests/vm/stress.sh 10 "$out" "$ktest" \
			build/kbuild-test/kmod/hvnoise.ko build/vmtools/dread
		grep "^  host" "$out/stress.log" | diag
	elif [ -z "$ktest" ] && [ -n "$ktest_why" ]; then
		skip "stress/completed" "$ktest_why"
	else
		fail "stress/completed (no test kernel, its module or dread)"
	fi
fi

# Last: the speed benchmarks take the detector VM's recording as their
# template.  Runs, it does not measure: the figures are the full runs'.
if stage bench-smoke "every script of bench/ in a smoke form (tiny inputs), so that none can rot"; then
	mkdir -p "$out/bench-smoke"
	declare -A smoke_pid
	smoke_start() {	# smoke_start NAME CMD...: CMD in the background
		local name=$1
		shift
		("$@" >"$out/bench-smoke/$name.log" 2>&1; echo $? >"$out/bench-smoke/$name.rc") &
		smoke_pid[$name]=$!
	}
	smoke_end() {	# smoke_end NAME T0: it ran to its end, exit 0
		local name=$1 t0=$2 rc
		wait "${smoke_pid[$name]}"
		rc=$(cat "$out/bench-smoke/$name.rc" 2>/dev/null || echo "none")
		if [ "$rc" = 0 ]; then
			pass "bench-smoke/$name runs to its end ($((SECONDS - t0)) s)"
		else
			tail -15 "$out/bench-smoke/$name.log" | diag
			fail "bench-smoke/$name runs to its end (exit $rc)"
		fi
	}
	smoke() {	# smoke NAME CMD...: CMD runs to its end, exit 0
		local t0=$SECONDS
		smoke_start "$@"
		smoke_end "$1" $t0
	}
	smoke bpf-probe-cost bench/bpf-probe-cost.sh 1
	smoke nccl-plugin bench/nccl-plugin.sh 2000
	smoke report-speed bench/report-speed.py --size 1
	smoke correlate-speed bench/correlate-speed.py --sizes 0.01
	smoke kineto-speed bench/kineto-speed.py --sizes 1
	smoke fleet-speed bench/fleet-speed.py build/tools/hvnoise 4 2 10 100
	smoke overhead env HVN_VM_APPEND="BENCH_ROUNDS=1 BENCH_READS=100" bench/overhead.sh
	# The two instruction counts side by side: each is one single-threaded
	# QEMU, a core each, and counts instructions, not time.
	t0=$SECONDS
	smoke_start instructions-scale env BENCH_READS=100 BENCH_SECS=1 BENCH_ROUNDS=1 \
		bench/instructions.sh scale
	smoke instructions env BENCH_READS=100 BENCH_SECS=1 BENCH_ROUNDS=1 bench/instructions.sh
	smoke_end instructions-scale $t0
	# Each file of bench/ is one of those or what they run; a new one
	# fails here until it is given a smoke form.
	ran="bpf-probe-cost.sh nccl-plugin.sh report-speed.py synth-trace.py correlate-speed.py kineto-speed.py
		synth-nccl.py fleet-speed.py overhead.sh guest-overhead.sh table.py
		instructions.sh guest-instructions.sh insn-table.py guest-irq-scale.sh
		insn-scale.py guest-bench-lib.sh insn-plugin.c insn-mark.c evgen.c"
	left=""
	for f in bench/*; do
		case " $(echo $ran) " in *" $(basename "$f") "*) ;; *) left="$left $f" ;; esac
	done
	[ -z "$left" ] && pass "bench-smoke: every file of bench/ runs in a smoke form" ||
		fail "bench-smoke: every file of bench/ runs in a smoke form (not:$left)"
fi

report_finish
