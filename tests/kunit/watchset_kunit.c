// SPDX-License-Identifier: GPL-2.0
/* The watchset cases of tests/lib/ as a KUnit suite, on kmod/lib/watchset.c. */
#include "../../kmod/lib/watchset.c"
#include "../lib/watchset_test.c"
