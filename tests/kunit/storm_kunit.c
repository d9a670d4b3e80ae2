// SPDX-License-Identifier: GPL-2.0
/* The storm cases of tests/lib/ as a KUnit suite, on kmod/lib/storm.c. */
#include "../../kmod/lib/storm.c"
#include "../lib/storm_test.c"
