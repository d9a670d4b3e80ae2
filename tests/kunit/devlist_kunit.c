// SPDX-License-Identifier: GPL-2.0
/* The devlist cases of tests/lib/ as a KUnit suite, on kmod/lib/devlist.c. */
#include "../../kmod/lib/devlist.c"
#include "../lib/devlist_test.c"
