// SPDX-License-Identifier: GPL-2.0
/* The NCCL profiler plugin's records (inputs/nccl.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "inputs/nccl.h"
#include "inputs/recfile.h"
#include "msg.h"

/* A name as the plugin wrote it, made printable. */
static void printable(char *s, size_t len)
{
	for (size_t i = 0; i < len && s[i]; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			s[i] = '?';
}

int hvn_nccl_decode(uint32_t id, const uint8_t *p, uint32_t len,
		    struct hvn_nccl_rec *r)
{
	static const uint32_t size[] = {
		[HVN_NCCL_COMM] = sizeof(r->u.comm),
		[HVN_NCCL_COLL] = sizeof(r->u.coll),
		[HVN_NCCL_PROXYOP] = sizeof(r->u.proxyop),
		[HVN_NCCL_KERNCH] = sizeof(r->u.kernch),
	};
	uint32_t t = HVN_NCCL_TYPE(id);

	if (!HVN_NCCL_IS(id) || t >= sizeof(size) / sizeof(*size) || !size[t] ||
	    len < size[t])
		return -1;
	memset(r, 0, sizeof(*r));
	r->type = t;
	memcpy(&r->u, p, size[t]);
	switch (t) {
	case HVN_NCCL_COMM:
		printable(r->u.comm.host, sizeof(r->u.comm.host));
		printable(r->u.comm.name, sizeof(r->u.comm.name));
		break;
	case HVN_NCCL_COLL:
		if (r->u.coll.enqueued_ns < r->u.coll.start_ns ||
		    r->u.coll.func >= HVN_FN_N)
			return -1;
		break;
	}
	return 0;
}

static const struct hvn_recfile_fmt nccl_file = {
	HVN_NCCL_FILE_MAGIC, HVN_RECHDR_ID32, 512,
};

int hvn_nccl_read_file(const char *path,
		       void (*fn)(void *ctx, const struct hvn_nccl_rec *r),
		       void *ctx)
{
	struct hvn_recfile f;
	struct hvn_nccl_rec r;
	uint32_t id, size;
	const void *body;
	int e = hvn_recfile_open(&f, path, &nccl_file), ret = 0;

	if (e < 0) {
		hvn_err("%s: %s", path, strerror(errno));
		hvn_recfile_close(&f);
		return HVN_EXIT_BADFILE;
	}
	if (e) {
		hvn_err("%s: not an hvnoise NCCL file (no %s magic)", path,
			HVN_NCCL_FILE_MAGIC);
		hvn_recfile_close(&f);
		return HVN_EXIT_BADFILE;
	}
	while ((e = hvn_recfile_next(&f, &id, &size, &body)) == HVN_REC_OK &&
	       !hvn_nccl_decode(id, body, size, &r))
		fn(ctx, &r);
	if (e != HVN_REC_END) {
		hvn_err("%s: bad record at offset %llu (after %llu records); the rest is skipped",
			path, (unsigned long long)f.off,
			(unsigned long long)f.n);
		ret = HVN_EXIT_BADFILE;
	}
	hvn_recfile_close(&f);
	return ret;
}
