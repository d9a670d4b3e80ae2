// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the pickle reader of Flight Recorder dumps (inputs/pickle.c)
 * alone, and the dump reader over it with a name that carries a rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "inputs/pickle.h"
#include "inputs/torch.h"

extern bool hvn_quiet;
static size_t added;

static void add(void *ctx, const struct hvn_ext_coll *c)
{
	(void)ctx;
	added += c->seq != 0;
}

/* Touch every value, so that a bad tree shows under ASan. */
static size_t walk(const struct json *j)
{
	size_t n = 1;

	if (j->type == J_STR)
		n += strlen(j->str);
	for (size_t k = 0; k < j->n; k++)
		n += walk(&j->kids[k]) + (j->keys ? strlen(j->keys[k]) : 0);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[200];
	struct json *j;
	int fd;

	hvn_quiet = true;
	j = pickle_parse(data, size, err, sizeof(err));
	if (j)
		added += walk(j) & 1;
	else if (!err[0])
		abort();	/* every refusal says why */
	json_free(j);
	fd = memfd_create("nccl_trace_rank_3", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	/* The dump's rank is in its name. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	hvn_read_torch_fr(path, add, NULL);
	close(fd);
	return 0;
}
