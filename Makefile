# SPDX-License-Identifier: GPL-2.0
# hvnoise: build the module and tools, run the tests, run the demo.
#
#   make                 hvnoise.ko against KDIR (default: the running
#                        kernel's build dir, else the newest linux-headers)
#   make check           every test (installs what it needs; see README.md)
#   make demo            the module in a VM, its watch set and trace
#   make KDIR=/path      build against another kernel tree
#   make install         module, tools, plugins, man page (DESTDIR, PREFIX)
#   make uninstall       what make install put there
#   make dkms-install    the module under DKMS, rebuilt for every new kernel
#   make deb             Debian packages in build/deb/ (hvnoise, hvnoise-dkms, ...)

.DEFAULT_GOAL := all

KDIR ?= $(shell scripts/kernel-dir.sh)
CC_USER ?= gcc
USER_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -g -O1 \
	       -fsanitize=address,undefined -fno-sanitize-recover=all \
	       -Ikmod/lib -Iinclude -Itests/lib

LIB_SRCS := $(wildcard kmod/lib/*.c)
UNIT_SRCS := tests/unit/runner.c $(wildcard tests/lib/*_test.c)
# The tool library's cases (tests/unit/tool/), against libhvnoise under ASan.
TOOL_UNIT_SRCS := tests/unit/runner.c $(wildcard tests/unit/tool/*_test.c)

# libhvnoise: everything of the tool but its commands (tools/lib/, the BPF
# loader, and the module's kernel-independent library: the watched set and
# the storm logic of the BPF source are the module's own code).  The
# commands (tools/hvnoise/) and the fuzzers link it.
TOOL_LIB_SRCS := $(wildcard tools/lib/*.c tools/lib/*/*.c) \
		 $(filter-out %.bpf.c,$(wildcard tools/bpf/*.c)) \
		 kmod/lib/cpulist.c kmod/lib/devlist.c kmod/lib/watchset.c \
		 kmod/lib/storm.c
TOOL_CMD_SRCS := $(wildcard tools/hvnoise/*.c)
# Manual pages: a page per command, cut from hvnoise.8.rst, and section 7
# pages from Documentation/ (defined here: prerequisites expand at once).
MAN8_CMDS := record flight-recorder report top status correlate exporter trigger incidents advise
MAN8 := $(patsubst %,build/tools/hvnoise-%.8,$(MAN8_CMDS))
MAN7 := build/tools/hvnoise-admin.7 build/tools/hvnoise-events.7 \
	build/tools/hvnoise-forensics.7
TOOL_HDRS := $(wildcard tools/hvnoise/*.h tools/lib/*.h tools/lib/*/*.h \
	     include/hvnoise/*.h kmod/lib/*.h tools/bpf/*.h) build/bpf/hvnoise.skel.h
TOOL_PKGS := libtracefs libtraceevent libbpf
TOOL_SRC_INC := -Iinclude -Itools/lib -Ikmod/lib -Itools/bpf
TOOL_INC := $(TOOL_SRC_INC) -Ibuild/bpf
TOOL_CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g
TOOL_CFLAGS := $(TOOL_CFLAGS_BASE) $(TOOL_INC) \
	       $(shell pkg-config --cflags $(TOOL_PKGS) 2>/dev/null)
TOOL_LIBS := $(shell pkg-config --libs $(TOOL_PKGS) 2>/dev/null) -lzstd -lz

# The BPF collector: CO-RE against the build host's BTF (any kernel with
# BTF will do; the programs relocate to the running kernel at load).
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
# The kprobe macros need the target architecture (x86, arm64, ...).
BPF_ARCH := $(shell uname -m | sed -e s/x86_64/x86/ -e s/aarch64/arm64/ -e s/ppc64le/powerpc/ -e s/s390x/s390/)
BPF_CFLAGS_COMMON := -g -O2 -target bpf -Wall -Werror -Wno-unused-function \
		     -Iinclude -Ikmod -Ikmod/lib -Itools/bpf
BPF_CFLAGS := -D__TARGET_ARCH_$(BPF_ARCH) -Ibuild/bpf $(BPF_CFLAGS_COMMON)
BPF_SRCS := tools/bpf/hvnoise.bpf.c tools/bpf/bpf_config.h \
	    include/hvnoise/event_layout.h include/hvnoise/events.h \
	    kmod/lib/storm.c kmod/lib/lost.c kmod/lib/steal.c $(wildcard kmod/lib/*.h)

build/bpf/vmlinux.h:
	@mkdir -p $(dir $@)
	@test -r $(VMLINUX_BTF) || { echo "no BTF at $(VMLINUX_BTF): pass VMLINUX_BTF=FILE (a kernel's BTF, or a vmlinux with .BTF)"; exit 1; }
	bpftool btf dump file $(VMLINUX_BTF) format c >$@.tmp && mv $@.tmp $@

build/bpf/hvnoise.bpf.o: $(BPF_SRCS) build/bpf/vmlinux.h
	clang $(BPF_CFLAGS) -c $< -o $@

build/bpf/hvnoise.skel.h build/bpf-arm64/hvnoise.skel.h: %/hvnoise.skel.h: %/hvnoise.bpf.o
	bpftool gen skeleton $< name hvnoise_bpf >$@.tmp && mv $@.tmp $@

# The tool for an arm64 host or guest (make check's vm-arm64 stage):
# cross-built, static, against Debian's arm64 libraries (ARM64_LIBS: the
# root scripts/fetch-headers-6.1-arm64.sh --libs prints), with its BPF
# programs built for arm64 against an arm64 kernel's BTF (ARM64_BTF: its
# Image, as Debian ships it, or a raw BTF file such as its
# /sys/kernel/btf/vmlinux).  CO-RE relocates them to the running kernel.
ARM64_CC := aarch64-linux-gnu-gcc
ARM64_LIBS ?=
ARM64_BTF ?=
ARM64_CFLAGS = $(TOOL_CFLAGS_BASE) -Ibuild/bpf-arm64 $(TOOL_SRC_INC) \
	       -I$(ARM64_LIBS)/usr/include -I$(ARM64_LIBS)/usr/include/tracefs \
	       -I$(ARM64_LIBS)/usr/include/traceevent
ARM64_LDLIBS = -static -L$(ARM64_LIBS)/usr/lib/aarch64-linux-gnu \
	       -ltracefs -ltraceevent -lbpf -lelf -lzstd -lz
ARM64_HDRS := $(filter-out build/bpf/%,$(TOOL_HDRS)) build/bpf-arm64/hvnoise.skel.h

# make tools-arm64: fetches what it lacks (Debian 12's arm64 libraries and
# kernel, into the cache) and builds build/tools-arm64/hvnoise.
tools-arm64:
	@libs='$(ARM64_LIBS)'; btf='$(ARM64_BTF)'; \
	[ -n "$$libs" ] || libs=$$(scripts/fetch-headers-6.1-arm64.sh --libs) || exit $$?; \
	if [ -z "$$btf" ]; then \
		root=$$(scripts/fetch-headers-6.1-arm64.sh --vm) || exit $$?; \
		btf=$$(ls "$$root"/boot/vmlinuz-* | tail -n 1); \
	fi; \
	$(MAKE) build/tools-arm64/hvnoise ARM64_LIBS="$$libs" ARM64_BTF="$$btf"

FORCE:

arm64-inputs:
	@command -v $(ARM64_CC) >/dev/null || \
		{ echo "no $(ARM64_CC): apt-get install gcc-aarch64-linux-gnu"; exit 1; }
	@test -f "$(ARM64_LIBS)/usr/include/bpf/libbpf.h" || \
		{ echo "ARM64_LIBS='$(ARM64_LIBS)': no arm64 libbpf there (scripts/fetch-headers-6.1-arm64.sh --libs prints the root)"; exit 1; }
	@test -r "$(ARM64_BTF)" || \
		{ echo "ARM64_BTF='$(ARM64_BTF)': not readable (an arm64 kernel's Image or BTF)"; exit 1; }

# What the arm64 build was made from (the BTF's path, size and time, the
# libraries' package list), rewritten only when that changes: a newer
# kernel or other libraries rebuild it (dpkg -x keeps the packages' old
# mtimes, so the files' own times would not).
build/tools-arm64/inputs: FORCE | arm64-inputs
	@mkdir -p $(dir $@)
	@id="$(ARM64_BTF) $$(stat -c '%s %Y' '$(ARM64_BTF)') $$(cat '$(ARM64_LIBS)/.done' 2>/dev/null)"; \
	[ "$$(cat $@ 2>/dev/null)" = "$$id" ] || echo "$$id" >$@

build/bpf-arm64/vmlinux.h: build/tools-arm64/inputs
	@mkdir -p $(dir $@)
	scripts/btf-from-image.py $(ARM64_BTF) $@.btf
	bpftool btf dump file $@.btf format c >$@.tmp && mv $@.tmp $@ && rm -f $@.btf

# The BPF helpers' headers of the libbpf it links (Debian 12's arm64 one).
build/bpf-arm64/hvnoise.bpf.o: $(BPF_SRCS) build/bpf-arm64/vmlinux.h
	clang -D__TARGET_ARCH_arm64 -Ibuild/bpf-arm64 $(BPF_CFLAGS_COMMON) \
		-I$(ARM64_LIBS)/usr/include -c $< -o $@

build/tools-arm64/obj/%.o: %.c $(ARM64_HDRS) build/tools-arm64/inputs
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(ARM64_CFLAGS) -O2 -c -o $@ $<

build/tools-arm64/hvnoise: $(patsubst %.c,build/tools-arm64/obj/%.o,$(TOOL_CMD_SRCS) $(TOOL_LIB_SRCS)) | arm64-inputs
	$(ARM64_CC) -o $@ $^ $(ARM64_LDLIBS)

.PHONY: all module clean check demo deps unit unit-build tools fuzz fuzz-build stress big-guest soak-detectors soak-innocent soak-hangs soak-exp anchor arm64-inputs tools-arm64 vmtools \
	install install-tools install-module uninstall dkms-install dkms-uninstall \
	tools-dist dkms-source deb

all: module

module:
	@test -n "$(KDIR)" || { echo "no kernel build tree: install linux-headers or pass KDIR="; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

build/unit/hvnoise-unit: $(LIB_SRCS) $(UNIT_SRCS) $(wildcard kmod/lib/*.h include/hvnoise/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(CC_USER) $(USER_CFLAGS) -o $@ $(UNIT_SRCS) $(LIB_SRCS)

build/unit/hvnoise-tool-unit: $(TOOL_UNIT_SRCS) tests/lib/hvn_test.h $(TOOL_HDRS) \
		build/tools-asan/libhvnoise.a
	@mkdir -p $(dir $@)
	$(CC_USER) $(TOOL_CFLAGS) -Itests/lib -O1 $(ASAN) -o $@ $(TOOL_UNIT_SRCS) \
		build/tools-asan/libhvnoise.a $(TOOL_LIBS)

# The hvnoise command: optimised, and a sanitised build for the tests.
tools: build/tools/hvnoise build/tools-asan/hvnoise build/tools/hvnoise.8 $(MAN8) $(MAN7) \
       build/tools/libnccl-profiler-hvnoise.so build/tools/nccl_fake \
       build/tools-asan/libnccl-profiler-hvnoise.so build/tools-asan/nccl_fake \
       build/tools/plugin_hvnoise.so build/tools-asan/plugin_hvnoise.so \
       build/tools/seccomp_run

# The units' SystemCallFilter= applied to a command, for their test.
build/tools/seccomp_run: tests/host/seccomp_run.c
	@mkdir -p $(dir $@)
	$(CC_USER) $(FAKE_CFLAGS) -o $@ $<

# The NCCL profiler plugin (NCCL_PROFILER_PLUGIN=hvnoise finds it by name),
# the libtraceevent plugin (trace-cmd report and KernelShark decode hvnoise's
# events and the NCCL records with it: TRACEEVENT_PLUGIN_DIR=build/tools)
# and the NCCL-like driver of the plugin (ABI test, VM job, benchmark):
# their rules, with the command's, are made per flavour below.
PLUGIN_CFLAGS := -std=c11 -Wall -Wextra -Werror -g -fPIC -shared \
		 -fvisibility=hidden -Iinclude -Itools/lib
FAKE_CFLAGS := -std=c11 -Wall -Wextra -Werror -g -Iinclude
TEP_CFLAGS := -std=c11 -Wall -Wextra -Werror -g -fPIC -shared -Iinclude \
	      $(shell pkg-config --cflags libtraceevent 2>/dev/null)
TEP_LIBS := $(shell pkg-config --libs libtraceevent 2>/dev/null)
ASAN := -fsanitize=address,undefined -fno-sanitize-recover=all

build/tools/hvnoise.8: Documentation/hvnoise.8.rst
	@mkdir -p $(dir $@)
	rst2man --strict $< $@

# A page per command, cut from hvnoise.8.rst (man hvnoise-record).

build/tools/hvnoise-%.8: Documentation/hvnoise.8.rst scripts/man-cmd-page.py
	@mkdir -p $(dir $@)
	scripts/man-cmd-page.py $< $* >$@.rst
	rst2man --strict $@.rst $@
	@rm -f $@.rst

# Section 7 pages from Documentation/: the admin guide, the event reference
# and the forensics walkthrough.
# (MAN7 is defined above, before the rules that name it.)
MAN7_DESC_admin := install, parameters, tuning, plugin, metrics, flight recorder, limits
MAN7_DESC_events := the trace events of hvnoise.ko, every field
MAN7_DESC_forensics := from a flight-recorder incident to its causes
build/tools/hvnoise-admin.7: Documentation/admin-guide.rst scripts/rst2man-page.py
build/tools/hvnoise-events.7: Documentation/events.rst scripts/rst2man-page.py
build/tools/hvnoise-forensics.7: Documentation/forensics.rst scripts/rst2man-page.py
$(MAN7):
	@mkdir -p $(dir $@)
	scripts/rst2man-page.py $< $(basename $(notdir $@)) 7 \
		"$(MAN7_DESC_$(subst hvnoise-,,$(basename $(notdir $@))))" >$@.rst
	rst2man --strict $@.rst $@
	@rm -f $@.rst

# One object directory per flavour: build/tools (-O2) and build/tools-asan
# (-O1, ASan and UBSan, for the tests).  Each flavour's rules are the one
# template below, made once per flavour (two rules, not one with two
# targets: make would take one recipe run for both and leave the other's
# output stale).
TOOL_LIB_OBJS = $(patsubst %.c,$(1)/obj/%.o,$(TOOL_LIB_SRCS))
TOOL_FLAVOUR_tools := -O2
TOOL_FLAVOUR_tools-asan := -O1 $(ASAN)
# The optimised flavour takes the builder's CPPFLAGS, CFLAGS and LDFLAGS
# (dpkg-buildflags' hardening in the packages); the tests' flavour its own.
TOOL_CC_tools = $(CPPFLAGS) $(CFLAGS)
TOOL_LD_tools = $(LDFLAGS)
define TOOL_RULES
build/$(1)/obj/%.o: %.c $$(TOOL_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC_USER) $$(TOOL_CFLAGS) $$(TOOL_FLAVOUR_$(1)) $$(TOOL_CC_$(1)) -c -o $$@ $$<

build/$(1)/libhvnoise.a: $$(call TOOL_LIB_OBJS,build/$(1))

build/$(1)/hvnoise: $$(TOOL_CMD_SRCS) $$(TOOL_HDRS) build/$(1)/libhvnoise.a
	$$(CC_USER) $$(TOOL_CFLAGS) $$(TOOL_FLAVOUR_$(1)) $$(TOOL_CC_$(1)) $$(TOOL_LD_$(1)) \
		-o $$@ $$(TOOL_CMD_SRCS) build/$(1)/libhvnoise.a $$(TOOL_LIBS)

build/$(1)/plugin_hvnoise.so: tools/traceevent-plugin/plugin_hvnoise.c \
		include/hvnoise/events.h include/hvnoise/nccl.h include/hvnoise/watch.h
	@mkdir -p $$(dir $$@)
	$$(CC_USER) $$(TEP_CFLAGS) $$(TOOL_FLAVOUR_$(1)) $$(TOOL_CC_$(1)) $$(TOOL_LD_$(1)) \
		-o $$@ $$< $$(TEP_LIBS)

build/$(1)/libnccl-profiler-hvnoise.so: tools/nccl-plugin/profiler.c \
		tools/lib/trigger.c tools/lib/trigger.h \
		tools/nccl-plugin/nccl_abi.h include/hvnoise/nccl.h \
		include/hvnoise/clockpair.h
	@mkdir -p $$(dir $$@)
	$$(CC_USER) $$(PLUGIN_CFLAGS) $$(TOOL_FLAVOUR_$(1)) $$(TOOL_CC_$(1)) $$(TOOL_LD_$(1)) \
		-Wl,-soname,libnccl-profiler-hvnoise.so -o $$@ \
		tools/nccl-plugin/profiler.c tools/lib/trigger.c -lpthread

build/$(1)/nccl_fake: tests/host/nccl_fake.c tools/nccl-plugin/nccl_abi.h \
		include/hvnoise/nccl.h
	@mkdir -p $$(dir $$@)
	$$(CC_USER) $$(FAKE_CFLAGS) $$(TOOL_FLAVOUR_$(1)) -o $$@ $$< -ldl -lpthread
endef
$(foreach f,tools tools-asan,$(eval $(call TOOL_RULES,$(f))))

build/tools/libhvnoise.a build/tools-asan/libhvnoise.a build/fuzz/libhvnoise.a:
	@# P: members by their path, so that two sources of one name do not
	@# replace each other.
	rm -f $@ && ar rcsP $@ $^

# The VM tests' programs (tests/vm/tools/): the guests' static (dread,
# rawsend, pasttimers), this host's linked as usual (hog, the stop witness
# hoststops); build/vmtools-arm64/ for the arm64 guest.
VMTOOLS_GUEST := dread rawsend pasttimers
VMTOOLS_HOST := hog hoststops
VMTOOLS_CFLAGS := -O2 -Wall -Wextra -Werror -pthread
build/vmtools/%: tests/vm/tools/%.c $(wildcard tests/vm/tools/*.h)
	@mkdir -p $(dir $@)
	gcc $(VMTOOLS_CFLAGS) $(if $(filter $*,$(VMTOOLS_GUEST)),-static) -o $@ $<

build/vmtools-arm64/%: tests/vm/tools/%.c $(wildcard tests/vm/tools/*.h)
	@mkdir -p $(dir $@)
	aarch64-linux-gnu-gcc $(VMTOOLS_CFLAGS) -static -o $@ $<

vmtools: $(addprefix build/vmtools/,$(VMTOOLS_GUEST) $(VMTOOLS_HOST))

# libFuzzer harnesses (clang) of every parser; make fuzz runs each 10 min.
# They link the library's sources only: no command, no main.
# UBSan stops the run: a report libFuzzer lets pass is no crash to it.
FUZZ_BASE := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	     -D_GNU_SOURCE -std=gnu11 -DHVN_JSTREAM_CHUNK=16 \
	     $(TOOL_INC) $(shell pkg-config --cflags $(TOOL_PKGS) 2>/dev/null)
FUZZ_CFLAGS := -fsanitize=fuzzer $(FUZZ_BASE)
FUZZERS := tracedat inputs nccl params http pickle summary

build/fuzz/fuzz_params: tests/fuzz/fuzz_params.c kmod/lib/cpulist.c kmod/lib/devlist.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $^

# The library, instrumented for libFuzzer once (fuzzer-no-link: coverage
# without libFuzzer's main), then linked into each harness.
build/fuzz/obj/%.o: %.c $(TOOL_HDRS)
	@mkdir -p $(dir $@)
	clang -fsanitize=fuzzer-no-link $(FUZZ_BASE) -c -o $@ $<

build/fuzz/libhvnoise.a: $(call TOOL_LIB_OBJS,build/fuzz)

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libhvnoise.a $(TOOL_HDRS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< build/fuzz/libhvnoise.a $(TOOL_LIBS)

fuzz-build: $(addprefix build/fuzz/fuzz_,$(FUZZERS))

fuzz: deps tools fuzz-build
	tests/host/host.sh build/tools-asan/hvnoise build/fuzz/seeds >/dev/null 2>&1 || true
	tests/fuzz/run.sh 600 build/fuzz/run build/fuzz/seeds

unit-build: build/unit/hvnoise-unit build/unit/hvnoise-tool-unit

unit: unit-build
	build/unit/hvnoise-unit
	build/unit/hvnoise-tool-unit

deps:
	scripts/install-deps.sh

# STAGES="unit vm-detect": those stages alone (tests/check.sh).
check: deps
	HVN_STAGES="$(STAGES)" tests/check.sh

demo: deps
	scripts/demo.sh

# 500 load/unload cycles on the 7.2 debug kernel (KASAN, lockdep, kmemleak)
# under a storm, a tracefs reader, parameter writes, IRQ moves, hotplug and
# host pauses; make check runs 10 (one unloads during hotplug).
stress: deps
	t=$$(scripts/fetch-source-tree.sh 7.2) && \
	k=$$(scripts/build-test-kernel.sh tests/kunit/kernel.config "$$(readlink -f $$t/source)") && \
	scripts/kbuild.sh build/kbuild-7.2-test $$k HVNOISE_KUNIT=m && \
	mkdir -p build/stress && $(MAKE) -s build/vmtools/dread && \
	tests/vm/stress.sh $${CYCLES:-500} build/stress $$k build/kbuild-7.2-test/kmod/hvnoise.ko \
		build/vmtools/dread

# A guest of GPU-host size: 384 vCPUs (CPUS=N) and ~2,400 MSI-X vectors, the
# watched set, an IRQ move and a storm (tests/vm/big-guest.sh; QEMU from
# bookworm-backports, whose TCG emulates x2APIC).  Minutes; nothing else
# may run meanwhile.
big-guest: deps
	tests/vm/big-guest.sh $${CPUS:-384} build/big-guest

# Lost-time recall: N rounds of host pauses and vCPU hogs (10 vCPU-injections
# a round), module then BPF, in one booted VM; soak-exp runs the mechanism
# experiments (Documentation/detectors.rst).  Nothing else may run meanwhile.
soak-detectors: deps
	tests/vm/soak.sh soak $${N:-100} build/soak

# Busy but innocent: past deadlines, NMI bursts, CPU hotplug, a NIC's
# vectors freed and requested again, SECS seconds a source (make check: 30),
# then again booted highres=off.
soak-innocent: deps
	tests/vm/innocent.sh $${SECS:-600} build/innocent
	HVN_VM_APPEND=highres=off tests/vm/innocent.sh $${SECS:-600} build/innocent-lowres

# The livelock hunt: LOOPS start/stop cycles of the BPF source, then
# TLOOPS of tracepoints on and off through tracefs (text patching on every
# CPU), on single-threaded TCG (HANGS_ACCEL=tcg: a thread per vCPU).
soak-hangs: deps
	tests/vm/hangs.sh $${LOOPS:-100} $${TLOOPS:-1000} build/hangs

soak-exp: deps
	tests/vm/soak.sh exp 1 build/soak

# The soak's schedule through the kernel's osnoise, hwnoise and the module
# on a 6.12 kernel with osnoise (built once, cached), for the table in
# Documentation/detectors.rst.
anchor: deps
	tests/vm/anchor.sh $${N:-20} build/anchor

# --- install -------------------------------------------------------------
# The tool and its man page go under PREFIX; the module under
# /lib/modules/KVER/updates (KVER: the kernel of KDIR), where it overrides an
# in-tree module of the same name; KO= installs a module built elsewhere.
VERSION := $(shell sed -n 's/^\#define HVN_VERSION[^"]*"\(.*\)"/\1/p' include/hvnoise/version.h)
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
DATADIR ?= $(PREFIX)/share
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
# UTS_RELEASE, not include/config/kernel.release: Debian's says 6.1.192
# where the kernel (and vermagic) says 6.1.0-57-amd64.
KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MODDIR ?= /lib/modules/$(KVER)/updates
KO ?= kmod/hvnoise.ko
INSTALL ?= install
# libtraceevent (trace-cmd, KernelShark) loads plugins from its own libdir
# only (and ~/.local/lib/traceevent/plugins, $$TRACEEVENT_PLUGIN_DIR), so
# PREFIX does not move the plugin.
TEP_PLUGIN_DIR ?= $(shell pkg-config --variable=libdir libtraceevent 2>/dev/null || \
	echo /usr/lib/$$(gcc -print-multiarch))/traceevent/plugins

install: install-tools install-module

# What install-tools puts down that is built (debian/rules builds this).
TOOLS_DIST := build/tools/hvnoise build/tools/hvnoise.8 $(MAN8) $(MAN7) \
	      build/tools/libnccl-profiler-hvnoise.so build/tools/plugin_hvnoise.so
tools-dist: $(TOOLS_DIST)

install-tools: $(TOOLS_DIST) \
	       tools/systemd/hvnoise-flight-recorder.service \
	       tools/systemd/hvnoise-exporter.service \
	       tools/systemd/hvnoise-exporter-http.service tools/completion/hvnoise.bash \
	       tools/prometheus/hvnoise.rules.yml tools/prometheus/hvnoise-dashboard.json
	$(INSTALL) -D -m 0755 build/tools/hvnoise $(DESTDIR)$(SBINDIR)/hvnoise
	$(INSTALL) -D -m 0644 build/tools/hvnoise.8 $(DESTDIR)$(MANDIR)/man8/hvnoise.8
	$(INSTALL) -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man7
	$(INSTALL) -m 0644 $(MAN7) $(DESTDIR)$(MANDIR)/man7/
	$(INSTALL) -D -m 0644 build/tools/libnccl-profiler-hvnoise.so \
		$(DESTDIR)$(LIBDIR)/libnccl-profiler-hvnoise.so
	@# NCCL dlopens the plugin by name: the loader's cache must know it.
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi
	$(INSTALL) -D -m 0644 build/tools/plugin_hvnoise.so \
		$(DESTDIR)$(TEP_PLUGIN_DIR)/plugin_hvnoise.so
	@mkdir -p $(DESTDIR)$(UNITDIR)
	for u in hvnoise-flight-recorder hvnoise-exporter hvnoise-exporter-http; do \
		sed 's|@SBINDIR@|$(SBINDIR)|' tools/systemd/$$u.service \
			>$(DESTDIR)$(UNITDIR)/$$u.service || exit 1; done
	$(INSTALL) -D -m 0644 tools/completion/hvnoise.bash $(DESTDIR)$(COMPLETIONDIR)/hvnoise
	$(INSTALL) -D -m 0644 tools/prometheus/hvnoise.rules.yml \
		$(DESTDIR)$(DATADIR)/hvnoise/prometheus/hvnoise.rules.yml
	$(INSTALL) -D -m 0644 tools/prometheus/hvnoise-dashboard.json \
		$(DESTDIR)$(DATADIR)/hvnoise/prometheus/hvnoise-dashboard.json

# Build the module here unless KO= names one built elsewhere.
install-module: $(if $(filter kmod/hvnoise.ko,$(KO)),module)
	@test -n "$(KVER)" || { echo "install: no kernel release for KDIR=$(KDIR) (pass KVER=)"; exit 1; }
	@v=$$(modinfo -F vermagic $(KO) | cut -d' ' -f1); test "$$v" = "$(KVER)" || \
		{ echo "install: $(KO) is built for $$v, not $(KVER) (pass KDIR= or KVER=)"; exit 1; }
	$(INSTALL) -D -m 0644 $(KO) $(DESTDIR)$(MODDIR)/hvnoise.ko
	@# With DESTDIR, a package's post-install runs depmod.
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/hvnoise $(DESTDIR)$(MANDIR)/man8/hvnoise.8 \
	      $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(MAN8))) \
	      $(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(MAN7))) \
	      $(DESTDIR)$(LIBDIR)/libnccl-profiler-hvnoise.so \
	      $(DESTDIR)$(TEP_PLUGIN_DIR)/plugin_hvnoise.so \
	      $(DESTDIR)$(UNITDIR)/hvnoise-flight-recorder.service \
	      $(DESTDIR)$(UNITDIR)/hvnoise-exporter.service \
	      $(DESTDIR)$(UNITDIR)/hvnoise-exporter-http.service \
	      $(DESTDIR)$(COMPLETIONDIR)/hvnoise \
	      $(DESTDIR)$(DATADIR)/hvnoise/prometheus/hvnoise.rules.yml \
	      $(DESTDIR)$(DATADIR)/hvnoise/prometheus/hvnoise-dashboard.json
	-rmdir $(DESTDIR)$(DATADIR)/hvnoise/prometheus $(DESTDIR)$(DATADIR)/hvnoise 2>/dev/null
	if [ -n "$(KVER)" ]; then rm -f $(DESTDIR)$(MODDIR)/hvnoise.ko; fi
	if [ -n "$(KVER)" ] && [ -z "$(DESTDIR)" ] && [ -d /lib/modules/$(KVER) ]; then \
		depmod -a $(KVER); fi

# DKMS: the module's sources in DKMS_SRC/hvnoise-VERSION, then dkms add,
# build and install for KVER.  DKMS= may carry dkms options (--dkmstree...).
DKMS ?= dkms
DKMS_SRC ?= /usr/src
DKMS_DIR = $(DKMS_SRC)/hvnoise-$(VERSION)

dkms-install:
	@grep -qx 'PACKAGE_VERSION="$(VERSION)"' dkms.conf || \
		{ echo "dkms-install: dkms.conf's PACKAGE_VERSION is not $(VERSION)"; exit 1; }
	@test -n "$(KVER)" || { echo "dkms-install: no kernel release (pass KVER=)"; exit 1; }
	-$(DKMS) remove hvnoise/$(VERSION) --all >/dev/null 2>&1
	rm -rf $(DKMS_DIR)
	$(MAKE) -s dkms-source
	$(DKMS) add hvnoise/$(VERSION)
	$(DKMS) build hvnoise/$(VERSION) -k $(KVER)
	$(DKMS) install hvnoise/$(VERSION) -k $(KVER)

# The tree DKMS builds from, in $(DESTDIR)$(DKMS_DIR) (the hvnoise-dkms
# package's /usr/src/hvnoise-VERSION too): dkms.conf and the module's
# sources, no build output.
dkms-source:
	@grep -qx 'PACKAGE_VERSION="$(VERSION)"' dkms.conf || \
		{ echo "dkms-source: dkms.conf's PACKAGE_VERSION is not $(VERSION)"; exit 1; }
	mkdir -p $(DESTDIR)$(DKMS_DIR)
	cp dkms.conf $(DESTDIR)$(DKMS_DIR)/
	@# The top Kbuild names tests/kunit/, which "make clean" would visit.
	printf '# SPDX-License-Identifier: GPL-2.0\nobj-m := kmod/\n' >$(DESTDIR)$(DKMS_DIR)/Kbuild
	find kmod include \( -name '*.[ch]' -o -name Kbuild \) ! -name '*.mod.c' | \
		xargs cp --parents -t $(DESTDIR)$(DKMS_DIR)

# Debian packages (debian/) in DEBDIR: hvnoise, hvnoise-dkms and
# libnccl-profiler-hvnoise, built by dpkg-buildpackage in a copy of the
# tree (it writes beside the tree it builds; a working copy's changes come
# along).
DEBDIR ?= build/deb
deb:
	rm -rf $(DEBDIR)/hvnoise-$(VERSION)
	mkdir -p $(DEBDIR)/hvnoise-$(VERSION)
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -co --exclude-standard -z | tar cf - --null -T -; \
	else tar cf - --exclude=./build .; fi | tar xf - -C $(DEBDIR)/hvnoise-$(VERSION)
	cd $(DEBDIR)/hvnoise-$(VERSION) && dpkg-buildpackage -us -uc
	@ls $(DEBDIR)/*_$(VERSION)_*.deb

dkms-uninstall:
	$(DKMS) remove hvnoise/$(VERSION) --all
	rm -rf $(DKMS_DIR)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf build
