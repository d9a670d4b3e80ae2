// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: correlate's readers of Flight Recorder, Kineto and NCCL
 * Inspector files (and the JSON parser under them); the first byte picks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "inputs/torch.h"
#include "inputs/json.h"

extern bool hvn_quiet;
static size_t added;

static void add(void *ctx, const struct hvn_ext_coll *c)
{
	(void)ctx;
	added += c->seq != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int (*const rd[3])(const char *, hvn_ext_add, void *) = {
		hvn_read_torch_fr, hvn_read_kineto, hvn_read_inspector,
	};
	char path[64], err[128];
	struct json *j;
	int fd;

	hvn_quiet = true;
	if (!size)
		return 0;
	j = hvn_json_parse((const char *)data + 1, size - 1, err, sizeof(err));
	hvn_json_free(j);
	fd = memfd_create("in", 0);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	/* A name that ends in a rank, as Flight Recorder names its dumps. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rd[data[0] % 3](path, add, NULL);
	close(fd);
	return 0;
}
