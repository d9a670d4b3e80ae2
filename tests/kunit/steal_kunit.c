// SPDX-License-Identifier: GPL-2.0
/* The steal cases of tests/lib/ as a KUnit suite, on kmod/lib/steal.c. */
#include "../../kmod/lib/steal.c"
#include "../lib/steal_test.c"
