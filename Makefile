# SPDX-License-Identifier: GPL-2.0
# hvnoise: build the module and tools, run the tests, run the demo.
#
#   make                 hvnoise.ko against KDIR (default: the running
#                        kernel's build dir, else the newest linux-headers)
#   make check           every test (installs what it needs; see README.md)
#   make demo            the module in a VM, its watch set and trace
#   make KDIR=/path      build against another kernel tree

KDIR ?= $(shell scripts/kernel-dir.sh)
CC_USER ?= gcc
USER_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -g -O1 \
	       -fsanitize=address,undefined -fno-sanitize-recover=all \
	       -Ikmod/lib -Iinclude -Itests/lib

LIB_SRCS := $(wildcard kmod/lib/*.c)
UNIT_SRCS := tests/unit/runner.c $(wildcard tests/lib/*_test.c)

.PHONY: all module clean check demo deps unit unit-build

all: module

module:
	@test -n "$(KDIR)" || { echo "no kernel build tree: install linux-headers or pass KDIR="; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

build/unit/hvnoise-unit: $(LIB_SRCS) $(UNIT_SRCS) $(wildcard kmod/lib/*.h include/hvnoise/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(CC_USER) $(USER_CFLAGS) -o $@ $(UNIT_SRCS) $(LIB_SRCS)

unit-build: build/unit/hvnoise-unit

unit: unit-build
	build/unit/hvnoise-unit

deps:
	scripts/install-deps.sh

check: deps
	tests/check.sh

demo: deps
	scripts/demo.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf build
