// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the module's cpus= and devices= parsers, compiled in
 * userspace from kmod/lib/, with a format/parse round trip on success.
 */
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "devlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long map[4096 / (8 * sizeof(long))], map2[4096 / (8 * sizeof(long))];
	struct hvn_devlist dl, dl2;
	char *s = malloc(size + 1), err[128], buf[8192];

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (!hvn_cpulist_parse(s, map, 4096, err, sizeof(err)) &&
	    hvn_cpulist_format(buf, sizeof(buf), map, 4096) >= 0) {
		if (hvn_cpulist_parse(buf, map2, 4096, err, sizeof(err)) ||
		    memcmp(map, map2, sizeof(map)))
			abort();	/* what we print, we must read back */
	}
	if (!hvn_devlist_parse(s, &dl, err, sizeof(err)) &&
	    hvn_devlist_format(buf, sizeof(buf), &dl) >= 0) {
		if (hvn_devlist_parse(buf, &dl2, err, sizeof(err)))
			abort();
	}
	free(s);
	return 0;
}
