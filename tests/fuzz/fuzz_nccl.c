// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: correlate on any bytes as the NCCL plugin's file (--nccl),
 * against a fixed trace (HVN_FUZZ_TRACE): record decoding, the joins, the
 * stall and late-rank logic and every output.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hvnoise.h"

extern bool hvn_quiet;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *trace;
	char path[64];
	int fd;

	hvn_quiet = true;
	if (!trace) {
		trace = getenv("HVN_FUZZ_TRACE");
		if (!trace)
			abort();
		if (!freopen("/dev/null", "w", stdout))
			abort();
	}
	fd = memfd_create("nccl", 0);
	if (fd < 0 || write(fd, "HVNNCCL1", 8) != 8 ||
	    write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	{
		char *argv[] = { "correlate", "--json", "--perfetto", "/dev/null",
				 (char *)trace, "--nccl", path, NULL };

		optind = 0;
		cmd_correlate(7, argv);
	}
	close(fd);
	return 0;
}
