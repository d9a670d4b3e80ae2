// SPDX-License-Identifier: GPL-2.0
/* The lost cases of tests/lib/ as a KUnit suite, on kmod/lib/lost.c. */
#include "../../kmod/lib/lost.c"
#include "../lib/lost_test.c"
