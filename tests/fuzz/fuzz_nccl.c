// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: correlate's engine on any bytes as the NCCL plugin's file
 * (--nccl), against a fixed trace (HVN_FUZZ_TRACE): record decoding, the
 * joins, the stall and late-rank logic, and the JSON and Perfetto writers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hvn.h"
#include "analysis/stalls.h"
#include "out/correlate_json.h"
#include "out/perfetto.h"
#include "tracedat/tracedat.h"

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
		struct hvn_corr_params p = { .k = 3, .min_ms = 1, .min_share = 0.2,
					      .window = 32, .top = 20 };
		struct hvn_schema *schema = calloc(1, sizeof(*schema));
		struct hvn_corr *x = calloc(1, sizeof(*x));
		struct hvn_tdat t;

		if (!schema || !x || hvn_tdat_open(&t, trace))
			abort();
		if (hvn_corr_open(x, schema, &t) < 0)
			abort();
		hvn_corr_read(x, HVN_CORR_NCCL, path);
		hvn_corr_analyse(x, &t, &p);
		hvn_corr_write_json(stdout, x, &p, trace);
		hvn_corr_write_perfetto(x, &t, "/dev/null");
		hvn_tdat_close(&t);
		hvn_corr_free(x);
		free(x);
		free(schema);
	}
	close(fd);
	return 0;
}
