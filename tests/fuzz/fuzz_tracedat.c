// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: hvnoise report's reader on any bytes as a trace.dat (header
 * parsing, v7 sections and decompression, ring-buffer pages, event fields).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/episodes.h"
#include "tracedat/tracedat.h"

extern bool hvn_quiet;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hvn_schema schema;
	struct hvn_analysis an;
	struct hvn_rb rb = { .event = hvn_an_event, .ctx = &an };
	struct hvn_tdat t;
	char path[64];
	int fd = memfd_create("trace", 0);

	hvn_quiet = true;
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!hvn_tdat_open(&t, path)) {
		hvn_schema_bind(&schema, t.tep);
		if (!hvn_an_init(&an, &schema)) {
			hvn_tdat_stream(&t, &rb);
			hvn_an_finish(&an);
			hvn_an_free(&an);
		}
	}
	hvn_tdat_close(&t);
	close(fd);
	return 0;
}
