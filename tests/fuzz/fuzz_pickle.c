// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the pickle reader of Flight Recorder dumps (inputs/pickle.c)
 * alone, and the dump reader over it with a name that carries a rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

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

static char dir[] = "/tmp/hvn-fuzz-pickle-XXXXXX";
static char path[64];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[200];
	struct json *j;
	FILE *f;

	hvn_quiet = true;
	j = hvn_pickle_parse(data, size, err, sizeof(err));
	if (j)
		added += walk(j) & 1;
	else if (!err[0])
		abort();	/* every refusal says why */
	hvn_json_free(j);
	/* The dump's rank is in its name, as Flight Recorder writes it. */
	if (!path[0]) {
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/nccl_trace_rank_3", dir);
		atexit(cleanup);
	}
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	hvn_read_torch_fr(path, add, NULL);
	return 0;
}
