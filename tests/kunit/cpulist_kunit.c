// SPDX-License-Identifier: GPL-2.0
/* The cpulist cases of tests/lib/ as a KUnit suite, on kmod/lib/cpulist.c. */
#include "../../kmod/lib/cpulist.c"
#include "../lib/cpulist_test.c"
